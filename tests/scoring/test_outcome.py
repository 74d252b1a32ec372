"""A score's outcome is built in one place and read the same way by the runner, the CLI and the database."""
from __future__ import annotations

import dataclasses
import math

import pytest

from brainscore.metrics.score import Score
from brainscore.scoring.outcome import SUMMARY_FIELDS, Outcome, number
from brainscore.scoring.provenance import provenance_key

PROVENANCE = {"model": {"identifier": "m", "weights_sha256": "ab" * 32}, "benchmark": {"identifier": "b", "version": 3},
              "start": "2026-11-25T10:00:00+00:00"}


def _score(**attrs):
    values = dict(model_identifier="m", benchmark_identifier="b", benchmark_version=3, raw=Score.of(0.5501),
                  ceiling=Score.of(0.7731, error=0.005), error=0.0123, ci95=(0.35, 0.43), ceiling_error=0.004,
                  ceiling_ci95=(0.76, 0.78), error_reference=0.02, formula="r2_over_ceiling",
                  layers={"V4": "_blocks.11"}, region="V4", duration_s=12.3456, bootstrap_unit="stimulus",
                  provenance=PROVENANCE)
    values.update(attrs)
    return Score.of(0.3915, **values)


def test_number_is_none_for_what_is_not_a_finite_scalar():
    assert number(Score.of(0.25)) == 0.25 and isinstance(number(Score.of(0.25)), float)
    assert [number(v) for v in (None, float("nan"), "x", [1, 2])] == [None, None, None, None]
    assert number(float("inf")) == math.inf  # infinite is a value the caller refuses with its reason


def test_from_score_reads_every_part():
    outcome = Outcome.from_score(_score())
    assert (outcome.model, outcome.benchmark, outcome.status) == ("m", "b", "done")
    assert (outcome.score, outcome.raw, outcome.ceiling, outcome.error) == (0.3915, 0.5501, 0.7731, 0.0123)
    assert outcome.ci95 == (0.35, 0.43) and outcome.ceiling_ci95 == (0.76, 0.78)
    assert (outcome.ceiling_error, outcome.ceiling_error_reference, outcome.error_reference) == (0.004, 0.005, 0.02)
    assert (outcome.layer, outcome.layers, outcome.region) == ("_blocks.11", {"V4": "_blocks.11"}, "V4")
    assert outcome.benchmark_version == 3 and outcome.bootstrap_unit == "stimulus"
    assert outcome.provenance == PROVENANCE and outcome.provenance_key == provenance_key(PROVENANCE)
    assert outcome.failure is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        outcome.score = 1.0


def test_the_summary_is_the_printed_fields_in_order():
    summary = Outcome.from_score(_score()).summary()
    assert tuple(summary) == ("model", "benchmark", "status", "score", "raw", "ceiling", "error", "ci95",
                              "ceiling_error", "ceiling_ci95", "error_reference", "formula", "layer", "layers",
                              "method", "duration_s")
    assert summary["ci95"] == [0.35, 0.43] and summary["duration_s"] == 12.35
    assert "provenance" not in summary and "failure" not in summary
    assert set(SUMMARY_FIELDS) == set(summary) | {"failure", "log"}


def test_from_failure_keeps_the_message_and_the_traceback():
    try:
        raise ValueError("no such layer")
    except ValueError as error:
        outcome = Outcome.from_failure("m", "b", error, provenance={"run_key": "k"})
    assert outcome.status == "failed" and outcome.failure == "ValueError: no such layer"
    assert outcome.log.startswith("Traceback") and outcome.error is None and outcome.score is None
    assert outcome.provenance == {"run_key": "k"} and outcome.provenance_key == provenance_key({"run_key": "k"})
    summary = outcome.summary()
    assert summary["failure"] == "ValueError: no such layer" and summary["error"] is None
    assert tuple(summary) == SUMMARY_FIELDS


def test_json_round_trip_and_provenance_entries():
    outcome = Outcome.from_score(_score())
    assert Outcome.from_json(outcome.to_json()) == outcome
    keyed = outcome.with_provenance(formula="raw")
    assert keyed.provenance == {**PROVENANCE, "formula": "raw"} and keyed.provenance_key != outcome.provenance_key
    # the run key names the same computation: `brainscore score` and `brainscore run` records of it share a key
    assert outcome.with_provenance(run_key="abc").provenance_key == outcome.provenance_key
    with pytest.raises(ValueError, match="benchmark"):
        Outcome.from_json({"model": "m", "status": "done"})


def test_a_score_without_identifiers_or_not_scalar_is_refused():
    with pytest.raises(ValueError, match="model_identifier"):
        Outcome.from_score(Score.of(0.5))
    assert Outcome.from_score(Score.of(0.5), "m", "b").score == 0.5
