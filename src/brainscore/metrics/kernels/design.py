"""What every regression kernel shares: input checks, folds, and one design matrix for all folds.

The regression kernels (:mod:`.pls`, :mod:`.ridge`, :mod:`.least_squares`, :mod:`.single_unit`;
chosen by name in :mod:`.regression`) fit an intercept (centring ``X`` and ``Y`` by the *training*
mean of each fold, never scaling), as scikit-learn does. The exact algorithm is chosen by shape, and
the expensive product is computed once for all folds by :class:`Design`:

- ``p > n_train`` (wide features, e.g. 20,000 units): the *kernel* form. One Gram matrix
  ``G = X Xᵀ`` (``n x n``) for all folds; each fold's centred training kernel is the analytic
  correction ``K = G_tt - r1ᵀ - 1rᵀ + s`` (``r`` the row means, ``s`` the grand mean of the
  training block), never an ``n_features x n_features`` matrix.
- ``p <= n_train``: the *covariance* form. One ``XᵀX`` and ``XᵀY`` for all folds; each fold's
  training statistics are the full ones minus the test rows', centred analytically.

Precision: the big product is formed in ``gram_dtype`` (by default the dtype of ``X``, so float32
model activations give a float32 Gram matrix, computed with the half-cost symmetric product: numpy
calls BLAS SYRK only for ``A @ A.T`` on one array object), after subtracting the all-stimulus mean
so that float32 rounding is relative to the centred data; every decomposition and solve is in
float64. Measured on a MajajHong-sized problem (3200 stimuli x 20,000 float32 features, 168
neuroids): the float32 Gram matrix with a float64 eigendecomposition agrees with the all-float64
result to 7e-7 relative, whereas a float32 eigendecomposition made the leave-one-out alpha search
pick alpha = 0.01 in 2 of 3 folds (median r 0.49 instead of 0.58).

Pure array functions on numpy arrays or torch tensors (CPU or CUDA), written once against the Array
API namespace of :mod:`.backend`. The split into one module per solver family follows himalaya
(Dupré la Tour, Eickenberg, Nunez-Elizalde & Gallant 2022, NeuroImage 264:119728).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from brainscore.metrics.kernels.backend import device, dtype_of, namespace, single_threaded, take_block

__all__ = ["Array", "Folds", "BLOCK", "FitInfo", "Design", "check_inputs", "product_dtype", "float64_zeros",
           "column_mean", "centred_gram", "use_kernel_form", "fold_indices", "index_array", "cross_validate"]

Array = Any
Folds = Sequence[tuple[Any, Any]]

BLOCK = 8192  # feature block for the big products: bounds the temporary copies (n x 8192)


@dataclass
class FitInfo:
    """What a fit chose, per fold (e.g. ``alpha`` for ridgecv, ``mapping`` for neuron_to_neuron)."""

    values: dict[str, list[Any]] = field(default_factory=dict)

    def add(self, key: str, value: Any) -> None:
        self.values.setdefault(key, []).append(value)


# ---- shared statistics ----------------------------------------------------------------------------
def check_inputs(X: Array, Y: Array, folds: Folds) -> None:
    """Raise ValueError unless ``X`` (n, p) and ``Y`` (n, q) are 2-D with equal rows and every fold has
    at least 2 training and 1 test indices inside ``[0, n)``."""
    if X.ndim != 2 or Y.ndim != 2:
        raise ValueError(f"X and Y must be 2-D (n_stimuli, n_features) and (n_stimuli, n_neuroids); got shapes "
                         f"{tuple(X.shape)} and {tuple(Y.shape)}")
    if X.shape[0] != Y.shape[0]:
        raise ValueError(f"X and Y must have the same number of rows (stimuli); got {X.shape[0]} and {Y.shape[0]}")
    if not len(folds):
        raise ValueError("no folds given: pass a list of (train, test) index arrays")
    n = X.shape[0]
    for train, test in folds:
        train, test = np.asarray(train), np.asarray(test)
        if len(train) < 2 or len(test) < 1:
            raise ValueError(f"each fold needs at least 2 training and 1 test stimuli; got {len(train)} and {len(test)}")
        if train.max() >= n or test.max() >= n or train.min() < 0 or test.min() < 0:
            raise ValueError(f"fold indices must lie in [0, {n})")


def product_dtype(xp, X: Array, gram_dtype: Any) -> Any:
    """The dtype of the one big product: ``gram_dtype`` (float32 or float64), else float32 for float32 ``X``."""
    if gram_dtype is None:
        return xp.float32 if xp.isdtype(X.dtype, "real floating") and xp.finfo(X.dtype).bits <= 32 else xp.float64
    return xp.float32 if dtype_of(xp, gram_dtype) == xp.float32 else xp.float64


def float64_zeros(xp, dev, shape: tuple[int, ...]) -> Array:
    """A float64 array of zeros of ``xp`` on ``dev``."""
    return xp.zeros(shape, dtype=xp.float64, device=dev)


class Design:
    """``X`` (globally centred) with the products every fold's statistics derive from.

    Parameters
    ----------
    kernel : bool
        True: keep the Gram matrix ``G`` (n x n, float64). False: keep ``S = XᵀX`` (p x p, float64)
        and the centred ``X`` in float64.
    """

    def __init__(self, xp, dev, X: Array, Y: Array, kernel: bool, gram_dtype: Any):
        self.xp, self.dev = xp, dev
        self.n, self.p = X.shape
        self.kernel = kernel
        X = xp.asarray(X, device=dev)
        if X.dtype not in (xp.float32, xp.float64):
            X = xp.astype(X, xp.float64, copy=False)
        self.mu = column_mean(xp, X)                       # float64 (p,)
        Y = xp.asarray(Y, dtype=xp.float64, device=dev)
        self.y_mean = xp.mean(Y, axis=0)
        self.Y = Y - self.y_mean                            # globally centred targets (n, q)
        dtype = product_dtype(xp, X, gram_dtype)
        if kernel:
            self.G = centred_gram(xp, X, self.mu, dtype)
            self.Xc = None
        else:
            self.Xc = xp.astype(X, xp.float64, copy=False) - self.mu   # (n, p) float64, p <= n
            if dtype == xp.float64:
                Xd = self.Xc
            else:
                Xd = xp.astype(self.Xc, dtype)
            self.S = xp.astype(Xd.T @ Xd, xp.float64, copy=False)
            self.S = (self.S + self.S.T) / 2
            self.XtY = self.Xc.T @ self.Y                   # (p, q) float64
            self.G = None

    # -- per-fold training statistics -------------------------------------------------------------
    def kernel_fold(self, train, test) -> tuple[Array, Array, Array, Array]:
        """Centred training kernel ``K`` (n_tr x n_tr), test-train kernel ``K_te``, train ``Yc``, ``y_mean``."""
        xp, G = self.xp, self.G
        Gtt = take_block(xp, G, train, train)
        Get = take_block(xp, G, test, train)
        r = xp.mean(Gtt, axis=1)
        s = xp.mean(r)
        K = Gtt - r[:, None] - r[None, :] + s
        Kte = Get - xp.mean(Get, axis=1)[:, None] - r[None, :] + s
        Ytr = self.Y[train]
        my = xp.mean(Ytr, axis=0)
        return K, Kte, Ytr - my, my + self.y_mean

    def covariance_fold(self, train, test) -> tuple[Array, Array, Array, Array]:
        """Centred training ``S_c = XcᵀXc`` (p x p), ``M_c = XcᵀYc`` (p x q), centred test ``X``, ``y_mean``."""
        xp = self.xp
        Xte = self.Xc[test]
        Yte = self.Y[test]
        n_tr = self.n - Xte.shape[0]
        mx = -xp.sum(Xte, axis=0) / n_tr                    # the all-stimulus sum of Xc is 0
        my = -xp.sum(Yte, axis=0) / n_tr
        S = self.S - Xte.T @ Xte - n_tr * (mx[:, None] * mx[None, :])
        S = (S + S.T) / 2
        M = self.XtY - Xte.T @ Yte - n_tr * (mx[:, None] * my[None, :])
        return S, M, Xte - mx, my + self.y_mean

    def cross_covariance_fold(self, train, test) -> tuple[Any, Array, Array, Array, Array]:
        """Like :meth:`covariance_fold`, but with ``S_c`` as a function ``v -> S_c v`` (never formed).

        ``S_c v = S v - X_teᵀ(X_te v) - n_tr (m·v) m``, with ``S`` the all-stimulus product: O(p²)
        per product instead of O(n_te p²) to form ``S_c``.
        """
        xp = self.xp
        Xte = self.Xc[test]
        Yte = self.Y[test]
        n_tr = self.n - Xte.shape[0]
        mx = -xp.sum(Xte, axis=0) / n_tr
        my = -xp.sum(Yte, axis=0) / n_tr
        S = self.S

        def S_times(v):
            return S @ v - Xte.T @ (Xte @ v) - (n_tr * float(mx @ v)) * mx

        M = self.XtY - Xte.T @ Yte - n_tr * (mx[:, None] * my[None, :])
        return S_times, M, Xte - mx, my + self.y_mean, n_tr

    def train_rows_centred(self, train) -> tuple[Array, Array]:
        """Centred training ``X`` (float64) and ``Y`` of a fold (covariance form only)."""
        xp = self.xp
        Xtr = self.Xc[train]
        Ytr = self.Y[train]
        return Xtr - xp.mean(Xtr, axis=0), Ytr - xp.mean(Ytr, axis=0)


def column_mean(xp, X: Array) -> Array:
    """Column means accumulated in float64 (no float64 copy of a float32 ``X``)."""
    return xp.sum(X, axis=0, dtype=xp.float64) / X.shape[0]


def centred_gram(xp, X: Array, mu: Array, dtype: Any) -> Array:
    """``(X - mu)(X - mu)ᵀ`` as float64, computed (and summed over feature blocks) in ``dtype`` by SYRK."""
    n, p = X.shape
    G = None
    for start in range(0, p, BLOCK):
        block = xp.astype(X[:, start:start + BLOCK], dtype, copy=False) - xp.astype(mu[start:start + BLOCK], dtype)
        product = block @ block.T                           # one object on both sides: numpy uses SYRK
        if G is None:
            G = product
        else:
            G += product
    return xp.astype(G, xp.float64, copy=False)


def use_kernel_form(n: int, p: int, folds: Folds) -> bool:
    """True when features outnumber the largest training set: the Gram (kernel) form is cheaper."""
    n_train = max(len(train) for train, _ in folds)
    return p > n_train


def fold_indices(xp, dev, folds: Folds) -> list[tuple[Array, Array]]:
    """The folds as int64 index arrays of ``xp`` on ``dev``."""
    return [(index_array(xp, dev, train), index_array(xp, dev, test)) for train, test in folds]


def index_array(xp, dev, idx: Any) -> Array:
    """``idx`` (a sequence or array of row indices) as an int64 array of ``xp`` on ``dev``."""
    return xp.asarray(idx if hasattr(idx, "shape") else np.asarray(idx), dtype=xp.int64, device=dev)



def cross_validate(X: Array, Y: Array, folds: Folds, gram_dtype: Any, fold_function, parameter) -> tuple[list[Array], FitInfo]:
    """Shared driver of the ridge-family kernels: one design (Gram or covariance form) for all folds.

    ``fold_function(xp, design, folds, parameter(n, p), kernel, predictions, info)`` appends one
    prediction per fold; the kernel (Gram) form is used when features outnumber training stimuli.
    """
    xp, dev = namespace(X, Y), device(X, Y)
    n, p = X.shape
    kernel = use_kernel_form(n, p, folds)
    design = Design(xp, dev, X, Y, kernel=kernel, gram_dtype=gram_dtype)
    predictions, info = [], FitInfo()
    with single_threaded(xp, dev):
        fold_function(xp, design, fold_indices(xp, dev, folds), parameter(n, p), kernel, predictions, info)
    return predictions, info
