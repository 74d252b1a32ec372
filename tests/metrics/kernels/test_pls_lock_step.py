"""PLS on torch runs every fold in lock-step: batched eigh, device masks, one transfer to the host (issue 24)."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest
import torch
from sklearn.cross_decomposition import PLSRegression

from brainscore.metrics.kernels import backend as ns
from brainscore.metrics.kernels import regression as R

#: torch.Tensor methods that bring a value to the host (on a GPU each waits for the device).
SYNCS = ("item", "__float__", "__int__", "__bool__", "__index__", "tolist", "cpu", "numpy", "__array__")


@contextlib.contextmanager
def host_transfers():
    """Record every call of a :data:`SYNCS` method of a tensor inside the block (list of names)."""
    calls, saved = [], {name: getattr(torch.Tensor, name) for name in SYNCS}

    def counting(name, method):
        def wrapper(self, *args, **kwargs):
            calls.append(name)
            return method(self, *args, **kwargs)
        return wrapper

    for name, method in saved.items():
        setattr(torch.Tensor, name, counting(name, method))
    try:
        yield calls
    finally:
        for name, method in saved.items():
            setattr(torch.Tensor, name, method)


def _data(n, p, q=5, seed=0):
    rng = np.random.default_rng(seed)
    latent = rng.standard_normal((n, 5))
    X = latent @ rng.standard_normal((5, p)) + 0.5 * rng.standard_normal((n, p)) + 2.0
    Y = latent @ rng.standard_normal((5, q)) + rng.standard_normal((n, q)) - 1.0
    return X, Y


def _folds(n, k):
    return [(np.setdiff1d(np.arange(n), np.arange(i, n, k)), np.arange(i, n, k)) for i in range(k)]


def test_the_monitor_counts_a_host_transfer():
    with host_transfers() as calls:
        float(torch.ones(()))
        torch.ones(2).cpu()
    assert calls == ["__float__", "cpu"]


@pytest.mark.parametrize("p", [40, 300], ids=["covariance form", "kernel form"])
def test_one_host_transfer_whatever_the_folds_and_components(p):
    """The counts in FitInfo are the only values that leave the device: no sync per fold or component."""
    seen = []
    for n_folds, k in [(2, 2), (9, 12)]:
        X, Y = _data(90, p)
        with host_transfers() as calls:
            R.pls(torch.as_tensor(X), torch.as_tensor(Y), _folds(90, n_folds), n_components=k)
        seen.append(list(calls))
    assert seen[0] == seen[1] == ["cpu", "numpy"]


def test_numpy_path_keeps_its_loops():
    """numpy is untouched by lock-step (its numbers are compared bit for bit elsewhere)."""
    assert not ns.lock_step(ns.namespace(np.zeros(2))) and ns.lock_step(ns.namespace(torch.zeros(2)))


@pytest.mark.parametrize("p", [12, 200], ids=["covariance form", "kernel form"])
def test_folds_that_run_out_of_rank_at_different_components(p):
    """X of rank 3 plus one row with a 4th direction: folds that hold that row out stop at 3 components.

    torch masks them on the device where numpy stops its loop; both extract the same counts per fold
    and give the same predictions, which equal scikit-learn's converged PLS with those counts.
    """
    rng = np.random.default_rng(12)
    X = rng.standard_normal((60, 3)) @ rng.standard_normal((3, p)) + 2.0
    X[0] += 5.0 * rng.standard_normal(p)
    Y = X[:, :4] @ rng.standard_normal((4, 5)) + rng.standard_normal((60, 5))
    folds = _folds(60, 4)                                   # row 0 is in the first fold's test set
    expected, info_np = R.pls(X, Y, folds, n_components=6)
    got, info_torch = R.pls(torch.as_tensor(X), torch.as_tensor(Y), folds, n_components=6)
    assert info_np.values["n_components"] == info_torch.values["n_components"] == [3, 4, 4, 4]
    for (train, test), e, g, k in zip(folds, expected, got, [3, 4, 4, 4]):
        np.testing.assert_allclose(g.numpy(), e, rtol=1e-7, atol=1e-9 * np.abs(e).max())
        sk = PLSRegression(k, scale=False, max_iter=20000, tol=1e-15).fit(X[train], Y[train]).predict(X[test])
        np.testing.assert_allclose(g.numpy(), sk, rtol=1e-6, atol=1e-6 * np.abs(sk).max())


def test_unequal_folds_on_torch_equal_numpy():
    X, Y = _data(97, 250, q=7, seed=3)                      # 97 rows in 10 folds: test sets of 9 and 10 rows
    folds = _folds(97, 10)
    expected, info_np = R.pls(X, Y, folds, n_components=25)
    got, info_torch = R.pls(torch.as_tensor(X), torch.as_tensor(Y), folds, n_components=25)
    assert info_np.values == info_torch.values
    for e, g in zip(expected, got):
        assert g.shape == e.shape
        np.testing.assert_allclose(g.numpy(), e, rtol=1e-7, atol=1e-10 * np.abs(e).max())


def test_top_eigenpairs_match_on_both_backends():
    rng = np.random.default_rng(0)
    B = rng.standard_normal((4, 50, 50))
    A = B @ np.swapaxes(B, 1, 2)
    values, vectors = ns.top_eigenpairs(ns.namespace(A), A)
    t_values, t_vectors = ns.top_eigenpairs(ns.namespace(torch.as_tensor(A)), torch.as_tensor(A))
    reference = np.linalg.eigh(A)
    np.testing.assert_allclose(values, reference[0][:, -1], rtol=1e-12)
    np.testing.assert_allclose(t_values.numpy(), reference[0][:, -1], rtol=1e-12)
    for v, t, r in zip(vectors, t_vectors.numpy(), reference[1][:, :, -1]):   # up to sign
        np.testing.assert_allclose(v * np.sign(v @ r), r, atol=1e-10)
        np.testing.assert_allclose(t * np.sign(t @ r), r, atol=1e-10)
