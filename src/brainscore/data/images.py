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
naming the file.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from brainscore.errors import ValidationError

#: Background the screen places stimuli on, and the colour transparent pixels are composited over.
BACKGROUND_GREY = (128, 128, 128)

__all__ = ["BACKGROUND_GREY", "load_rgb", "to_rgb"]


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
        with Image.open(path) as image:
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
