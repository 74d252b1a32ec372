"""Every recorded score is checked where it enters the database (issue 32): a done score is finite, inside the range
its benchmark declares ([0, 1] unless it declares another), with a finite raw score and ceiling where its formula
uses them; a NaN is never a done score. The check holds on every path: ``record`` (the website's queue, ``brainscore
score``, ``brainscore run``), the journal's replay, and a run's summaries."""
from __future__ import annotations

import json
import math

import pytest

from brainscore.benchmarks.base import Benchmark
from brainscore.benchmarks.neural import NeuralBenchmark
from brainscore.benchmarks.properties import PropertiesBenchmark
from brainscore.benchmarks.rsa import RSABenchmark
from brainscore.results import Database, InvalidScore, journal, record
from brainscore.results.database import identity_of
from brainscore.scoring.outcome import Outcome

BENCHMARK = "Cowley2026.210325.V4-pls"


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def done(score, **fields) -> Outcome:
    return Outcome(model="forged-net", benchmark=BENCHMARK, status="done", score=score, benchmark_version=1, **fields)


@pytest.mark.parametrize("score, message", [
    (1e6, "the score of forged-net on Cowley2026.210325.V4-pls is 1000000.0, outside [0, 1]"),
    (-5.0, "is -5.0, outside [0, 1]"),
    (None, "is missing (NaN or absent): a score must be a finite number"),
    (math.inf, "is inf: a score must be a finite number"),
])
def test_record_refuses_a_score_that_cannot_be_one_and_writes_nothing(home, tmp_path, score, message):
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    with pytest.raises(InvalidScore, match="nothing was recorded as done") as refused:
        record(done(score), url)
    assert message in str(refused.value)
    assert Database(url).scores("forged-net", include_failed=True) == []
    assert journal.pending() == []  # refused before the journal too: it would be refused at every replay


def test_a_nan_from_a_score_object_is_refused_not_stored_as_null(home, tmp_path):
    """``Outcome.from_score`` turns a NaN into None (no number); the check refuses that as a done score."""
    from brainscore.metrics.score import Score

    outcome = Outcome.from_score(Score.of(float("nan"), model_identifier="forged-net", benchmark_identifier=BENCHMARK,
                                          benchmark_version=1))
    assert outcome.status == "done" and outcome.score is None
    with pytest.raises(InvalidScore, match="missing"):
        record(outcome, f"sqlite:///{tmp_path / 'results.sqlite'}")


def test_a_raw_score_or_ceiling_that_is_not_finite_is_refused(home, tmp_path):
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    with pytest.raises(InvalidScore, match="has ceiling missing"):  # a NaN ceiling arrives as None
        record(done(0.5, raw=0.6, ceiling=None, formula="r2_over_ceiling"), url)
    with pytest.raises(InvalidScore, match="has raw score inf"):
        record(done(0.5, raw=math.inf, ceiling=0.7, formula="raw_over_ceiling"), url)
    assert record(done(0.5, raw=0.6, ceiling=0.72, formula="r2_over_ceiling"), url) > 0  # 0.6² / 0.72
    assert record(done(0.25, formula="raw"), url) > 0  # no ceiling, no raw: the score is the raw score


def test_a_declared_range_is_what_is_checked(home, tmp_path):
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    assert record(done(1.7, score_range=(0.0, None)), url) > 0  # r² over a noisy ceiling may exceed 1
    assert record(done(-0.2, score_range=(None, None)), url) > 0  # an anti-correlated model on an RSA benchmark
    with pytest.raises(InvalidScore, match=r"is -0.2, outside its benchmark's range \[0, inf\)"):
        record(done(-0.2, score_range=(0.0, None)), url)
    assert [row.score for row in Database(url).scores("forged-net")] == [1.7, -0.2]


def test_a_failure_is_always_recordable(home, tmp_path):
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    assert record(Outcome.from_failure("forged-net", BENCHMARK, "boom"), url) > 0


def test_benchmarks_declare_the_ranges_their_formulas_give():
    assert Benchmark.score_range == (0.0, 1.0)
    assert NeuralBenchmark.score_range == (0.0, math.inf)  # r² / c, never negative, may exceed 1
    assert PropertiesBenchmark.score_range == (0.0, math.inf)
    assert RSABenchmark.score_range == (0.0, 1.0)  # clipped since issue 36 (the unclipped value is provenance)


@pytest.mark.parametrize("fields", [{"score_range": (0.0, 1.0)}, {"score_range": (None, None)}, {}])
def test_a_done_rsa_score_above_one_is_refused(home, tmp_path, fields):
    """Issue 36: Kriegeskorte2008.IT-rdm 1.0106 was recorded as done. A clipped formula's score lies in [0, 1]
    even where a (forged or older) outcome declares no bound; 1.0 itself is a score."""
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    rsa = dict(model="copy-net", benchmark="Kriegeskorte2008.IT-rdm", status="done", benchmark_version=1,
               raw=0.52498, ceiling=0.51946, formula="raw_over_ceiling_clipped", **fields)
    with pytest.raises(InvalidScore, match="is 1.0106, .*nothing was recorded as done"):
        record(Outcome(score=1.0106, **rsa), url)
    with pytest.raises(InvalidScore, match="is -0.05"):
        record(Outcome(score=-0.05, **rsa), url)
    assert Database(url).scores("copy-net", include_failed=True) == []
    assert record(Outcome(score=1.0, **rsa), url) > 0


def test_the_range_travels_with_the_outcome_and_its_json():
    from brainscore.metrics.score import Score

    outcome = Outcome.from_score(Score.of(1.2, model_identifier="m", benchmark_identifier=BENCHMARK, benchmark_version=1,
                                          score_range=(0.0, math.inf), duration_s=1.0))
    assert outcome.score_range == (0.0, None)
    again = Outcome.from_json(json.loads(json.dumps(outcome.to_json())))  # strict JSON: no Infinity
    assert again.score_range == (0.0, None) and again == outcome


def test_the_journal_never_replays_a_forged_score(home, tmp_path):
    """An entry written into the journal by hand (or by anything else that can write the home) with a score of 1e6
    is set aside when the database opens, with a warning; a valid entry beside it is recorded."""
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    Database(url)
    forged = journal.keep(done(1e6).to_json(), identity_of(url), "written by hand")
    honest = journal.keep(done(0.31).to_json(), identity_of(url), "the database was locked")
    with pytest.warns(UserWarning, match=r"is not recorded .* is 1000000.0, outside \[0, 1\]"):
        db = Database(url)
    assert db.replayed == 1
    assert [row.score for row in db.scores("forged-net")] == [0.31]
    assert not forged.exists() and forged.with_name(forged.name + ".refused").exists() and not honest.exists()
    assert journal.pending() == []
    Database(url)  # not replayed again (no second warning)


def test_a_run_reports_an_invalid_score_as_the_failure_of_its_pair(home, tmp_path):
    from brainscore.results.records import DatabaseOutcomeStore
    from brainscore.runner.engine import _finish

    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    summary = _finish(DatabaseOutcomeStore(Database(url)), done(float("inf")), "key", None)
    assert summary["status"] == "failed" and summary["failure"].startswith("InvalidScore: the score of forged-net")
    (row,) = Database(url).scores("forged-net", include_failed=True)
    assert row.status == "failed"
