"""The reference's ``temporal.utils.batch_2d_resize``, on :func:`brainscore.data.resize.resize_batch`."""
from __future__ import annotations

import numpy as np

from brainscore.data.resize import resize_batch

__all__ = ["batch_2d_resize"]

#: The reference's mode names -> :func:`brainscore.data.resize.resize_batch`'s.
_MODES = {"pool": "area", "bilinear": "bilinear"}


def batch_2d_resize(arr: np.ndarray, size, mode: str) -> np.ndarray:
    """Resize a batch of images.

    Parameters
    ----------
    arr : ndarray of shape (N, H, W, C)
    size : tuple of 2 ints
        ``(width, height)`` of the output.
    mode : {"pool", "bilinear"}
        ``"pool"``: proportional average pooling (each output pixel the area-weighted mean of the input pixels
        it covers, also when growing); ``"bilinear"``: OpenCV's ``INTER_LINEAR`` rule.

    Returns
    -------
    ndarray of shape (N, height, width, C)
        ``arr``'s dtype (integers rounded to nearest).

    Raises
    ------
    ValueError
        For an unknown mode, a size that is not two positive integers, or ``arr`` not of shape (N, H, W, C).
    """
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {sorted(_MODES)}; got {mode!r}")
    return resize_batch(arr, size, _MODES[mode])
