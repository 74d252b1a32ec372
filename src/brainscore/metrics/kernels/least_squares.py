"""Least-squares regression kernel: ``LinearRegression()``, the minimum-norm solution.

The pseudo-inverse of each fold's centred training design (kernel or covariance form, see
:mod:`.design`): eigenvalues below ``max(n, p) · eps · λ_max`` count as zero (Penrose 1955).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from brainscore.metrics.kernels.design import Array, FitInfo, Folds, check_inputs, cross_validate

__all__ = ["linear"]


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
    check_inputs(X, Y, folds)
    return cross_validate(X, Y, folds, gram_dtype, _linear_folds, lambda n, p: max(n, p))


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
