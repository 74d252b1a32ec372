"""Image files to 8-bit RGB, for every PIL mode, in one place (used by extraction and screen placement).

``Image.convert("RGB")`` is wrong for several modes: it clips 16-bit grey (``I;16``) at 255, so a
mid-grey 16-bit picture becomes nearly white (mean 254.2 against 127.6 for the same picture saved
as 8-bit), and it drops alpha instead of compositing. Here:

==================  ================================================================================
mode                conversion
==================  ================================================================================
``RGB``             unchanged
``L``, ``1``        grey replicated to the three channels
``P``               through its palette; a transparent palette entry is composited like alpha
``RGBA``, ``LA``,   composited over the background grey (RGB 128, 128, 128, the screen grey of
``PA``, ``RGBa``,   :mod:`brainscore.benchmarks.screen`): ``out = a * image + (1 - a) * background``,
``La``              rounded to the nearest integer
``I;16*``           16-bit unsigned grey: ``round(v / 257)``, so 65535 -> 255 and 32896 -> 128
``I``               32-bit integer grey holding 16-bit values (what PIL reports for some 16-bit PNG
                    and TIFF files): ``round(v / 257)``; values outside 0..65535 are an error
``F``               32-bit float grey in 0..1: ``round(255 v)``; values outside 0..1, NaN or inf are
                    an error
``CMYK``, ``YCbCr``  PIL's conversion to RGB
==================  ================================================================================

**Deviation**: the reference pastes images with alpha onto a black canvas (alpha dropped, not
composited), which shows fully transparent pixels as whatever colour they hold. Opaque images give
the same RGB values as the reference's loader.

Unreadable files (zero bytes, text, truncated) raise :class:`~brainscore.errors.ValidationError`
naming the file, and so do decompression bombs: a file whose header claims more than
:data:`MAX_PIXELS` pixels (a 74-byte PNG can claim 50000 x 50000, 7.5 GB once decoded) is refused
before any pixel is decoded.
"""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

import numpy as np

from brainscore.errors import ValidationError

#: Background the screen places stimuli on, and the colour transparent pixels are composited over.
BACKGROUND_GREY = (128, 128, 128)

#: Most pixels (width x height) an image file may claim: PIL's own limit (``Image.MAX_IMAGE_PIXELS``,
#: 89,478,485: 256 MiB of RGB), applied as an error from the first pixel over it (PIL only warns
#: up to twice that).
MAX_PIXELS = 89_478_485

__all__ = ["BACKGROUND_GREY", "MAX_PIXELS", "load_rgb", "open_image", "to_rgb"]


@contextlib.contextmanager
def open_image(path: str | Path, max_pixels: int | None = None) -> Iterator:
    """``PIL.Image.open(path)``, refusing decompression bombs before any pixel is decoded.

    Parameters
    ----------
    path : str or Path
    max_pixels : int, optional
        Most pixels the header may claim (default :data:`MAX_PIXELS`).

    Yields
    ------
    PIL.Image.Image
        Opened lazily (pixels not yet decoded); closed on leaving the ``with`` block.

    Raises
    ------
    ValidationError
        If the file claims more than ``max_pixels`` pixels (or a zero or negative size), naming
        the file, its claimed size and its length in bytes.
    PIL.UnidentifiedImageError, OSError
        As ``Image.open`` (callers turn them into their own errors).
    """
    import warnings

    from PIL import Image

    limit = MAX_PIXELS if max_pixels is None else int(max_pixels)
    path = Path(path)

    def bomb(claimed: str) -> ValidationError:
        size = path.stat().st_size if path.exists() else 0
        return ValidationError(f"image file {path} claims {claimed} in {size:,} bytes: more than the {limit:,} "
                               f"pixels allowed (a decompression bomb, or a huge image); replace it with an image "
                               f"of a stimulus's size (e.g. at most 4096 x 4096)")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # the limit is checked below, as an error
        try:
            image = Image.open(path)
        except Image.DecompressionBombError as error:
            raise bomb(_claimed_pixels(str(error))) from None
    with image:
        width, height = image.size
        if width <= 0 or height <= 0 or width * height > limit:
            raise bomb(f"{width} x {height} pixels")
        yield image


def _claimed_pixels(message: str) -> str:
    """``"2,500,000,000 pixels"`` from PIL's message "Image size (2500000000 pixels) exceeds limit ..."."""
    import re

    found = re.search(r"\((\d+) pixels\)", message)
    return f"{int(found.group(1)):,} pixels" if found else "more pixels than PIL allows"


def _grey_to_rgb(values: np.ndarray, source: str):
    from PIL import Image

    grey = np.rint(values).astype(np.uint8)
    return Image.fromarray(np.repeat(grey[..., None], 3, axis=2), "RGB")


def _composite(rgba, background: tuple[int, int, int]):
    from PIL import Image

    array = np.asarray(rgba, dtype=np.float64)
    alpha = array[..., 3:4] / 255.0
    out = alpha * array[..., :3] + (1 - alpha) * np.asarray(background, dtype=np.float64)
    return Image.fromarray(np.rint(out).astype(np.uint8), "RGB")


def to_rgb(image, background: tuple[int, int, int] = BACKGROUND_GREY, source: str = "image"):
    """Convert a PIL image of any mode to 8-bit RGB (see the module table).

    Parameters
    ----------
    image : PIL.Image.Image
    background : tuple of 3 ints
        Colour transparent pixels are composited over (default :data:`BACKGROUND_GREY`).
    source : str
        Name of the file, for error messages.

    Returns
    -------
    PIL.Image.Image
        Mode ``RGB``, same size.

    Raises
    ------
    ValidationError
        For integer or float values outside the mode's range, or a mode with no RGB conversion.
    """
    mode = image.mode
    if mode == "RGB":
        image.load()
        return image.copy()
    if mode in ("1", "L"):
        return image.convert("L").convert("RGB")
    if mode == "P":
        has_alpha = "transparency" in image.info or image.palette is not None and image.palette.mode == "RGBA"
        return _composite(image.convert("RGBA"), background) if has_alpha else image.convert("RGB")
    if mode in ("RGBA", "LA", "PA", "RGBa", "La"):
        return _composite(image.convert("RGBA"), background)
    if mode.startswith("I;16") or mode == "I":
        values = np.asarray(image).astype(np.int64)
        if values.size and (values.min() < 0 or values.max() > 65535):
            raise ValidationError(f"{source}: mode {mode!r} image has values {values.min()}..{values.max()}, outside "
                                  f"the 16-bit range 0..65535 this loader assumes for integer images; save it as "
                                  f"8-bit RGB (or 16-bit grey) instead")
        return _grey_to_rgb(values / 257.0, source)
    if mode == "F":
        values = np.asarray(image, dtype=np.float64)
        if values.size and (not np.isfinite(values).all() or values.min() < 0 or values.max() > 1):
            finite = values[np.isfinite(values)]
            span = f"{finite.min()}..{finite.max()}" if finite.size else "none finite"
            raise ValidationError(f"{source}: mode 'F' (float) image has values outside 0..1 ({values.size - finite.size} "
                                  f"NaN or infinite; finite range {span}); float images must hold intensities in "
                                  f"0..1; save it as 8-bit RGB instead")
        return _grey_to_rgb(values * 255.0, source)
    if mode in ("CMYK", "YCbCr"):
        return image.convert("RGB")
    try:
        return image.convert("RGB")
    except (ValueError, OSError) as error:
        raise ValidationError(f"{source}: images of PIL mode {mode!r} cannot be converted to RGB ({error}); "
                              f"save it as 8-bit RGB") from error


def load_rgb(path: str | Path, background: tuple[int, int, int] = BACKGROUND_GREY):
    """Open an image file as 8-bit RGB (every mode; see :func:`to_rgb`).

    Parameters
    ----------
    path : str or Path
    background : tuple of 3 ints
        Colour transparent pixels are composited over.

    Returns
    -------
    PIL.Image.Image
        Mode ``RGB``, the file's size.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValidationError
        If the file is not a readable image (empty, text, truncated, unknown format), naming it.
    """
    from PIL import Image, UnidentifiedImageError

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"image file {path} does not exist")
    try:
        with open_image(path) as image:
            image.load()
            return to_rgb(image, background, str(path))
    except UnidentifiedImageError as error:
        size = path.stat().st_size
        raise ValidationError(f"{path} is not an image file PIL can read ({size} bytes{': empty' if size == 0 else ''}); "
                              f"replace it with a PNG or JPEG") from error
    except (OSError, SyntaxError, ValueError) as error:  # truncated or corrupt data
        if isinstance(error, ValidationError):
            raise
        raise ValidationError(f"image file {path} is damaged ({error}); replace it with a complete copy") from error
