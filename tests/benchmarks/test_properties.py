"""PropertiesBenchmark: model neuroid property distributions against the data's, on real V4 responses."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ks_2samp

import brainscore
from brainscore.benchmarks.properties import PropertiesBenchmark
from brainscore.data import DataAssembly, NeuroidAssembly, PropertiesAssembly, average_repetition
from brainscore.metrics.score import Score
from brainscore.models.precomputed import PrecomputedFeatures

from benchmark_helpers import pixel_features


def mean_response(responses: DataAssembly, stimuli) -> PropertiesAssembly:
    """The property of the test: each neuroid's mean response over the stimuli (``neuroid x neuronal_property``)."""
    values = np.asarray(responses.transpose("presentation", "neuroid").values, dtype=float).mean(axis=0)
    return PropertiesAssembly(values[:, None], dims=("neuroid", "neuronal_property"),
                              coords={"neuroid_id": ("neuroid", responses["neuroid_id"].values),
                                      "neuronal_property": ["mean_response"]})


@pytest.fixture(scope="module")
def v4():
    return average_repetition(brainscore.load_dataset("Cowley2026.210325")).squeeze("time_bin", drop=True)


@pytest.fixture(scope="module")
def data_properties(v4):
    properties = mean_response(v4, None)
    properties.attrs["mean_response_bins"] = np.linspace(0, 20, 21)
    return properties


def one_minus_ks(model, data) -> Score:
    return Score.of(1 - ks_2samp(model.values.ravel(), data.values.ravel()).statistic)


def test_score_is_metric_over_ceiling(v4, data_properties):
    stimuli = v4.attrs["stimulus_set"]
    features = pixel_features(stimuli, block=14, region="V4") / 10  # 192 "neuroids", values 0-25.5
    benchmark = PropertiesBenchmark("test.V4-mean_response", 1, data_properties, stimuli, property_func=mean_response,
                                    similarity_metric=one_minus_ks, ceiling_func=lambda data: Score.of(0.8),
                                    visual_degrees=11.2, number_of_trials=1, region="V4")
    model = PrecomputedFeatures(NeuroidAssembly(features), visual_degrees=11.2)
    score = benchmark(model)
    model_means = features.values.mean(axis=0)
    expected = 1 - ks_2samp(model_means, data_properties.values.ravel()).statistic
    assert float(score.raw) == pytest.approx(expected, abs=1e-12)
    assert float(score) == pytest.approx(expected / 0.8, abs=1e-12)
    assert benchmark.parent == "V4"


def ks_benchmark(identifier: str, data_properties, stimuli) -> PropertiesBenchmark:
    """The V4 mean-response benchmark scored with the registered bootstrap KS similarity and its ceiling."""
    return PropertiesBenchmark(
        identifier, 1, data_properties, stimuli, property_func=mean_response,
        similarity_metric=brainscore.load_metric("ks_similarity", property_name="mean_response"),
        ceiling_func=brainscore.load_ceiling("ks_similarity", property_name="mean_response"),
        visual_degrees=11.2, number_of_trials=1, region="V4")


def test_the_data_as_model_scores_one_with_ks_similarity(v4, data_properties):
    """Model properties equal to the data's: the bootstrap KS similarity equals its ceiling, so the score is 1."""
    stimuli = v4.attrs["stimulus_set"]
    benchmark = ks_benchmark("test.V4-mean_response_ks", data_properties, stimuli)
    score = benchmark(PrecomputedFeatures(v4, visual_degrees=11.2))
    assert 0 < float(benchmark.ceiling) < 1
    assert float(score) == pytest.approx(1.0, abs=1e-12)


def independent_ks_similarity(model_values, data_values, bins, n_samples=1000, seed=0) -> float:
    """The reference's bootstrap KS similarity written out with a loop and ``np.histogram`` (Marques et al. 2021).

    Both value sets are clipped into the data's bins; each of ``n_samples`` resamples draws as many model
    neurons as the data have (``RandomState(seed).choice``); similarity = 1 - KS / KS_max, KS_max being the
    largest KS distance of the data histogram to a point mass in its first or last bin; the mean over resamples.
    """
    rng = np.random.RandomState(seed)
    model = np.clip(np.asarray(model_values, float), bins[0], bins[-1])
    data = np.clip(np.asarray(data_values, float), bins[0], bins[-1])
    data_cdf = np.cumsum(np.histogram(data, bins)[0] / len(data))
    n_bins = len(bins) - 1
    ks_max = max(np.abs(np.cumsum(np.eye(n_bins)[0]) - data_cdf).max(),
                 np.abs(np.cumsum(np.eye(n_bins)[-1]) - data_cdf).max())
    similarities = []
    for _ in range(n_samples):
        sample = rng.choice(model, len(data))
        model_cdf = np.cumsum(np.histogram(sample, bins)[0] / len(sample))
        similarities.append(1 - np.abs(model_cdf - data_cdf).max() / ks_max)
    return float(np.mean(similarities))


def test_other_data_scored_with_ks_similarity_matches_an_independent_computation(v4, data_properties):
    """A model whose neuroids differ from the data (pixel patches of the same images): score = KS similarity /
    ceiling, each recomputed independently; the score is far from 1, so an error in either would show."""
    stimuli = v4.attrs["stimulus_set"]
    benchmark = ks_benchmark("test.V4-mean_response_ks_other", data_properties, stimuli)
    features = pixel_features(stimuli, block=14, region="V4") / 10
    score = benchmark(PrecomputedFeatures(NeuroidAssembly(features), visual_degrees=11.2))
    bins = data_properties.attrs["mean_response_bins"]
    data_values = data_properties.values.ravel()
    raw = independent_ks_similarity(features.values.mean(axis=0), data_values, bins)
    ceiling = independent_ks_similarity(data_values, data_values, bins)
    assert float(score.raw) == pytest.approx(raw, abs=1e-12)
    assert float(benchmark.ceiling) == pytest.approx(ceiling, abs=1e-12)
    assert float(score) == pytest.approx(raw / ceiling, abs=1e-12)
    assert float(score) < 0.9
