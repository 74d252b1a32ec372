"""Accuracy: the fraction of trials on which the model's answer equals the target label.

As Brain-Score's ``accuracy`` (used by the engineering ``*-top1`` benchmarks and by the shape/
texture match of Hermann et al. 2020): score = mean of ``source == target``, error = std (ddof=0)
of that 0/1 vector, per-trial matches in ``raw``; the ceiling is 1.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from brainscore.data.assemblies import presentation_order
from brainscore.errors import ValidationError
from brainscore.metrics.base import Metric
from brainscore.metrics.score import Score

__all__ = ["Accuracy", "accuracy", "matches"]


def matches(source, target, stimulus_coord: str = "stimulus_id") -> np.ndarray:
    """Per-trial ``source == target`` as a bool array.

    If both are labelled 1-D arrays with unique ``stimulus_coord`` values, the target is put in the
    source's stimulus order first; otherwise they are compared position by position.

    Parameters
    ----------
    source : array-like or BehavioralAssembly of shape (n_trials,)
        The model's answers.
    target : array-like or BehavioralAssembly of shape (n_trials,)
        The correct answers.

    Returns
    -------
    ndarray of bool, shape (n_trials,)

    Raises
    ------
    ValidationError
        If the lengths differ (positional comparison).
    AlignmentError
        If labelled inputs hold different stimuli.
    """
    if (isinstance(source, xr.DataArray) and isinstance(target, xr.DataArray) and source.ndim == 1
            and target.ndim == 1 and stimulus_coord in source.coords and stimulus_coord in target.coords):
        s_ids, t_ids = np.asarray(source[stimulus_coord].values), np.asarray(target[stimulus_coord].values)
        if len(pd.unique(s_ids)) == len(s_ids) and len(pd.unique(t_ids)) == len(t_ids):
            position = presentation_order(t_ids, s_ids, stimulus_coord, complete=True, sides=("target", "source"))
            return np.asarray(source.values) == np.asarray(target.values)[position]
    source, target = np.asarray(source).reshape(-1), np.asarray(target).reshape(-1)
    if source.shape != target.shape:
        raise ValidationError(f"source and target must hold one answer per trial each: {source.shape[0]} vs "
                              f"{target.shape[0]}")
    return source == target


class Accuracy(Metric):
    """Fraction of correct answers (Brain-Score's ``accuracy``).

    Parameters
    ----------
    stimulus_coord : str
        Coordinate by which labelled inputs are aligned (see :func:`matches`).

    Returns (``__call__``)
    ----------------------
    Score
        Mean of the matches; ``error`` = their std (ddof=0); ``raw`` = the 0/1 matches.
    """

    def __init__(self, stimulus_coord: str = "stimulus_id"):
        self.stimulus_coord = stimulus_coord

    def __call__(self, source, target) -> Score:
        values = matches(source, target, self.stimulus_coord)
        if not len(values):
            raise ValidationError("accuracy of zero trials is undefined")
        return Score.of(values.mean(), error=values.std(), raw=values)

    def ceiling(self, assembly=None) -> Score:
        """A perfect observer: 1."""
        return Score.of(1.0)


def accuracy(**kwargs) -> Accuracy:
    """Factory of ``accuracy``."""
    return Accuracy(**kwargs)
