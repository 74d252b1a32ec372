"""Place stimuli on the model's screen: match the visual angle the model sees to the experiment's.

An experiment shows its images at ``source_visual_degrees``; a model looks at a field of
``target_visual_degrees``. As in Brain-Score (Schrimpf et al. 2020), each image is:

- returned unchanged if the two are equal;
- pasted centred on a larger grey (RGB 128, 128, 128) canvas of ``round(ratio * size)`` pixels when
  ``ratio = target / source >= 1`` (the model sees the image small, surrounded by grey);
- centre-cropped to ``round(ratio * size)`` pixels when ``ratio < 1`` (the model sees only the
  central part).

There is no resampling here, with one bound: a canvas is never wider or taller than :data:`MAX_CANVAS_PX` or
:data:`MAX_ENLARGEMENT` times the image's own longest side, whichever is larger (so the reference's own enlargement of
a 1855 px image from 10 to 12 degrees, 2226 px, stays exact). A model whose field of view is far wider than the experiment's (a
``visual_degrees()`` of 132.6 against 3 degrees: an 8002 px canvas per image, 111 s instead of 10 s; 999 degrees:
10.9 GB for one 175 px image) gets the same screen at a lower resolution: the canvas is scaled down to the bound
and the image reduced by the same factor (Lanczos) before it is pasted, so the image still covers
``source / target`` of the screen and the model, which resizes the screen to its own input size anyway, sees
nearly the same picture. Every placement whose canvas fits the bound (all of the built-in benchmarks at the
models' 8 degrees: at most 597 px) is pixel for pixel the reference's. The model's own preprocessing resizes to its input size. By default
images are saved under their original file names with PIL's defaults, so a JPEG is re-encoded at
quality 75 exactly as the reference does; ``lossless=True`` writes PNG instead (a documented
deviation that moves scores slightly). Converted stimulus sets are cached by the content hash of
the source images and the code of this module (and what it imports), converted under an
inter-process lock into a temporary folder with a checksum manifest and renamed into place; every
use verifies the images against the manifest (a damaged image is reported and the folder
converted again). Images of every PIL mode are read by :func:`brainscore.data.images.load_rgb`
(16-bit scaled, transparency composited on the grey).
"""
from __future__ import annotations

import math
import shutil
import warnings
from pathlib import Path

from PIL import Image

from brainscore import caching, config
from brainscore.caching import CacheWarning, code_hash, verify_manifest, write_manifest
from brainscore.caching.atomic import atomic_directory
from brainscore.data.images import BACKGROUND_GREY, load_rgb
from brainscore.data.stimuli import StimulusSet
from brainscore.progress import stage

GREY = BACKGROUND_GREY
MAX_CANVAS_PX = 2048
"""Longest side of a canvas a stimulus is pasted on (unless the image itself is longer): beyond it the screen is
produced at a lower resolution (see the module notes). 2048 px is 3.4x the largest canvas of a built-in benchmark
at 8 degrees, and more than 9x a 224 px model input."""
MAX_ENLARGEMENT = 4
"""A canvas may also be up to this many times the image's longest side (when that is more than
:data:`MAX_CANVAS_PX`): a large image is shown exactly as the reference shows it up to a 4x wider field of view, and
its canvas stays bounded (a 2000 px image: at most 8000 px, 192 MB) whatever ``visual_degrees()`` a model declares."""


def place_on_screen(stimulus_set: StimulusSet, target_visual_degrees: float, source_visual_degrees: float,
                    lossless: bool = False) -> StimulusSet:
    """Convert ``stimulus_set`` shown at ``source_visual_degrees`` for a model seeing ``target_visual_degrees``.

    Parameters
    ----------
    stimulus_set : StimulusSet
    target_visual_degrees : float
        Degrees of visual angle the model's input spans (``model.visual_degrees()``).
    source_visual_degrees : float
        Degrees of visual angle the stimuli spanned in the experiment.
    lossless : bool
        Write PNG rather than re-encoding in the source format.

    Returns
    -------
    StimulusSet
        Same rows and columns, ``stimulus_paths`` pointing at converted images, identifier suffixed
        with ``--target{t:.2f}--source{s:.2f}``.

    Raises
    ------
    ValueError
        If either number of degrees is not positive.
    """
    for name, value in (("target", target_visual_degrees), ("source", source_visual_degrees)):
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value <= 0:
            raise ValueError(f"{name} visual degrees must be a finite number > 0, got {value!r} "
                             f"(target={target_visual_degrees!r}, source={source_visual_degrees!r})")
    if target_visual_degrees == source_visual_degrees:
        return stimulus_set
    ratio = target_visual_degrees / source_visual_degrees
    suffix = f"--target{target_visual_degrees:.2f}--source{source_visual_degrees:.2f}" + ("--png" if lossless else "")
    # keyed on the images' content and on the code that converts them (this module and what it imports)
    code = code_hash(__name__)[:16]
    what = (f"placing {len(stimulus_set)} images of {stimulus_set.identifier or 'a stimulus set'} on the model's "
            f"screen ({source_visual_degrees:g} -> {target_visual_degrees:g} degrees)")
    with stage(what, total=len(stimulus_set), unit="image") as step:
        folder = config.home() / "stimuli_on_screen" / f"{stimulus_set.content_hash()[:20]}-{code}{suffix}"
        names = {sid: _target_name(stimulus_set.get_stimulus(sid), sid, lossless)
                 for sid in stimulus_set["stimulus_id"]}
        atomic_directory(folder, lambda tmp: _convert_all(stimulus_set, tmp, names, ratio, step.update),
                         complete=lambda path: _complete(path, names))
        step.update(len(names) - step.done)  # converted earlier: all there
    identifier = f"{stimulus_set.identifier}{suffix}" if stimulus_set.identifier else None
    return StimulusSet(stimulus_set.copy(), identifier=identifier,
                       stimulus_paths={sid: folder / name for sid, name in names.items()})


def _complete(folder: Path, names: dict) -> bool:
    """True when ``folder`` holds every converted image and each matches the folder's checksums.

    A folder that fails (an image zeroed, truncated or edited) is reported, deleted and written again.
    """
    if not folder.is_dir():
        return False
    reason = verify_manifest(folder, list(names.values())) if caching.enabled() else None
    if reason is None:
        return True
    warnings.warn(f"images placed on screen in {folder} failed verification: {reason}; they are converted "
                  f"again", CacheWarning, stacklevel=3)
    shutil.rmtree(folder, ignore_errors=True)
    return False


#: How placed PNG images are written (lossless at any level; level 1 is the fastest that still compresses).
PNG_OPTIONS = {"compress_level": 1}


def _convert_all(stimulus_set: StimulusSet, folder: Path, names: dict, ratio: float, converted=None) -> None:
    """Every image of ``stimulus_set`` converted into ``folder`` (as ``names``), with a checksum manifest;
    ``converted(1)`` is called after each image (from the pool's threads)."""
    # PIL releases the GIL while it decodes, pastes and encodes: one thread per usable core
    from concurrent.futures import ThreadPoolExecutor

    def convert(item) -> None:
        _convert(stimulus_set.get_stimulus(item[0]), folder / item[1], ratio)
        if converted is not None:
            converted(1)

    with ThreadPoolExecutor(max_workers=max(1, min(config.usable_cores(), len(names)))) as pool:
        list(pool.map(convert, names.items()))
    write_manifest(folder)


def _target_name(path: Path, stimulus_id: str, lossless: bool) -> str:
    path = Path(path)
    # stimulus_id keeps names unique even if two source folders share a file name
    return f"{stimulus_id}{'.png' if lossless else path.suffix}"


def convert_image(source: Path, target: Path, ratio: float) -> None:
    """Write ``source`` as seen on a screen ``ratio`` = target / source degrees wide to ``target`` (see the module
    notes: pasted centred on grey for ``ratio >= 1``, centre-cropped below; saved in ``target``'s format)."""
    _convert(Path(source), Path(target), ratio)


def _convert(source: Path, target: Path, ratio: float) -> None:
    image = load_rgb(source, GREY)  # every PIL mode; transparency composited on the screen grey
    width, height = image.size
    if ratio >= 1:
        new_w, new_h = round(width * ratio), round(height * ratio)
        bound = max(MAX_CANVAS_PX, MAX_ENLARGEMENT * max(width, height))
        if max(new_w, new_h) > bound:  # the same screen at a lower resolution (module notes)
            scale = bound / max(new_w, new_h)
            new_w, new_h = min(bound, max(1, round(new_w * scale))), min(bound, max(1, round(new_h * scale)))
            width, height = max(1, round(width * scale)), max(1, round(height * scale))
            image = image.resize((width, height), Image.LANCZOS)
        canvas = Image.new("RGB", (new_w, new_h), GREY)
        canvas.paste(image, ((new_w - width) // 2, (new_h - height) // 2))
        result = canvas
    else:
        new_w, new_h = round(width * ratio), round(height * ratio)
        left, top = (width - new_w) // 2, (height - new_h) // 2
        result = image.crop((left, top, left + new_w, top + new_h))
    # PIL's defaults, as the reference saves (a JPEG is re-encoded at quality 75), except that a PNG is
    # compressed at level 1 instead of 6: lossless either way, the same pixels, faster to write
    result.save(target, **PNG_OPTIONS) if target.suffix.lower() == ".png" else result.save(target)
