"""Accuracy distance: how close a model's accuracy is to each subject's, relative to the largest possible gap.

For a subject with accuracy ``a_s`` on a set of trials and a model with accuracy ``a_m`` on the same
stimuli (judged against the same correct answers), the model is as far from the subject as it can be
when it sits at the far end of [0, 1], ``max(a_s, 1 - a_s)`` away; the accuracy distance is

    d(m, s) = 1 - |a_m - a_s| / max(a_s, 1 - a_s)

1 for the subject's accuracy, 0 at the far end. As Brain-Score computes it (the reference's
``accuracy_distance`` metric, ``brainscore_vision/metrics/accuracy_distance``, used by its
Scialom et al. 2024 and Lonnqvist et al. 2024 behavioural benchmarks): ``d`` per subject (optionally
the mean over the conditions given by ``variables``), the score is ``|mean over subjects|``, its
error the std (ddof=0) over subjects, the per-subject values in ``raw``. The ceiling is the same
statistic over all pairs of subjects (``itertools.combinations`` of the sorted subjects, the first of a
pair in the model's place): the spread between subjects, the score a subject gets against the others.

``valid_only`` (the reference's ``kato_accuracy_distance``, Kato 2026) first leaves out every trial
where either observer gave no answer (``''`` or ``'NaN'``).
"""
from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np
import pandas as pd

from brainscore.data.assemblies import DataAssembly, presentation_order
from brainscore.errors import ValidationError
from brainscore.metrics.base import Ceiling, Metric
from brainscore.metrics.bootstrap import unit_sums
from brainscore.metrics.score import Score

__all__ = ["accuracy_distance", "AccuracyDistance", "AccuracyDistanceCeiling", "MISSING_ANSWERS"]

#: answers that mean "no answer" (Kato 2026 data): with ``valid_only``, such trials are left out
MISSING_ANSWERS = ("", "NaN")


def accuracy_distance(source_accuracy, target_accuracy):
    """``1 - |a_m - a_s| / max(a_s, 1 - a_s)`` (Brain-Score's accuracy distance), elementwise.

    Parameters
    ----------
    source_accuracy, target_accuracy : float or ndarray, in [0, 1]
        The model's (``a_m``) and the subject's (``a_s``) accuracy on the same trials.

    Returns
    -------
    float or ndarray
        In [0, 1]; never NaN (the denominator is at least 0.5).

    Raises
    ------
    ValueError
        If an accuracy lies outside [0, 1] or is not finite.
    """
    source, target = np.asarray(source_accuracy, dtype=float), np.asarray(target_accuracy, dtype=float)
    for name, value in (("source", source), ("target", target)):
        if not np.all(np.isfinite(value)) or np.any(value < 0) or np.any(value > 1):
            raise ValueError(f"{name} accuracy must lie in [0, 1], got {value}")
    distance = 1 - np.abs(source - target) / np.maximum(target, 1 - target)
    return float(distance) if distance.ndim == 0 else distance


def _correct(assembly, truth_coord: str, stimulus_coord: str, name: str) -> pd.DataFrame:
    """One row per trial: stimulus, the answer, and the correct answer (``truth_coord``)."""
    for coord in (stimulus_coord, truth_coord):
        if coord not in assembly.coords:
            raise ValidationError(f"the {name} needs a {coord!r} coordinate on its presentations; it has "
                                  f"{list(assembly.coords)}")
    answers = np.asarray(assembly.values).reshape(-1)
    if answers.shape[0] != assembly[stimulus_coord].shape[0]:
        raise ValidationError(f"the {name} must hold one answer per presentation, got shape {assembly.shape}")
    return pd.DataFrame({"stimulus": np.asarray(assembly[stimulus_coord].values).astype(str), "answer": answers,
                         "truth": np.asarray(assembly[truth_coord].values)})


class AccuracyDistance(Metric):
    """Accuracy distance of a model to each subject (Brain-Score's ``accuracy_distance``; formula in the module).

    Parameters
    ----------
    variables : sequence of str
        Presentation coordinates of the target whose combinations are conditions: ``d`` is computed
        per condition and averaged (conditions a subject or the model lacks are skipped). Empty: one
        ``d`` per subject over all its trials.
    subject_coord, truth_coord, stimulus_coord : str
        Coordinates of the target's presentations: the subject, the correct answer (the model's
        answers are judged against the target's), the stimulus.
    valid_only : bool
        Leave out trials where the subject or the model gave no answer (``''``/``'NaN'``), as the
        reference's ``kato_accuracy_distance``.

    Input (``__call__``)
    --------------------
    source : BehavioralAssembly of shape (n_presentations,)
        The model's answer to each stimulus (one per stimulus; stimuli the subjects did not see are
        ignored), with ``stimulus_coord`` and, when ``variables`` are given, those coordinates.
    target : BehavioralAssembly of shape (n_trials,)
        The subjects' answers with ``subject_coord``, ``truth_coord`` and ``stimulus_coord``.
    variables : sequence of str, optional
        The reference's third argument (``metric(source, target, ('condition',))``): overrides
        :attr:`variables` for this call.

    Returns (``__call__``)
    ----------------------
    Score
        ``|mean over subjects of d|``; ``error`` = std (ddof=0) over subjects; ``raw`` = ``d`` per
        subject (dim ``subject``).

    Raises
    ------
    AlignmentError
        If the model did not answer a stimulus a subject saw.
    ValidationError
        If the model answered a stimulus twice, or coordinates are missing.
    """

    def __init__(self, variables: Sequence[str] = (), subject_coord: str = "subject", truth_coord: str = "truth",
                 stimulus_coord: str = "stimulus_id", valid_only: bool = False):
        self.variables = tuple(variables)
        self.subject_coord = subject_coord
        self.truth_coord = truth_coord
        self.stimulus_coord = stimulus_coord
        self.valid_only = valid_only

    def _with(self, variables: Sequence[str] | None) -> "AccuracyDistance":
        if variables is None or tuple(variables) == self.variables:
            return self
        return AccuracyDistance(variables, self.subject_coord, self.truth_coord, self.stimulus_coord, self.valid_only)

    def _answered(self, answers: pd.Series, trials: pd.DataFrame, who: str) -> tuple[np.ndarray, pd.DataFrame]:
        """(the source's correctness, ``trials``), both without the trials either left unanswered when
        :attr:`valid_only`."""
        correct = self._source_correct(answers, trials, who)  # raises for a stimulus the source never saw
        if not self.valid_only:
            return correct, trials
        source_answer = answers.to_numpy()[answers.index.get_indexer(trials["stimulus"].to_numpy())].astype(str)
        keep = ~np.isin(trials["answer"].to_numpy().astype(str), MISSING_ANSWERS) & \
            ~np.isin(source_answer, MISSING_ANSWERS)
        if not keep.any():
            raise ValidationError(f"no trial of {who} has an answer from both observers")
        return correct[keep], trials[keep]

    def _subjects(self, target) -> pd.DataFrame:
        frame = _correct(target, self.truth_coord, self.stimulus_coord, "target")
        for coord in (self.subject_coord, *self.variables):
            if coord not in target.coords:
                raise ValidationError(f"the target needs a {coord!r} coordinate on its presentations; it has "
                                      f"{list(target.coords)}")
        frame["subject"] = np.asarray(target[self.subject_coord].values).astype(str)
        for i, coord in enumerate(self.variables):
            frame[f"variable_{i}"] = np.asarray(target[coord].values)
        frame["correct"] = frame["answer"].to_numpy() == frame["truth"].to_numpy()
        return frame

    def _source_answers(self, source) -> pd.Series:
        if self.stimulus_coord not in source.coords:
            raise ValidationError(f"the source needs a {self.stimulus_coord!r} coordinate on its presentations; it "
                                  f"has {list(source.coords)}")
        answers = pd.Series(np.asarray(source.values).reshape(-1),
                            index=np.asarray(source[self.stimulus_coord].values).astype(str))
        if not answers.index.is_unique:
            raise ValidationError("the source answers some stimuli more than once; give one answer per stimulus")
        return answers

    def _source_correct(self, answers: pd.Series, trials: pd.DataFrame, who: str) -> np.ndarray:
        """Whether the source's answer to each of ``trials``' stimuli is that trial's correct answer."""
        position = presentation_order(answers.index.to_numpy(), trials["stimulus"].to_numpy(), "stimulus_id",
                                      entry="answer", sides=("source", f"trials of {who}"))
        return answers.to_numpy()[position] == trials["truth"].to_numpy()

    def _distance(self, source_correct: np.ndarray, trials: pd.DataFrame) -> float:
        """``d`` on ``trials`` (mean over the conditions of :attr:`variables`, if any)."""
        if not self.variables:
            return accuracy_distance(source_correct.mean(), trials["correct"].mean())
        columns = [f"variable_{i}" for i in range(len(self.variables))]
        per_condition = [accuracy_distance(source_correct[rows].mean(), trials["correct"].to_numpy()[rows].mean())
                         for rows in trials.reset_index(drop=True).groupby(columns, sort=True).indices.values()]
        return float(np.mean(per_condition))

    def __call__(self, source, target, variables: Sequence[str] | None = None) -> Score:
        if self._with(variables) is not self:
            return self._with(variables)(source, target)
        subjects = self._subjects(target)
        answers = self._source_answers(source)
        names = sorted(subjects["subject"].unique())
        values = np.array([self._distance(*self._answered(answers, trials, f"subject {name!r}"))
                           for name, trials in ((n, subjects[subjects["subject"] == n]) for n in names)])
        return _aggregate(values, names, "subject")

    def bootstrap(self, source, target, weights: np.ndarray, stimulus_ids: np.ndarray) -> np.ndarray | None:
        """The score on bootstrap resamples of the stimuli: one value per row of ``weights``.

        Every trial on a stimulus drawn k times counts k times, for the model and every subject of the
        same resample. None when :attr:`variables` are given (conditions change with the resample).

        Parameters
        ----------
        source, target : as :meth:`__call__`
        weights : ndarray of shape (resamples, n_stimuli)
        stimulus_ids : ndarray of shape (n_stimuli,), sorted
        """
        if self.variables:
            return None
        subjects = self._subjects(target)
        answers = self._source_answers(source)
        per_subject = []
        for name in sorted(subjects["subject"].unique()):
            correct, trials = self._answered(answers, subjects[subjects["subject"] == name], f"subject {name!r}")
            per_subject.append(_resampled_distance(weights, trials["stimulus"].to_numpy(), stimulus_ids, correct,
                                                   trials["correct"].to_numpy()))
        return np.abs(np.mean(np.stack(per_subject, axis=1), axis=1))

    def ceiling(self, assembly) -> Score:
        """The same statistic over all pairs of subjects; see :class:`AccuracyDistanceCeiling`."""
        return AccuracyDistanceCeiling(self.variables, self.subject_coord, self.truth_coord,
                                       self.stimulus_coord, self.valid_only)(assembly)


class AccuracyDistanceCeiling(Ceiling):
    """Accuracy distance between subjects: every pair (sorted, ``itertools.combinations``), the first in the
    model's place, aggregated as :class:`AccuracyDistance` (Brain-Score's ``accuracy_distance`` ceiling).

    Parameters
    ----------
    As :class:`AccuracyDistance`.

    Returns (``__call__``)
    ----------------------
    Score
        ``|mean over pairs of d|``, ``error`` = std over pairs, ``raw`` with dim ``pair`` and
        coordinates ``subject_left``, ``subject_right``.

    Raises
    ------
    ValidationError
        With fewer than two subjects, or a subject who saw a stimulus twice.
    AlignmentError
        If the first subject of a pair did not see a stimulus the second saw.
    """

    def __init__(self, variables: Sequence[str] = (), subject_coord: str = "subject", truth_coord: str = "truth",
                 stimulus_coord: str = "stimulus_id", valid_only: bool = False):
        self._metric = AccuracyDistance(variables, subject_coord, truth_coord, stimulus_coord, valid_only)

    def _pairs(self, assembly):
        subjects = self._metric._subjects(assembly)
        names = sorted(subjects["subject"].unique())
        if len(names) < 2:
            raise ValidationError(f"a ceiling across subjects needs at least 2 subjects, got {len(names)}")
        trials = {name: subjects[subjects["subject"] == name] for name in names}
        answers = {}
        for name, rows in trials.items():
            series = pd.Series(rows["answer"].to_numpy(), index=rows["stimulus"].to_numpy())
            if not series.index.is_unique:
                raise ValidationError(f"subject {name!r} saw a stimulus twice; the ceiling needs one trial per "
                                      f"stimulus and subject")
            answers[name] = series
        return list(itertools.combinations(names, 2)), trials, answers

    def __call__(self, assembly) -> Score:
        pairs, trials, answers = self._pairs(assembly)
        values = np.array([self._metric._distance(*self._metric._answered(answers[left], trials[right],
                                                                           f"subject {right!r}"))
                           for left, right in pairs])
        return _aggregate(values, range(len(pairs)), "pair", subject_left=("pair", [left for left, _ in pairs]),
                          subject_right=("pair", [right for _, right in pairs]))

    def bootstrap(self, assembly, weights: np.ndarray, stimulus_ids: np.ndarray) -> np.ndarray | None:
        """The ceiling on bootstrap resamples of the stimuli (see :meth:`AccuracyDistance.bootstrap`)."""
        if self._metric.variables:
            return None
        pairs, trials, answers = self._pairs(assembly)
        per_pair = []
        for left, right in pairs:
            correct, kept = self._metric._answered(answers[left], trials[right], f"subject {right!r}")
            per_pair.append(_resampled_distance(weights, kept["stimulus"].to_numpy(), stimulus_ids, correct,
                                                kept["correct"].to_numpy()))
        return np.abs(np.mean(np.stack(per_pair, axis=1), axis=1))


def _aggregate(values: np.ndarray, names, dim: str, **coords) -> Score:
    raw = DataAssembly(values, dims=(dim,), coords={dim: list(names), **coords})
    return Score.of(abs(float(np.mean(values))), error=float(np.std(values)), raw=raw)


def _resampled_distance(weights: np.ndarray, stimuli: np.ndarray, stimulus_ids: np.ndarray,
                        source_correct: np.ndarray, target_correct: np.ndarray) -> np.ndarray:
    """``d`` of two observers' trials (on ``stimuli``) on every resample of ``stimulus_ids`` (the columns of
    ``weights``, sorted): a trial on a stimulus drawn k times counts k times."""
    per_stimulus = unit_sums(stimuli, stimulus_ids, np.stack([np.ones(len(stimuli)), source_correct, target_correct],
                                                             axis=1).astype(np.float64))
    trials, source, target = (np.asarray(weights, dtype=np.float64) @ per_stimulus).T
    with np.errstate(invalid="ignore", divide="ignore"):
        source, target = source / trials, target / trials
    return 1 - np.abs(source - target) / np.maximum(target, 1 - target)
