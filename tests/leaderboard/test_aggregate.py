"""The leaderboard aggregates recorded scores through the tree as the reference does (hand-computed)."""
from __future__ import annotations

import math

import pytest

from brainscore.leaderboard.aggregate import aggregate, build_tree, leaderboard_records
from brainscore.leaderboard.tree import benchmark_parents, root_of
from brainscore.metrics.score import Score
from brainscore.results import Database, record
from brainscore.scoring.outcome import Outcome

INNER = {"neural_vision": "average_vision", "behavior_vision": "average_vision", "V1": "neural_vision",
         "V4": "neural_vision", "IT": "neural_vision", "fam": "behavior_vision"}
LEAVES = {"v4a": "V4", "v4b": "V4", "v1a": "V1", "v1b": "V1", "ita": "IT", "beh": "behavior_vision",
          "fam1": "fam", "fam2": "fam", "eng": "engineering_vision"}


def _record(db, model, benchmark, value, raw=None, version=1):
    record(Outcome.from_score(Score.of(value, model_identifier=model, benchmark_identifier=benchmark,
                                       benchmark_version=version, raw=Score.of(value if raw is None else raw))), db)


@pytest.fixture
def tree():
    return build_tree(LEAVES, INNER)


def test_hand_computed_tree(tree, tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'r.sqlite'}")
    _record(db, "m", "v4a", 0.9, version=1)       # an old version: ignored
    _record(db, "m", "v4a", 0.4, version=2)
    # NaN counts 0: a done row without a score, as databases written before issue 32 may hold (record refuses it
    # now; Database.record is the row-writing step under it)
    db.record(Outcome.from_score(Score.of(float("nan"), model_identifier="m", benchmark_identifier="v4b",
                                          benchmark_version=1, raw=Score.of(float("nan")))))
    _record(db, "m", "v1b", 0.7)                  # succeeded, then failed: the done score counts (issue 36)
    record(Outcome.from_failure("m", "v1b", "boom", provenance={"benchmark": {"version": 1}}), db)
    _record(db, "m", "ita", 0.6)
    _record(db, "m", "beh", 0.3)
    _record(db, "m", "fam1", 0.5)                 # fam2 missing
    _record(db, "m", "eng", 0.9, raw=0.8)         # engineering: raw
    _record(db, "other", "ita", 0.2)
    entries = leaderboard_records(db, tree=tree)
    assert [e["model"] for e in entries] == ["m", "other"]
    scores, missing = entries[0]["scores"], entries[0]["missing"]
    expected = {"v4a": 0.4, "v4b": None, "v1a": None, "v1b": 0.7, "ita": 0.6, "beh": 0.3, "fam1": 0.5, "fam2": None,
                "eng": 0.8, "V4": 0.2, "V1": 0.35, "IT": 0.6, "neural_vision": (0.35 + 0.2 + 0.6) / 3, "fam": 0.25,
                "behavior_vision": 0.275, "average_vision": ((0.35 + 0.2 + 0.6) / 3 + 0.275) / 2,
                "engineering_vision": 0.8}
    assert set(scores) == set(expected)
    for node, value in expected.items():
        assert scores[node] == (None if value is None else pytest.approx(value, abs=1e-12)), node
    assert missing == {"v4a": 0, "v4b": 1, "v1a": 1, "v1b": 0, "ita": 0, "beh": 0, "fam1": 0, "fam2": 1, "eng": 0,
                       "V4": 1, "V1": 1, "IT": 0, "neural_vision": 2, "fam": 1, "behavior_vision": 1,
                       "average_vision": 3, "engineering_vision": 0}
    assert entries[0]["failed"] == {"v1b": "boom"}  # the failure beside the done score it does not hide
    assert entries[0]["complete"] == [6, 9]         # v4a, v1b, ita, beh, fam1, eng of the 9 leaves
    # the model with one IT score: IT 0.2, neural 0.2/3, behaviour missing (all children missing) -> counts 0
    other = entries[1]["scores"]
    assert other["behavior_vision"] is None and other["average_vision"] == pytest.approx(0.2 / 3 / 2)
    assert list(scores)[:3] == ["average_vision", "neural_vision", "V1"]


def test_all_missing_is_missing_not_zero(tree):
    scores, missing = aggregate(tree, {})
    assert all(v is None for v in scores.values()) and missing["average_vision"] == 8
    scores, _ = aggregate(tree, {"eng": 0.0})
    assert scores["engineering_vision"] == 0.0 and scores["average_vision"] is None


def test_registered_tree_leaves_out_selection_benchmarks_and_engineering_from_the_average(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'r.sqlite'}")
    _record(db, "m", "Cowley2026.190923.V4-pls", 0.9)          # selection-only: never counts
    _record(db, "m", "Geirhos2021edge-top1", 0.3)              # engineering: not in the average
    entry, = leaderboard_records(db)
    assert "Cowley2026.190923.V4-pls" not in entry["scores"]
    assert entry["scores"]["average_vision"] is None and entry["scores"]["engineering_vision"] == pytest.approx(0.1)
    in_average = [b for b, parent in benchmark_parents().items() if root_of(parent) == "average_vision"]
    assert len(in_average) >= 10  # the 16 built-in benchmarks: 3 are selection-only, 3 engineering
    assert entry["missing"]["average_vision"] == len(in_average) and entry["missing"]["engineering_vision"] == 2
    assert set(entry["scores"]) >= {"average_vision", "neural_vision", "behavior_vision", "V4", "IT",
                                    "engineering_vision", "Geirhos2021", "Geirhos2021-top1"}
    only, = leaderboard_records(db, benchmarks="Geirhos2021*top1")
    assert set(only["scores"]) == {"engineering_vision", "Geirhos2021-top1", "Geirhos2021cueconflict-top1",
                                   "Geirhos2021edge-top1", "Geirhos2021silhouette-top1"}


def test_dataframe_is_the_same_numbers(tmp_path):
    import brainscore
    db = Database(f"sqlite:///{tmp_path / 'r.sqlite'}")
    _record(db, "m", "Kiani2007.IT-rdm", 0.34)
    frame = brainscore.leaderboard(db)
    assert frame.loc["m", "IT"] == pytest.approx(0.17) and frame.loc["m", "IT missing"] == 1
    # neural_vision = mean over its children with benchmarks (V1, V4, IT), the missing V1 and V4 counting 0
    assert math.isnan(frame.loc["m", "V4"]) and frame.loc["m", "neural_vision"] == pytest.approx(0.17 / 3)


def test_a_model_whose_every_run_failed_is_not_listed(tree, tmp_path):
    """Issue 25 #6: a failed ``brainscore score`` (weights that could not load) put an all-dash model on the
    leaderboard."""
    db = Database(f"sqlite:///{tmp_path / 'r.sqlite'}")
    record(Outcome.from_failure("broken", "ita", "weights missing", provenance={"benchmark": {"version": 1}}), db)
    _record(db, "fine", "ita", 0.5)
    record(Outcome.from_failure("fine", "beh", "boom", provenance={"benchmark": {"version": 1}}), db)
    assert [e["model"] for e in leaderboard_records(db, tree=tree)] == ["fine"]


def test_the_leaderboard_as_it_was_at_a_date(tree, tmp_path):
    """``at``: only scores that ended by then, each benchmark at the newest version recorded by then, and the
    benchmarks without a score by then left out (the reference's wayback view)."""
    import datetime as dt

    db = Database(f"sqlite:///{tmp_path / 'r.sqlite'}")

    def scored(model, benchmark, value, day, version=1):
        record(Outcome.from_score(Score.of(value, model_identifier=model, benchmark_identifier=benchmark,
                                           benchmark_version=version, raw=Score.of(value),
                                           provenance={"end": f"2026-{day}T12:00:00+00:00"})), db)

    scored("m", "ita", 0.6, "01-10")
    scored("m", "v4a", 0.4, "01-10")
    scored("m", "v4a", 0.8, "03-01", version=2)   # a new version, later
    scored("late", "ita", 0.9, "03-01")           # a model that came later
    scored("m", "beh", 0.3, "03-01")              # a benchmark scored only later
    then = dt.datetime(2026, 2, 1, tzinfo=dt.timezone.utc)
    (entry,) = leaderboard_records(db, tree=tree, at=then)
    assert entry["model"] == "m" and entry["scores"]["v4a"] == pytest.approx(0.4)
    assert "beh" not in entry["scores"] and "behavior_vision" not in entry["scores"]  # did not exist yet
    # v4b, V1's and IT's other benchmarks had no score by then either: V4 = 0.4, IT = 0.6, no V1
    assert "v4b" not in entry["scores"] and "V1" not in entry["scores"]
    assert entry["scores"]["neural_vision"] == pytest.approx((0.4 + 0.6) / 2)
    now = {e["model"]: e for e in leaderboard_records(db, tree=tree, at=dt.datetime(2026, 3, 2))}
    assert set(now) == {"m", "late"} and now["m"]["scores"]["v4a"] == pytest.approx(0.8)
    assert leaderboard_records(db, tree=tree, at=dt.datetime(2025, 1, 1)) == []
