"""The assembly regressions and correlations (:mod:`brainscore.metrics.neural.assembly_regression`) and the time-bin
combinators (:mod:`brainscore.metrics.temporal`) against closed forms and scikit-learn/scipy on the same arrays:
alignment by ``stimulus_id`` and ``neuroid_id`` (a jumbled assembly gives the sorted one's numbers), ordinary least
squares, RidgeCV's leave-one-out choice through the ``n x n`` Gram surrogate, Pearson and Spearman per neuroid, and
the folding of time bins into presentations (time bin fastest) and back."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from sklearn.linear_model import LinearRegression, Ridge, RidgeCV

from brainscore.data.assemblies import NeuroidAssembly
from brainscore.errors import AlignmentError, ValidationError
from brainscore.metrics.neural.assembly_regression import (AssemblyCorrelation, AssemblyRegression, KernelRegression,
                                                           RidgeCVRegression)
from brainscore.metrics.temporal import (PerTimeBin, PerTimeBinRegression, SpanTimeBins, SpanTimeBinsRegression,
                                         fold_time_bins, unfold_time_bins)

N_STIMULI, N_FEATURES, N_NEUROIDS = 40, 6, 3


def _assembly(values: np.ndarray, ids: np.ndarray, prefix: str = "n") -> NeuroidAssembly:
    coords = {"stimulus_id": ("presentation", ids),
              "neuroid_id": ("neuroid", np.array([f"{prefix}{i}" for i in range(values.shape[1])]))}
    dims = ("presentation", "neuroid")
    if values.ndim == 3:
        dims += ("time_bin",)
        coords["time_bin_start"] = ("time_bin", np.arange(values.shape[2]) * 10)
        coords["time_bin_end"] = ("time_bin", np.arange(values.shape[2]) * 10 + 10)
    return NeuroidAssembly(values, dims=dims, coords=coords)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N_STIMULI, N_FEATURES))
    Y = X @ rng.normal(size=(N_FEATURES, N_NEUROIDS)) + 0.5 * rng.normal(size=(N_STIMULI, N_NEUROIDS))
    ids = np.array([f"s{i:02d}" for i in range(N_STIMULI)], dtype=object)
    return X, Y, ids, rng


def test_a_regression_on_assemblies_is_ordinary_least_squares_whatever_the_targets_order(data):
    X, Y, ids, rng = data
    train, test = np.arange(30), np.arange(30, N_STIMULI)
    source = _assembly(X, ids, "f")
    shuffled = rng.permutation(train)
    regression = AssemblyRegression(KernelRegression("linear"))
    regression.fit(source.isel(presentation=train), _assembly(Y[shuffled], ids[shuffled]))
    prediction = regression.predict(source.isel(presentation=test))
    expected = LinearRegression().fit(X[train], Y[train]).predict(X[test])
    np.testing.assert_allclose(prediction.values, expected, rtol=1e-9, atol=1e-12)
    assert list(prediction["stimulus_id"].values) == list(ids[test])                 # the source's presentations
    assert list(prediction["neuroid_id"].values) == ["n0", "n1", "n2"]               # the target's neuroids


def test_a_regression_refuses_a_target_missing_a_stimulus_and_a_prediction_before_fit(data):
    X, Y, ids, _ = data
    regression = AssemblyRegression(KernelRegression("linear"))
    with pytest.raises(RuntimeError, match="before fit"):
        regression.predict(_assembly(X, ids, "f"))
    with pytest.raises(AlignmentError):
        regression.fit(_assembly(X, ids, "f"), _assembly(Y[1:], ids[1:]))


def test_ridgecv_chooses_sklearns_alpha_through_the_gram_surrogate_and_predicts_its_ridge(data):
    _, _, _, rng = data
    X = rng.normal(size=(25, 80))                                                     # features outnumber samples
    Y = X[:, :5] @ rng.normal(size=(5, 4)) + rng.normal(size=(25, 4))
    alphas = [1e-2, 1.0, 10.0, 100.0, 1e4]
    regression = RidgeCVRegression(alphas=alphas).fit(X[:20], Y[:20])
    chosen = RidgeCV(alphas=alphas).fit(X[:20], Y[:20]).alpha_
    assert regression.alpha_ == chosen
    np.testing.assert_allclose(regression.predict(X[20:]), Ridge(alpha=chosen).fit(X[:20], Y[:20]).predict(X[20:]),
                               rtol=1e-7, atol=1e-9)


def test_correlation_per_neuroid_aligns_presentations_and_neuroids_by_id(data):
    _, Y, ids, rng = data
    prediction = _assembly(Y + rng.normal(size=Y.shape), ids)
    rows, columns = rng.permutation(N_STIMULI), np.array([2, 0, 1])
    target = _assembly(Y, ids).isel(presentation=rows, neuroid=columns)
    pearson = AssemblyCorrelation(scipy.stats.pearsonr)(prediction, target)
    spearman = AssemblyCorrelation(scipy.stats.spearmanr)(prediction, target)
    for i in range(N_NEUROIDS):
        assert pearson.values[i] == pytest.approx(scipy.stats.pearsonr(prediction.values[:, i], Y[:, i])[0], abs=1e-12)
        assert spearman.values[i] == pytest.approx(scipy.stats.spearmanr(prediction.values[:, i], Y[:, i])[0],
                                                   abs=1e-12)
    assert list(pearson["neuroid_id"].values) == ["n0", "n1", "n2"]
    with pytest.raises(AlignmentError):
        AssemblyCorrelation(scipy.stats.pearsonr)(prediction, target.isel(presentation=slice(1, None)))


def test_time_bins_fold_into_presentations_time_bin_fastest_and_unfold_back(data):
    _, _, ids, rng = data
    values = rng.normal(size=(4, N_NEUROIDS, 3))
    assembly = _assembly(values, ids[:4])
    folded = fold_time_bins(assembly)
    assert folded.dims == ("presentation", "neuroid")
    np.testing.assert_array_equal(folded.values, values.transpose(0, 2, 1).reshape(12, N_NEUROIDS))
    assert list(folded["stimulus_id"].values[:4]) == ["s00", "s00", "s00", "s01"]
    assert list(folded["time_bin_start"].values[:4]) == [0, 10, 20, 0]
    time_coords = {name: ("time_bin", assembly[name].values) for name in ("time_bin_start", "time_bin_end")}
    unfolded = unfold_time_bins(folded.drop_vars(["time_bin_start", "time_bin_end"]), 3, time_coords)
    np.testing.assert_array_equal(unfolded.transpose("presentation", "neuroid", "time_bin").values, values)
    assert list(unfolded["stimulus_id"].values) == list(ids[:4])


def test_a_metric_per_time_bin_equals_the_metric_on_each_bin_and_spanning_equals_it_on_the_folded_data(data):
    _, _, ids, rng = data
    a, b = (_assembly(rng.normal(size=(10, N_NEUROIDS, 4)), ids[:10]) for _ in range(2))

    def mean_difference(x, y):
        return NeuroidAssembly(np.atleast_1d(float((x.values - y.values).mean())), dims=("neuroid",))

    per_bin = PerTimeBin(mean_difference)(a, b)
    expected = [(a.values[..., t] - b.values[..., t]).mean() for t in range(4)]
    np.testing.assert_allclose(per_bin.values.ravel(), expected, rtol=1e-12)
    assert list(per_bin["time_bin_start"].values) == [0, 10, 20, 30]
    spanned = SpanTimeBins(lambda x, y: float((x.values - y.values).mean()))(a, b)
    assert spanned == pytest.approx(float((a.values - b.values).mean()), rel=1e-12)
    with pytest.raises(ValidationError, match="different numbers of time bins"):
        PerTimeBin(mean_difference)(a, b.isel(time_bin=slice(0, 2)))


def test_time_bin_regressions_fit_per_bin_or_once_over_the_folded_bins(data):
    _, _, ids, rng = data
    n, bins = 30, 3
    X = rng.normal(size=(n, N_FEATURES, bins))
    Y = np.einsum("pft,fn->pnt", X, rng.normal(size=(N_FEATURES, N_NEUROIDS))) + 0.1 * rng.normal(size=(n, N_NEUROIDS, bins))
    source, target = _assembly(X, ids[:n], "f"), _assembly(Y, ids[:n])
    train, test = np.arange(24), np.arange(24, n)
    per_bin = PerTimeBinRegression(AssemblyRegression(KernelRegression("linear")))
    per_bin.fit(source.isel(presentation=train), target.isel(presentation=train))
    predicted = per_bin.predict(source.isel(presentation=test)).transpose("presentation", "neuroid", "time_bin")
    for t in range(bins):
        expected = LinearRegression().fit(X[train, :, t], Y[train, :, t]).predict(X[test, :, t])
        np.testing.assert_allclose(predicted.values[..., t], expected, rtol=1e-9, atol=1e-12)
    spanning = SpanTimeBinsRegression(AssemblyRegression(KernelRegression("linear")))
    spanning.fit(source.isel(presentation=train), target.isel(presentation=train))
    predicted = spanning.predict(source.isel(presentation=test)).transpose("presentation", "neuroid", "time_bin")
    stacked = LinearRegression().fit(X[train].transpose(0, 2, 1).reshape(-1, N_FEATURES),
                                     Y[train].transpose(0, 2, 1).reshape(-1, N_NEUROIDS))
    expected = stacked.predict(X[test].transpose(0, 2, 1).reshape(-1, N_FEATURES)).reshape(len(test), bins, -1)
    np.testing.assert_allclose(predicted.values, expected.transpose(0, 2, 1), rtol=1e-9, atol=1e-12)
    assert list(predicted["stimulus_id"].values) == list(ids[test])
