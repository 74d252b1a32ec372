"""ks_similarity as the reference defines it: clipping to the edges, NaN rows in the bootstrap size, the NaN rule."""
from __future__ import annotations

import numpy as np
import pytest

from brainscore.data.assemblies import PropertiesAssembly
from brainscore.metrics.neural.distribution_similarity import KSSimilarity, bootstrap_ks_similarity, ks_similarity

EDGES = np.array([0.0625, 0.125, 0.25, 0.5, 1, 2, 4, 8, 16])


def reference_loop(model, data, bins, seed, n=1000):
    """The reference's BootstrapDistributionSimilarity, line by line, with a seeded generator."""
    model, data = np.array(model, dtype=float), np.array(data, dtype=float)
    with np.errstate(invalid="ignore"):
        data[data < bins[0]], data[data > bins[-1]] = bins[0], bins[-1]
        model[model < bins[0]], model[model > bins[-1]] = bins[0], bins[-1]
    data_hist = np.histogram(data[~np.isnan(data)], bins=bins)[0]
    data_hist = data_hist / data_hist.sum()
    rng = np.random.RandomState(seed)
    similarity = np.zeros(n)
    for s in range(n):
        sample = rng.choice(model, data.shape[0])
        hist = np.histogram(sample[~np.isnan(sample)], bins=bins)[0]
        with np.errstate(invalid="ignore"):
            similarity[s] = ks_similarity(hist / hist.sum(), data_hist)
    if np.isnan(similarity).sum() > 100:
        return 0.0, similarity
    return np.nanmean(similarity), similarity


@pytest.fixture
def data():
    """Cavanaugh-like: 42 NaN rows first, then 148 values."""
    rng = np.random.default_rng(0)
    return np.concatenate([np.full(42, np.nan), 2 ** rng.uniform(-2, 3, size=148)])


def test_nan_rows_count_in_the_bootstrap_sample_size(data):
    rng = np.random.default_rng(1)
    model = np.concatenate([2 ** rng.normal(0, 1.5, size=60), np.full(20, np.nan)])
    center, _, samples = bootstrap_ks_similarity(model, data, EDGES, random_state=0)
    expected, expected_samples = reference_loop(model, data, EDGES, seed=0)
    np.testing.assert_allclose(samples, expected_samples, rtol=0, atol=1e-12)
    assert center == pytest.approx(expected, abs=1e-12)
    # drawing only as many as the data's non-NaN values (148) would be another number
    other, _ = reference_loop(model, data[42:], EDGES, seed=0)
    assert abs(center - other) > 1e-4


def test_values_beyond_the_edges_are_clipped_into_the_end_bins(data):
    q = np.histogram(data[42:], EDGES)[0] / 148
    last = np.zeros(8)
    last[-1] = 1
    for beyond in (16.0, 100.0, np.inf):
        center, error, _ = bootstrap_ks_similarity(np.full(10, beyond), data, EDGES, random_state=0)
        assert center == pytest.approx(ks_similarity(last, q), abs=1e-12) and error == 0
    first = np.zeros(8)
    first[0] = 1
    center, _, _ = bootstrap_ks_similarity(np.array([1e-9, -5.0]), data, EDGES, random_state=0)
    assert center == pytest.approx(ks_similarity(first, q), abs=1e-12)


def test_more_than_a_tenth_of_nan_resamples_scores_zero():
    data = np.array([1.0, 3.0])
    # 2 draws per resample from 1 value + 9 NaN: both NaN with probability 0.81 -> > 100 of 1000 NaN
    model = np.concatenate([[1.0], np.full(9, np.nan)])
    center, error, samples = bootstrap_ks_similarity(model, data, EDGES, random_state=0)
    assert np.isnan(samples).sum() > 100
    assert (center, error) == (0.0, 0.0)
    # 1 value + 1 NaN: both NaN with probability 0.25 -> still > 100
    assert bootstrap_ks_similarity(np.array([1.0, np.nan]), data, EDGES, random_state=0)[0] == 0.0
    # 8 values + 1 NaN in 2 draws: ~1 % NaN resamples -> the mean of the others
    model = np.concatenate([np.full(8, 1.0), [np.nan]])
    center, _, samples = bootstrap_ks_similarity(model, data, EDGES, random_state=0)
    assert 0 < np.isnan(samples).sum() <= 100
    assert center == pytest.approx(np.nanmean(samples)) and center == pytest.approx(reference_loop(model, data, EDGES, 0)[0])


def test_seeded_and_reproducible(data):
    model = 2 ** np.random.default_rng(5).normal(0, 1, size=50)
    properties = PropertiesAssembly(model[:, None], dims=("neuroid", "neuronal_property"),
                                    coords={"neuroid_id": ("neuroid", np.arange(50)),
                                            "neuronal_property": ["surround_diameter"]})
    target = PropertiesAssembly(data[:, None], dims=("neuroid", "neuronal_property"),
                                coords={"neuroid_id": ("neuroid", np.arange(190)),
                                        "neuronal_property": ["surround_diameter"]})
    target.attrs["surround_diameter_bins"] = EDGES
    metric = KSSimilarity("surround_diameter")
    assert float(metric(properties, target)) == float(metric(properties, target))
    assert float(metric(properties, target)) != float(KSSimilarity("surround_diameter", random_state=1)(properties,
                                                                                                       target))
    assert float(metric(properties, target)) == pytest.approx(reference_loop(model, data, EDGES, 0)[0], abs=1e-12)
    assert not np.isnan(target.values[42:]).any()  # the data are not clipped in place
