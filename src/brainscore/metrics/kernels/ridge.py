"""Ridge regression kernels: fixed penalty and penalty chosen by efficient leave-one-out.

``ridge``
    ``Ridge(alpha)`` (Hoerl & Kennard 1970): ``(K + αI)⁻¹`` (kernel) or ``(XᵀX + αI)⁻¹`` by Cholesky.
``ridgecv``
    ``RidgeCV(alphas)`` with its default efficient leave-one-out (Golub, Heath & Wahba 1979; Rifkin &
    Lippert 2007): one float64 eigendecomposition per fold serves every alpha; the alpha with the
    lowest mean squared leave-one-out error over all samples and targets is shared by all targets
    (the first in ``alphas`` on ties).

Shapes, intercept and precision: see :mod:`.design`.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from brainscore.metrics.kernels.backend import cholesky_solve, device, to_numpy
from brainscore.metrics.kernels.design import Array, FitInfo, Folds, check_inputs, cross_validate

__all__ = ["ALPHA_LIST", "ridge", "ridgecv"]

#: The ridge penalties the reference's ``ridgecv`` searches: 0.01, 0.1, 0.5, 1, then 10-100 in 4
#: linear steps, 18 linear steps in each decade from 1e2 to 1e6, and 19 from 1e6 to 1e7 inclusive
#: (99 values; the reference describes them as 100).
ALPHA_LIST = np.concatenate([[0.01, 0.1, 0.5, 1.0], np.linspace(1e1, 1e2, 4, endpoint=False),
                             *[np.linspace(10.0 ** e, 10.0 ** (e + 1), 18, endpoint=False) for e in (2, 3, 4, 5)],
                             np.linspace(1e6, 1e7, 19)])


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
    check_inputs(X, Y, folds)
    if not alpha > 0:
        raise ValueError(f"alpha must be > 0, got {alpha}; use 'linear' for unpenalised least squares")
    return cross_validate(X, Y, folds, gram_dtype, _ridge_folds, lambda n, p: alpha)


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
    check_inputs(X, Y, folds)
    alphas = np.asarray(alphas, dtype=float).ravel()
    if alphas.size == 0 or not (alphas > 0).all():
        raise ValueError("alphas must be a non-empty sequence of positive penalties")
    return cross_validate(X, Y, folds, gram_dtype, _ridgecv_folds, lambda n, p: alphas)


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
