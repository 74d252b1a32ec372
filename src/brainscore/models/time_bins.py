"""Time bins of a model's responses: a static response repeated over them, and a temporal model's bins averaged onto
the ones a benchmark records, by overlap (the reference's ``time_align`` and ``assembly_time_align``, Brain-Score's
temporal models, 2024).

Times are in ms from stimulus onset; a bin ``(start, end)`` covers ``[start, end)``.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from brainscore.data.assemblies import NeuroidAssembly
from brainscore.errors import ValidationError

__all__ = ["DEFAULT_TIME_BINS", "repeat_time_bins", "time_bin_weights", "average_time_bins", "align_time_bins", "checked_time_bins", "on_time_bins",
           "AVERAGE_BLOCK_BYTES"]

#: Time bin recorded when none is given (ms), as the reference.
DEFAULT_TIME_BINS = ((70, 170),)


def _ms(value) -> int | float:
    """A time in ms: an int when integral (70, not 70.0), else the float itself (never truncated)."""
    value = float(value)
    return int(value) if value.is_integer() else value


def checked_time_bins(time_bins) -> list[tuple[int, int]]:
    """``time_bins`` as a list of ``(start, end)`` ms (ints where integral).

    Raises
    ------
    ValidationError
        For no bins, a bin that is not a pair of finite numbers, or one that does not end after it starts.
    """
    try:
        bins = [tuple(_ms(v) for v in b) for b in time_bins]
    except (TypeError, ValueError) as error:
        raise ValidationError(f"time bins must be (start, end) pairs in ms; got {time_bins!r} ({error})") from None
    if not bins:
        raise ValidationError("no time bins given; pass e.g. [(70, 170)] (ms from stimulus onset)")
    for bin_ in bins:
        if len(bin_) != 2 or not np.isfinite(bin_).all():
            raise ValidationError(f"time bin {bin_} must be a (start, end) pair of finite times in ms")
        if bin_[1] <= bin_[0]:
            raise ValidationError(f"time bin ({bin_[0]}, {bin_[1]}) must end after it starts (ms)")
    return bins


def repeat_time_bins(assembly: NeuroidAssembly, time_bins: Sequence[tuple[int, int]]) -> NeuroidAssembly:
    """A static response for every time bin: ``presentation x neuroid x time_bin`` (a broadcast view).

    Coordinates ``time_bin_start`` and ``time_bin_end`` (ms) lie on ``time_bin``.
    """
    bins = checked_time_bins(time_bins)
    expanded = assembly.expand_dims(time_bin=len(bins), axis=-1)
    expanded = expanded.assign_coords(time_bin_start=("time_bin", np.array([b[0] for b in bins])),
                                      time_bin_end=("time_bin", np.array([b[1] for b in bins])))
    return type(assembly)(expanded)


def time_bin_weights(source_bins, target_bins, mode: str = "portion") -> np.ndarray:
    """How much each source time bin counts for each target bin: ``(n_target, n_source)``.

    ``"portion"``: the fraction of each source bin ``[s, e)`` that the target bin ``[a, b)`` covers,
    ``max(0, min(b, e) - max(a, s)) / (e - s)``; a row is all 0 when the source bins do not cover the
    whole target bin. ``"center"``: 1 for the source bin holding the target bin's centre. The
    reference's ``time_align`` (source bins assumed contiguous).

    Raises
    ------
    ValueError
        For another ``mode``.
    """
    source = np.asarray([tuple(b) for b in source_bins], dtype=float).reshape(-1, 2)
    target = np.asarray([tuple(b) for b in target_bins], dtype=float).reshape(-1, 2)
    if mode == "center":
        middle = target.mean(axis=1)[:, None]
        return ((middle >= source[None, :, 0]) & (middle < source[None, :, 1])).astype(float)
    if mode != "portion":
        raise ValueError(f"time-bin alignment mode must be 'portion' or 'center', got {mode!r}")
    overlap = np.clip(np.minimum(target[:, 1:2], source[None, :, 1]) - np.maximum(target[:, 0:1], source[None, :, 0]),
                      0, None)
    with np.errstate(invalid="ignore", divide="ignore"):
        weights = overlap / (source[None, :, 1] - source[None, :, 0])
    covered = (source[:, 0].min() <= target[:, 0]) & (source[:, 1].max() >= target[:, 1])
    weights[~covered] = 0
    return np.nan_to_num(weights)


AVERAGE_BLOCK_BYTES = 32 << 20  #: bytes of float64 products :func:`average_time_bins` holds at a time


def average_time_bins(values: np.ndarray, source_bins, target_bins, mode: str = "portion") -> np.ndarray:
    """``values`` on ``source_bins`` (last axis) averaged onto ``target_bins``: ``(..., n_target)``.

    Each target bin is the mean of the source bins it overlaps, weighted by :func:`time_bin_weights`:
    ``(values[..., overlapped] * w).sum(-1) / w.sum()`` in float64, returned in ``values``' floating dtype
    (float64 for other dtypes), the reference's ``assembly_time_align`` operation by operation, so the
    averages equal its own to the last bit. Only the overlapped bins enter, so a NaN in a source bin a target
    does not overlap (the padding after a shorter video's end) stays out of it. Rows are averaged in blocks of
    :data:`AVERAGE_BLOCK_BYTES`, so the float64 products never hold more than a block.

    Raises
    ------
    ValidationError
        If a target bin is not covered by the source bins (``"portion"``) or its centre lies in none (``"center"``).
    """
    weights = time_bin_weights(source_bins, target_bins, mode)  # (n_target, n_source)
    totals = weights.sum(axis=1)
    if np.any(totals == 0):
        source = np.asarray([tuple(b) for b in source_bins], dtype=float).reshape(-1, 2)
        raise ValidationError(f"requested time bins {[tuple(target_bins[j]) for j in np.flatnonzero(totals == 0)]} "
                              f"ms are not covered by the model's time bins "
                              f"{list(zip(source[:, 0].astype(int), source[:, 1].astype(int)))}")
    values = np.asarray(values)
    dtype = values.dtype if np.issubdtype(values.dtype, np.floating) else np.dtype(np.float64)
    flat = values.reshape(-1, values.shape[-1])
    averaged = np.empty((flat.shape[0], len(weights)), dtype=dtype)
    # targets that overlap the same number of source bins are averaged together, each by its own weights
    by_count: dict[int, list[tuple[int, np.ndarray]]] = {}
    for target, row in enumerate(weights):
        overlapped = np.flatnonzero(row > 0)
        by_count.setdefault(len(overlapped), []).append((target, overlapped))
    groups = []
    for members in by_count.values():
        targets = np.array([target for target, _ in members])
        bins = np.stack([overlapped for _, overlapped in members])                              # (targets, overlapped)
        weight = np.take_along_axis(weights[targets], bins, axis=1)
        total = np.array([row.sum() for row in weight])  # each target's sum alone, as the reference's weights.sum()
        groups.append((targets, bins, weight, total))
    step = max(1, AVERAGE_BLOCK_BYTES // (8 * sum(bins.size for _, bins, _, _ in groups)))
    for start in range(0, flat.shape[0], step):
        block = flat[start:start + step]
        for targets, bins, weight, total in groups:
            averaged[start:start + step, targets] = (block[:, bins] * weight).sum(-1) / total
    return averaged.reshape(*values.shape[:-1], len(weights))


def align_time_bins(assembly: NeuroidAssembly, time_bins: Sequence[tuple[int, int]],
                    mode: str = "portion") -> NeuroidAssembly:
    """Average a temporal model's time bins into the requested ones (the reference's ``assembly_time_align``).

    Each requested bin is the mean of the source bins weighted by :func:`time_bin_weights` (``"portion"``:
    by the fraction of each source bin it covers; ``"center"``: the source bin holding its centre).

    Raises
    ------
    ValidationError
        If a requested bin is not covered by the source bins (``"portion"``) or its centre lies in none
        (``"center"``).
    """
    bins = checked_time_bins(time_bins)
    starts = np.atleast_1d(assembly["time_bin_start"].values).astype(float)
    ends = np.atleast_1d(assembly["time_bin_end"].values).astype(float)
    other = [d for d in assembly.dims if d != "time_bin"]
    source = assembly.transpose(*other, "time_bin")
    # the layer's own dtype: average_time_bins converts a block of rows to float64 at a time, not a copy of it all
    values = average_time_bins(source.values, np.stack([starts, ends], axis=1), bins, mode)
    coords = {name: coord for name, coord in source.coords.items() if "time_bin" not in coord.dims}
    coords["time_bin_start"] = ("time_bin", np.array([b[0] for b in bins]))
    coords["time_bin_end"] = ("time_bin", np.array([b[1] for b in bins]))
    return type(assembly)(values, dims=(*other, "time_bin"), coords=coords)


def on_time_bins(assembly: NeuroidAssembly, time_bins: Sequence[tuple[int, int]],
                 mode: str = "portion") -> NeuroidAssembly:
    """A model's response on the requested ``time_bins``: a temporal one (a ``time_bin`` dim with
    ``time_bin_start``/``time_bin_end``) averaged into them (:func:`align_time_bins`), a static one repeated in every
    bin (:func:`repeat_time_bins`); the reference's ``assembly_time_align``.

    Raises
    ------
    ValidationError
        From :func:`align_time_bins` (a requested bin the source bins do not cover) or :func:`checked_time_bins`.
    """
    if "time_bin" in assembly.dims:
        return align_time_bins(assembly, time_bins, mode)
    return repeat_time_bins(assembly, time_bins)
