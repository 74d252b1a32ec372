"""Place stimuli on the model's screen: match the visual angle the model sees to the experiment's.

An experiment shows its images at ``source_visual_degrees``; a model looks at a field of
``target_visual_degrees``. As in Brain-Score (Schrimpf et al. 2020), each image is:

- returned unchanged if the two are equal;
- pasted centred on a larger grey (RGB 128, 128, 128) canvas of ``round(ratio * size)`` pixels when
  ``ratio = target / source >= 1`` (the model sees the image small, surrounded by grey);
- centre-cropped to ``round(ratio * size)`` pixels when ``ratio < 1`` (the model sees only the
  central part).

There is no resampling here; the model's own preprocessing resizes to its input size. By default
images are saved under their original file names with PIL's defaults, so a JPEG is re-encoded at
quality 75 exactly as the reference does; ``lossless=True`` writes PNG instead (a documented
deviation that moves scores slightly). Converted stimulus sets are cached by the content hash of
the source images, written into a temporary folder and renamed into place.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from PIL import Image

from brainscore import config
from brainscore.data.stimuli import StimulusSet

GREY = (128, 128, 128)


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
    if target_visual_degrees <= 0 or source_visual_degrees <= 0:
        raise ValueError(f"visual degrees must be positive, got target={target_visual_degrees}, "
                         f"source={source_visual_degrees}")
    if target_visual_degrees == source_visual_degrees:
        return stimulus_set
    ratio = target_visual_degrees / source_visual_degrees
    suffix = f"--target{target_visual_degrees:.2f}--source{source_visual_degrees:.2f}" + ("--png" if lossless else "")
    folder = config.home() / "stimuli_on_screen" / f"{stimulus_set.content_hash()[:20]}{suffix}"
    names = {sid: _target_name(stimulus_set.get_stimulus(sid), sid, lossless) for sid in stimulus_set["stimulus_id"]}
    if not folder.is_dir():
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".partial-"))
        try:
            for sid, name in names.items():
                _convert(stimulus_set.get_stimulus(sid), tmp / name, ratio)
            try:
                os.rename(tmp, folder)
            except OSError:
                if not folder.is_dir():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    identifier = f"{stimulus_set.identifier}{suffix}" if stimulus_set.identifier else None
    return StimulusSet(stimulus_set.copy(), identifier=identifier,
                       stimulus_paths={sid: folder / name for sid, name in names.items()})


def _target_name(path: Path, stimulus_id: str, lossless: bool) -> str:
    path = Path(path)
    # stimulus_id keeps names unique even if two source folders share a file name
    return f"{stimulus_id}{'.png' if lossless else path.suffix}"


def _convert(source: Path, target: Path, ratio: float) -> None:
    with Image.open(source) as image:
        image = image.convert("RGB")
        width, height = image.size
        if ratio >= 1:
            new_w, new_h = round(width * ratio), round(height * ratio)
            canvas = Image.new("RGB", (new_w, new_h), GREY)
            canvas.paste(image, ((new_w - width) // 2, (new_h - height) // 2))
            result = canvas
        else:
            new_w, new_h = round(width * ratio), round(height * ratio)
            left, top = (width - new_w) // 2, (height - new_h) // 2
            result = image.crop((left, top, left + new_w, top + new_h))
        result.save(target)
