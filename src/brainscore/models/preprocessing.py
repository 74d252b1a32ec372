"""Turning image files into the tensors a network expects, exactly as the reference does.

Brain-Score's PyTorch wrapper (Schrimpf et al. 2020) loads every stimulus with PIL, converts it to
RGB, resizes it and normalises it with torchvision transforms. This module reproduces those steps
with PIL and torch alone (no torchvision), operation for operation, so the tensors are bitwise equal:

- loading: :func:`brainscore.data.images.load_rgb` converts every PIL mode to 8-bit RGB: RGB, grey
  and palette images exactly as the reference; 16-bit grey scaled to 8 bits (the reference clips it
  to white); images with alpha composited over the screen grey (the reference drops alpha).
- ``"imagenet"`` mode (the reference's default): ``Resize((S, S))``: the image is squashed to a
  square with PIL's bilinear filter (antialiased when downscaling), no crop; then ``ToTensor``
  (uint8 / 255) and ``Normalize`` with mean (0.485, 0.456, 0.406), std (0.229, 0.224, 0.225).
- ``"inception"`` mode: ``Resize(int(S * 256 / 224))`` of the shorter side (aspect kept, the longer
  side truncated to an integer as torchvision does), ``CenterCrop(S)`` (offsets rounded half to
  even as torchvision does), then normalisation with mean 0.5 and std 0.5.

A :class:`Preprocessing` is a frozen dataclass: its fields (:meth:`Preprocessing.key`) go into
the cache key of every activation computed with it, so changing a model's input size or
normalisation never serves stale features.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
INCEPTION_MEAN = (0.5, 0.5, 0.5)
INCEPTION_STD = (0.5, 0.5, 0.5)
MODES = ("imagenet", "inception")
#: Threads that decode and resize one batch's files (None: the usable cores). PIL releases the GIL
#: while it decodes and resizes, so a batch's files are prepared in parallel; each file is prepared
#: alone, so the batch is bit-identical to a one-thread one, in the same order (issue 24).
DECODE_THREADS: int | None = None
_POOLS: dict[int, object] = {}


def _pool(threads: int):
    """A thread pool of ``threads`` threads, shared by every preprocessing of this process."""
    from concurrent.futures import ThreadPoolExecutor

    if threads not in _POOLS:
        _POOLS[threads] = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="brainscore-decode")
    return _POOLS[threads]


def load_image(path: str | Path):
    """An image file as 8-bit RGB: :func:`brainscore.data.images.load_rgb` (every PIL mode; see there).

    RGB, grey and palette images give the reference's values; 16-bit images are scaled to 8 bits;
    transparent pixels are composited over the screen grey (the reference drops alpha). Raises
    ``FileNotFoundError`` for a missing file and ``ValidationError`` for an unreadable one.
    """
    from brainscore.data.images import load_rgb

    return load_rgb(path)


def _resize_shorter_side(width: int, height: int, size: int) -> tuple[int, int]:
    """Output (width, height) of torchvision's ``Resize(size)`` with an int: the shorter side -> size."""
    if width <= height:
        return size, int(size * height / width)
    return int(size * width / height), size


def _center_crop_box(width: int, height: int, size: int) -> tuple[int, int, int, int]:
    """PIL crop box of torchvision's ``CenterCrop(size)`` (offsets rounded half to even)."""
    left = int(round((width - size) / 2.0))
    top = int(round((height - size) / 2.0))
    return left, top, left + size, top + size


@dataclass(frozen=True)
class Preprocessing:
    """How image files become a network's input tensor.

    Parameters
    ----------
    mode : {"imagenet", "inception"}
        ``"imagenet"``: squash to ``image_size x image_size`` (no crop); ``"inception"``: resize the
        shorter side to ``int(image_size * 256 / 224)`` and centre-crop ``image_size``.
    image_size : int
        Side ``S`` of the square input in pixels (224 for most ImageNet networks).
    mean, std : tuple of 3 floats, optional
        Per-channel normalisation of the [0, 1] RGB values. Default: the mode's, i.e. ImageNet
        statistics for ``"imagenet"`` and 0.5 / 0.5 for ``"inception"``. Give them to override the
        normalisation for one model while keeping the mode's geometry.
    channels_last : bool
        Return the batch in ``torch.channels_last`` memory format (same input values; the extractor
        then runs the network in that layout, ~30% faster for EfficientNet-Lite0 on the 2-core CPU).

    Examples
    --------
    >>> Preprocessing().key()["image_size"]
    224
    >>> Preprocessing("imagenet", 240, mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5)).mean
    (0.5, 0.5, 0.5)
    """

    mode: str = "imagenet"
    image_size: int = 224
    mean: tuple[float, float, float] | None = None
    std: tuple[float, float, float] | None = None
    channels_last: bool = False

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"preprocessing mode must be one of {MODES}, got {self.mode!r}")
        if not isinstance(self.image_size, (int, np.integer)) or self.image_size < 1:
            raise ValueError(f"image_size must be a positive int (pixels), got {self.image_size!r}")
        default_mean, default_std = ((IMAGENET_MEAN, IMAGENET_STD) if self.mode == "imagenet"
                                     else (INCEPTION_MEAN, INCEPTION_STD))
        mean = default_mean if self.mean is None else tuple(float(v) for v in self.mean)
        std = default_std if self.std is None else tuple(float(v) for v in self.std)
        if len(mean) != 3 or len(std) != 3:
            raise ValueError(f"mean and std need 3 values (R, G, B), got mean={mean}, std={std}")
        if any(s <= 0 for s in std):
            raise ValueError(f"std values must be positive, got {std}")
        object.__setattr__(self, "image_size", int(self.image_size))
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "std", std)

    def key(self) -> dict:
        """The fields that determine the features, for cache keys.

        ``channels_last`` is included: the values are the same, but a network run in that memory
        layout sums in another order (features differ by ~1e-7 relative), and a cache entry should
        hold exactly what a fresh run would compute.
        """
        values = asdict(self)
        return values

    # ---- steps -------------------------------------------------------------------------------
    def geometry(self, image):
        """Resize (and crop) an RGB PIL image to ``image_size x image_size`` as the mode prescribes."""
        from PIL import Image

        size = self.image_size
        if self.mode == "imagenet":
            if image.size != (size, size):
                image = image.resize((size, size), Image.Resampling.BILINEAR)
            return image
        width, height = _resize_shorter_side(*image.size, int(size * 256 / 224))
        if (width, height) != image.size:
            image = image.resize((width, height), Image.Resampling.BILINEAR)
        if image.size != (size, size):
            box = _center_crop_box(*image.size, size)
            if box[0] < 0 or box[1] < 0:
                raise ValueError(f"cannot centre-crop {size} pixels from an image of size {image.size}")
            image = image.crop(box)
        return image

    def to_tensor(self, image):
        """``ToTensor`` then ``Normalize``: float32 tensor of shape (3, S, S)."""
        import torch

        array = np.asarray(image, dtype=np.uint8)
        tensor = torch.from_numpy(array.copy()).permute(2, 0, 1).contiguous().to(torch.float32).div(255)
        mean = torch.tensor(self.mean, dtype=torch.float32).view(3, 1, 1)
        std = torch.tensor(self.std, dtype=torch.float32).view(3, 1, 1)
        return tensor.sub_(mean).div_(std)

    def image(self, path: str | Path):
        """One file as a normalised float32 tensor of shape (3, S, S)."""
        return self.to_tensor(self.geometry(load_image(path)))

    def __call__(self, paths: Sequence[str | Path] | Iterable[str | Path]):
        """Files as a batch: float32 tensor of shape (N, 3, S, S), in the order of ``paths``.

        The files are decoded and resized by :data:`DECODE_THREADS` threads; the result does not
        depend on their number.

        Raises
        ------
        FileNotFoundError
            If a file does not exist.
        ValueError
            If ``paths`` is empty.
        """
        import torch

        from brainscore import config

        paths = list(paths)
        threads = min(len(paths), DECODE_THREADS or config.usable_cores())
        tensors = list(_pool(threads).map(self.image, paths)) if threads > 1 else [self.image(p) for p in paths]
        if not tensors:
            raise ValueError("no image paths given to preprocess")
        batch = torch.stack(tensors)
        if self.channels_last:
            batch = batch.contiguous(memory_format=torch.channels_last)
        return batch


def imagenet(image_size: int = 224, **overrides) -> Preprocessing:
    """The reference's default preprocessing (squash to ``image_size``, ImageNet mean and std)."""
    return Preprocessing("imagenet", image_size, **overrides)


def inception(image_size: int = 224, **overrides) -> Preprocessing:
    """The reference's 'inception' preprocessing (resize, centre crop, 0.5 / 0.5 normalisation)."""
    return Preprocessing("inception", image_size, **overrides)
