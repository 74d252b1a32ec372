"""Correlation kernels: Pearson r per column, Spearman-Brown, source-by-target correlation matrices.

Pure array functions on numpy arrays or torch tensors (CPU or CUDA), written once against the Array
API namespace of :mod:`.backend`, vectorised over columns (neuroids); they compute in float64
whatever the input precision and return arrays of the input's library and device.

Pearson's product-moment correlation (Pearson 1896) of two columns ``a`` and ``b`` over ``n``
stimuli is ``r = Σ(a - ā)(b - b̄) / sqrt(Σ(a - ā)² Σ(b - b̄)²)``: the value
:func:`scipy.stats.pearsonr` gives per column, NaN where a column is constant. The Spearman-Brown
prophecy formula (Spearman 1910; Brown 1910) ``n r / (1 + (n - 1) r)`` predicts the reliability of
an average of ``n`` such halves from the correlation ``r`` between two halves.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from brainscore.metrics.kernels.backend import device, namespace

__all__ = ["pearsonr_columns", "pearsonr_columns_nan", "spearman_brown", "pearsonr_column_pairs"]

Array = Any


def _check_pair(a: Array, b: Array) -> None:
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(f"the two arrays must have the same shape (n_stimuli, n_neuroids); got {tuple(a.shape)} "
                         f"and {tuple(b.shape)}")


def pearsonr_columns(a: Array, b: Array, axis: int = 0) -> Array:
    """Pearson r between corresponding columns of ``a`` and ``b`` (over rows, or over ``axis``).

    Parameters
    ----------
    a, b : array of shape (n_stimuli, n_neuroids) or (n_stimuli,)
        E.g. a regression's prediction and the recorded responses on the test stimuli. Any
        number of dims is accepted; r is taken along ``axis`` (the stimuli).
    axis : int
        The axis of stimuli.

    Returns
    -------
    r : array of shape (n_neuroids,) (``a.shape`` without ``axis``), float64
        NaN where either column is constant, as :func:`scipy.stats.pearsonr` (without its warning).

    Raises
    ------
    ValueError
        If the shapes differ.
    """
    _check_pair(a, b)
    xp, dev = namespace(a, b), device(a, b)
    a, b = xp.asarray(a, device=dev), xp.asarray(b, device=dev)
    # scipy returns NaN for an exactly constant column; centring alone can leave rounding residue
    first = _take_first(a, axis), _take_first(b, axis)
    constant = xp.all(a == first[0], axis=axis) | xp.all(b == first[1], axis=axis)
    a, b = xp.astype(a, xp.float64, copy=False), xp.astype(b, xp.float64, copy=False)
    a = a - xp.mean(a, axis=axis, keepdims=True)
    b = b - xp.mean(b, axis=axis, keepdims=True)
    numerator = xp.sum(a * b, axis=axis)
    denominator = xp.sqrt(xp.sum(a * a, axis=axis) * xp.sum(b * b, axis=axis))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = numerator / denominator
    return xp.where(constant | (denominator == 0), float("nan"), r)


def _take_first(a: Array, axis: int) -> Array:
    """The first entry along ``axis``, keeping the dim (for broadcasting)."""
    index = [slice(None)] * a.ndim
    index[axis] = slice(0, 1)
    return a[tuple(index)]


def pearsonr_columns_nan(a: Array, b: Array, axis: int = 0) -> Array:
    """Pearson r per column over the rows where both ``a`` and ``b`` are finite (pairwise complete).

    Parameters
    ----------
    a, b : array of shape (n_stimuli, n_neuroids)
        May contain NaN (e.g. a stimulus without trials in one half of the repetitions). Any
        number of dims is accepted; r is taken along ``axis``.
    axis : int
        The axis of stimuli.

    Returns
    -------
    r : array of shape (n_neuroids,), float64
        NaN where fewer than two rows are complete or a column is constant over them.
    """
    _check_pair(a, b)
    xp, dev = namespace(a, b), device(a, b)
    a, b = xp.asarray(a, dtype=xp.float64, device=dev), xp.asarray(b, dtype=xp.float64, device=dev)
    valid = ~(xp.isnan(a) | xp.isnan(b))
    w = xp.astype(valid, xp.float64, copy=False)
    a, b = xp.where(valid, a, 0.0), xp.where(valid, b, 0.0)
    count = xp.sum(w, axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        a = (a - xp.sum(a, axis=axis, keepdims=True) / count) * w
        b = (b - xp.sum(b, axis=axis, keepdims=True) / count) * w
        numerator = xp.sum(a * b, axis=axis)
        denominator = xp.sqrt(xp.sum(a * a, axis=axis) * xp.sum(b * b, axis=axis))
        count = xp.sum(w, axis=axis)
        r = numerator / denominator
    return xp.where((denominator == 0) | (count < 2), float("nan"), r)


def spearman_brown(r: Array, n: float = 2) -> Array:
    """Spearman-Brown correction: reliability of ``n`` pooled halves from their correlation ``r``.

    ``n r / (1 + (n - 1) r)``; for split halves (``n = 2``) this is ``2r / (1 + r)``.

    Parameters
    ----------
    r : float or array
        Correlation between two halves of the data.
    n : float
        Factor by which the data are lengthened.

    Returns
    -------
    Same type and shape as ``r``.

    References
    ----------
    Spearman (1910), Brit. J. Psychol. 3:271; Brown (1910), Brit. J. Psychol. 3:296.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        return n * r / (1 + (n - 1) * r)


def pearsonr_column_pairs(x: Array, y: Array) -> Array:
    """Pearson r between every column of ``x`` and every column of ``y`` (over rows).

    Parameters
    ----------
    x : array of shape (n_stimuli, n_units)
    y : array of shape (n_stimuli, n_neuroids)

    Returns
    -------
    r : array of shape (n_units, n_neuroids), float64
        NaN for constant columns (e.g. units that never respond).
    """
    if x.ndim != 2 or y.ndim != 2 or x.shape[0] != y.shape[0]:
        raise ValueError(f"x and y must be 2-D with the same number of rows (stimuli); got {tuple(x.shape)} and "
                         f"{tuple(y.shape)}")
    xp, dev = namespace(x, y), device(x, y)
    x, y = xp.asarray(x, dtype=xp.float64, device=dev), xp.asarray(y, dtype=xp.float64, device=dev)
    x = x - xp.mean(x, axis=0, keepdims=True)
    y = y - xp.mean(y, axis=0, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        nx = xp.sqrt(xp.sum(x * x, axis=0))
        ny = xp.sqrt(xp.sum(y * y, axis=0))
        r = (x.T @ y) / (nx[:, None] * ny[None, :])
    return xp.where((nx[:, None] == 0) | (ny[None, :] == 0), float("nan"), r)
