"""One layer's features on disk and their ``presentation x neuroid`` assembly.

- :class:`LayerFeatures`: one layer's features on a stimulus set in a ``.npy`` file (rows in sorted
  ``stimulus_id`` order, microsaccade trials of a stimulus adjacent), read whole, by rows or as blocks;
- :class:`LayerBlocks`: those features as :class:`~brainscore.data.blocks.NeuroidBlocks` (read a block of
  neuroids at a time, for metrics that never hold the whole matrix);
- :func:`package_features`: values and a stimulus set as the assembly the reference's extractor returns
  (Schrimpf et al. 2020), with the microsaccade coordinates (Rolfs 2009).

Written by :class:`brainscore.models.extraction.core.ActivationsCore` (re-exported there).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from brainscore.data.assemblies import NeuroidAssembly
from brainscore.data.blocks import NeuroidBlocks
from brainscore.data.stimuli import StimulusSet
from brainscore.errors import ValidationError
from brainscore.models.extraction.npy_files import COPY_BLOCK_BYTES, read_npy_rows

__all__ = ["LayerFeatures", "LayerBlocks", "package_features"]


@dataclass
class LayerFeatures:
    """One layer's features on a stimulus set, kept in a ``.npy`` file on disk.

    Attributes
    ----------
    layer : str
    path : Path
        The ``.npy`` file: float32, shape ``(n_stimuli * trials, *unit_shape)``; rows in sorted
        ``stimulus_id`` order, trials innermost.
    stimulus_ids : ndarray of str, shape (n_stimuli,)
        Sorted stimulus ids of the rows.
    trials : int
        Presentations per stimulus (1 unless microsaccades were used).
    shifts : ndarray of shape (trials, 2)
        Microsaccade shift (x, y) in pixels of each trial.
    visual_degrees : float or None
        Field of view the shifts were computed for (degrees).
    image_size : int or None
        Side of the preprocessed image in pixels (to convert shifts to degrees).
    in_memory : ndarray, optional
        The values, when caching is disabled (no file is kept).
    """

    layer: str
    path: Path | None
    stimulus_ids: np.ndarray
    trials: int = 1
    shifts: np.ndarray = field(default_factory=lambda: np.zeros((1, 2)))
    visual_degrees: float | None = None
    image_size: int | None = None
    in_memory: np.ndarray | None = None

    def raw(self) -> np.ndarray:
        """The values as stored, ``(rows, *unit_shape)`` (a read-only memory map of the file)."""
        if self.in_memory is not None:
            return self.in_memory
        return np.load(self.path, mmap_mode="r")

    @property
    def unit_shape(self) -> tuple[int, ...]:
        """Shape of one image's output (e.g. ``(channels, height, width)``)."""
        return tuple(self.raw().shape[1:])

    @property
    def n_features(self) -> int:
        return int(np.prod(self.unit_shape))

    def matrix(self) -> np.ndarray:
        """Flattened values ``(rows, n_features)`` as a memory map (row order as stored)."""
        raw = self.raw()
        return raw.reshape(raw.shape[0], -1)

    def rows_for(self, stimulus_ids: Sequence[str]) -> np.ndarray:
        """Row indices (all trials, trials innermost) of ``stimulus_ids`` in the file.

        Raises
        ------
        KeyError
            If an id is not in the file.
        """
        ids = np.asarray([str(i) for i in stimulus_ids])
        position = np.searchsorted(self.stimulus_ids, ids)
        position = np.clip(position, 0, len(self.stimulus_ids) - 1)
        missing = ids[self.stimulus_ids[position] != ids]
        if len(missing):
            raise KeyError(f"layer {self.layer!r} has no features for stimulus ids {list(missing[:5])}")
        return (position[:, None] * self.trials + np.arange(self.trials)[None, :]).ravel()

    def neuroid_coords(self, model_identifier: str | None = None) -> dict[str, tuple[str, np.ndarray]]:
        """Coordinates along ``neuroid``: neuroid_id ``"layer.num"``, layer, neuroid_num, model and channels.

        ``channel``/``channel_x``/``channel_y`` for (C, H, W) outputs (x along the height axis, as the
        reference names them), ``channel`` (with NaN x, y) for vectors, ``channel``/``embedding`` for
        (tokens, features) outputs.
        """
        shape = self.unit_shape
        n = int(np.prod(shape))
        num = np.arange(n)
        coords: dict[str, tuple[str, np.ndarray]] = {
            "neuroid_id": ("neuroid", np.char.add(f"{self.layer}.", num.astype(str)).astype(object)),
            "neuroid_num": ("neuroid", num),
            "layer": ("neuroid", np.full(n, self.layer, dtype=object)),
        }
        if model_identifier is not None:
            coords["model"] = ("neuroid", np.full(n, model_identifier, dtype=object))
        if len(shape) == 3:
            index = np.unravel_index(num, shape)
            coords.update(channel=("neuroid", index[0]), channel_x=("neuroid", index[1]),
                          channel_y=("neuroid", index[2]))
        elif len(shape) == 1:
            coords.update(channel=("neuroid", num), channel_x=("neuroid", np.full(n, np.nan)),
                          channel_y=("neuroid", np.full(n, np.nan)))
        elif len(shape) == 2:
            index = np.unravel_index(num, shape)
            coords.update(channel=("neuroid", index[0]), embedding=("neuroid", index[1]))
        return coords

    def assembly(self, stimuli: StimulusSet, model_identifier: str | None = None) -> NeuroidAssembly:
        """The features as a ``presentation x neuroid`` assembly in the row order of ``stimuli``.

        Presentation coordinates: every column of the stimulus set (``stimulus_id`` first); with
        microsaccades, one presentation per trial and the coordinates
        ``microsaccade_shift_{x,y}_{pixels,degrees}``.
        """
        ids = stimuli["stimulus_id"].astype(str).to_numpy()
        rows = self.rows_for(ids)
        values = np.asarray(self.matrix()[rows], dtype=np.float32)
        return package_features(values, stimuli, self.neuroid_coords(model_identifier), self.trials,
                                self.shifts, self.visual_degrees, self.image_size)

    def blocks(self, stimuli: StimulusSet, model_identifier: str | None = None,
               extra_coords: Mapping[str, np.ndarray] | None = None) -> "LayerBlocks":
        """The features as :class:`LayerBlocks`: what :meth:`assembly` would hold, read from the file a block at a time.

        Presentations in the row order of ``stimuli`` (trials innermost), neuroids and their
        coordinates as in :meth:`assembly`, plus ``extra_coords`` (name -> one value per neuroid).
        Nothing is read until :meth:`LayerBlocks.read`.
        """
        ids = stimuli["stimulus_id"].astype(str).to_numpy()
        return LayerBlocks(self, self.rows_for(ids), model_identifier, extra_coords)


class LayerBlocks(NeuroidBlocks):
    """One layer's features on a stimulus set as :class:`~brainscore.data.blocks.NeuroidBlocks`.

    Made by :meth:`LayerFeatures.blocks`; reads the ``.npy`` file (or the in-memory values of a run
    without a cache) a block of neuroids at a time with :func:`read_npy_rows`, so a per-neuroid
    analysis of a layer larger than memory holds only the blocks it asks for. The values are those
    :meth:`LayerFeatures.assembly` holds, bit for bit (float32).

    Parameters
    ----------
    features : LayerFeatures
    rows : ndarray of int
        The file row of each presentation, in presentation order.
    model_identifier : str, optional
    extra_coords : mapping, optional
        More ``neuroid`` coordinates (name -> one value per neuroid).
    """

    def __init__(self, features: LayerFeatures, rows: np.ndarray, model_identifier: str | None = None,
                 extra_coords: Mapping[str, np.ndarray] | None = None):
        self.features = features
        self.rows = np.asarray(rows, dtype=np.int64)
        self.model_identifier = model_identifier
        self.extra_coords = dict(extra_coords or {})
        self.shape = (len(self.rows), features.n_features)
        self.dtype = np.dtype(np.float32)
        self._coords: dict | None = None

    def read(self, neuroids, presentations=None) -> np.ndarray:
        rows = self.rows if presentations is None else self.rows[presentations]
        if self.features.in_memory is not None:
            matrix = self.features.matrix()
            if isinstance(neuroids, slice):
                return np.array(matrix[rows, neuroids], dtype=np.float32)
            return np.asarray(matrix[np.ix_(rows, np.asarray(neuroids))], dtype=np.float32)
        if isinstance(neuroids, slice):
            start, stop, step = neuroids.indices(self.n_neuroids)
            block = read_npy_rows(self.features.path, rows, start, max(start, stop))
            return block if step == 1 else np.ascontiguousarray(block[:, ::step])
        return self._read_scattered(np.asarray(neuroids, dtype=np.int64), rows)

    def _read_scattered(self, neuroids: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Scattered neuroids: runs of nearby columns, each at most :data:`COPY_BLOCK_BYTES` of rows wide, read once."""
        out = np.empty((len(rows), len(neuroids)), dtype=np.float32)
        if not len(neuroids):
            return out
        if neuroids.min() < 0 or neuroids.max() >= self.n_neuroids:
            raise ValidationError(f"neuroid indices outside the layer's {self.n_neuroids}")
        order = np.argsort(neuroids, kind="stable")
        ordered = neuroids[order]
        widest = max(1, COPY_BLOCK_BYTES // (4 * max(1, len(rows))))
        first = 0
        while first < len(ordered):
            last = int(np.searchsorted(ordered, ordered[first] + widest, side="left"))  # columns < first + widest
            start, stop = int(ordered[first]), int(ordered[last - 1]) + 1
            block = read_npy_rows(self.features.path, rows, start, stop)
            out[:, order[first:last]] = block[:, ordered[first:last] - start]
            first = last
        return out

    def neuroid_coord(self, name: str) -> np.ndarray:
        if name in self.extra_coords:
            return np.asarray(self.extra_coords[name])
        if self._coords is None:
            self._coords = self.features.neuroid_coords(self.model_identifier)
        if name not in self._coords:
            raise KeyError(f"no neuroid coordinate {name!r}")
        return self._coords[name][1]


def package_features(values: np.ndarray, stimuli: StimulusSet, neuroid_coords: Mapping[str, tuple[str, np.ndarray]],
                     trials: int = 1, shifts: np.ndarray | None = None, visual_degrees: float | None = None,
                     image_size: int | None = None) -> NeuroidAssembly:
    """Wrap ``values`` (``(len(stimuli) * trials, n_neuroids)``) as a ``presentation x neuroid`` assembly.

    Presentation coordinates are every stimulus-set column (``stimulus_id`` first, as str), each
    repeated ``trials`` times; with ``trials > 1`` also ``microsaccade_shift_{x,y}_pixels`` and, given
    ``visual_degrees`` and ``image_size``, ``microsaccade_shift_{x,y}_degrees``.
    """
    coords = _presentation_coords(stimuli, trials, np.zeros((1, 2)) if shifts is None else shifts,
                                  visual_degrees, image_size)
    coords.update(neuroid_coords)
    return NeuroidAssembly(values, dims=("presentation", "neuroid"), coords=coords)


def _presentation_coords(stimuli, trials, shifts, visual_degrees, image_size):
    coords: dict[str, tuple[str, np.ndarray]] = {}
    columns = ["stimulus_id"] + [c for c in stimuli.columns if c != "stimulus_id"]
    for column in columns:
        values = stimuli[column].to_numpy()
        if column == "stimulus_id":
            values = values.astype(str).astype(object)
        coords[str(column)] = ("presentation", np.repeat(values, trials))
    if trials > 1:
        pixels = np.tile(np.asarray(shifts, dtype=float), (len(stimuli), 1))
        coords["microsaccade_shift_x_pixels"] = ("presentation", pixels[:, 0])
        coords["microsaccade_shift_y_pixels"] = ("presentation", pixels[:, 1])
        if visual_degrees and image_size:
            per_degree = image_size / visual_degrees
            coords["microsaccade_shift_x_degrees"] = ("presentation", pixels[:, 0] / per_degree)
            coords["microsaccade_shift_y_degrees"] = ("presentation", pixels[:, 1] / per_degree)
    return coords
