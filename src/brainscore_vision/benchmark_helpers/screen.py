"""``place_on_screen`` and ``ImageConverter``: :mod:`brainscore.benchmarks.screen`.

``place_on_screen(stimulus_set, target_visual_degrees=candidate.visual_degrees(), source_visual_degrees=8)``
shrinks (or pads with grey) every image so that it spans, on a screen of the model's field of view,
the degrees it spanned in the experiment; the converted images are cached by content.

``ImageConverter(target_dir).convert_image(path, source_degrees, target_degrees)`` does the same for
one file, written into ``target_dir`` (the path itself when the degrees are equal).
"""
from __future__ import annotations

import math
from pathlib import Path

from brainscore.benchmarks.screen import convert_image, place_on_screen

__all__ = ["place_on_screen", "ImageConverter"]


class ImageConverter:
    """One image placed on a screen of other degrees (see :func:`brainscore.benchmarks.screen.convert_image`).

    Parameters
    ----------
    target_dir : str or Path
        Where converted images are written (created if needed).
    """

    def __init__(self, target_dir):
        self.target_dir = Path(target_dir)

    def convert_image(self, image_path, source_degrees: float, target_degrees: float) -> Path:
        """The converted file (``image_path`` itself when the degrees are equal).

        Raises
        ------
        ValueError
            If a number of degrees is not a finite number > 0.
        """
        for name, value in (("source", source_degrees), ("target", target_degrees)):
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name} degrees must be a finite number > 0, got {value!r}")
        image_path = Path(image_path)
        if source_degrees == target_degrees:
            return image_path
        self.target_dir.mkdir(parents=True, exist_ok=True)
        target = self.target_dir / f"{image_path.stem}--target{target_degrees:.2f}--source{source_degrees:.2f}" \
                                   f"{image_path.suffix}"
        convert_image(image_path, target, target_degrees / source_degrees)
        return target
