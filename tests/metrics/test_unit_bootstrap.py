"""``brainscore.metrics.bootstrap``'s error over units (``unit_bootstrap_error``, ``attach_unit_error``,
``declare_no_error``) against a hand computation with the same generator and seed."""
from __future__ import annotations

import math

import numpy as np
import pytest
import xarray as xr

from brainscore.metrics.bootstrap import (ERROR_KEY, ERROR_NAN_REASON_KEY, ERROR_OVER_KEY, N_BOOTSTRAP_KEY,
                                          attach_unit_error, declare_no_error, unit_bootstrap_error)
from brainscore.metrics.score import Score


def test_the_error_of_a_mean_is_the_hand_computed_bootstrap():
    values = xr.DataArray([0.2, 0.5, 0.9, 0.4, 0.1], dims=("subject",))
    generator = np.random.default_rng(7)
    draws = [values.values[generator.integers(0, 5, 5)].mean() for _ in range(300)]
    assert unit_bootstrap_error(values, ["subject"], n_bootstrap=300, seed=7) == pytest.approx(np.std(draws, ddof=1),
                                                                                                abs=1e-15)


def test_a_crossed_design_redraws_each_dim_in_turn():
    values = xr.DataArray(np.random.default_rng(0).normal(size=(4, 6)), dims=("subject", "stimulus"))
    generator = np.random.default_rng(2)
    draws = []
    for _ in range(50):
        subjects, stimuli = generator.integers(0, 4, 4), generator.integers(0, 6, 6)
        draws.append(values.values[np.ix_(subjects, stimuli)].mean())
    error = unit_bootstrap_error(values, ["subject", "stimulus"], n_bootstrap=50, seed=2)
    assert error == pytest.approx(np.std(draws, ddof=1), abs=1e-15)
    median = unit_bootstrap_error(values, ["subject"], aggregate=lambda v: float(np.median(v)), n_bootstrap=20, seed=1)
    generator = np.random.default_rng(1)
    draws = [np.median(values.values[generator.integers(0, 4, 4)]) for _ in range(20)]
    assert median == pytest.approx(np.std(draws, ddof=1), abs=1e-15)


def test_the_error_of_a_mean_tends_to_the_standard_error():
    values = xr.DataArray(np.arange(1.0, 9.0), dims=("subject",))
    standard_error = values.std().item() / math.sqrt(8)  # population sd / sqrt(n)
    assert unit_bootstrap_error(values, ["subject"], n_bootstrap=4000) == pytest.approx(standard_error, rel=0.05)


def test_nan_values_are_left_out_and_an_all_nan_error_says_why():
    values = xr.DataArray([0.2, np.nan, 0.6], dims=("fold",))
    generator = np.random.default_rng(0)
    picks = [values.values[generator.integers(0, 3, 3)] for _ in range(100)]
    draws = [p[np.isfinite(p)].mean() for p in picks if np.isfinite(p).any()]  # all-NaN resamples left out
    assert unit_bootstrap_error(values, ["fold"], n_bootstrap=100) == pytest.approx(np.std(draws, ddof=1), abs=1e-15)
    score = attach_unit_error(Score(0.0), xr.DataArray([np.nan, np.nan], dims=("fold",)), ["fold"], n_bootstrap=10)
    assert math.isnan(score.attrs[ERROR_KEY])
    reason = "fewer than two of the 10 resamples over ['fold'] gave a finite aggregate"
    assert score.attrs[ERROR_NAN_REASON_KEY] == reason


def test_attach_sets_the_keys_and_keeps_a_raw_already_there():
    values = xr.DataArray([1.0, 2.0, 4.0], dims=("subject",))
    score = attach_unit_error(Score(7 / 3), values, ["subject"], n_bootstrap=40, seed=3)
    assert score.attrs[ERROR_KEY] == unit_bootstrap_error(values, ["subject"], n_bootstrap=40, seed=3)
    assert score.attrs[ERROR_OVER_KEY] == ["subject"] and score.attrs[N_BOOTSTRAP_KEY] == 40
    assert score.attrs["raw"] is values and ERROR_NAN_REASON_KEY not in score.attrs
    scalar = Score.of(7 / 3, raw=Score(0.5))
    assert float(attach_unit_error(scalar, values, ["subject"], n_bootstrap=5).attrs["raw"]) == 0.5


def test_bad_arguments_and_declare_no_error():
    values = xr.DataArray([1.0, 2.0], dims=("subject",))
    with pytest.raises(ValueError, match=r"cannot resample over \['stimulus'\]: not dims of the values"):
        unit_bootstrap_error(values, ["stimulus"])
    with pytest.raises(ValueError, match="n_bootstrap must be at least 2"):
        unit_bootstrap_error(values, ["subject"], n_bootstrap=1)
    score = declare_no_error(Score(1.0), "a single subject")
    assert math.isnan(score.attrs[ERROR_KEY]) and score.attrs[ERROR_NAN_REASON_KEY] == "a single subject"
    with pytest.raises(ValueError, match="needs a reason"):
        declare_no_error(Score(1.0), " ")
