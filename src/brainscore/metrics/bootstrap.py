"""Vectorised kernels of the bootstrap over experimental units (stimuli, images, trials).

A bootstrap resample of ``n`` units (Efron 1979; Efron & Tibshirani 1993, ch. 6) is a vector of
multinomial counts ``w`` (how often each unit was drawn, summing to ``n``). Every statistic the
benchmarks use is a function of weighted sums over units, so all resamples are computed at once as
matrix products ``W @ X`` with ``W`` of shape ``(resamples, n_units)``, never by copying data:

- a mean over units: ``W @ x / n``;
- Pearson r across units: from ``W @ x``, ``W @ y``, ``W @ x²``, ``W @ y²``, ``W @ xy`` (and
  ``W @ mask`` where values are missing);
- Spearman r across pairs of units (RDMs): pair weights ``w_i w_j``, weighted mid-ranks by a
  cumulative sum over the pairs sorted once, then the weighted Pearson of the ranks.

A unit drawn ``k`` times enters with weight ``k``, exactly as ``k`` copies would. The benchmarks
(:mod:`brainscore.benchmarks`) decide what the unit is and what is recomputed; this module only
computes.

**Device.** :func:`weighted_pearson`, :func:`weighted_mean` and :func:`weighted_spearman_pairs` take a
``device`` (default: that of the enclosing :func:`brainscore.metrics.device.computing_on`, so a
benchmark's ``bootstrap(..., device="cuda")`` runs them there; None: numpy). Their heavy parts, the
``(resamples x units)`` products and the per-resample ranks, then run in torch on the device (issue 24:
the bootstrap did not take the device); results come back as numpy and equal the numpy path to
rounding (the ranks exactly: the pair weights are integers, so their cumulative sums are exact).

**The error of an aggregate over a few units.** A score that is already a mean over a handful of
units (subjects, folds; :mod:`brainscore.benchmarks.aggregate`) has its error from the per-unit values
alone: :func:`unit_bootstrap_error` redraws the units with replacement (independently along each dim
of ``over``, a crossed design), applies the aggregate (default: the mean of the finite values) and
returns the standard deviation (``ddof=1``) of the finite aggregates; for a plain mean over ``n``
units it tends to the standard error of the mean, ``std / sqrt(n)`` (Efron 1979; Efron & Tibshirani
1993, ch. 6). :func:`attach_unit_error` writes it into a Score's attrs (:data:`ERROR_KEY`,
:data:`ERROR_OVER_KEY`, :data:`N_BOOTSTRAP_KEY`, and :data:`ERROR_NAN_REASON_KEY` where it is NaN);
:func:`declare_no_error` marks a score that has no such error and says why, so that a missing error
is never mistaken for an error of zero.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from brainscore.metrics.device import effective_device
from brainscore.metrics.kernels.backend import namespace_of_device, on_device, to_numpy
from brainscore.metrics.score import Score

__all__ = ["BootstrapSamples", "resample_counts", "unit_sums", "weighted_mean", "weighted_pearson", "weighted_spearman_pairs",
           "half_averages", "percentile_interval", "unit_bootstrap_error", "attach_unit_error", "declare_no_error",
           "ERROR_KEY", "ERROR_OVER_KEY", "N_BOOTSTRAP_KEY", "ERROR_NAN_REASON_KEY"]

#: attribute of a Score holding its error (same units as the score)
ERROR_KEY = "error"
#: attribute naming the dims whose units :func:`attach_unit_error` resampled (a list of str)
ERROR_OVER_KEY = "error_over"
#: attribute holding the number of resamples behind the error
N_BOOTSTRAP_KEY = "n_bootstrap"
#: attribute saying why a Score's error is NaN
ERROR_NAN_REASON_KEY = "error_nan_reason"


@dataclass
class BootstrapSamples:
    """Bootstrap distribution of a benchmark's ceiled score (and of its ceiling).

    Attributes
    ----------
    score : ndarray of shape (resamples,)
        The ceiled score recomputed on each resample (NaN where undefined on a resample).
    ceiling : ndarray of shape (resamples,) or None
        The ceiling recomputed on the same resamples; None when the ceiling is fixed (no ceiling,
        or a ceiling from other data).
    unit : str
        What was resampled (``"stimulus"``, ``"image"``, ``"trial"``).
    method : str
        One line on what was recomputed inside each resample.
    """

    score: np.ndarray
    ceiling: np.ndarray | None
    unit: str
    method: str


def resample_counts(n_units: int, resamples: int, seed: int) -> np.ndarray:
    """Multinomial counts of ``resamples`` bootstrap draws of ``n_units`` units with replacement.

    Returns
    -------
    ndarray of shape (resamples, n_units), float64
        Each row sums to ``n_units``.

    Raises
    ------
    ValueError
        If ``n_units < 2`` or ``resamples < 1``.
    """
    if n_units < 2 or resamples < 1:
        raise ValueError(f"a bootstrap needs at least 2 units and 1 resample, got {n_units} units, {resamples} resamples")
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_units, size=(resamples, n_units)) + (np.arange(resamples) * n_units)[:, None]
    return np.bincount(draws.ravel(), minlength=resamples * n_units).reshape(resamples, n_units).astype(np.float64)


def unit_sums(unit_ids: np.ndarray, units: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per-unit sums of per-trial ``values``: trials labelled ``unit_ids`` summed into the order of ``units``.

    Parameters
    ----------
    unit_ids : ndarray of shape (n_trials,)
        The unit (e.g. image) of each trial; each must be in ``units``.
    units : ndarray of shape (n_units,)
        Sorted unique units (the columns of the bootstrap weights).
    values : ndarray of shape (n_trials,) or (n_trials, k)

    Returns
    -------
    ndarray of shape (n_units,) or (n_units, k)

    Raises
    ------
    ValueError
        If a trial's unit is not in ``units``.
    """
    unit_ids, units = np.asarray(unit_ids).astype(str), np.asarray(units).astype(str)
    index = np.minimum(np.searchsorted(units, unit_ids), len(units) - 1)
    if not np.array_equal(units[index], unit_ids):
        raise ValueError("a trial's unit is not among the bootstrap's units")
    values = np.asarray(values, dtype=np.float64)
    out = np.zeros((len(units),) + values.shape[1:])
    np.add.at(out, index, values)
    return out


def _product(weights: np.ndarray, values: np.ndarray, device: str | None) -> np.ndarray:
    """``weights @ values`` (float64), on the torch ``device`` when given, as numpy."""
    if device is None:
        return weights @ values
    return to_numpy(on_device(np.asarray(weights, dtype=np.float64), device) @ on_device(values, device))


def weighted_mean(weights: np.ndarray, values: np.ndarray, device: str | None = None) -> np.ndarray:
    """``(W @ values) / W.sum(1)``: per-resample weighted means; ``values`` of shape (n_units, ...).

    ``device``: where the product runs (see the module docstring).
    """
    values = np.asarray(values, dtype=np.float64)
    total = weights.sum(axis=1)
    flat = _product(weights, values.reshape(values.shape[0], -1), effective_device(device))
    with np.errstate(invalid="ignore", divide="ignore"):
        return (flat / total[:, None]).reshape((weights.shape[0],) + values.shape[1:])


def weighted_pearson(weights: np.ndarray, x: np.ndarray, y: np.ndarray, device: str | None = None) -> np.ndarray:
    """Pearson r across units of every column, for every resample's weights.

    Parameters
    ----------
    weights : ndarray of shape (resamples, n_units)
        Non-negative weights (bootstrap counts).
    x, y : ndarray of shape (n_units, n_columns)
        Paired values; a NaN in either leaves that (unit, column) out of that column's r.
    device : str, optional
        Where the moments' product runs (see the module docstring).

    Returns
    -------
    ndarray of shape (resamples, n_columns)
        NaN where a column is constant (or has fewer than 2 distinct units) in a resample.
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    mask = ~(np.isnan(x) | np.isnan(y))
    complete = bool(mask.all())
    if not complete:
        x, y = np.where(mask, x, 0.0), np.where(mask, y, 0.0)
    # centring first keeps the raw moments small (no cancellation); weights do not change the result
    with np.errstate(invalid="ignore", divide="ignore"):
        x = x - (x.sum(axis=0) / np.maximum(mask.sum(axis=0), 1)) * mask
        y = y - (y.sum(axis=0) / np.maximum(mask.sum(axis=0), 1)) * mask
    k = x.shape[1]
    blocks = [x, y, x * x, y * y, x * y] + ([] if complete else [mask.astype(np.float64)])
    sums = _product(weights, np.concatenate(blocks, axis=1), effective_device(device))   # one product for all moments
    sx, sy, sxx, syy, sxy = (sums[:, i * k:(i + 1) * k] for i in range(5))
    n = weights.sum(axis=1)[:, None] if complete else sums[:, 5 * k:]
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = sxy - sx * sy / n
        vx = sxx - sx * sx / n
        vy = syy - sy * sy / n
        r = cov / np.sqrt(vx * vy)
    tiny = 1e-12 * (np.abs(sxx) + np.abs(syy) + 1.0)
    r[(vx <= tiny) | (vy <= tiny)] = np.nan
    return np.clip(r, -1.0, 1.0)


def weighted_spearman_pairs(unit_weights: np.ndarray, rows: np.ndarray, cols: np.ndarray, a: np.ndarray,
                            b: np.ndarray, device: str | None = None) -> np.ndarray:
    """Spearman r between two RDM upper triangles, with stimuli resampled.

    A pair of stimuli (i, j), i < j, drawn ``w_i`` and ``w_j`` times appears ``w_i w_j`` times in the
    resampled RDM (pairs of a stimulus with a copy of itself have no dissimilarity and are left out,
    as for the diagonal). Ranks are the weighted mid-ranks of the resampled multiset of pairs.

    Parameters
    ----------
    unit_weights : ndarray of shape (resamples, n_stimuli)
    rows, cols : ndarray of int, shape (n_pairs,)
        The stimuli of each pair.
    a, b : ndarray of shape (n_pairs,) or (n_pairs, n_rdms)
        Dissimilarities of the pairs in the two RDMs (``b`` may hold several RDMs as columns).
    device : str, optional
        Where the pair weights, ranks and correlations are computed (see the module docstring).

    Returns
    -------
    ndarray of shape (resamples,) or (resamples, n_rdms)
    """
    device = effective_device(device)
    if device is not None:
        return _weighted_spearman_pairs_on(device, unit_weights, rows, cols, a, b)
    pair_weights = unit_weights[:, rows] * unit_weights[:, cols]            # (B, P)
    ranks_a = _weighted_midranks(pair_weights, np.asarray(a, dtype=np.float64))
    b = np.asarray(b, dtype=np.float64)
    single = b.ndim == 1
    b = b[:, None] if single else b
    out = np.empty((unit_weights.shape[0], b.shape[1]))
    for k in range(b.shape[1]):
        ranks_b = _weighted_midranks(pair_weights, b[:, k])
        out[:, k] = _rowwise_weighted_pearson(pair_weights, ranks_a, ranks_b)
    return out[:, 0] if single else out


def _weighted_midranks(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Mid-ranks of ``values`` (n,) in every resample's weighted multiset: (B, n); ties share their rank."""
    order = np.argsort(values, kind="stable")
    sorted_values = values[order]
    w = weights[:, order]
    # tie groups: consecutive equal values share the mid-rank of their group
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    group = np.cumsum(np.r_[True, sorted_values[1:] != sorted_values[:-1]]) - 1
    group_weight = np.add.reduceat(w, starts, axis=1)                        # (B, groups)
    before = np.cumsum(group_weight, axis=1) - group_weight
    midrank = before + (group_weight + 1.0) / 2.0
    ranks = np.empty_like(w)
    ranks[:, order] = midrank[:, group]
    return ranks


def _rowwise_weighted_pearson(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Weighted Pearson r of rows: w, x, y of shape (B, n) -> (B,)."""
    n = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx, my = (w * x).sum(axis=1) / n, (w * y).sum(axis=1) / n
        dx, dy = x - mx[:, None], y - my[:, None]
        return (w * dx * dy).sum(axis=1) / np.sqrt((w * dx * dx).sum(axis=1) * (w * dy * dy).sum(axis=1))


def _weighted_spearman_pairs_on(device: str, unit_weights: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                                a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`weighted_spearman_pairs` in torch on ``device``: each RDM sorted once on the host, the rest there."""
    xp, dev = namespace_of_device(device)
    weights = on_device(np.asarray(unit_weights, dtype=np.float64), device)
    pair_weights = xp.take(weights, on_device(np.asarray(rows), device), axis=1) * \
        xp.take(weights, on_device(np.asarray(cols), device), axis=1)
    ranks_a = _weighted_midranks_on(xp, device, pair_weights, np.asarray(a, dtype=np.float64))
    b = np.asarray(b, dtype=np.float64)
    single = b.ndim == 1
    b = b[:, None] if single else b
    out = np.empty((unit_weights.shape[0], b.shape[1]))
    for k in range(b.shape[1]):
        ranks_b = _weighted_midranks_on(xp, device, pair_weights, b[:, k])
        w = pair_weights
        n = xp.sum(w, axis=1)
        mx, my = xp.sum(w * ranks_a, axis=1) / n, xp.sum(w * ranks_b, axis=1) / n
        dx, dy = ranks_a - mx[:, None], ranks_b - my[:, None]
        out[:, k] = to_numpy(xp.sum(w * dx * dy, axis=1) / xp.sqrt(xp.sum(w * dx * dx, axis=1) *
                                                                     xp.sum(w * dy * dy, axis=1)))
    return out[:, 0] if single else out


def _weighted_midranks_on(xp, device: str, weights, values: np.ndarray):
    """:func:`_weighted_midranks` with ``weights`` (B, n) on the device: group sums from one cumulative sum."""
    order = np.argsort(values, kind="stable")
    sorted_values = values[order]
    new = np.r_[True, sorted_values[1:] != sorted_values[:-1]]
    group = np.cumsum(new) - 1
    ends = np.r_[np.flatnonzero(new)[1:], len(values)] - 1               # last member of each tie group
    w = xp.take(weights, on_device(order, device), axis=1)
    through = xp.take(xp.cumulative_sum(w, axis=1), on_device(ends, device), axis=1)   # (B, groups)
    group_weight = xp.concat([through[:, :1], through[:, 1:] - through[:, :-1]], axis=1)
    midrank = through - group_weight + (group_weight + 1.0) / 2.0
    ranks = xp.zeros(w.shape, dtype=xp.float64, device=namespace_of_device(device)[1])
    ranks[:, on_device(order, device)] = xp.take(midrank, on_device(group, device), axis=1)
    return ranks


def half_averages(values: np.ndarray, stimulus_codes: np.ndarray, repetition_codes: np.ndarray, n_stimuli: int,
                  halves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per split, the average response of each stimulus over the repetitions in each half.

    Parameters
    ----------
    values : ndarray of shape (n_presentations, n_columns)
        Single trials; NaN marks a missing trial.
    stimulus_codes, repetition_codes : ndarray of int, shape (n_presentations,)
    n_stimuli : int
    halves : ndarray of shape (n_splits, n_repetitions)
        1 where a repetition is in the first half.

    Returns
    -------
    first, second : ndarray of shape (n_splits, n_stimuli, n_columns)
        NaN where a stimulus has no trial in that half.
    """
    import scipy.sparse
    n_pres, n_cols = values.shape
    n_reps = halves.shape[1]
    valid = ~np.isnan(values)
    rows = repetition_codes * n_stimuli + stimulus_codes
    indicator = scipy.sparse.csr_matrix((np.ones(n_pres), (rows, np.arange(n_pres))), shape=(n_reps * n_stimuli, n_pres))
    sums = np.asarray(indicator @ np.where(valid, values, 0.0)).reshape(n_reps, n_stimuli * n_cols)
    counts = np.asarray(indicator @ valid.astype(np.float64)).reshape(n_reps, n_stimuli * n_cols)
    halves = np.asarray(halves, dtype=np.float64)
    first_sum, first_count = halves @ sums, halves @ counts
    second_sum, second_count = sums.sum(0) - first_sum, counts.sum(0) - first_count
    with np.errstate(invalid="ignore", divide="ignore"):
        first = (first_sum / first_count).reshape(-1, n_stimuli, n_cols)
        second = (second_sum / second_count).reshape(-1, n_stimuli, n_cols)
    return first, second


def percentile_interval(samples: np.ndarray, level: float = 0.95) -> tuple[float, float] | None:
    """The percentile interval of ``samples`` (NaN resamples left out); None if fewer than 2 are finite.

    Efron & Tibshirani (1993), ch. 13: the ``(1 - level)/2`` and ``(1 + level)/2`` quantiles.
    """
    finite = np.asarray(samples, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    if finite.size < 2:
        return None
    low, high = np.quantile(finite, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def _finite_mean(values: Any) -> float:
    """The mean of the finite entries of ``values``; NaN when none is finite."""
    array = np.asarray(values, dtype=float)
    finite = array[np.isfinite(array)]
    return float(finite.mean()) if finite.size else float("nan")


def unit_bootstrap_error(values: Any, over: Sequence[str], aggregate: Callable[[Any], float] | None = None,
                         n_bootstrap: int = 1000, seed: int = 0) -> float:
    """Standard deviation of ``aggregate(values)`` over bootstrap resamples of the units along ``over``.

    The nonparametric bootstrap (Efron 1979; Efron & Tibshirani 1993, ch. 6): each of ``n_bootstrap``
    resamples draws, for every dim of ``over`` in turn, as many indices as that dim has, uniformly with
    replacement (``numpy.random.default_rng(seed).integers(0, n, n)``), selects them (``values.isel``)
    and applies ``aggregate``. For a plain mean over ``n`` units the result tends to ``std / sqrt(n)``
    (population standard deviation), the standard error of the mean.

    Parameters
    ----------
    values : xarray.DataArray (e.g. a Score)
        Per-unit values (per subject, per fold, per stimulus, ...), with every name of ``over`` among its dims.
    over : sequence of str
        The dims whose units are redrawn with replacement, each independently (a crossed design).
    aggregate : callable (DataArray) -> float, optional
        The score of a resample; default: the mean of its finite values (NaN if none).
    n_bootstrap : int
        Number of resamples, at least 2.
    seed : int
        Seed of ``numpy.random.default_rng``: the same inputs give the same error.

    Returns
    -------
    float
        The standard deviation (``ddof=1``) of the finite aggregates, in the units of the score; NaN when
        fewer than two resamples have a finite aggregate (e.g. every value NaN), which
        :func:`attach_unit_error` then explains in ``attrs['error_nan_reason']``.

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


def attach_unit_error(score: Score, values: Any, over: Sequence[str], aggregate: Callable[[Any], float] | None = None,
                      n_bootstrap: int = 1000, seed: int = 0) -> Score:
    """Attach :func:`unit_bootstrap_error` of ``values`` to ``score`` (in place) and return ``score``.

    Sets ``attrs['error']`` (float), ``attrs['error_over']`` (``list(over)``) and ``attrs['n_bootstrap']``
    (int); keeps ``values`` as ``attrs['raw']`` when ``score`` has no ``raw`` yet (a scalar ``raw`` set
    before is kept). Where the error is NaN (fewer than two finite resamples), ``attrs['error_nan_reason']``
    says so.

    Parameters
    ----------
    score : Score
        The aggregate (e.g. the mean of ``values``).
    values, over, aggregate, n_bootstrap, seed
        As :func:`unit_bootstrap_error`.

    Raises
    ------
    ValueError
        As :func:`unit_bootstrap_error`.
    """
    error = unit_bootstrap_error(values, over, aggregate=aggregate, n_bootstrap=n_bootstrap, seed=seed)
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
    """Mark ``score`` (in place) as having no resampling error and return it: ``attrs['error']`` NaN and
    ``attrs['error_nan_reason']`` the ``reason`` (e.g. a single subject: nothing to resample).

    Raises
    ------
    ValueError
        If ``reason`` is empty or blank: the point is to say why.
    """
    if not str(reason).strip():
        raise ValueError("declare_no_error needs a reason (why no unit can be resampled)")
    score.attrs[ERROR_KEY] = float("nan")
    score.attrs[ERROR_NAN_REASON_KEY] = str(reason)
    return score
