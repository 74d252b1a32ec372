"""The bootstrap: kernels equal the statistics on resampled copies, unit weights reproduce every score,
and the 95% interval covers a known truth in 90-99% of seeded repeats."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from brainscore.benchmarks import neural, rsa
from brainscore.benchmarks.behavioral import AccuracyBenchmark
from brainscore.benchmarks.neural import NeuralBenchmark
from brainscore.data import BehavioralAssembly, NeuroidAssembly, StimulusSet
from brainscore.metrics.bootstrap import (half_averages, percentile_interval, resample_counts, unit_sums,
                                          weighted_pearson, weighted_spearman_pairs)
from brainscore.metrics.ceilings.internal_consistency import InternalConsistency
from brainscore.metrics.neural.regression import CrossRegressedCorrelation
from brainscore.scoring.bootstrap import attach, confidence_interval


def test_weighted_pearson_is_pearson_of_the_resampled_copies():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(30, 4)), rng.normal(size=(30, 4))
    counts = resample_counts(30, 5, seed=1)
    r = weighted_pearson(counts, x, y)
    for b in range(5):
        index = np.repeat(np.arange(30), counts[b].astype(int))
        expected = [np.corrcoef(x[index, k], y[index, k])[0, 1] for k in range(4)]
        np.testing.assert_allclose(r[b], expected, atol=1e-12)
    x[3, 0] = np.nan  # a missing value leaves that unit out of that column only
    index = np.repeat(np.arange(30), counts[0].astype(int))
    keep = index[index != 3]
    assert weighted_pearson(counts[:1], x, y)[0, 0] == pytest.approx(np.corrcoef(x[keep, 0], y[keep, 0])[0, 1])


def test_weighted_spearman_is_spearman_of_the_resampled_rdm():
    rng = np.random.default_rng(2)
    n = 12
    a, b = rng.random((n, n)), rng.random((n, n)).round(1)           # b has ties
    rows, cols = np.triu_indices(n, 1)
    counts = resample_counts(n, 4, seed=3)
    rho = weighted_spearman_pairs(counts, rows, cols, a[rows, cols], b[rows, cols])
    for k in range(4):
        drawn = np.repeat(np.arange(n), counts[k].astype(int))
        i, j = np.triu_indices(len(drawn), 1)
        keep = drawn[i] != drawn[j]                                   # a stimulus paired with its copy: no pair
        p, q = np.minimum(drawn[i], drawn[j])[keep], np.maximum(drawn[i], drawn[j])[keep]
        expected = scipy.stats.spearmanr(a[p, q], b[p, q]).statistic
        assert rho[k] == pytest.approx(expected, abs=1e-12)


def test_half_averages_and_unit_sums():
    values = np.array([[1.0], [3.0], [5.0], [np.nan], [2.0], [4.0]])
    stimuli, repetitions = np.array([0, 0, 0, 1, 1, 1]), np.array([0, 1, 2, 0, 1, 2])
    first, second = half_averages(values, stimuli, repetitions, 2, np.array([[1.0, 0.0, 1.0]]))
    assert first[0, :, 0].tolist() == [3.0, 4.0] and second[0, :, 0].tolist() == [3.0, 2.0]
    sums = unit_sums(np.array(["b", "a", "b"]), np.array(["a", "b"]), np.array([1.0, 2.0, 3.0]))
    assert sums.tolist() == [2.0, 4.0]
    with pytest.raises(ValueError, match="not among"):
        unit_sums(np.array(["c"]), np.array(["a", "b"]), np.array([1.0]))
    assert percentile_interval(np.array([np.nan, 1.0])) is None


def _synthetic_neural(seed=0, stimuli=80, neuroids=12, repetitions=4, features=20):
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(stimuli, 6))
    signal = latent @ rng.normal(size=(6, neuroids))
    trials = signal[None] + rng.normal(scale=1.0, size=(repetitions, stimuli, neuroids))
    ids = np.array([f"s{i:03d}" for i in range(stimuli)])
    recordings = NeuroidAssembly(trials.reshape(-1, neuroids), dims=("presentation", "neuroid"), coords={
        "stimulus_id": ("presentation", np.tile(ids, repetitions)),
        "repetition": ("presentation", np.repeat(np.arange(repetitions), stimuli)),
        "neuroid_id": ("neuroid", [f"n{i}" for i in range(neuroids)]), "region": ("neuroid", ["V4"] * neuroids)})
    recordings.attrs["stimulus_set"] = StimulusSet(pd.DataFrame({"stimulus_id": ids}), identifier="synthetic")
    model = NeuroidAssembly(latent @ rng.normal(size=(6, features)) + rng.normal(scale=0.5, size=(stimuli, features)),
                            dims=("presentation", "neuroid"),
                            coords={"stimulus_id": ("presentation", ids), "neuroid_id": ("neuroid", np.arange(features))})
    return recordings, model


def test_neural_bootstrap_with_unit_weights_reproduces_score_and_ceiling(monkeypatch):
    recordings, model = _synthetic_neural()
    benchmark = NeuralBenchmark("synthetic.V4-pls", 1, recordings,
                                CrossRegressedCorrelation("pls", dict(n_components=5),
                                                          dict(stratification_coord=None)),
                                visual_degrees=8, number_of_trials=1, ceiling_func=InternalConsistency(), region="V4")
    score = benchmark.score_features(model)
    monkeypatch.setattr(neural, "resample_counts", lambda n, resamples, seed: np.ones((1, n)))
    ones = benchmark.bootstrap(score, resamples=1, seed=0)
    assert ones.score[0] == pytest.approx(float(score), abs=1e-12)
    assert ones.ceiling[0] == pytest.approx(float(score.attrs["ceiling"]), abs=1e-12)
    monkeypatch.undo()
    samples = confidence_interval(benchmark, score, resamples=300, seed=0)
    again = confidence_interval(benchmark, score, resamples=300, seed=0)
    np.testing.assert_array_equal(again.score, samples.score)           # seeded
    assert not np.array_equal(confidence_interval(benchmark, score, resamples=300, seed=1).score, samples.score)
    before = score.attrs["error"]
    attach(score, samples)
    low, high = score.attrs["ci95"]
    assert low < float(score) < high and score.attrs["error"] > 0 and score.attrs["ceiling_error"] > 0
    assert score.attrs["error_reference"] == before and score.attrs["error"] != before
    assert "held_out" not in score.attrs["raw"].attrs  # the bootstrap's inputs are not kept


def _accuracy_benchmark(images):
    ids = np.array([f"im{i:04d}" for i in range(images)])
    return AccuracyBenchmark("synthetic-top1", 1, stimulus_set=None, visual_degrees=None, metric=_accuracy()), ids


def _accuracy():
    from brainscore.metrics.behavior.accuracy import Accuracy
    return Accuracy()


def test_interval_covers_a_known_accuracy_in_90_to_99_percent_of_repeats():
    """A model that answers each of 200 images right with probability 0.7: the truth is 0.7."""
    truth, images, repeats = 0.7, 200, 200
    benchmark, ids = _accuracy_benchmark(images)
    covered = 0
    for seed in range(repeats):
        rng = np.random.default_rng(1000 + seed)
        correct = rng.random(images) < truth
        choices = BehavioralAssembly(np.where(correct, "dog", "cat"), dims=("presentation",),
                                     coords={"stimulus_id": ("presentation", ids),
                                             "truth": ("presentation", np.full(images, "dog"))})
        score = benchmark.score_choices(choices)
        low, high = attach(score, confidence_interval(benchmark, score, resamples=1000, seed=seed)).attrs["ci95"]
        covered += low <= truth <= high
    assert 0.90 * repeats <= covered <= 0.99 * repeats, covered


def test_interval_covers_a_known_correlation_in_90_to_99_percent_of_repeats():
    """Bivariate normal with rho = 0.5, 150 stimuli: the stimulus bootstrap of Pearson r covers 0.5."""
    rho, n, repeats = 0.5, 150, 200
    covered = 0
    for seed in range(repeats):
        rng = np.random.default_rng(seed)
        x = rng.normal(size=n)
        y = rho * x + np.sqrt(1 - rho ** 2) * rng.normal(size=n)
        r = weighted_pearson(resample_counts(n, 1000, seed), x[:, None], y[:, None])[:, 0]
        low, high = percentile_interval(r)
        covered += low <= rho <= high
    assert 0.90 * repeats <= covered <= 0.99 * repeats, covered


def test_rsa_bootstrap_is_none_without_a_model_rdm():
    class Fake:
        metric = None
    assert rsa.RSABenchmark.bootstrap(Fake(), attach_free_score(), 10, 0) is None


def attach_free_score():
    from brainscore.metrics.score import Score
    return Score.of(0.5)


def test_the_ceiling_attribute_carries_the_bootstrap_spread_the_cli_prints():
    """Issue 25 #13: ``score.attrs["ceiling"]`` printed ``± 0.0000`` (its own error) where ``brainscore score``
    printed the bootstrap ``ceiling_error``; now both are the standard deviation (ddof=1) of the resampled
    ceilings, and the benchmark's cached ceiling is left as it was."""
    from brainscore.metrics.bootstrap import BootstrapSamples
    from brainscore.metrics.score import Score

    cached = Score.of(0.8, error=0.0)
    result = Score.of(0.5, error=0.01, raw=0.6, ceiling=cached)
    ceilings = np.array([0.78, 0.80, 0.82, 0.79, 0.81])
    attach(result, BootstrapSamples(score=np.array([0.48, 0.5, 0.52, 0.49, 0.51]), ceiling=ceilings,
                                    unit="stimulus", method="test"))
    expected = float(np.std(ceilings, ddof=1))  # 0.015811...
    assert result.attrs["ceiling_error"] == pytest.approx(expected)
    assert result.attrs["ceiling"].error == pytest.approx(expected)
    assert repr(result.attrs["ceiling"]) == f"<Score 0.8000 ± {expected:.4f}>" == "<Score 0.8000 ± 0.0158>"
    assert result.attrs["ceiling"].attrs["error_reference"] == 0.0
    assert cached.error == 0.0  # the benchmark's own ceiling is not changed
