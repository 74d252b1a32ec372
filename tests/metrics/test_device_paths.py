"""Issue 24: CKA, the bootstrap and layer selection's PCA take the device; torch equals numpy to rounding.

No GPU here: every torch path runs on the CPU (``device="cpu"``), as in test_metric_device.py.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import brainscore
from benchmark_helpers import behavioral_assembly, pixel_features, read_trials
from brainscore.metrics import bootstrap as B
from brainscore.metrics import device as metric_device
from brainscore.metrics.similarity.cka import CKACrossValidated, CKAMetric

RTOL = 1e-12


@pytest.fixture(scope="module")
def averaged():
    from brainscore.data.assemblies import average_repetition

    return average_repetition(brainscore.load_dataset("Cowley2026.210325").squeeze("time_bin"))


@pytest.fixture(scope="module")
def pixels(averaged):
    return pixel_features(averaged.attrs["stimulus_set"], block=14, region="V4")


@pytest.mark.parametrize("unbiased", [True, False])
def test_cka_on_torch_cpu_equals_numpy_on_real_data(pixels, averaged, unbiased, monkeypatch):
    numpy_score = CKAMetric(unbiased=unbiased, dtype=np.float64)(pixels, averaged)
    seen = []
    original = CKAMetric.__call__.__globals__["kernels"].linear_cka

    def spy(x, y, **kwargs):
        seen.append((type(x), type(y)))
        return original(x, y, **kwargs)

    monkeypatch.setattr(CKAMetric.__call__.__globals__["kernels"], "linear_cka", spy)
    torch_score = CKAMetric(unbiased=unbiased, dtype=np.float64, device="cpu")(pixels, averaged)
    assert seen == [(torch.Tensor, torch.Tensor)]                      # the torch path ran
    assert 0.05 < float(numpy_score) < 0.9
    assert float(torch_score) == pytest.approx(float(numpy_score), rel=RTOL)
    with metric_device.computing_on("cpu"):                             # the benchmark's context
        assert float(CKAMetric(unbiased=unbiased, dtype=np.float64)(pixels, averaged)) == float(torch_score)


def test_cross_validated_cka_on_torch_cpu_equals_numpy(pixels, averaged):
    numpy_score = CKACrossValidated(dtype=np.float64, stratification_coord=None)(pixels, averaged)
    torch_score = CKACrossValidated(dtype=np.float64, stratification_coord=None, device="cpu")(pixels, averaged)
    # the unbiased HSIC of a 576-stimulus split subtracts sums ~1e4 times its value: 9e-12 measured
    np.testing.assert_allclose(torch_score.attrs["raw"].values, numpy_score.attrs["raw"].values, rtol=1e-10)
    assert float(torch_score) == pytest.approx(float(numpy_score), rel=1e-10)


def test_the_device_stays_out_of_the_metrics_name():
    """The repr names the metric in cache keys and provenance: the numpy metric's name is unchanged."""
    assert repr(CKAMetric(device="cpu")) == repr(CKAMetric()) == \
        "CKAMetric(comparison_coord='stimulus_id', dtype=<class 'numpy.float64'>, neuroid_dim='neuroid', unbiased=True)"


# ---- the bootstrap ---------------------------------------------------------------------------------
def test_weighted_pearson_and_mean_on_torch_equal_numpy():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((80, 6)), rng.standard_normal((80, 6))
    x[:, 0] += 2 * y[:, 0]
    x[[3, 9], 2] = np.nan                                               # missing values: the masked moments
    weights = B.resample_counts(80, 200, seed=1)
    expected = B.weighted_pearson(weights, x, y)
    assert np.isfinite(expected).all() and expected[:, 0].mean() > 0.8
    np.testing.assert_allclose(B.weighted_pearson(weights, x, y, device="cpu"), expected, rtol=1e-12, atol=1e-14)
    with metric_device.computing_on("cpu"):                             # a benchmark's bootstrap(device=...)
        np.testing.assert_allclose(B.weighted_pearson(weights, x, y), expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(B.weighted_mean(weights, y, device="cpu"), B.weighted_mean(weights, y), rtol=1e-13)


def test_weighted_spearman_pairs_on_torch_equal_numpy_with_ties():
    rng = np.random.default_rng(4)
    n = 30
    rows, cols = np.triu_indices(n, 1)
    a = np.round(rng.random(len(rows)), 1)                              # many ties
    b = np.stack([a + rng.standard_normal(len(rows)), np.round(rng.random(len(rows)), 2)], axis=1)
    weights = B.resample_counts(n, 50, seed=2)
    expected = B.weighted_spearman_pairs(weights, rows, cols, a, b)
    got = B.weighted_spearman_pairs(weights, rows, cols, a, b, device="cpu")
    assert got.shape == (50, 2) and 0.1 < expected[:, 0].mean() < 0.6
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    # one resample of all-ones weights is the plain Spearman r (scipy), with ties as mid-ranks
    import scipy.stats
    ones = np.ones((1, n))
    assert B.weighted_spearman_pairs(ones, rows, cols, a, b[:, 0], device="cpu")[0] == \
        pytest.approx(scipy.stats.spearmanr(a, b[:, 0])[0], rel=1e-12)


# ---- behavioural: error consistency's bootstrap ---------------------------------------------------
def test_error_consistency_bootstrap_on_torch_equals_numpy_on_geirhos_data(shared_data):
    """Geirhos 2019 cue-conflict, 10 subjects and AlexNet: the resampled kappas' products run in torch."""
    from brainscore.metrics.behavior.error_consistency import ErrorConsistency, ErrorConsistencyCeiling

    humans = behavioral_assembly(read_trials(shared_data, "cue-conflict", "subject-*"))
    alexnet = behavioral_assembly(read_trials(shared_data, "cue-conflict", "alexnet"), with_subject=False)
    stimuli = np.unique(np.asarray(humans["stimulus_id"].values).astype(str))
    weights = B.resample_counts(len(stimuli), 100, seed=0)
    metric, ceiling = ErrorConsistency(), ErrorConsistencyCeiling()
    expected = metric.bootstrap(alexnet, humans, weights, stimuli)
    expected_ceiling = ceiling.bootstrap(humans, weights, stimuli)
    with metric_device.computing_on("cpu"):
        got = metric.bootstrap(alexnet, humans, weights, stimuli)
        got_ceiling = ceiling.bootstrap(humans, weights, stimuli)
        from brainscore.metrics.behavior import error_consistency
        assert isinstance(error_consistency._weights_on(weights), torch.Tensor)   # the torch path ran
    assert isinstance(error_consistency._weights_on(weights), np.ndarray)
    assert expected.shape == (100,) and 0.1 < np.nanmean(expected) < 0.4 and 0.2 < np.nanmean(expected_ceiling) < 0.5
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_allclose(got_ceiling, expected_ceiling, rtol=1e-12)
