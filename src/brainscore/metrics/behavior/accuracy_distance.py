"""Accuracy distance: how close a model's accuracy is to each human subject's, relative to the room to differ.

For a model with accuracy ``a_m`` and a subject with accuracy ``a_s`` on the same stimuli,

    d = 1 - |a_m - a_s| / max(a_s, 1 - a_s)

(1 for equal accuracies, 0 at the largest difference the subject's accuracy allows). With
``variables`` (e.g. ``('condition',)``), ``d`` is computed per combination of their values present
in both the model's and the subject's responses and averaged, so two models with equal overall
accuracy are told apart by their pattern over conditions. The score is the absolute value of the
mean over subjects; ``error`` is the std (ddof=0) over subjects; ``raw`` holds the per-subject values
(dim ``subject``). The ceiling applies the same comparison to every pair of subjects (the second as
the target). Brain-Score's ``accuracy_distance`` metric (BMD 2024, Kato 2026 benchmarks).

``valid_only=True`` (Brain-Score's ``kato_accuracy_distance``) first drops trials where either
response is missing (``''`` or ``'NaN'``).

Responses are compared with the ``truth`` coordinate of the target (the model's responses are put in
the target's stimulus order by ``stimulus_id``).
"""
from __future__ import annotations

import itertools
from typing import Any, Sequence

import numpy as np

from brainscore.data.assemblies import DataAssembly
from brainscore.errors import AlignmentError, ValidationError
from brainscore.metrics.base import Metric
from brainscore.metrics.score import Score

__all__ = ["accuracy_distance", "AccuracyDistance"]

_MISSING = ("", "NaN")


def accuracy_distance(source_accuracy: float, target_accuracy: float) -> float:
    """``1 - |source - target| / max(target, 1 - target)`` for accuracies in [0, 1].

    Raises
    ------
    ValidationError
        If an accuracy is outside [0, 1] or not finite.
    """
    for name, value in (("source", source_accuracy), ("target", target_accuracy)):
        if not 0 <= value <= 1:
            raise ValidationError(f"{name} accuracy must be in [0, 1], got {value}")
    return 1 - abs(source_accuracy - target_accuracy) / max(target_accuracy, 1 - target_accuracy)


class AccuracyDistance(Metric):
    """Per-subject accuracy distance, averaged over subjects (see the module notes).

    Parameters
    ----------
    subject_coord, stimulus_coord, truth_coord : str
        Coordinates of the target naming the subject, the stimulus and the correct answer.
    valid_only : bool
        Drop trials with a missing response (``''``/``'NaN'``) in either assembly first.

    Returns (``__call__(source, target, variables=())``)
    ----------------------------------------------------
    Score
        Scalar; ``error`` = std over subjects; ``raw`` = per-subject distances (dim ``subject``).

    Raises
    ------
    AlignmentError
        If the model did not respond to exactly a subject's stimuli.
    ValidationError
        If the target lacks the subject, stimulus or truth coordinate, or no condition is shared.
    """

    def __init__(self, subject_coord: str = "subject", stimulus_coord: str = "stimulus_id",
                 truth_coord: str = "truth", valid_only: bool = False):
        self.subject_coord, self.stimulus_coord, self.truth_coord = subject_coord, stimulus_coord, truth_coord
        self.valid_only = valid_only

    def _check(self, target: Any) -> None:
        for coord in (self.subject_coord, self.stimulus_coord, self.truth_coord):
            if coord not in target.coords:
                raise ValidationError(f"the target needs a {coord!r} coordinate; it has {sorted(map(str, target.coords))}")

    def compare(self, source: Any, target: Any) -> float:
        """Accuracy distance of ``source``'s responses from ``target``'s on ``target``'s stimuli (one subject)."""
        target_ids = np.asarray(target[self.stimulus_coord].values)
        source_ids = np.asarray(source[self.stimulus_coord].values)
        order = np.argsort(source_ids, kind="stable")
        position = np.searchsorted(source_ids[order], target_ids)
        position = np.clip(position, 0, len(order) - 1)
        if len(source_ids) != len(target_ids) or not (source_ids[order][position] == target_ids).all():
            raise AlignmentError(f"the model's responses ({len(source_ids)}) do not cover exactly the subject's "
                                 f"{len(target_ids)} stimuli (by {self.stimulus_coord!r})")
        source_values = np.asarray(source.values).reshape(len(source_ids), -1)[order[position]].ravel()
        target_values = np.asarray(target.values).ravel()
        truth = np.asarray(target[self.truth_coord].values)
        if self.valid_only:
            valid = ~np.isin(source_values.astype(str), _MISSING) & ~np.isin(target_values.astype(str), _MISSING)
            source_values, target_values, truth = source_values[valid], target_values[valid], truth[valid]
            if not valid.any():
                raise ValidationError("no trial has a valid response in both assemblies")
        return accuracy_distance(float(np.mean(source_values == truth)), float(np.mean(target_values == truth)))

    def _compare_by(self, source: Any, target: Any, variables: Sequence[str]) -> float:
        if not variables:
            return self.compare(source, target)
        levels = [list(dict.fromkeys(np.asarray(target[v].values).tolist())) for v in variables]
        values = []
        for combination in itertools.product(*levels):
            target_mask = np.ones(target.sizes[target[variables[0]].dims[0]], dtype=bool)
            source_mask = np.ones(source.sizes[source[variables[0]].dims[0]], dtype=bool)
            for variable, value in zip(variables, combination):
                target_mask &= np.asarray(target[variable].values) == value
                source_mask &= np.asarray(source[variable].values) == value
            if target_mask.any() and source_mask.any():  # unbalanced designs: only combinations in both
                dim_t, dim_s = target[variables[0]].dims[0], source[variables[0]].dims[0]
                values.append(self.compare(source.isel({dim_s: np.flatnonzero(source_mask)}),
                                           target.isel({dim_t: np.flatnonzero(target_mask)})))
        if not values:
            raise ValidationError(f"no combination of {tuple(variables)} occurs in both the model's and the "
                                  f"subject's responses")
        return float(np.mean(values))

    def __call__(self, source: Any, target: Any, variables: Sequence[str] = ()) -> Score:
        self._check(target)
        variables = tuple(variables)
        subjects = sorted(set(np.asarray(target[self.subject_coord].values).tolist()))
        (dim,) = target[self.subject_coord].dims
        labels = np.asarray(target[self.subject_coord].values)
        values = [self._compare_by(source, target.isel({dim: np.flatnonzero(labels == s)}), variables)
                  for s in subjects]
        return self._aggregate(values, {self.subject_coord: ("subject", subjects)})

    @staticmethod
    def _aggregate(values: list[float], coords: dict) -> Score:
        raw = DataAssembly(np.asarray(values, dtype=float), dims=("subject",), coords=coords)
        score = Score.of(abs(float(np.mean(values))), error=float(np.std(values)))
        score.attrs["raw"] = raw
        return score

    def ceiling(self, assembly: Any) -> Score:
        """The same comparison over every pair of subjects (the second as the target); mean, std over pairs."""
        self._check(assembly)
        subjects = sorted(set(np.asarray(assembly[self.subject_coord].values).tolist()))
        (dim,) = assembly[self.subject_coord].dims
        labels = np.asarray(assembly[self.subject_coord].values)
        pairs = list(itertools.combinations(subjects, 2))
        if not pairs:
            raise ValidationError("the ceiling needs at least two subjects")
        values = [self.compare(assembly.isel({dim: np.flatnonzero(labels == a)}),
                               assembly.isel({dim: np.flatnonzero(labels == b)})) for a, b in pairs]
        return self._aggregate(values, {"subject_left": ("subject", [a for a, _ in pairs]),
                                        "subject_right": ("subject", [b for _, b in pairs])})

