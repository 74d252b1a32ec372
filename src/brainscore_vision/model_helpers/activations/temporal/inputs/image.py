"""The reference's temporal ``Image``: an image file shown at a chosen size."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from brainscore.data.images import load_rgb, open_image
from brainscore.data.resize import resize_batch
from brainscore_vision.model_helpers.activations.temporal.inputs.base import Stimulus

__all__ = ["Image", "image_size", "checked_size"]


def checked_size(size) -> tuple[int, int]:
    """``size`` as ``(width, height)``, two positive integers.

    Raises
    ------
    ValueError
        If ``size`` is not two positive integers.
    """
    try:
        width, height = size
    except (TypeError, ValueError):
        raise ValueError(f"size must be (width, height), two positive integers; got {size!r}") from None
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0 for v in (width, height)):
        raise ValueError(f"size must be (width, height), two positive integers; got {size!r}")
    return int(width), int(height)


def image_size(path) -> tuple[int, int]:
    """``(width, height)`` of an image file, from its header.

    Raises
    ------
    FileNotFoundError
        If ``path`` is not an existing file.
    """
    if not Path(path).is_file():
        raise FileNotFoundError(f"image file {str(path)!r} does not exist (or is not a file); give the path of an "
                                f"existing image (jpg, png, ...)")
    with open_image(path) as image:
        return image.size


class Image(Stimulus):
    """An image file shown at ``size``.

    Parameters
    ----------
    path : str or Path
        The image file (any PIL mode; converted to 8-bit RGB by :func:`brainscore.data.images.load_rgb`).
    size : tuple of 2 ints
        ``(width, height)`` it is shown at, in pixels.
    """

    def __init__(self, path, size):
        self._path = path
        self._size = checked_size(size)

    @staticmethod
    def from_path(path) -> "Image":
        """The image file at its own size.

        Raises
        ------
        FileNotFoundError
            If ``path`` is not an existing file.
        """
        return Image(path, image_size(path))

    @property
    def size(self) -> tuple[int, int]:
        """``(width, height)`` in pixels."""
        return self._size

    def copy(self) -> "Image":
        """An independent copy."""
        return Image(self._path, self._size)

    def set_size(self, size) -> "Image":
        """A copy shown at ``size = (width, height)`` (pixels, positive integers; ValueError otherwise)."""
        return Image(self._path, size)

    def get_frame(self) -> np.ndarray:
        """The file's pixels at its own size: ndarray of shape (H, W, 3), uint8 RGB."""
        return np.asarray(load_rgb(self._path))

    def to_numpy(self) -> np.ndarray:
        """The image at :attr:`size`: ndarray of shape (height, width, 3), uint8 RGB (bilinearly resized when the
        size differs from the file's)."""
        frame = self.get_frame()
        if (frame.shape[1], frame.shape[0]) != self._size:
            frame = resize_batch(frame[None], self._size, "bilinear")[0]
        return frame

    def to_pil_img(self):
        """The image at :attr:`size` as a ``PIL.Image.Image`` (mode RGB)."""
        from PIL import Image as PILImage

        return PILImage.fromarray(self.to_numpy())

    def store_to_path(self, path) -> str:
        """Write the image at :attr:`size` to ``path`` (format from its extension); returns ``path``."""
        self.to_pil_img().save(path)
        return path
