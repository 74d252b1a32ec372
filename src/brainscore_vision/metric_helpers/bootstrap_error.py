"""Resampling error of an aggregated score, under the reference's names (``bootstrap_error``, ``attach_error``,
``declare_no_error``).

A score that averages over units (subjects, folds, stimuli) is one draw of those units; its error is the
standard deviation of the aggregate when the units are redrawn with replacement (the nonparametric
bootstrap: Efron 1979; Efron & Tibshirani 1993, ch. 6). For a plain mean over ``n`` units this tends to
the standard error of the mean, ``std / sqrt(n)``.

- :func:`bootstrap_error` computes it: each resample draws, independently for every dimension in
  ``over``, as many indices as that dimension has (numpy's ``default_rng(seed).integers``), applies
  ``aggregate`` (default: the mean of the finite values) and returns the standard deviation
  (``ddof=1``) of the finite aggregates.
- :func:`attach_error` writes it into ``score.attrs['error']`` with ``error_over`` and ``n_bootstrap``,
  and keeps the per-unit values as ``attrs['raw']`` unless a ``raw`` is already there.
- :func:`declare_no_error` says why a score has no error (``error`` NaN and ``error_nan_reason``), so a
  missing error is never mistaken for an error of zero.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from brainscore.metrics.score import Score

__all__ = ["bootstrap_error", "attach_error", "declare_no_error", "ERROR_KEY", "ERROR_OVER_KEY", "N_BOOTSTRAP_KEY",
           "ERROR_NAN_REASON_KEY"]

ERROR_KEY = "error"
ERROR_OVER_KEY = "error_over"
N_BOOTSTRAP_KEY = "n_bootstrap"
ERROR_NAN_REASON_KEY = "error_nan_reason"


def _finite_mean(values: Any) -> float:
    array = np.asarray(values, dtype=float)
    finite = array[np.isfinite(array)]
    return float(finite.mean()) if finite.size else float("nan")


def bootstrap_error(values: Any, over: Sequence[str], aggregate: Callable[[Any], float] | None = None,
                    n_bootstrap: int = 1000, seed: int = 0) -> float:
    """Standard deviation of ``aggregate(values)`` over bootstrap resamples of the units along ``over``.

    Parameters
    ----------
    values : xarray.DataArray (e.g. a Score)
        Per-unit values (per subject, per fold, per stimulus, ...), with every name of ``over`` among its dims.
    over : sequence of str
        The dims whose units are redrawn with replacement, each independently (a crossed design).
    aggregate : callable (DataArray) -> float, optional
        The score from a resample; default: the mean of its finite values.
    n_bootstrap : int
        Number of resamples (at least 2).
    seed : int
        Seed of ``numpy.random.default_rng``: the same inputs give the same error.

    Returns
    -------
    float
        The error (same units as the score); NaN when fewer than two resamples have a finite aggregate
        (e.g. a single unit), which :func:`attach_error` then explains in ``error_nan_reason``.

    Raises
    ------
    ValueError
        If a name of ``over`` is not a dim of ``values``, or ``n_bootstrap`` < 2.
    """
    dims = tuple(getattr(values, "dims", ()))
    missing = [dim for dim in over if dim not in dims]
    if missing:
        raise ValueError(f"cannot resample over {missing}: not dims of the values (dims {list(dims)}); "
                         f"pass over= among {list(dims)}")
    if int(n_bootstrap) < 2:
        raise ValueError(f"n_bootstrap must be at least 2 to estimate a spread; got {n_bootstrap}")
    aggregate = aggregate or _finite_mean
    generator = np.random.default_rng(seed)
    draws = np.empty(int(n_bootstrap))
    for b in range(int(n_bootstrap)):
        picks = {dim: generator.integers(0, values.sizes[dim], values.sizes[dim]) for dim in over}
        draws[b] = float(aggregate(values.isel(picks)))
    finite = draws[np.isfinite(draws)]
    return float(np.std(finite, ddof=1)) if finite.size >= 2 else float("nan")


def attach_error(score: Score, values: Any, over: Sequence[str], aggregate: Callable[[Any], float] | None = None,
                 n_bootstrap: int = 1000, seed: int = 0) -> Score:
    """Attach :func:`bootstrap_error` of ``values`` to ``score`` (in place) and return ``score``.

    Sets ``attrs['error']``, ``attrs['error_over']`` (list of dims) and ``attrs['n_bootstrap']``; keeps
    ``values`` as ``attrs['raw']`` when ``score`` has no ``raw`` yet. Where the error is NaN (fewer than
    two finite resamples), ``attrs['error_nan_reason']`` says so.

    Raises
    ------
    ValueError
        As :func:`bootstrap_error`.
    """
    error = bootstrap_error(values, over, aggregate=aggregate, n_bootstrap=n_bootstrap, seed=seed)
    score.attrs[ERROR_KEY] = error
    score.attrs[ERROR_OVER_KEY] = list(over)
    score.attrs[N_BOOTSTRAP_KEY] = int(n_bootstrap)
    if not np.isfinite(error):
        score.attrs[ERROR_NAN_REASON_KEY] = (f"fewer than two of the {int(n_bootstrap)} resamples over "
                                             f"{list(over)} gave a finite aggregate")
    if Score.RAW_VALUES_KEY not in score.attrs:
        score.attrs[Score.RAW_VALUES_KEY] = values
    return score


def declare_no_error(score: Score, reason: str) -> Score:
    """Mark ``score`` (in place) as having no resampling error: ``attrs['error']`` NaN and ``attrs['error_nan_reason']``.

    Raises
    ------
    ValueError
        If ``reason`` is empty: the point is to say why.
    """
    if not str(reason).strip():
        raise ValueError("declare_no_error needs a reason (why no unit can be resampled)")
    score.attrs[ERROR_KEY] = float("nan")
    score.attrs[ERROR_NAN_REASON_KEY] = str(reason)
    return score
