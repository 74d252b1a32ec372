"""Resizing batches of images (video frames): area averaging and bilinear interpolation, written as two
separable weight matrices (numpy only).

Both functions take a batch ``(N, H, W, C)`` and a target ``size = (width, height)`` (PIL's and OpenCV's order)
and apply one weight matrix along the rows and one along the columns: ``out = A_h @ frame @ A_w.T`` per channel.

``area``
    Each output pixel is the average of the input area it covers, each input pixel weighted by the fraction of
    it that lies inside (proportional average pooling). Output row ``r`` of ``h`` covers the input rows
    ``[r H / h, (r + 1) H / h)``; input row ``i`` (``[i, i + 1)``) enters with weight
    ``|[i, i + 1) ∩ [r H / h, (r + 1) H / h)| / (H / h)``. Shrinking 3 rows to 2 gives
    ``(2/3 x0 + 1/3 x1, 1/3 x1 + 2/3 x2)``; growing 3 rows to 4 gives ``(x0, (x0 + 2 x1) / 3, (2 x1 + x2) / 3, x2)``.
``bilinear``
    OpenCV's ``INTER_LINEAR`` rule (pixel centres aligned, no antialiasing): output pixel ``d`` samples the
    input at ``s = (d + 0.5) H / h - 0.5``, clamped to ``[0, H - 1]``, between its two neighbours.

Integer inputs come back in their own dtype, rounded to the nearest value and clipped to the dtype's range
(**deviation**: the reference's ``cv2`` path truncates, a bias of half a grey level); float inputs keep
their dtype.
"""
from __future__ import annotations

import numpy as np

__all__ = ["area_weights", "bilinear_weights", "resize_batch"]

#: The modes :func:`resize_batch` knows.
MODES = ("area", "bilinear")


def area_weights(n_in: int, n_out: int) -> np.ndarray:
    """Weights of area averaging from ``n_in`` samples to ``n_out`` (one axis; see the module notes).

    Returns
    -------
    ndarray of shape (n_out, n_in)
        Non-negative; each row sums to 1.
    """
    scale = n_in / n_out
    low = np.arange(n_out)[:, None] * scale
    high = low + scale
    cells = np.arange(n_in)[None, :]
    overlap = np.clip(np.minimum(high, cells + 1) - np.maximum(low, cells), 0, None)
    return overlap / overlap.sum(axis=1, keepdims=True)


def bilinear_weights(n_in: int, n_out: int) -> np.ndarray:
    """Weights of OpenCV's ``INTER_LINEAR`` from ``n_in`` samples to ``n_out`` (one axis; see the module notes).

    Returns
    -------
    ndarray of shape (n_out, n_in)
        At most two non-zero entries per row, summing to 1.
    """
    source = np.clip((np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5, 0, n_in - 1)
    left = np.floor(source).astype(int)
    right = np.minimum(left + 1, n_in - 1)
    fraction = source - left
    weights = np.zeros((n_out, n_in))
    rows = np.arange(n_out)
    np.add.at(weights, (rows, left), 1 - fraction)
    np.add.at(weights, (rows, right), fraction)
    return weights


def _size_of(size) -> tuple[int, int]:
    try:
        width, height = (int(value) for value in size)
    except (TypeError, ValueError):
        raise ValueError(f"size must be (width, height), two positive integers; got {size!r}") from None
    if width <= 0 or height <= 0 or (width, height) != tuple(size):
        raise ValueError(f"size must be (width, height), two positive integers; got {size!r}")
    return width, height


def resize_batch(batch: np.ndarray, size, mode: str = "area") -> np.ndarray:
    """Resize every image of a batch to ``size``.

    Parameters
    ----------
    batch : ndarray of shape (N, H, W, C)
        Any real dtype; H, W >= 1.
    size : tuple of 2 ints
        ``(width, height)`` of the output, positive.
    mode : {"area", "bilinear"}
        Area averaging (proportional average pooling) or OpenCV's bilinear rule; see the module notes.

    Returns
    -------
    ndarray of shape (N, height, width, C)
        ``batch``'s dtype (integers rounded to nearest and clipped to the dtype's range).

    Raises
    ------
    ValueError
        For a batch that is not 4-dimensional or is empty in H or W, a size that is not two positive integers, or
        an unknown mode.
    """
    batch = np.asarray(batch)
    if batch.ndim != 4 or batch.shape[1] == 0 or batch.shape[2] == 0:
        raise ValueError(f"batch must have shape (N, H, W, C) with H, W >= 1; got shape {batch.shape}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}; got {mode!r}")
    width, height = _size_of(size)
    weights_of = area_weights if mode == "area" else bilinear_weights
    rows = weights_of(batch.shape[1], height)
    columns = weights_of(batch.shape[2], width)
    out = np.einsum("ri,nijc,sj->nrsc", rows, batch.astype(np.float64), columns, optimize=True)
    if np.issubdtype(batch.dtype, np.integer):
        limits = np.iinfo(batch.dtype)
        return np.clip(np.rint(out), limits.min, limits.max).astype(batch.dtype)
    return out.astype(batch.dtype)
