"""The leaderboard: the tree of benchmark types and the aggregation of recorded scores through it.

``brainscore.leaderboard(db=None, benchmarks=None)`` (this package is callable) returns
:func:`brainscore.leaderboard.aggregate.leaderboard`, a pandas DataFrame with one row per model.
"""
from __future__ import annotations

import sys
import types


class _CallableModule(types.ModuleType):
    """Lets ``brainscore.leaderboard(...)`` be the function while staying this package."""

    def __call__(self, db=None, benchmarks=None):
        """The leaderboard DataFrame; see :func:`brainscore.leaderboard.aggregate.leaderboard`."""
        from brainscore.leaderboard.aggregate import leaderboard
        return leaderboard(db, benchmarks)


sys.modules[__name__].__class__ = _CallableModule
