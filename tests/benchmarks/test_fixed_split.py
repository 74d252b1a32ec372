"""TrainTestNeuralBenchmark on real V4 data (Cowley 2026, session 210325) with a fixed image split."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import Ridge

import brainscore
from brainscore.benchmarks.fixed_split import TrainTestNeuralBenchmark, split_half_reliability
from brainscore.data import NeuroidAssembly
from brainscore.metrics.score import Score
from brainscore.models.precomputed import PrecomputedFeatures

from benchmark_helpers import pixel_features

N_TRAIN = 540


def ridge_split(source_train, source_test, target_train, target_test) -> Score:
    """A ``*_split`` metric for the test: Ridge(alpha=1) on train, median over neuroids of test Pearson r."""
    def by_id(a):
        return a.isel(presentation=np.argsort(a["stimulus_id"].values, kind="stable"))
    source_train, source_test, target_train, target_test = map(by_id, (source_train, source_test, target_train,
                                                                       target_test))
    prediction = Ridge(alpha=1).fit(source_train.values, target_train.values).predict(source_test.values)
    r = [np.corrcoef(prediction[:, i], target_test.values[:, i])[0, 1] for i in range(prediction.shape[1])]
    return Score.of(np.median(r), n=len(r))


@pytest.fixture(scope="module")
def recordings():
    data = brainscore.load_dataset("Cowley2026.210325").squeeze("time_bin")
    images = sorted(set(data["stimulus_id"].values))
    train = data.isel(presentation=np.flatnonzero(np.isin(data["stimulus_id"].values, images[:N_TRAIN])))
    test = data.isel(presentation=np.flatnonzero(np.isin(data["stimulus_id"].values, images[N_TRAIN:])))
    return train, test


@pytest.fixture(scope="module")
def features(recordings):
    return pixel_features(recordings[0].attrs["stimulus_set"], block=14, region="V4")  # 8 x 8 x 3 = 192 features


def averaged(assembly) -> pd.DataFrame:
    """Repetition-averaged responses, stimuli x neuroids, sorted by stimulus (pandas, independently)."""
    frame = pd.DataFrame(assembly.values, columns=assembly["neuroid_id"].values)
    frame["stimulus_id"] = assembly["stimulus_id"].values
    return frame.groupby("stimulus_id").mean().sort_index()


def reliability_by_hand(assembly) -> pd.Series:
    frame = pd.DataFrame(assembly.values, columns=assembly["neuroid_id"].values)
    frame["stimulus_id"] = assembly["stimulus_id"].values
    frame["half"] = frame.groupby("stimulus_id").cumcount() % 2  # repetitions are in order within an image
    halves = [frame[frame["half"] == h].drop(columns="half").groupby("stimulus_id").mean() for h in (0, 1)]
    common = halves[0].index.intersection(halves[1].index)
    r = halves[0].loc[common].corrwith(halves[1].loc[common])
    return 2 * r / (1 + r)


def test_split_half_reliability_hand_worked():
    """Halves (1, 2, 3, 4) and (1, 3, 2, 4): r = 0.8, Spearman-Brown 2(0.8)/1.8 = 0.8889; identical halves: 1."""
    first, second = np.array([1, 2, 3, 4.]), np.array([1, 3, 2, 4.])
    values = np.stack([np.concatenate([first, second]), np.concatenate([first, first])], axis=1)
    assembly = NeuroidAssembly(values, dims=("presentation", "neuroid"), coords={
        "stimulus_id": ("presentation", list("abcd") * 2), "repetition": ("presentation", [0] * 4 + [1] * 4),
        "neuroid_id": ("neuroid", ["x", "y"])})
    np.testing.assert_allclose(split_half_reliability(assembly).values, [1.6 / 1.8, 1.0])


def test_split_half_reliability_on_real_data(recordings):
    train, _ = recordings
    ours = split_half_reliability(train)
    expected = reliability_by_hand(train)
    np.testing.assert_allclose(ours.values, expected.loc[ours["neuroid_id"].values].values, atol=1e-10)


def test_score_without_ceiling_is_r_squared(recordings, features):
    train, test = recordings
    benchmark = TrainTestNeuralBenchmark("test.V4-ridge_split", 1, train, test, similarity_metric=ridge_split,
                                         visual_degrees=11.2, number_of_trials=1, region="V4")
    model = PrecomputedFeatures(features, visual_degrees=11.2)
    score = benchmark(model)
    target_train, target_test = averaged(train), averaged(test)
    x = pd.DataFrame(features.values, index=features["stimulus_id"].values)
    prediction = Ridge(alpha=1).fit(x.loc[target_train.index].values, target_train.values).predict(
        x.loc[target_test.index].values)
    r = np.median([np.corrcoef(prediction[:, i], target_test.values[:, i])[0, 1] for i in range(50)])
    assert float(score) == pytest.approx(r ** 2, abs=1e-9)
    assert score.attrs["n_neuroids"] == 50 and benchmark.parent == "V4"


def test_reliability_filter_and_ceiling(recordings, features):
    train, test = recordings
    threshold = 0.6
    reliability = reliability_by_hand(train)
    kept = sorted(reliability.index[reliability >= threshold])
    assert 0 < len(kept) < 50
    benchmark = TrainTestNeuralBenchmark("test.V4-ridge_split", 1, train, test, similarity_metric=ridge_split,
                                         visual_degrees=11.2, number_of_trials=1, region="V4",
                                         ceiling_func=lambda assembly: Score.of(0.5, n=assembly.sizes["neuroid"]),
                                         reliability_threshold=threshold)
    assert sorted(benchmark.reliable_neuroids) == kept
    assert benchmark.ceiling.attrs["n"] == len(kept)
    score = benchmark(PrecomputedFeatures(features, visual_degrees=11.2))
    target_train, target_test = averaged(train)[kept], averaged(test)[kept]
    x = pd.DataFrame(features.values, index=features["stimulus_id"].values)
    prediction = Ridge(alpha=1).fit(x.loc[target_train.index].values, target_train.values).predict(
        x.loc[target_test.index].values)
    r = np.median([np.corrcoef(prediction[:, i], target_test.values[:, i])[0, 1] for i in range(len(kept))])
    assert float(score) == pytest.approx(r ** 2 / 0.5, abs=1e-9)
    assert score.attrs["n_neuroids"] == len(kept)


def test_no_reliable_neuroid_is_an_error(recordings):
    from brainscore.errors import ValidationError

    train, test = recordings
    benchmark = TrainTestNeuralBenchmark("t", 1, train, test, similarity_metric=ridge_split, visual_degrees=11.2,
                                         number_of_trials=1, region="V4", reliability_threshold=1.01)
    with pytest.raises(ValidationError, match="no neuroid reaches split-half reliability 1.01"):
        benchmark.reliable_neuroids


def test_with_the_registered_ridge_split_metric_and_internal_consistency(recordings, features):
    """``ridge_split`` (Ridge alpha=1, as the reference) agrees with scikit-learn; the ceiling is that of the test data."""
    train, test = recordings
    benchmark = TrainTestNeuralBenchmark("test.V4-ridge_split_ic", 1, train, test,
                                         similarity_metric=brainscore.load_metric("ridge_split"), visual_degrees=11.2,
                                         number_of_trials=1, region="V4",
                                         ceiling_func=brainscore.load_ceiling("internal_consistency"))
    score = benchmark(PrecomputedFeatures(features, visual_degrees=11.2))
    target_train, target_test = averaged(train), averaged(test)
    x = pd.DataFrame(features.values, index=features["stimulus_id"].values)
    prediction = Ridge(alpha=1).fit(x.loc[target_train.index].values, target_train.values).predict(
        x.loc[target_test.index].values)
    r = np.median([np.corrcoef(prediction[:, i], target_test.values[:, i])[0, 1] for i in range(50)])
    assert float(score.raw) == pytest.approx(r, abs=1e-6)
    ceiling = brainscore.load_ceiling("internal_consistency")(test)
    assert float(score.ceiling) == pytest.approx(float(ceiling), abs=1e-12)
    assert float(score) == pytest.approx(r ** 2 / float(ceiling), abs=1e-6)
