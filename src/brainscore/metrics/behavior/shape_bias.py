"""Shape bias on cue-conflict images (Geirhos et al. 2019; Hermann, Chen & Kornblith 2020).

A cue-conflict image has the shape of one category and the texture of another (style transfer).
Trials whose shape and texture categories coincide are dropped. On the rest:

- shape match = fraction of answers equal to the shape category,
- texture match = fraction of answers equal to the texture category,
- shape bias = shape match / (shape match + texture match): the fraction of shape decisions
  among the trials decided by either cue.

Brain-Score's ``Hermann2020cueconflict-shape_bias`` / ``-shape_match`` / ``-texture_match``
(ceiling 1). The match metrics are accuracies, so their error is the std (ddof=0) of the 0/1
matches; the shape bias carries the two matches in ``attrs``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from brainscore.data.assemblies import presentation_order
from brainscore.errors import ValidationError
from brainscore.metrics.base import Metric
from brainscore.metrics.score import Score

__all__ = ["cue_conflict_matches", "ShapeMatch", "TextureMatch", "ShapeBias", "shape_bias", "shape_match",
           "texture_match"]

SHAPE_COORD = "original_image_category"
TEXTURE_COORD = "conflict_image_category"


def cue_conflict_matches(choices, shape, texture) -> tuple[np.ndarray, np.ndarray]:
    """Per-trial shape and texture matches on the cue-conflict trials (shape != texture).

    Parameters
    ----------
    choices, shape, texture : array-like of shape (n_trials,)
        The answer, the shape category and the texture category of each trial.

    Returns
    -------
    shape_matches, texture_matches : ndarray of bool, shape (n_conflict_trials,)
    """
    choices, shape, texture = (np.asarray(a).reshape(-1) for a in (choices, shape, texture))
    if not choices.shape == shape.shape == texture.shape:
        raise ValidationError(f"choices, shape and texture categories differ in length: {choices.shape[0]}, "
                              f"{shape.shape[0]}, {texture.shape[0]}")
    conflict = shape != texture
    if not conflict.any():
        raise ValidationError("no cue-conflict trial: every shape category equals its texture category")
    return choices[conflict] == shape[conflict], choices[conflict] == texture[conflict]


class _CueConflict(Metric):
    """Reads answers and the two categories per trial; see the module docstring."""

    def __init__(self, shape_coord: str = SHAPE_COORD, texture_coord: str = TEXTURE_COORD,
                 stimulus_coord: str = "stimulus_id"):
        self.shape_coord = shape_coord
        self.texture_coord = texture_coord
        self.stimulus_coord = stimulus_coord

    def _matches(self, source, target=None) -> tuple[np.ndarray, np.ndarray]:
        """``source``: the answers (labelled by stimulus); ``target``: the categories per stimulus.

        ``target`` may be None (the categories are coordinates of ``source``, as a model's
        responses carry the stimulus set's columns), a StimulusSet / DataFrame with a
        ``stimulus_id`` column, or an assembly with the two coordinates.
        """
        choices = np.asarray(source.values).reshape(-1) if isinstance(source, xr.DataArray) else np.asarray(source)
        if target is None:
            if not isinstance(source, xr.DataArray):
                raise ValidationError("without a target, the source must be an assembly whose coordinates give the "
                                      f"shape ({self.shape_coord!r}) and texture ({self.texture_coord!r}) categories")
            table = source
        elif isinstance(target, pd.DataFrame):
            table = target
        elif isinstance(target, xr.DataArray):
            table = target
        else:
            raise ValidationError("target must be None, a StimulusSet/DataFrame or an assembly with the shape "
                                  f"({self.shape_coord!r}) and texture ({self.texture_coord!r}) categories")
        columns = _columns(table, (self.shape_coord, self.texture_coord, self.stimulus_coord))
        if table is not source:
            if not isinstance(source, xr.DataArray) or self.stimulus_coord not in source.coords:
                raise ValidationError(f"the source needs a {self.stimulus_coord!r} coordinate to look up categories")
            ids = pd.Index(columns[self.stimulus_coord])
            if not ids.is_unique:
                raise ValidationError(f"the target repeats {self.stimulus_coord} values")
            position = presentation_order(ids, np.asarray(source[self.stimulus_coord].values), self.stimulus_coord,
                                          entry="row", sides=("target", "source"))
            shape, texture = columns[self.shape_coord][position], columns[self.texture_coord][position]
        else:
            shape, texture = columns[self.shape_coord], columns[self.texture_coord]
        return cue_conflict_matches(choices, shape, texture)


    def unit_matches(self, source) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Stimulus id, shape match and texture match of every cue-conflict trial of ``source``.

        ``source`` is a model's answers carrying the categories as coordinates (as the benchmark
        gives them); used to resample images in a bootstrap.
        """
        columns = _columns(source, (self.shape_coord, self.texture_coord, self.stimulus_coord))
        if self.stimulus_coord not in columns:
            raise ValidationError(f"the source needs a {self.stimulus_coord!r} coordinate to resample by stimulus")
        conflict = columns[self.shape_coord] != columns[self.texture_coord]
        shape, texture = self._matches(source)
        return columns[self.stimulus_coord][conflict], shape, texture

    def _resampled(self, source, weights: np.ndarray, stimulus_ids: np.ndarray) -> tuple[np.ndarray, ...]:
        from brainscore.metrics.bootstrap import unit_sums
        ids, shape, texture = self.unit_matches(source)
        sums = unit_sums(ids, stimulus_ids, np.stack([shape, texture, np.ones(len(shape))], axis=1))
        return tuple((weights @ sums).T)                      # resampled shape hits, texture hits, trials


def _columns(table, names) -> dict[str, np.ndarray]:
    out = {}
    for name in names:
        if isinstance(table, pd.DataFrame):
            if name in table.columns:
                out[name] = table[name].to_numpy()
        elif name in table.coords:
            out[name] = np.asarray(table[name].values)
    for needed in names[:2]:
        if needed not in out:
            raise ValidationError(f"no {needed!r} column/coordinate with the categories of each stimulus")
    return out


class ShapeMatch(_CueConflict):
    """Fraction of cue-conflict answers that name the shape category (Hermann et al. 2020's shape match).

    Parameters
    ----------
    shape_coord, texture_coord : str
        Names of the shape and texture category columns (``original_image_category``,
        ``conflict_image_category`` in Brain-Score's Geirhos2021 cue-conflict stimulus set).
    stimulus_coord : str

    Returns (``__call__(source, target=None)``)
    -------------------------------------------
    Score
        Mean; ``error`` = std of the 0/1 matches; ``raw`` = the matches.
    """

    def __call__(self, source, target=None) -> Score:
        shape, _ = self._matches(source, target)
        return Score.of(shape.mean(), error=shape.std(), raw=shape)

    def bootstrap(self, source, weights: np.ndarray, stimulus_ids: np.ndarray) -> np.ndarray:
        """Shape match on image resamples: resampled shape hits / resampled cue-conflict trials."""
        shape, _, trials = self._resampled(source, weights, stimulus_ids)
        with np.errstate(invalid="ignore", divide="ignore"):
            return shape / trials


class TextureMatch(_CueConflict):
    """Fraction of cue-conflict answers that name the texture category; see :class:`ShapeMatch`."""

    def __call__(self, source, target=None) -> Score:
        _, texture = self._matches(source, target)
        return Score.of(texture.mean(), error=texture.std(), raw=texture)

    def bootstrap(self, source, weights: np.ndarray, stimulus_ids: np.ndarray) -> np.ndarray:
        """Texture match on image resamples."""
        _, texture, trials = self._resampled(source, weights, stimulus_ids)
        with np.errstate(invalid="ignore", divide="ignore"):
            return texture / trials


class ShapeBias(_CueConflict):
    """Shape bias = shape match / (shape match + texture match) (Geirhos et al. 2019).

    Parameters and input as :class:`ShapeMatch`.

    Returns (``__call__(source, target=None)``)
    -------------------------------------------
    Score
        In [0, 1] (NaN if no answer names either cue), ``attrs``: ``shape_match``,
        ``texture_match``, ``n_trials`` (cue-conflict trials).
    """

    def __call__(self, source, target=None) -> Score:
        shape, texture = self._matches(source, target)
        shape_match, texture_match = float(shape.mean()), float(texture.mean())
        total = shape_match + texture_match
        value = shape_match / total if total > 0 else float("nan")
        return Score.of(value, shape_match=shape_match, texture_match=texture_match, n_trials=int(len(shape)))

    def bootstrap(self, source, weights: np.ndarray, stimulus_ids: np.ndarray) -> np.ndarray:
        """Shape bias on image resamples: shape hits / (shape hits + texture hits) of each resample."""
        shape, texture, _ = self._resampled(source, weights, stimulus_ids)
        with np.errstate(invalid="ignore", divide="ignore"):
            return shape / (shape + texture)

    def ceiling(self, assembly=None) -> Score:
        """Brain-Score's ceiling of the shape-bias benchmarks: 1."""
        return Score.of(1.0)


def shape_bias(**kwargs) -> ShapeBias:
    """Factory of ``shape_bias``."""
    return ShapeBias(**kwargs)


def shape_match(**kwargs) -> ShapeMatch:
    """Factory of ``shape_match``."""
    return ShapeMatch(**kwargs)


def texture_match(**kwargs) -> TextureMatch:
    """Factory of ``texture_match``."""
    return TextureMatch(**kwargs)
