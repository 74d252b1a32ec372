"""The leaderboard: the tree of benchmark types that scores are averaged through."""
