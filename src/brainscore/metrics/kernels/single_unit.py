"""Single-unit mapping kernel: each target neuroid predicted by its best-correlated source unit.

For each target neuroid the single source unit with the highest Pearson r on the training stimuli
(ignoring NaN r of constant units; the first on ties); the prediction is that unit's raw activation
(Arend et al. 2018).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from brainscore.metrics.kernels.backend import device, namespace, to_numpy
from brainscore.metrics.kernels.design import (BLOCK, Array, FitInfo, Folds, check_inputs, column_mean,
                                              fold_indices)

__all__ = ["neuron_to_neuron"]


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
    check_inputs(X, Y, folds)
    xp, dev = namespace(X, Y), device(X, Y)
    n, p = X.shape
    folds = fold_indices(xp, dev, folds)
    Yf = xp.asarray(Y, dtype=xp.float64, device=dev)
    Yg = Yf - xp.mean(Yf, axis=0)
    q = Yg.shape[1]
    F = len(folds)
    X = xp.asarray(X, device=dev)
    mu = column_mean(xp, X)
    columns = xp.arange(q, device=dev)
    best_r = [None] * F
    best_unit = [None] * F
    for start in range(0, p, BLOCK // 4):                      # float64 blocks: n x 2048
        Xb = xp.astype(X[:, start:start + BLOCK // 4], xp.float64, copy=False) - mu[start:start + BLOCK // 4]
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
