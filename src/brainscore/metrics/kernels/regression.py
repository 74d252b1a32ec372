"""Regression kernels: cross-validated predictions of PLS, ridge, ridge with leave-one-out alpha, least
squares and single-unit mappings, for all folds at once.

Pure array functions on numpy arrays or torch tensors (CPU or CUDA), written once against the Array
API namespace of :mod:`._namespace`, vectorised over neuroids (and, for kernel PLS, over folds). No labels: rows are stimuli, columns features (``X``, the model) or
neuroids (``Y``, the data); folds are ``(train, test)`` row-index pairs.

Every method fits an intercept (centring ``X`` and ``Y`` by the *training* mean of each fold, never
scaling), as scikit-learn does. The exact algorithm is chosen by shape, and the expensive product is
computed once for all folds:

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

Methods and their scikit-learn equivalents (same predictions up to rounding):

``pls``
    ``PLSRegression(n_components, scale=False)`` (Wold 1966; de Jong 1993), *converged*: the weight
    of each component is the dominant singular vector of the deflated cross-covariance ``XₖᵀYₖ``,
    found with a dense eigensolver instead of NIPALS power iterations (scikit-learn's NIPALS stops at
    ``tol=1e-6`` before converging on real-size data, moving scores by up to ~1e-3). Wide data use
    the kernel algorithm (Lindgren, Geladi & Wold 1993; Rännar et al. 1994): scores ``t = Kₖ Yₖ c``
    with ``c`` the dominant eigenvector of ``YₖᵀKₖYₖ``, run for all folds in lock-step so that each
    component needs one pass over ``G``.
``ridge``
    ``Ridge(alpha)`` (Hoerl & Kennard 1970): ``(K + αI)⁻¹`` (kernel) or ``(XᵀX + αI)⁻¹`` by Cholesky.
``ridgecv``
    ``RidgeCV(alphas)`` with its default efficient leave-one-out (Golub, Heath & Wahba 1979; Rifkin &
    Lippert 2007): one float64 eigendecomposition per fold serves every alpha; the alpha with the
    lowest mean squared leave-one-out error over all samples and targets is shared by all targets
    (the first in ``alphas`` on ties).
``linear``
    ``LinearRegression()``: the minimum-norm least-squares solution (pseudo-inverse); eigenvalues
    below ``max(n, p) · eps · λ_max`` count as zero.
``neuron_to_neuron``
    For each target neuroid the single source unit with the highest Pearson r on the training
    stimuli (ignoring NaN r of constant units; the first on ties); the prediction is that unit's raw
    activation (Arend et al. 2018).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from brainscore.metrics.kernels._namespace import (cholesky_solve, device, dtype_of, namespace, single_threaded, take_block,
                                                   to_numpy, top_eigenvector)
from brainscore.metrics.kernels.correlation import pearsonr_columns

__all__ = ["ALPHA_LIST", "Folds", "cross_validated_predictions", "fit_predict", "fold_pearsonr",
           "pls", "ridge", "ridgecv", "linear", "neuron_to_neuron", "METHODS"]

Array = Any
Folds = Sequence[tuple[Any, Any]]

#: The ridge penalties the reference's ``ridgecv`` searches: 0.01, 0.1, 0.5, 1, then 10-100 in 4
#: linear steps, 18 linear steps in each decade from 1e2 to 1e6, and 19 from 1e6 to 1e7 inclusive
#: (99 values; the reference describes them as 100).
ALPHA_LIST = np.concatenate([[0.01, 0.1, 0.5, 1.0], np.linspace(1e1, 1e2, 4, endpoint=False),
                             *[np.linspace(10.0 ** e, 10.0 ** (e + 1), 18, endpoint=False) for e in (2, 3, 4, 5)],
                             np.linspace(1e6, 1e7, 19)])

_BLOCK = 8192  # feature block for the big products: bounds the temporary copies (n x 8192)


@dataclass
class FitInfo:
    """What a fit chose, per fold (e.g. ``alpha`` for ridgecv, ``mapping`` for neuron_to_neuron)."""

    values: dict[str, list[Any]] = field(default_factory=dict)

    def add(self, key: str, value: Any) -> None:
        self.values.setdefault(key, []).append(value)


# ---- shared statistics ----------------------------------------------------------------------------
def _validate(X: Array, Y: Array, folds: Folds) -> None:
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


def _resolve_dtype(xp, X: Array, gram_dtype: Any) -> Any:
    if gram_dtype is None:
        return xp.float32 if xp.isdtype(X.dtype, "real floating") and xp.finfo(X.dtype).bits <= 32 else xp.float64
    return xp.float32 if dtype_of(xp, gram_dtype) == xp.float32 else xp.float64


def _float64_zeros(xp, dev, shape: tuple[int, ...]) -> Array:
    return xp.zeros(shape, dtype=xp.float64, device=dev)


class _Design:
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
        self.mu = _column_mean(xp, X)                       # float64 (p,)
        Y = xp.asarray(Y, dtype=xp.float64, device=dev)
        self.y_mean = xp.mean(Y, axis=0)
        self.Y = Y - self.y_mean                            # globally centred targets (n, q)
        dtype = _resolve_dtype(xp, X, gram_dtype)
        if kernel:
            self.G = _gram(xp, X, self.mu, dtype)
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


def _column_mean(xp, X: Array) -> Array:
    """Column means accumulated in float64 (no float64 copy of a float32 ``X``)."""
    return xp.sum(X, axis=0, dtype=xp.float64) / X.shape[0]


def _gram(xp, X: Array, mu: Array, dtype: Any) -> Array:
    """``(X - mu)(X - mu)ᵀ`` as float64, computed (and summed over feature blocks) in ``dtype`` by SYRK."""
    n, p = X.shape
    G = None
    for start in range(0, p, _BLOCK):
        block = xp.astype(X[:, start:start + _BLOCK], dtype, copy=False) - xp.astype(mu[start:start + _BLOCK], dtype)
        product = block @ block.T                           # one object on both sides: numpy uses SYRK
        if G is None:
            G = product
        else:
            G += product
    return xp.astype(G, xp.float64, copy=False)


def _use_kernel(n: int, p: int, folds: Folds) -> bool:
    n_train = max(len(train) for train, _ in folds)
    return p > n_train


def _indices(xp, dev, folds: Folds) -> list[tuple[Array, Array]]:
    """The folds as int64 index arrays of ``xp`` on ``dev``."""
    return [(_index(xp, dev, train), _index(xp, dev, test)) for train, test in folds]


def _index(xp, dev, idx: Any) -> Array:
    return xp.asarray(idx if hasattr(idx, "shape") else np.asarray(idx), dtype=xp.int64, device=dev)


# ---- PLS ------------------------------------------------------------------------------------------
def pls(X: Array, Y: Array, folds: Folds, n_components: int = 25, gram_dtype: Any = None) -> tuple[list[Array], FitInfo]:
    """Cross-validated PLS regression predictions (``PLSRegression(n_components, scale=False)``, converged).

    Parameters
    ----------
    X : array of shape (n_stimuli, n_features)
        Source (model activations). float32 input gives a float32 Gram matrix (see module docstring).
    Y : array of shape (n_stimuli, n_neuroids)
        Target (recorded responses).
    folds : sequence of (train, test) integer index arrays
    n_components : int
        Number of PLS components (the reference's 25). Must not exceed ``n_features``.
    gram_dtype : dtype, optional
        Precision of the one big product (default: float32 for float32 ``X``, else float64).

    Returns
    -------
    predictions : list of arrays of shape (n_test, n_neuroids), float64
        One per fold, rows in the order of that fold's test indices.
    info : FitInfo
        ``n_components`` actually extracted per fold (fewer if the training data's rank runs out).

    Raises
    ------
    ValueError
        For bad shapes or ``n_components`` outside ``[1, n_features]``.
    """
    _validate(X, Y, folds)
    n, p = X.shape
    if not 1 <= n_components <= p:
        raise ValueError(f"n_components must be in [1, n_features={p}], got {n_components}")
    xp, dev = namespace(X, Y), device(X, Y)
    kernel = _use_kernel(n, p, folds)
    design = _Design(xp, dev, X, Y, kernel=kernel, gram_dtype=gram_dtype)
    folds = _indices(xp, dev, folds)
    with single_threaded(xp, dev):                         # many small products: threads only contend
        if kernel:
            return _pls_kernel(design, folds, n_components)
        return _pls_covariance(design, folds, n_components)


def _pls_covariance(design: _Design, folds, n_components: int) -> tuple[list[Array], FitInfo]:
    """PLS from each fold's covariance ``S = XᵀX`` and cross-covariance ``M = XᵀY`` (p <= n).

    With ``P`` (x-loadings), ``Q`` (y-loadings) and ``tᵀt`` of the first ``k`` components, the
    deflated matrices are ``Sₖ = S - P diag(tᵀt) Pᵀ`` and ``Mₖ = M - P diag(tᵀt) Qᵀ``; they are never
    formed. The weight ``w`` of the next component is the dominant left singular vector of ``Mₖ``,
    from the smaller of ``MₖᵀMₖ`` (q x q) and ``MₖMₖᵀ`` (p x p), each kept up to date by a rank-two
    update. Then ``tᵀt = wᵀSₖw``, ``p = Sₖw / tᵀt``, ``q = Mₖᵀw / tᵀt``; prediction
    ``X_te W (PᵀW)⁻¹ Qᵀ + ȳ`` (Wold's NIPALS at convergence; de Jong 1993). A fold's ``S_c w`` is
    ``S w - X_teᵀ(X_te w) - n_tr (m·w) m`` from the all-stimulus ``S``. All folds advance in
    lock-step as stacked arrays, so each component reads ``S`` once for every fold.
    """
    xp, dev = design.xp, design.dev
    F = len(folds)
    parts = [design.cross_covariance_fold(train, test) for train, test in folds]
    p, q = parts[0][1].shape
    K = n_components
    n_te_max = max(int(test.shape[0]) for _, test in folds)
    Xte_raw = _float64_zeros(xp, dev, (F, n_te_max, p))   # test rows (all-stimulus centred), zero-padded
    mx = _float64_zeros(xp, dev, (F, p))
    n_tr = np.zeros(F)
    M = _float64_zeros(xp, dev, (F, p, q))
    for f, (train, test) in enumerate(folds):
        _, M_f, Xte_c, _, n_tr_f = parts[f]
        m_f = -xp.sum(design.Xc[test], axis=0) / n_tr_f
        Xte_raw[f, :test.shape[0]] = Xte_c + m_f           # Xte_c = X_te - m
        mx[f], n_tr[f], M[f] = m_f, n_tr_f, M_f
    n_tr_x = xp.asarray(n_tr, dtype=xp.float64, device=dev)
    S = design.S
    scale = float(np.sqrt(max(float(xp.sum(S * S)), 1e-300)))
    y_side = q < p                                         # eigen-solve on the smaller side
    B = xp.matrix_transpose(M) @ M if y_side else M @ xp.matrix_transpose(M)    # (F, q, q) or (F, p, p)
    B = (B + xp.matrix_transpose(B)) / 2
    W, P, Q = _float64_zeros(xp, dev, (F, p, K)), _float64_zeros(xp, dev, (F, p, K)), _float64_zeros(xp, dev, (F, q, K))
    tts = _float64_zeros(xp, dev, (F, K))
    active = np.ones(F, dtype=bool)
    counts = np.zeros(F, dtype=int)
    for k in range(K):
        if not active.any():
            break
        top = _float64_zeros(xp, dev, (F, B.shape[1]))
        for f in np.flatnonzero(active):
            top[f] = top_eigenvector(xp, B[f])[1]
        Pk, Qk, ttk = P[:, :, :k], Q[:, :, :k], tts[:, :k]
        if y_side:                                         # w ∝ Mₖ c
            w = _bmv(M, top) - _bmv(Pk, ttk * _bmv(xp.matrix_transpose(Qk), top))
            norm = xp.sqrt(xp.sum(w * w, axis=1))
            w = w / xp.where(norm > 0, norm, 1.0)[:, None]
        else:
            w = top
        Ptw = _bmv(xp.matrix_transpose(Pk), w)             # (F, k)
        Xw = _bmv(Xte_raw, w)                              # (F, n_te)
        Sw = (w @ S) - _bmv(xp.matrix_transpose(Xte_raw), Xw) - (n_tr_x * xp.sum(mx * w, axis=1))[:, None] * mx \
            - _bmv(Pk, ttk * Ptw)                           # Sₖ w per fold (S symmetric: w S = (S w)ᵀ)
        tt = xp.sum(w * Sw, axis=1)                        # ‖t‖², t = Xₖ w
        tt_np = to_numpy(tt)
        active &= tt_np > 1e-13 * scale
        if not active.any():
            break
        keep = xp.asarray(active.astype(np.float64), dtype=xp.float64, device=dev)
        safe_tt = xp.where(keep > 0, tt, 1.0)
        loading = Sw / safe_tt[:, None] * keep[:, None]
        # Mᵀw and Mᵀp in one pass over M: (F, q, 2)
        Mt_wp = xp.matrix_transpose(M) @ xp.matrix_transpose(xp.stack([w, loading], axis=1))
        y_loading = (Mt_wp[:, :, 0] - _bmv(Qk, ttk * Ptw)) / safe_tt[:, None] * keep[:, None]
        t2 = (tt * tt * keep)[:, None, None]
        if y_side:                                         # Mₖ₊₁ = Mₖ - tᵀt p qᵀ; B = MₖᵀMₖ
            Mp = Mt_wp[:, :, 1] - _bmv(Qk, ttk * _bmv(xp.matrix_transpose(Pk), loading))
            u, v = Mp, y_loading
            B = B - (tt * keep)[:, None, None] * (u[:, :, None] * v[:, None, :] + v[:, :, None] * u[:, None, :]) \
                + t2 * xp.sum(loading * loading, axis=1)[:, None, None] * (v[:, :, None] * v[:, None, :])
        else:                                              # B = MₖMₖᵀ
            Mq = _bmv(M, y_loading) - _bmv(Pk, ttk * _bmv(xp.matrix_transpose(Qk), y_loading))
            u, v = Mq, loading
            B = B - (tt * keep)[:, None, None] * (u[:, :, None] * v[:, None, :] + v[:, :, None] * u[:, None, :]) \
                + t2 * xp.sum(y_loading * y_loading, axis=1)[:, None, None] * (v[:, :, None] * v[:, None, :])
        B = (B + xp.matrix_transpose(B)) / 2
        W[:, :, k], P[:, :, k], Q[:, :, k] = w * keep[:, None], loading, y_loading
        tts[:, k] = tt * keep
        counts += active
    predictions, info = [], FitInfo()
    for f, (train, test) in enumerate(folds):
        _, _, Xte_c, my, _ = parts[f]
        k = int(counts[f])
        info.add("n_components", k)
        if not k:
            predictions.append(_float64_zeros(xp, dev, (Xte_c.shape[0], q)) + my)
            continue
        W_f, P_f, Q_f = W[f, :, :k], P[f, :, :k], Q[f, :, :k]
        coef = W_f @ xp.linalg.solve(P_f.T @ W_f, Q_f.T)   # W (PᵀW)⁻¹ Qᵀ, (p, q)
        predictions.append(Xte_c @ coef + my)
    return predictions, info


def _bmv(a: Array, v: Array) -> Array:
    """Batched matrix-vector product: (F, m, n) x (F, n) -> (F, m)."""
    return (a @ v[..., None])[..., 0]


def _pls_kernel(design: _Design, folds, n_components: int) -> tuple[list[Array], FitInfo]:
    """Kernel PLS for all folds in lock-step (p > n): one product with ``G`` per component.

    Per fold, ``K`` is the centred training kernel, ``Yc`` the centred training targets and
    ``Z₀ = K Yc``. After ``k`` components with scores ``T = [t₁ … tₖ]`` (orthogonal), the deflation
    is the projector ``Dₖ = I - T diag(1/tᵀt) Tᵀ``: ``Yₖ = Dₖ Yc`` and ``Kₖ = Dₖ K Dₖ``. These are
    never formed; only ``Aₖ = YₖᵀKₖYₖ`` (q x q) is kept, by a rank-two update per component.
    Component ``k+1``: ``c`` = dominant eigenvector of ``Aₖ`` (eigenvalue λ),
    ``a = Yₖ c / √λ`` (so that the weight ``w = Xₖᵀa`` has unit norm), score
    ``t = Kₖ Yₖ c / √λ = Dₖ (Z₀ c - K T diag(1/tᵀt) TᵀYc c) / √λ``. Prediction:
    ``Ŷ = K_te A (TᵀK A diag-scaled by 1/tᵀt)⁻¹ Qᵀ + ȳ`` (the ``W (PᵀW)⁻¹ Qᵀ`` of NIPALS in kernel
    form), with ``Q`` the y-loadings ``Ycᵀt / tᵀt``. The products ``K t`` and ``K A`` of all folds
    come from one product with ``G`` each.
    """
    xp, dev, G, Yg = design.xp, design.dev, design.G, design.Y
    n, q = Yg.shape
    F = len(folds)
    GY = G @ Yg                                            # (n, q), shared by all folds
    mask = _float64_zeros(xp, dev, (n, F))
    for f, (train, _) in enumerate(folds):
        mask[train, f] = 1.0
    GM = G @ mask                                          # (n, F): training row sums of G per fold
    K_max = n_components
    states = []
    for f, (train, test) in enumerate(folds):
        n_tr = train.shape[0]
        r = GM[train, f] / n_tr                            # row means of the training block
        s = float(xp.mean(r))
        my = xp.mean(Yg[train], axis=0)
        YZ = _float64_zeros(xp, dev, (n_tr, 2 * q))        # [Yc | Z₀] side by side: one pass per product
        YZ[:, :q] = Yg[train] - my
        Yc = YZ[:, :q]
        # G_tt Yc without forming G_tt: (G Yg)[train] - G[train, test] Yg[test] - G_tt 1 myᵀ
        GYc = GY[train] - take_block(xp, G, train, test) @ Yg[test] - (n_tr * r)[:, None] * my[None, :]
        sum_y = xp.sum(Yc, axis=0)
        YZ[:, q:] = GYc - r[:, None] * sum_y[None, :] - (r @ Yc)[None, :] + s * sum_y[None, :]   # K Yc
        A = Yc.T @ YZ[:, q:]
        A = (A + A.T) / 2
        states.append(dict(train=train, test=test, n_tr=n_tr, r=r, s=s, my=my + design.y_mean, YZ=YZ, A=A,
                           scale=float(xp.sqrt(xp.sum(A * A))), T=_float64_zeros(xp, dev, (n_tr, K_max)),
                           KT=_float64_zeros(xp, dev, (n_tr, K_max)), Avec=_float64_zeros(xp, dev, (n_tr, K_max)),
                           TY=_float64_zeros(xp, dev, (K_max, q)), tt=np.zeros(K_max), k=0, done=False))
    for _ in range(n_components):
        active = [st for st in states if not st["done"]]
        if not active:
            break
        pad = _float64_zeros(xp, dev, (n, len(active)))
        for j, st in enumerate(active):
            lam, c = top_eigenvector(xp, st["A"])
            if lam <= 1e-12 * st["scale"]:
                st["done"] = True
                continue
            k, n_tr = st["k"], st["n_tr"]
            yz_c = xp.reshape(xp.reshape(st["YZ"], (2 * n_tr, q)) @ c, (n_tr, 2))   # [Yc c, Z₀ c]
            y_c, z_c = yz_c[:, 0], yz_c[:, 1]
            if k:
                T, KT = st["T"][:, :k], st["KT"][:, :k]
                inv_tt = xp.asarray(1.0 / st["tt"][:k], dtype=xp.float64, device=dev)
                coef = (st["TY"][:k] @ c) * inv_tt                          # diag(1/tᵀt) TᵀYc c
                y_c = y_c - T @ coef                                        # Yₖ c
                z_c = z_c - KT @ coef                                       # K Yₖ c
                z_c = z_c - T @ ((T.T @ z_c) * inv_tt)                      # Dₖ K Yₖ c = Kₖ Yₖ c
            st["t"] = z_c / np.sqrt(lam)
            st["a"] = y_c / np.sqrt(lam)
            pad[st["train"], j] = st["t"]
        GT = G @ pad                                       # K t for every fold: one pass over G
        for j, st in enumerate(active):
            if st["done"]:
                continue
            t, r, s, k = st["t"], st["r"], st["s"], st["k"]
            sum_t = float(xp.sum(t))
            Kt = GT[st["train"], j] - r * sum_t - float(r @ t) + s * sum_t          # K t
            Kkt = Kt
            if k:                                                                   # Kₖ t = Dₖ K t
                T = st["T"][:, :k]
                Kkt = Kt - T @ ((T.T @ Kt) / xp.asarray(st["tt"][:k], dtype=xp.float64, device=dev))
            tt = float(t @ t)
            kappa = float(t @ Kkt)
            Yc = st["YZ"][:, :q]
            uv = Yc.T @ xp.stack([t, Kkt], axis=1)         # u = Yₖᵀt = Ycᵀt, v = YₖᵀKₖt = YcᵀKₖt
            u, v = uv[:, 0], uv[:, 1]
            A = st["A"] - (u[:, None] * v[None, :] + v[:, None] * u[None, :]) / tt \
                + (kappa / tt ** 2) * (u[:, None] * u[None, :])
            st["A"] = (A + A.T) / 2
            st["T"][:, k], st["KT"][:, k], st["Avec"][:, k] = t, Kt, st["a"]
            st["TY"][k], st["tt"][k] = u, tt
            st["k"] = k + 1
    # predictions: K A and K_te A from one product of G with every fold's A
    counts = [st["k"] for st in states]
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(int)
    GA = None
    if offsets[-1]:
        pad = _float64_zeros(xp, dev, (n, int(offsets[-1])))
        for f, st in enumerate(states):
            pad[st["train"], offsets[f]:offsets[f + 1]] = st["Avec"][:, :counts[f]]
        GA = G @ pad
    predictions, info = [], FitInfo()
    for f, st in enumerate(states):
        k = counts[f]
        info.add("n_components", k)
        if k == 0:
            predictions.append(_float64_zeros(xp, dev, (st["test"].shape[0], q)) + st["my"])
            continue
        Amat, T = st["Avec"][:, :k], st["T"][:, :k]
        tt = xp.asarray(st["tt"][:k], dtype=xp.float64, device=dev)
        Q = st["TY"][:k].T / tt[None, :]                   # y-loadings Ycᵀt / tᵀt, (q, k)
        block = GA[:, offsets[f]:offsets[f + 1]]
        r, s, n_tr = st["r"], st["s"], st["n_tr"]
        sum_a = xp.sum(Amat, axis=0)
        ra = r @ Amat
        KA = block[st["train"]] - r[:, None] * sum_a[None, :] - ra[None, :] + s * sum_a[None, :]
        r_te = GM[st["test"], f] / n_tr
        KteA = block[st["test"]] - r_te[:, None] * sum_a[None, :] - ra[None, :] + s * sum_a[None, :]
        PW = (T.T @ KA) / tt[:, None]
        predictions.append(KteA @ xp.linalg.solve(PW, Q.T) + st["my"])
    return predictions, info


# ---- ridge ----------------------------------------------------------------------------------------
def _cross_validate(X: Array, Y: Array, folds: Folds, gram_dtype: Any, fold_function, parameter) -> tuple[list[Array], FitInfo]:
    """Shared driver of the ridge-family kernels: one design (Gram or covariance form) for all folds.

    ``fold_function(xp, design, folds, parameter(n, p), kernel, predictions, info)`` appends one
    prediction per fold; the kernel (Gram) form is used when features outnumber training stimuli.
    """
    xp, dev = namespace(X, Y), device(X, Y)
    n, p = X.shape
    kernel = _use_kernel(n, p, folds)
    design = _Design(xp, dev, X, Y, kernel=kernel, gram_dtype=gram_dtype)
    predictions, info = [], FitInfo()
    with single_threaded(xp, dev):
        fold_function(xp, design, _indices(xp, dev, folds), parameter(n, p), kernel, predictions, info)
    return predictions, info


def ridge(X: Array, Y: Array, folds: Folds, alpha: float = 1.0, gram_dtype: Any = None) -> tuple[list[Array], FitInfo]:
    """Cross-validated ridge predictions (``Ridge(alpha)`` with intercept).

    Parameters
    ----------
    X : array of shape (n_stimuli, n_features)
    Y : array of shape (n_stimuli, n_neuroids)
    folds : sequence of (train, test) integer index arrays
    alpha : float
        L2 penalty (the reference's fixed ``alpha=1``). Must be > 0.
    gram_dtype : dtype, optional
        Precision of the one big product (default: that of ``X``).

    Returns
    -------
    predictions : list of arrays of shape (n_test, n_neuroids), float64
    info : FitInfo
    """
    _validate(X, Y, folds)
    if not alpha > 0:
        raise ValueError(f"alpha must be > 0, got {alpha}; use 'linear' for unpenalised least squares")
    return _cross_validate(X, Y, folds, gram_dtype, _ridge_folds, lambda n, p: alpha)


def _ridge_folds(xp, design, folds, alpha, kernel, predictions, info) -> None:
    for train, test in folds:
        if kernel:
            K, Kte, Yc, my = design.kernel_fold(train, test)
            C = cholesky_solve(xp, K + alpha * xp.eye(K.shape[0], dtype=xp.float64, device=design.dev), Yc)
            predictions.append(Kte @ C + my)
        else:
            S, M, Xte, my = design.covariance_fold(train, test)
            B = cholesky_solve(xp, S + alpha * xp.eye(S.shape[0], dtype=xp.float64, device=design.dev), M)
            predictions.append(Xte @ B + my)
        info.add("alpha", float(alpha))


def ridgecv(X: Array, Y: Array, folds: Folds, alphas: Sequence[float] = ALPHA_LIST,
            gram_dtype: Any = None) -> tuple[list[Array], FitInfo]:
    """Cross-validated predictions of ridge whose alpha is chosen by leave-one-out within each training set.

    Matches ``RidgeCV(alphas=alphas)`` (default ``cv=None``: efficient leave-one-out, one alpha for
    all targets, chosen by the mean squared leave-one-out error over samples and targets, the
    intercept refitted in each leave-one-out fit). With the eigendecomposition ``K = V diag(λ) Vᵀ``
    of the centred training kernel (or ``XᵀX`` when features are fewer), for each alpha the
    leave-one-out residual of sample ``i`` is ``rᵢ / (1 - hᵢᵢ)`` with ``r = V diag(α/(λ+α)) VᵀYc``
    and ``1 - hᵢᵢ = Σⱼ Vᵢⱼ² α/(λⱼ+α) - 1/n`` (the ``-1/n`` is the refitted intercept).

    Parameters
    ----------
    X, Y, folds : see :func:`ridge`
    alphas : sequence of float
        Candidate penalties (default: the reference's :data:`ALPHA_LIST`). All > 0.
    gram_dtype : dtype, optional
        Precision of the one big product; the eigendecomposition is always float64.

    Returns
    -------
    predictions : list of arrays of shape (n_test, n_neuroids), float64
    info : FitInfo
        ``alpha``: the chosen alpha per fold; ``loo_mse``: mean squared LOO error per alpha per fold.
    """
    _validate(X, Y, folds)
    alphas = np.asarray(alphas, dtype=float).ravel()
    if alphas.size == 0 or not (alphas > 0).all():
        raise ValueError("alphas must be a non-empty sequence of positive penalties")
    return _cross_validate(X, Y, folds, gram_dtype, _ridgecv_folds, lambda n, p: alphas)


def _ridgecv_folds(xp, design, folds, alphas, kernel, predictions, info) -> None:
    for train, test in folds:
        if kernel:
            K, Kte, Yc, my = design.kernel_fold(train, test)
            lam, V = xp.linalg.eigh(K)
            B = V.T @ Yc                                   # (n_tr, q)
            basis, coords = V, B
        else:
            S, M, Xte, my = design.covariance_fold(train, test)
            lam, V = xp.linalg.eigh(S)
            Xtr, Yc = design.train_rows_centred(train)
            basis = Xtr @ V                                # Z = Xc V: columns of norm √λ
            coords = V.T @ M                               # Zᵀ Yc
        n_tr = Yc.shape[0]
        errors = _loo_errors(xp, lam, basis, coords, Yc, alphas, n_tr, kernel)
        best = int(np.argmin(errors))                      # first of equal minima, as scikit-learn
        alpha = float(alphas[best])
        if kernel:
            C = V @ (B / (lam + alpha)[:, None])
            predictions.append(Kte @ C + my)
        else:
            coef = V @ (coords / (lam + alpha)[:, None])
            predictions.append(Xte @ coef + my)
        info.add("alpha", alpha)
        info.add("loo_mse", errors)


def _loo_errors(xp, lam: Array, basis: Array, coords: Array, Yc: Array, alphas: np.ndarray, n_tr: int,
                kernel: bool, tolerance: float = 1e-8) -> np.ndarray:
    """Mean squared leave-one-out error for each alpha; exact wherever it could be the minimum.

    The residual for penalty α is ``r(α) = R₀ + basis diag(w(α)) coords``: in kernel form
    ``basis = V`` (eigenvectors of K), ``coords = VᵀYc``, ``w = α/(λ+α)``, ``R₀ = 0``; in covariance
    form ``basis = Xc V``, ``coords = VᵀXcᵀYc``, ``w = -1/(λ+α)``, ``R₀ = Yc``. The leave-one-out
    error of sample ``i`` is ``rᵢ(α) / (1 - hᵢᵢ(α))``, with ``1 - hᵢᵢ`` exact for every alpha from one
    product of ``basis²``.

    Forming ``r(α)`` costs one ``n x m x q`` product per alpha. The matrix ``W = [w(α₁) … w(αₐ)]``
    (m x a) is numerically of low rank (its entries are a Cauchy-like family in λ): with its
    column-normalised SVD truncated at ``tolerance``, ``r(α) ≈ R₀ + Σₖ cₖ(α) Rₖ`` needs only ``k``
    such products, and each sample's squared norm is a ``(k+1) x (k+1)`` quadratic form. The
    truncation error of each column gives a rigorous bound on each sample's residual norm
    (Cauchy-Schwarz), hence lower and upper bounds on every alpha's error; every alpha whose lower
    bound is not above the smallest upper bound is then evaluated exactly. The minimum, and hence
    the chosen alpha, are therefore exact; other entries are approximations within the bounds.
    """
    dev = device(lam)
    lam = xp.where(lam < 0, 0.0, lam)
    lam_np = to_numpy(lam)
    q = coords.shape[1]
    if kernel:
        W = alphas[None, :] / (lam_np[:, None] + alphas[None, :])          # (m, a)
    else:
        W = -1.0 / (lam_np[:, None] + alphas[None, :])
    squared_basis = basis * basis
    one_minus_h = squared_basis @ xp.asarray(W, dtype=xp.float64, device=dev)   # (n, a), exact
    one_minus_h = (one_minus_h - 1.0 / n_tr) if kernel else (1.0 + one_minus_h - 1.0 / n_tr)
    weights = 1.0 / (one_minus_h * one_minus_h)

    def exact(a: int) -> float:
        residual = basis @ (coords * xp.asarray(W[:, a], dtype=xp.float64, device=dev)[:, None])
        if not kernel:
            residual = residual + Yc
        return float(xp.mean(weights[:, a][:, None] * residual * residual))

    n_alphas = len(alphas)
    norms = np.linalg.norm(W, axis=0)
    U, S, Vt = np.linalg.svd(W / np.where(norms > 0, norms, 1.0), full_matrices=False)
    k = int((S > tolerance * S[0]).sum())
    if k >= 0.6 * n_alphas or n_alphas <= 4:
        return np.array([exact(a) for a in range(n_alphas)])
    C = (S[:k, None] * Vt[:k]) * norms[None, :]                           # W ≈ U[:, :k] C
    truncation = norms * np.sqrt(np.maximum((S[k:, None] * Vt[k:]) ** 2, 0).sum(axis=0))   # ‖w(α) - U C‖
    # components Rₖ = basis diag(Uₖ) coords, as (n, k, q); R₀ first in covariance form
    U_k = xp.asarray(U[:, :k], dtype=xp.float64, device=dev)
    stacked = xp.reshape(U_k[:, :, None] * coords[:, None, :], (coords.shape[0], k * q))
    R = xp.reshape(basis @ stacked, (basis.shape[0], k, q))
    coefficients = C
    if not kernel:
        R = xp.concat([Yc[:, None, :], R], axis=1)
        coefficients = np.concatenate([np.ones((1, n_alphas)), C], axis=0)
    gram = R @ xp.matrix_transpose(R)                                                      # (n, k', k')
    coefficients = xp.asarray(coefficients, dtype=xp.float64, device=dev)
    squared_norm = xp.sum((gram @ coefficients) * coefficients[None], axis=1)              # (n, a)
    norm = xp.sqrt(xp.where(squared_norm < 0, 0.0, squared_norm))
    beta = xp.sqrt(squared_basis @ xp.sum(coords * coords, axis=1))                        # (n,)
    slack = beta[:, None] * xp.asarray(truncation, dtype=xp.float64, device=dev)[None, :] + 1e-9 * norm
    low = xp.where(norm - slack < 0, 0.0, norm - slack)
    high = norm + slack
    scale = 1.0 / (basis.shape[0] * q)
    approximate = to_numpy(xp.sum(weights * squared_norm, axis=0)) * scale
    lower = to_numpy(xp.sum(weights * low * low, axis=0)) * scale
    upper = to_numpy(xp.sum(weights * high * high, axis=0)) * scale
    errors = approximate.copy()
    for a in np.flatnonzero(lower <= upper.min()):
        errors[a] = exact(int(a))
    return errors


# ---- least squares --------------------------------------------------------------------------------
def linear(X: Array, Y: Array, folds: Folds, gram_dtype: Any = "float64") -> tuple[list[Array], FitInfo]:
    """Cross-validated ordinary least-squares predictions (``LinearRegression()``, minimum-norm solution).

    Parameters
    ----------
    X, Y, folds : see :func:`ridge`
    gram_dtype : dtype
        Precision of the big product; float64 by default, since an unpenalised solve amplifies
        rounding along small eigen-directions.

    Returns
    -------
    predictions : list of arrays of shape (n_test, n_neuroids), float64
    info : FitInfo
        ``rank`` of each fold's centred training design.
    """
    _validate(X, Y, folds)
    return _cross_validate(X, Y, folds, gram_dtype, _linear_folds, lambda n, p: max(n, p))


def _linear_folds(xp, design, folds, size, kernel, predictions, info) -> None:
    eps = np.finfo(np.float64).eps
    for train, test in folds:
        if kernel:
            K, Kte, Yc, my = design.kernel_fold(train, test)
            lam, V = xp.linalg.eigh(K)
        else:
            S, M, Xte, my = design.covariance_fold(train, test)
            lam, V = xp.linalg.eigh(S)
        cutoff = float(lam[-1]) * size * eps
        keep = lam > cutoff
        inverse = xp.where(keep, 1.0 / xp.where(keep, lam, 1.0), 0.0)
        if kernel:
            C = V @ ((V.T @ Yc) * inverse[:, None])
            predictions.append(Kte @ C + my)
        else:
            coef = V @ ((V.T @ M) * inverse[:, None])
            predictions.append(Xte @ coef + my)
        info.add("rank", int(xp.sum(xp.astype(keep, xp.int64, copy=False))))


# ---- single-unit mapping --------------------------------------------------------------------------
def neuron_to_neuron(X: Array, Y: Array, folds: Folds, gram_dtype: Any = None) -> tuple[list[Array], FitInfo]:
    """Cross-validated single-unit predictions: each neuroid predicted by its best-correlated source unit.

    On each fold's training stimuli, Pearson r between every source unit and every target neuroid
    (float64, from ``XᵀY`` computed once and corrected per fold); per neuroid the unit with the
    largest r (NaN r of constant units ignored, the first on ties); the prediction on the test
    stimuli is that unit's raw activation (Arend et al. 2018).

    Parameters
    ----------
    X, Y, folds : see :func:`ridge`
    gram_dtype : ignored (the correlations are float64); accepted for a uniform signature.

    Returns
    -------
    predictions : list of arrays of shape (n_test, n_neuroids), float64
    info : FitInfo
        ``mapping``: per fold, the source unit index chosen for each neuroid.

    Raises
    ------
    ValueError
        If, for some neuroid, every source unit is constant on a fold's training stimuli.
    """
    _validate(X, Y, folds)
    xp, dev = namespace(X, Y), device(X, Y)
    n, p = X.shape
    folds = _indices(xp, dev, folds)
    Yf = xp.asarray(Y, dtype=xp.float64, device=dev)
    Yg = Yf - xp.mean(Yf, axis=0)
    q = Yg.shape[1]
    F = len(folds)
    X = xp.asarray(X, device=dev)
    mu = _column_mean(xp, X)
    columns = xp.arange(q, device=dev)
    best_r = [None] * F
    best_unit = [None] * F
    for start in range(0, p, _BLOCK // 4):                      # float64 blocks: n x 2048
        Xb = xp.astype(X[:, start:start + _BLOCK // 4], xp.float64, copy=False) - mu[start:start + _BLOCK // 4]
        XtY = Xb.T @ Yg
        sx, sxx = xp.sum(Xb, axis=0), xp.sum(Xb * Xb, axis=0)
        for f, (train, test) in enumerate(folds):
            Xte, Yte = Xb[test], Yg[test]
            n_tr = n - Xte.shape[0]
            mx = (sx - xp.sum(Xte, axis=0)) / n_tr
            my = -xp.sum(Yte, axis=0) / n_tr
            msq = (sxx - xp.sum(Xte * Xte, axis=0)) / n_tr
            vx = msq - mx * mx
            Ytr = Yg[train]
            vy = xp.mean(Ytr * Ytr, axis=0) - my * my
            cov = (XtY - Xte.T @ Yte) / n_tr - mx[:, None] * my[None, :]
            # constant on the training stimuli (the variance is then rounding residue only)
            constant = vx <= 1e-10 * msq
            with np.errstate(invalid="ignore", divide="ignore"):
                r = cov / xp.sqrt(xp.where(vx < 0, 0.0, vx)[:, None] * xp.where(vy < 0, 0.0, vy)[None, :])
            r = xp.where(constant[:, None], -float("inf"), r)
            r = xp.where(xp.isnan(r), -float("inf"), r)
            idx = xp.argmax(r, axis=0)
            value = r[idx, columns]
            if best_r[f] is None:
                best_r[f], best_unit[f] = value, idx + start
            else:
                better = value > best_r[f]
                best_r[f] = xp.where(better, value, best_r[f])
                best_unit[f] = xp.where(better, idx + start, best_unit[f])
    predictions, info = [], FitInfo()
    for f, (train, test) in enumerate(folds):
        if bool(xp.any(best_r[f] == -float("inf"))):
            raise ValueError("every source unit is constant (or NaN) on the training stimuli of a fold, so no unit "
                             "can be mapped to a neuroid; check the model's activations")
        unit = best_unit[f]
        predictions.append(xp.astype(X[test][:, unit], xp.float64, copy=False))
        info.add("mapping", to_numpy(unit))
    return predictions, info


# ---- dispatch -------------------------------------------------------------------------------------
METHODS = {"pls": pls, "ridge": ridge, "ridgecv": ridgecv, "linear": linear, "neuron_to_neuron": neuron_to_neuron}


def cross_validated_predictions(method: str, X: Array, Y: Array, folds: Folds, **kwargs) -> tuple[list[Array], FitInfo]:
    """Predictions of ``method`` (a key of :data:`METHODS`) for every fold; ``kwargs`` go to it.

    Raises
    ------
    ValueError
        If ``method`` is unknown.
    """
    if method not in METHODS:
        raise ValueError(f"unknown regression {method!r}; choose one of {sorted(METHODS)}")
    return METHODS[method](X, Y, folds, **kwargs)


def fit_predict(method: str, X_train: Array, Y_train: Array, X_test: Array, **kwargs) -> tuple[Array, FitInfo]:
    """Fit ``method`` on one training set and predict one test set.

    Parameters
    ----------
    method : str
        A key of :data:`METHODS`.
    X_train : array of shape (n_train, n_features)
    Y_train : array of shape (n_train, n_neuroids)
    X_test : array of shape (n_test, n_features)

    Returns
    -------
    prediction : array of shape (n_test, n_neuroids), float64
    info : FitInfo
    """
    xp, dev = namespace(X_train, Y_train, X_test), device(X_train, Y_train, X_test)
    X_train, X_test = xp.asarray(X_train, device=dev), xp.asarray(X_test, device=dev)
    Y_train = xp.asarray(Y_train, device=dev)
    if X_train.ndim != 2 or X_test.ndim != 2 or X_train.shape[1] != X_test.shape[1]:
        raise ValueError(f"X_train and X_test must be 2-D with the same number of features; got "
                         f"{tuple(X_train.shape)} and {tuple(X_test.shape)}")
    n_tr, n_te = X_train.shape[0], X_test.shape[0]
    dtype = X_train.dtype if X_train.dtype == X_test.dtype else xp.float64
    X = xp.concat([xp.astype(X_train, dtype, copy=False), xp.astype(X_test, dtype, copy=False)], axis=0)
    Y_test_dummy = _float64_zeros(xp, dev, (n_te, Y_train.shape[1]))
    Y = xp.concat([xp.astype(Y_train, xp.float64, copy=False), Y_test_dummy], axis=0)
    folds = [(np.arange(n_tr), np.arange(n_tr, n_tr + n_te))]
    predictions, info = cross_validated_predictions(method, X, Y, folds, **kwargs)
    return predictions[0], info


def fold_pearsonr(predictions: list[Array], Y: Array, folds: Folds) -> Array:
    """Pearson r per fold and neuroid between predictions and ``Y`` on each fold's test rows.

    Returns
    -------
    r : array of shape (n_folds, n_neuroids), float64 (same array library as ``Y``)
    """
    xp, dev = namespace(Y, *predictions), device(Y, *predictions)
    Y = xp.asarray(Y, device=dev)
    out = _float64_zeros(xp, dev, (len(folds), Y.shape[1]))
    for f, ((_, test), prediction) in enumerate(zip(folds, predictions)):
        out[f] = pearsonr_columns(prediction, Y[_index(xp, dev, test)])
    return out
