"""The grating stimulus sets of Marques, Schrimpf & DiCarlo (2021), rendered from their parameters.

The reference packages these sets as PNG files on its own storage; only their generating
parameters are public (``marques_gen_stim.py`` in brain-score/vision). They are redrawn here:

- image: 672 x 672 pixels spanning 12 degrees (56 pixels per degree), single-channel 8-bit grey,
  background 128;
- pixel coordinates (degrees, relative to the grating centre): ``x = (col - 336) / 56 - position_x``,
  ``y = (row - 336) / 56 - position_y`` (0-based column and row, rows growing downwards);
- grating: ``s = contrast * sin(2 pi sf (x cos theta + y sin theta) + phase)`` (theta and phase in
  degrees, converted to radians), grey level ``uint8((s + 1) / 2 * 255)`` (truncated, so s = 0 is
  127, as the reference);
- window: a hard-edged disc, grating where ``x^2 + y^2 <= radius^2``, background elsewhere;
- the blank: 448 x 448 pixels of grey 128, also "12 degrees" (as the reference).

Rows are ordered as the property code needs: ``position_y`` outermost, then ``position_x``,
``contrast``, ``radius`` (``number_of_cycles`` for the orientation set), ``spatial_frequency``,
``orientation``, and ``phase`` innermost, each ascending.

Files are written once into ``$BRAINSCORE_HOME/rendered/<set>-<key>/`` where ``key`` is a hash of
the parameter table and of :data:`RENDER_VERSION`: a folder is rendered in a temporary directory
and renamed into place when complete, so a partial folder is never used and two processes never
see each other's half-written files.
"""
from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from brainscore import config
from brainscore.caching.atomic import atomic_directory
from brainscore.data.stimuli import StimulusSet

#: Change when the pixels a parameter row produces change (invalidates rendered folders).
RENDER_VERSION = "marques2020-gratings/1"
IMAGE_SIZE = 672
BLANK_SIZE = 448
VISUAL_DEGREES = 12.0
PIXELS_PER_DEGREE = IMAGE_SIZE / VISUAL_DEGREES  # 56
BACKGROUND = 128
#: Centre of every grating of the orientation, spatial-frequency and size sets (degrees).
STIMULUS_POSITION = 0.5

ORIENTATIONS = 15.0 * np.arange(12)                     # 0, 15, ..., 165 degrees
PHASES = 45.0 * np.arange(8)                            # 0, 45, ..., 315 degrees
SPATIAL_FREQUENCIES = 2.0 ** (-1.375 + 0.25 * np.arange(22))   # 0.386 ... 14.67 cycles/degree
RADII = 2.0 ** (-2.25 + 0.5 * np.arange(12)) / 2        # 0.105 ... 4.76 degrees
RF_POSITIONS = np.linspace(-2.5, 2.5, 21)               # receptive-field mapping grid, degrees

NAMES = ("Marques2020_blank", "Marques2020_receptive_field", "Marques2020_orientation",
         "Marques2020_spatial_frequency", "Marques2020_size")
#: All five sets in one: what a V1 properties benchmark records in one pass.
ALL = "Marques2020_V1"

_GRATING_COLUMNS = ["position_y", "position_x", "contrast", "radius", "spatial_frequency", "orientation", "phase"]


def _grid(position_y, position_x, radius_sf_pairs, orientation, phase, extra=None) -> pd.DataFrame:
    """Full factorial table, nested as the property code needs (phase innermost)."""
    rows = []
    for y in position_y:
        for x in position_x:
            for i, (radius, sf) in enumerate(radius_sf_pairs):
                for o in orientation:
                    for p in phase:
                        row = dict(position_y=float(y), position_x=float(x), contrast=1.0, radius=float(radius),
                                   spatial_frequency=float(sf), orientation=float(o), phase=float(p))
                        if extra is not None:
                            row.update(extra[i])
                        rows.append(row)
    return pd.DataFrame(rows)


def parameters(name: str) -> pd.DataFrame:
    """The parameter table of stimulus set ``name``, one row per image in the order the property code needs.

    Columns: ``position_y``, ``position_x`` (degrees, grating centre relative to the image centre,
    positive = down / right), ``contrast``, ``radius`` (degrees), ``spatial_frequency``
    (cycles/degree), ``orientation`` and ``phase`` (degrees), ``degrees`` (12); the orientation
    set adds ``number_of_cycles`` (grating cycles across the disc's diameter). The blank has one
    row with NaN grating parameters.

    Source: ``marques_gen_stim.py`` of brain-score/vision (Marques, Schrimpf & DiCarlo 2021),
    as recorded in ``marques2020_v1_properties/stimuli.json``.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the known ones).
    """
    pos = [STIMULUS_POSITION]
    if name == "Marques2020_blank":
        table = pd.DataFrame([{c: np.nan for c in _GRATING_COLUMNS}])
    elif name == "Marques2020_receptive_field":
        table = _grid(RF_POSITIONS, RF_POSITIONS, [(1 / 6, 3.0)], [0.0, 45.0, 90.0, 135.0], [0.0, 180.0])
    elif name == "Marques2020_orientation":
        sfs = SPATIAL_FREQUENCIES[[4, 8, 12, 16]]
        pairs = [(m / (2 * sf), sf) for m in (2, 3, 4) for sf in sfs]
        cycles = [{"number_of_cycles": float(m)} for m in (2, 3, 4) for _ in sfs]
        table = _grid(pos, pos, pairs, ORIENTATIONS, PHASES, extra=cycles)
    elif name == "Marques2020_spatial_frequency":
        pairs = [(r, sf) for r in (0.75, 2.25) for sf in SPATIAL_FREQUENCIES]
        table = _grid(pos, pos, pairs, ORIENTATIONS[::2], PHASES)
    elif name == "Marques2020_size":
        pairs = [(r, sf) for r in RADII for sf in SPATIAL_FREQUENCIES[[4, 8, 12, 16]]]
        table = _grid(pos, pos, pairs, ORIENTATIONS[::2], PHASES)
    else:
        raise ValueError(f"unknown Marques 2020 stimulus set {name!r}; known: {list(NAMES)}")
    table["degrees"] = VISUAL_DEGREES
    table.insert(0, "stimulus_id", [f"{name}_{i:04d}" for i in range(len(table))])
    return table


def render(table: pd.DataFrame, size: int = IMAGE_SIZE) -> np.ndarray:
    """Grey-level images of the gratings in ``table`` (vectorised over pixels).

    Parameters
    ----------
    table : DataFrame
        Rows with ``position_y``, ``position_x``, ``contrast``, ``radius``, ``spatial_frequency``,
        ``orientation``, ``phase`` (see :func:`parameters`); a row with NaN ``radius`` is blank.
    size : int
        Side of the images in pixels (the scale stays 56 pixels per degree).

    Returns
    -------
    ndarray of uint8, shape (len(table), size, size)
        ``uint8((s + 1) / 2 * 255)`` inside the disc ``x^2 + y^2 <= radius^2``, 128 outside.
    """
    images = np.full((len(table), size, size), BACKGROUND, dtype=np.uint8)
    axis = (np.arange(size) - size / 2) / PIXELS_PER_DEGREE
    for i, row in enumerate(table.itertuples(index=False)):
        if not np.isfinite(row.radius):
            continue
        x = axis - row.position_x
        y = axis - row.position_y
        # only the disc's bounding box can hold grating pixels
        cols = np.flatnonzero(np.abs(x) <= row.radius)
        rows = np.flatnonzero(np.abs(y) <= row.radius)
        if not len(cols) or not len(rows):
            continue
        xs, ys = x[cols][None, :], y[rows][:, None]
        theta, phase = np.deg2rad(row.orientation), np.deg2rad(row.phase)
        s = row.contrast * np.sin(2 * np.pi * row.spatial_frequency * (xs * np.cos(theta) + ys * np.sin(theta)) + phase)
        inside = xs ** 2 + ys ** 2 <= row.radius ** 2
        box = images[i, rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
        box[inside] = ((s + 1) / 2 * 255).astype(np.uint8)[inside]
    return images


def _key(name: str, table: pd.DataFrame) -> str:
    digest = hashlib.sha256(RENDER_VERSION.encode())
    digest.update(name.encode())
    digest.update(pd.util.hash_pandas_object(table, index=True).values.tobytes())
    return digest.hexdigest()[:20]


def _write(table: pd.DataFrame, folder: Path, size: int, chunk: int = 32) -> None:
    from PIL import Image

    def work(start):
        part = table.iloc[start:start + chunk]
        for sid, image in zip(part["stimulus_id"], render(part, size)):
            Image.fromarray(image, mode="L").save(folder / f"{sid}.png", compress_level=1)

    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        list(pool.map(work, range(0, len(table), chunk)))


def stimulus_set(name: str) -> StimulusSet:
    """The rendered stimulus set ``name`` (one of :data:`NAMES`, or :data:`ALL` for all five in one).

    The PNG files are rendered on first use into ``$BRAINSCORE_HOME/rendered/`` (see the module
    notes) and reused afterwards. :data:`ALL` concatenates the five sets (blank, receptive field,
    orientation, spatial frequency, size) with a ``stimulus_set`` column naming each row's set, so
    that a model sees every image in one pass.

    Returns
    -------
    StimulusSet
        Columns of :func:`parameters` plus ``stimulus_set``; identifier ``name``.
    """
    if name == ALL:
        parts = [stimulus_set(n) for n in NAMES]
        paths = {k: v for part in parts for k, v in part.stimulus_paths.items()}
        table = pd.concat([pd.DataFrame(part) for part in parts], ignore_index=True)
        return StimulusSet(table, identifier=ALL, stimulus_paths=paths)
    table = parameters(name)
    size = BLANK_SIZE if name == "Marques2020_blank" else IMAGE_SIZE
    folder = atomic_directory(config.home() / "rendered" / f"{name}-{_key(name, table)}",
                              lambda tmp: _write(table, tmp, size))
    table["stimulus_set"] = name
    paths = {sid: folder / f"{sid}.png" for sid in table["stimulus_id"]}
    return StimulusSet(table, identifier=name, stimulus_paths=paths)
