"""The leaderboard is computed once per change of the results, and every recorded score changes it."""
from __future__ import annotations

import threading

import pytest

from brainscore.leaderboard.aggregate import build_tree, leaderboard_records
from brainscore.leaderboard.cache import ResultsCache
from brainscore.metrics.score import Score
from brainscore.results import Database
from brainscore.results.records import record
from brainscore.scoring.outcome import Outcome

INNER = {"neural_vision": "average_vision", "V4": "neural_vision", "IT": "neural_vision"}
LEAVES = {"v4a": "V4", "v4b": "V4", "ita": "IT"}


def _record(db, model, benchmark, value):
    record(Outcome.from_score(Score.of(value, model_identifier=model, benchmark_identifier=benchmark,
                                       benchmark_version=1, raw=Score.of(value))), db)


def _fail(db, model, benchmark):
    record(Outcome.from_failure(model, benchmark, "boom", provenance={"benchmark": {"version": 1}}), db)


@pytest.fixture
def url(tmp_path):
    return f"sqlite:///{tmp_path / 'r.sqlite'}"


def test_computed_once_until_a_score_is_recorded_by_any_writer(url):
    tree = build_tree(LEAVES, INNER)
    db = Database(url)
    _record(db, "m", "v4a", 0.4)
    cache = ResultsCache(db, tree=tree)
    first = cache.records()
    assert first == leaderboard_records(db, tree=tree)
    assert first[0]["scores"]["average_vision"] == pytest.approx(0.4 / 2 / 2)
    for _ in range(5):
        assert cache.records() is first and cache.aggregates_of("m") is first[0]
    assert cache.computed == 3  # the scores read, the records and their index by model: once each
    other_process = Database(url)  # a scoring child, `brainscore score`, another web worker
    _record(other_process, "m", "ita", 0.6)
    _record(other_process, "n", "v4b", 0.2)
    second = cache.records()
    assert second is not first and [e["model"] for e in second] == ["m", "n"]
    assert second[0]["scores"]["average_vision"] == pytest.approx((0.4 / 2 + 0.6) / 2)  # V4 0.2, IT 0.6
    assert cache.aggregates_of("n")["scores"]["V4"] == pytest.approx(0.1)
    _fail(other_process, "n", "v4b")  # a failure too
    assert cache.aggregates_of("n")["scores"]["V4"] is None
    assert db.results_version() == 1 + 4  # 1 when created, then one bump per recorded score or failure


def test_concurrent_requests_share_one_computation(url):
    db = Database(url)
    _record(db, "m", "v4a", 0.4)
    cache = ResultsCache(db, tree=build_tree(LEAVES, INNER))
    started, calls = threading.Event(), []

    def slow():
        calls.append(1)
        started.wait(2)
        return ["value"]

    threads = [threading.Thread(target=cache.get, args=("slow", slow)) for _ in range(8)]
    for thread in threads:
        thread.start()
    started.set()
    for thread in threads:
        thread.join()
    assert calls == [1] and cache.get("slow", slow) == ["value"]


def test_least_recently_used_values_are_dropped_beyond_the_bound(url):
    cache = ResultsCache(Database(url), tree=build_tree(LEAVES, INNER), max_values=2)
    cache.get("a", lambda: 1)
    cache.get("b", lambda: 2)
    cache.get("a", lambda: -1)  # a used again: b is now the oldest
    cache.get("c", lambda: 3)
    assert cache.get("a", lambda: -1) == 1 and cache.get("b", lambda: 20) == 20 and cache.computed == 4


def test_scores_of_a_model_or_benchmark_are_the_databases(url):
    db = Database(url)
    _record(db, "m", "v4a", 0.4)
    _record(db, "n", "v4a", 0.3)
    _fail(db, "m", "ita")
    cache = ResultsCache(db, tree=build_tree(LEAVES, INNER))
    for kwargs in ({"model": "m"}, {"model": "m", "include_failed": True}, {"benchmark": "v4a"},
                   {"benchmark": "ita", "include_failed": True}, {"model": "nobody"}):
        db_kwargs = {("model_identifier" if k == "model" else "benchmark_identifier" if k == "benchmark" else k): v
                     for k, v in kwargs.items()}
        assert cache.scores_of(**kwargs) == db.scores(**db_kwargs), kwargs
    assert [r.status for r in cache.scores_of(model="m", include_failed=True)] == ["done", "failed"]
    computed = cache.computed
    cache.scores_of(model="n")
    assert cache.computed == computed  # grouped once
    with pytest.raises(ValueError, match="either a model or a benchmark"):
        cache.scores_of()
