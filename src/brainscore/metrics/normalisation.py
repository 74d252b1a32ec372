"""Normalising scores by their ceiling.

Brain-Score reports a neural predictivity ``r`` (mean over cross-validation splits of the median
Pearson r) relative to the data's internal consistency ``c`` (Spearman-Brown corrected split-half
reliability). Two formulas have been used:

- ``"r2_over_ceiling"`` (the reference since 2026-01-13): ``s = r² / c``, the explained variance
  relative to the reliability (the Spearman-Brown corrected reliability already estimates the
  explainable variance fraction);
- ``"legacy"`` (Brain-Score 1.x/2.x and leaderboard numbers before 2026-01-13): ``s = (r / c)²``.

Neural scores are *not* clipped: a model can exceed a noisy ceiling (scores > 1 happen in the
reference too). Use :func:`bound_score` where a benchmark clips explicitly.

Error propagation (beyond the reference, which copies the raw score's error unchanged)
    The ceiled score's ``error`` combines the raw score's error ``σ_r`` and the ceiling's error
    ``σ_c`` to first order (independent errors)::

        r²/c :    σ_s = sqrt((2r/c · σ_r)² + (r²/c² · σ_c)²) = s · sqrt((2σ_r/r)² + (σ_c/c)²)
        (r/c)²:   σ_s = sqrt((2r/c² · σ_r)² + (2r²/c³ · σ_c)²) = s · sqrt((2σ_r/r)² + (2σ_c/c)²)
        x/c :     σ_s = sqrt((σ_x/c)² + (x/c² · σ_c)²)

    The reference's unpropagated error is kept as ``attrs["error_raw_only"]``.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from brainscore.errors import ValidationError
from brainscore.metrics.score import Score

__all__ = ["explained_variance", "ceil_score", "bound_score", "FORMULAS"]

FORMULAS = ("r2_over_ceiling", "legacy")


def _value(x: Any) -> Any:
    """Scalar float, or a DataArray for per-time-bin scores."""
    if isinstance(x, xr.DataArray):
        return float(x) if x.ndim == 0 else xr.DataArray(x.values, dims=x.dims, coords=x.coords)
    return float(x)


def _error(score: Any) -> Any:
    """The ``error`` attribute of ``score`` (0 where it has none)."""
    error = getattr(score, "attrs", {}).get("error") if isinstance(score, xr.DataArray) else None
    if error is None:
        return 0.0
    return _value(error) if isinstance(error, xr.DataArray) else float(error)


def _wrap(value: Any, **attrs: Any) -> Score:
    if isinstance(value, xr.DataArray):
        score = Score(value.values, dims=value.dims, coords=value.coords)
    else:
        score = Score(np.asarray(value, dtype=float))
    score.attrs.update(attrs)
    return score


def _check_ceiling(c: Any) -> None:
    """A ceiling must be finite and positive to normalise by; otherwise the ceiled score is inf or NaN."""
    values = np.asarray(c, dtype=float)
    bad = ~np.isfinite(values) | (values <= 0)
    if bad.any():
        raise ValidationError(f"the ceiling is {values.ravel()[bad.ravel()][:5].tolist()} (it must be finite and > 0 to "
                              f"normalise by): the data are not reliable enough (too few repetitions, or constant "
                              f"responses); report the raw score instead, or use more data for the ceiling")


def explained_variance(raw: Score, ceiling: Score, formula: str = "r2_over_ceiling") -> Score:
    """Ceiled neural predictivity: ``r² / ceiling`` (default) or ``(r / ceiling)²`` (``"legacy"``).

    Parameters
    ----------
    raw : Score
        The raw predictivity r (scalar, or per time bin), with ``attrs["error"]``.
    ceiling : Score
        The internal consistency c (same shape as ``raw`` or scalar), with ``attrs["error"]``.
    formula : {"r2_over_ceiling", "legacy"}
        ``"r2_over_ceiling"``: the reference since 2026-01-13 (PR #2169); ``"legacy"``: before.

    Returns
    -------
    Score
        The ceiled score (not clipped). Attributes: ``raw``, ``ceiling``, ``error`` (propagated
        from both errors, see the module docstring), ``error_raw_only`` (the reference's error: the
        raw score's, unchanged), ``formula``.

    Raises
    ------
    ValueError
        For an unknown ``formula``.
    ValidationError
        For a ceiling that is NaN, infinite, zero or negative (the ceiled score would be inf or NaN).

    Examples
    --------
    >>> s = explained_variance(Score.of(0.5, error=0.02), Score.of(0.8, error=0.01))
    >>> round(float(s), 6), round(s.attrs["error"], 6)   # 0.25/0.8; 0.3125*sqrt((2*.02/.5)**2 + (.01/.8)**2)
    (0.3125, 0.025303)
    """
    if formula not in FORMULAS:
        raise ValueError(f"unknown normalisation formula {formula!r}; choose one of {FORMULAS}")
    r, c = _value(raw), _value(ceiling)
    _check_ceiling(c)
    sr, sc = _error(raw), _error(ceiling)
    with np.errstate(invalid="ignore", divide="ignore"):
        if formula == "r2_over_ceiling":
            value = r * r / c
            error = np.sqrt((2 * r / c * sr) ** 2 + (r * r / (c * c) * sc) ** 2)
        else:
            value = (r / c) ** 2
            error = np.sqrt((2 * r / (c * c) * sr) ** 2 + (2 * r * r / (c ** 3) * sc) ** 2)
    if not isinstance(error, xr.DataArray):
        error = float(error)
    score = _wrap(value, raw=raw, ceiling=ceiling, formula=formula)
    score.attrs["error"] = error
    score.attrs["error_raw_only"] = raw.attrs.get("error") if isinstance(raw, xr.DataArray) else None
    return score


def ceil_score(score: Score, ceiling: Score) -> Score:
    """``score / ceiling`` (used by e.g. the V1 property and RSA benchmarks).

    Returns
    -------
    Score
        Attributes ``raw``, ``ceiling``, ``error`` (first-order propagation of both errors:
        ``sqrt((σ_x/c)² + (x/c² · σ_c)²)``) and ``error_raw_only`` (``σ_x / c``).
    """
    x, c = _value(score), _value(ceiling)
    _check_ceiling(c)
    sx, sc = _error(score), _error(ceiling)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = x / c
        error = np.sqrt((sx / c) ** 2 + (x / (c * c) * sc) ** 2)
        raw_only = sx / c
    if not isinstance(error, xr.DataArray):
        error, raw_only = float(error), float(raw_only)
    return _wrap(value, raw=score, ceiling=ceiling, error=error, error_raw_only=raw_only)


def bound_score(score: Score) -> Score:
    """``score`` clipped to [0, 1], as a new Score with the same attributes (the input is unchanged).

    The reference clips in place; here the original stays available (also as ``attrs["unbounded"]``).
    """
    values = np.clip(np.asarray(score.values, dtype=float), 0.0, 1.0)
    bounded = Score(values, dims=score.dims, coords=score.coords)
    bounded.attrs.update(dict(score.attrs))
    bounded.attrs["unbounded"] = float(score) if score.ndim == 0 else score.values.copy()
    return bounded
