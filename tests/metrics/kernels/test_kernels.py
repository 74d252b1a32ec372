"""Array kernels: hand-worked correlations, agreement with scipy and scikit-learn, torch == numpy."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.stats
import torch
from sklearn.cross_decomposition import PLSRegression
from sklearn.linear_model import LinearRegression, Ridge, RidgeCV
from sklearn.model_selection import ShuffleSplit

from brainscore.metrics.kernels import regression as R
from brainscore.metrics.kernels.correlation import (pearsonr_column_pairs, pearsonr_columns, pearsonr_columns_nan,
                                                    spearman_brown)


def _data(n, p, q, seed=0, dtype=np.float64, offset=3.0):
    """Responses driven by 5 shared latent factors, with an offset (so centring matters)."""
    rng = np.random.default_rng(seed)
    latent = rng.standard_normal((n, 5))
    X = latent @ rng.standard_normal((5, p)) + 0.5 * rng.standard_normal((n, p)) + offset
    Y = latent @ rng.standard_normal((5, q)) + rng.standard_normal((n, q)) - offset
    return X.astype(dtype), Y


def _rel(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(np.asarray(b)).max())


# ---- correlation ----------------------------------------------------------------------------------
def test_pearson_hand_worked():
    # a - ā = (-1, 0, 1), b - b̄ = (-4/3, -1/3, 5/3): r = 3 / sqrt(2 · 42/9) = 3 sqrt(3/28)
    r = pearsonr_columns(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 4.0]))
    assert float(r) == pytest.approx(3 * np.sqrt(3 / 28), abs=1e-15)
    # perfectly anti-correlated column, and a constant column (NaN as scipy)
    a = np.array([[1.0, 1.0], [2.0, 1.0], [3.0, 1.0]])
    b = np.array([[6.0, 0.0], [4.0, 1.0], [2.0, 2.0]])
    r = pearsonr_columns(a, b)
    assert r[0] == pytest.approx(-1.0, abs=1e-15)
    assert np.isnan(r[1])


def test_constant_column_with_rounding_residue_is_nan():
    a = np.full((7, 1), 0.1)          # the mean of 0.1s is not exactly 0.1
    b = np.arange(7.0)[:, None]
    assert np.isnan(pearsonr_columns(a, b)[0])


@pytest.mark.parametrize("shape", [(10, 1), (50, 7), (300, 40)])
def test_pearson_matches_scipy(shape):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape)
    b = 0.5 * a + rng.standard_normal(shape)
    expected = [scipy.stats.pearsonr(a[:, j], b[:, j])[0] for j in range(shape[1])]
    np.testing.assert_allclose(pearsonr_columns(a, b), expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(pearsonr_columns(a.astype(np.float32), b.astype(np.float32)), expected, atol=1e-6)


def test_pearson_with_nan_uses_complete_rows():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((40, 3)), rng.standard_normal((40, 3))
    a[[1, 5], 0] = np.nan
    b[[7], 0] = np.nan
    b[:, 2] = np.nan
    b[:3, 2] = [1.0, 2.0, 4.0]
    r = pearsonr_columns_nan(a, b)
    keep = ~(np.isnan(a[:, 0]) | np.isnan(b[:, 0]))
    assert r[0] == pytest.approx(scipy.stats.pearsonr(a[keep, 0], b[keep, 0])[0], abs=1e-13)
    assert r[1] == pytest.approx(scipy.stats.pearsonr(a[:, 1], b[:, 1])[0], abs=1e-13)
    assert r[2] == pytest.approx(scipy.stats.pearsonr(a[:3, 2], b[:3, 2])[0], abs=1e-13)


def test_spearman_brown_hand_worked():
    assert spearman_brown(0.5) == pytest.approx(2 / 3)
    assert spearman_brown(0.8) == pytest.approx(1.6 / 1.8)
    assert spearman_brown(0.0) == 0.0
    assert spearman_brown(0.5, n=3) == pytest.approx(1.5 / 2.0)       # n r / (1 + (n-1) r)
    np.testing.assert_allclose(spearman_brown(np.array([-0.2, 0.9])), [-0.4 / 0.8, 1.8 / 1.9])


def test_pearsonr_column_pairs_matches_corrcoef():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((30, 6)), rng.standard_normal((30, 4))
    x[:, 2] = 5.0
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = np.corrcoef(x.T, y.T)[:6, 6:]
    got = pearsonr_column_pairs(x, y)
    assert np.isnan(got[2]).all()
    np.testing.assert_allclose(np.delete(got, 2, 0), np.delete(expected, 2, 0), atol=1e-13)


# ---- regressions against scikit-learn -------------------------------------------------------------
SHAPES = [(60, 20, 7), (60, 200, 7), (80, 30, 40), (50, 500, 3)]   # features < and >> stimuli, many targets


def _one_fold(n):
    return [(np.arange(n - 10), np.arange(n - 10, n))]


@pytest.mark.parametrize("n,p,q", SHAPES)
def test_pls_matches_converged_sklearn(n, p, q):
    X, Y = _data(n, p, q)
    k = 6
    (train, test), = _one_fold(n)
    sk = PLSRegression(n_components=k, scale=False, max_iter=20000, tol=1e-15).fit(X[train], Y[train])
    expected = sk.predict(X[test])
    (prediction,), info = R.pls(X, Y, _one_fold(n), n_components=k)
    assert info.values["n_components"] == [k]
    assert _rel(prediction, expected) < 1e-6
    # float32 input: float32 Gram matrix, float64 decompositions
    (prediction32,), _ = R.pls(X.astype(np.float32), Y, _one_fold(n), n_components=k)
    assert _rel(prediction32, expected) < 1e-4


@pytest.mark.parametrize("p", [40, 400])
def test_pls_all_folds_match_sklearn_per_fold(p):
    X, Y = _data(120, p, 9, seed=4)
    folds = list(ShuffleSplit(5, train_size=0.9, random_state=1).split(X))
    predictions, _ = R.pls(X, Y, folds, n_components=10)
    for (train, test), prediction in zip(folds, predictions):
        sk = PLSRegression(10, scale=False, max_iter=20000, tol=1e-15).fit(X[train], Y[train])
        assert _rel(prediction, sk.predict(X[test])) < 1e-6


@pytest.mark.parametrize("p", [12, 200])
def test_pls_stops_when_the_training_rank_runs_out(p):
    """X of rank 3: components beyond 3 do not exist; the fit equals the 3-component one."""
    rng = np.random.default_rng(12)
    X = rng.standard_normal((60, 3)) @ rng.standard_normal((3, p)) + 2.0
    Y = X[:, :4] @ rng.standard_normal((4, 5)) + rng.standard_normal((60, 5))
    (train, test), = _one_fold(60)
    (prediction,), info = R.pls(X, Y, _one_fold(60), n_components=6)
    assert info.values["n_components"] == [3]
    expected = PLSRegression(3, scale=False, max_iter=20000, tol=1e-15).fit(X[train], Y[train]).predict(X[test])
    assert _rel(prediction, expected) < 1e-6


def test_pls_rejects_too_many_components():
    X, Y = _data(30, 5, 2)
    with pytest.raises(ValueError, match="n_components"):
        R.pls(X, Y, _one_fold(30), n_components=6)


@pytest.mark.parametrize("n,p,q", SHAPES)
def test_ridge_matches_sklearn(n, p, q):
    X, Y = _data(n, p, q)
    (train, test), = _one_fold(n)
    expected = Ridge(alpha=1.0).fit(X[train], Y[train]).predict(X[test])
    (prediction,), _ = R.ridge(X, Y, _one_fold(n), alpha=1.0)
    assert _rel(prediction, expected) < 1e-10


@pytest.mark.parametrize("n,p,q", SHAPES + [(120, 1000, 5)])
def test_ridgecv_matches_sklearn_alpha_and_predictions(n, p, q):
    X, Y = _data(n, p, q, seed=n + p)
    (train, test), = _one_fold(n)
    sk = RidgeCV(alphas=R.ALPHA_LIST).fit(X[train], Y[train])
    (prediction,), info = R.ridgecv(X, Y, _one_fold(n))
    assert info.values["alpha"] == [sk.alpha_]
    assert _rel(prediction, sk.predict(X[test])) < 1e-10
    # the leave-one-out errors themselves: sklearn's best score is minus the smallest mean error
    assert -info.values["loo_mse"][0].min() == pytest.approx(sk.best_score_, rel=1e-9)


@pytest.mark.parametrize("n,p", [(200, 1500), (200, 80)])
def test_ridgecv_leave_one_out_errors_for_every_alpha(n, p):
    """The compressed alpha search: exact where it could be the minimum, close everywhere else."""
    X, Y = _data(n, p, 30, seed=11)
    X = np.maximum(X, 3.0)                                        # rectified, like network activations
    (train, test), = _one_fold(n)
    sk = RidgeCV(alphas=R.ALPHA_LIST, store_cv_results=True).fit(X[train], Y[train])
    expected = sk.cv_results_.reshape(-1, len(R.ALPHA_LIST)).mean(axis=0)
    _, info = R.ridgecv(X, Y, _one_fold(n))
    errors = info.values["loo_mse"][0]
    np.testing.assert_allclose(errors, expected, rtol=1e-5)
    best = int(np.argmin(expected))
    assert int(np.argmin(errors)) == best and errors[best] == pytest.approx(expected[best], rel=1e-10)


def test_alpha_list_is_the_reference_list():
    # 4 + 4 + 4 x 18 + 19 = 99 values (the reference's docs say "100"; its list has 99)
    alphas = R.ALPHA_LIST
    assert len(alphas) == 99
    np.testing.assert_allclose(alphas[:8], [0.01, 0.1, 0.5, 1.0, 10.0, 32.5, 55.0, 77.5])
    assert alphas[8] == 100 and alphas[9] == 150 and alphas[26] == 1000 and alphas[-1] == 1e7
    assert (np.diff(alphas) > 0).all()


@pytest.mark.parametrize("n,p,q", SHAPES)
def test_linear_matches_sklearn(n, p, q):
    X, Y = _data(n, p, q)
    (train, test), = _one_fold(n)
    expected = LinearRegression().fit(X[train], Y[train]).predict(X[test])
    (prediction,), info = R.linear(X, Y, _one_fold(n))
    assert info.values["rank"] == [min(n - 10 - 1, p)]         # centring removes one dimension
    assert _rel(prediction, expected) < 1e-8


def test_neuron_to_neuron_matches_reference_loop():
    X, Y = _data(100, 60, 6, seed=5)
    X[:, 3] = 1.0                                                 # a silent unit: NaN r, never chosen
    folds = list(ShuffleSplit(3, train_size=0.9, random_state=1).split(X))
    predictions, info = R.neuron_to_neuron(X, Y, folds)
    for (train, test), prediction, mapping in zip(folds, predictions, info.values["mapping"]):
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.array([[scipy.stats.pearsonr(X[train, i], Y[train, j])[0] if i != 3 else np.nan
                           for i in range(X.shape[1])] for j in range(Y.shape[1])])
        expected = np.nanargmax(r, axis=1)
        np.testing.assert_array_equal(mapping, expected)
        np.testing.assert_array_equal(prediction, X[test][:, expected])


def test_fit_predict_equals_one_fold():
    X, Y = _data(70, 90, 4, seed=6)
    prediction, _ = R.fit_predict("pls", X[:60], Y[:60], X[60:], n_components=5)
    (expected,), _ = R.pls(X, Y, [(np.arange(60), np.arange(60, 70))], n_components=5)
    np.testing.assert_allclose(prediction, expected, rtol=1e-10, atol=1e-12)


def test_bad_inputs_raise():
    X, Y = _data(30, 5, 2)
    with pytest.raises(ValueError, match="same number of rows"):
        R.pls(X, Y[:-1], _one_fold(29), n_components=2)
    with pytest.raises(ValueError, match="unknown regression"):
        R.cross_validated_predictions("lasso", X, Y, _one_fold(30))
    with pytest.raises(ValueError, match="alpha must be > 0"):
        R.ridge(X, Y, _one_fold(30), alpha=0)


# ---- torch backend --------------------------------------------------------------------------------
@pytest.mark.parametrize("method,p,kwargs", [("pls", 40, dict(n_components=8)), ("pls", 300, dict(n_components=8)),
                                             ("ridge", 300, {}), ("ridgecv", 40, {}), ("ridgecv", 300, {}),
                                             ("linear", 40, {}), ("neuron_to_neuron", 300, {})])
def test_torch_gives_the_numpy_numbers(method, p, kwargs):
    X, Y = _data(100, p, 6, seed=7)
    folds = list(ShuffleSplit(3, train_size=0.9, random_state=1).split(X))
    expected, info_np = R.cross_validated_predictions(method, X, Y, folds, **kwargs)
    got, info_torch = R.cross_validated_predictions(method, torch.as_tensor(X), torch.as_tensor(Y), folds, **kwargs)
    for e, g in zip(expected, got):
        assert isinstance(g, torch.Tensor)
        np.testing.assert_allclose(g.numpy(), e, rtol=1e-5, atol=1e-8 * np.abs(e).max())
    assert info_np.values.get("alpha") == info_torch.values.get("alpha")
    r_np = R.fold_pearsonr(expected, Y, folds)
    r_torch = R.fold_pearsonr(got, torch.as_tensor(Y), folds)
    np.testing.assert_allclose(r_torch.numpy(), r_np, atol=1e-10)


def test_torch_pearson_and_nan_variant():
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal((25, 4)), rng.standard_normal((25, 4))
    a[3, 1] = np.nan
    np.testing.assert_allclose(pearsonr_columns(torch.as_tensor(a[:, [0, 2]]), torch.as_tensor(b[:, [0, 2]])).numpy(),
                               pearsonr_columns(a[:, [0, 2]], b[:, [0, 2]]), atol=1e-14)
    np.testing.assert_allclose(pearsonr_columns_nan(torch.as_tensor(a), torch.as_tensor(b)).numpy(),
                               pearsonr_columns_nan(a, b), atol=1e-14)


def test_sklearn_nipals_is_what_we_converge_towards():
    """On a realistic-size problem sklearn's NIPALS (tol 1e-6) stops early; scores stay within 2e-3."""
    X, Y = _data(400, 600, 20, seed=9)
    X = X + 3 * np.random.default_rng(9).standard_normal(X.shape)
    folds = list(ShuffleSplit(3, train_size=0.9, random_state=1).split(X))
    predictions, _ = R.pls(X.astype(np.float32), Y, folds, n_components=25)
    ours = np.median(R.fold_pearsonr(predictions, Y, folds), axis=1)
    reference = []
    for train, test in folds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prediction = PLSRegression(25, scale=False).fit(X[train], Y[train]).predict(X[test])
        reference.append(np.median([scipy.stats.pearsonr(prediction[:, j], Y[test, j])[0] for j in range(20)]))
    np.testing.assert_allclose(ours, reference, atol=2e-3)
