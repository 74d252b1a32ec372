"""Error consistency: do two observers get the *same* trials wrong? (Geirhos, Meding & Wichmann 2020).

For two observers who saw the same trials, with accuracies ``a1`` and ``a2``, two independent
observers would agree (both right or both wrong) on a fraction

    c_exp = a1 a2 + (1 - a1)(1 - a2)

of trials. Error consistency is Cohen's kappa (Cohen 1960) of the observed agreement ``c_obs``:

    kappa = (c_obs - c_exp) / (1 - c_exp)

0 means no more shared errors than chance, 1 the same errors on every trial.

As Brain-Score computes it: kappa per (subject, condition) between the model and each human
subject on the stimuli that subject saw in that condition; the score is the mean over conditions,
then over subjects, then its absolute value (the reference's deviation from the paper, to keep
scores in [0, 1]); the error is the std (ddof=0) over all (condition, subject) kappas. The ceiling
is the same statistic over all pairs of human subjects. Means and std skip NaN kappas (a pair with
c_exp = 1), as xarray's reductions do.
"""
from __future__ import annotations

import itertools
from typing import Any
import warnings

import numpy as np
import pandas as pd

from brainscore.data.assemblies import DataAssembly, presentation_order
from brainscore.errors import AlignmentError, ValidationError
from brainscore.metrics.base import Ceiling, Metric
from brainscore.metrics.device import effective_device
from brainscore.metrics.kernels.backend import device as array_device
from brainscore.metrics.kernels.backend import namespace, on_device, to_numpy
from brainscore.metrics.score import Score

__all__ = ["cohens_kappa", "error_consistency_kappa", "ErrorConsistency", "ErrorConsistencyCeiling",
           "error_consistency", "error_consistency_ceiling"]


def cohens_kappa(observed: float, expected: float) -> float:
    """Cohen's kappa ``(observed - expected) / (1 - expected)`` (Cohen 1960).

    Parameters
    ----------
    observed, expected : float in [0, 1]
        Observed and chance agreement.

    Returns
    -------
    float
        NaN when ``expected == 1`` (both observers always right, or always wrong).

    Raises
    ------
    ValueError
        If either is outside [0, 1].
    """
    for name, value in (("observed", observed), ("expected", expected)):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{name} agreement must lie in [0, 1], got {value}")
    if expected == 1.0:
        return float("nan")
    return (observed - expected) / (1.0 - expected)


def error_consistency_kappa(correct1: np.ndarray, correct2: np.ndarray) -> float:
    """Error consistency (Geirhos et al. 2020) of two observers' correctness on the same trials.

    Parameters
    ----------
    correct1, correct2 : array of bool of shape (n_trials,)
        Whether each observer answered each trial correctly, trials in the same order.

    Returns
    -------
    float
        Cohen's kappa of the agreement in correctness.
    """
    correct1, correct2 = np.asarray(correct1, dtype=bool), np.asarray(correct2, dtype=bool)
    if correct1.shape != correct2.shape or correct1.ndim != 1 or not len(correct1):
        raise ValueError(f"expected two non-empty 1-D arrays of equal length, got {correct1.shape} and {correct2.shape}")
    a1, a2 = correct1.mean(), correct2.mean()
    expected = a1 * a2 + (1 - a1) * (1 - a2)
    observed = np.mean(correct1 == correct2)
    return cohens_kappa(float(observed), float(min(max(expected, 0.0), 1.0)))


#: responses that mean "no response" (Kato 2026 data): with ``valid_only``, such trials are left out
MISSING_RESPONSES = ("", "NaN")


def _trials(assembly, subject_coord: str | None, condition_coord: str, truth_coord: str, stimulus_coord: str,
            name: str) -> pd.DataFrame:
    """One row per trial: stimulus, condition, (subject), correct, valid (a response was given)."""
    for coord in (stimulus_coord, truth_coord) + ((subject_coord,) if subject_coord else ()):
        if coord not in assembly.coords:
            raise ValidationError(f"the {name} needs a {coord!r} coordinate on its presentations; it has "
                                  f"{list(assembly.coords)}")
    choices = np.asarray(assembly.values).reshape(-1)
    if choices.shape[0] != assembly[stimulus_coord].shape[0]:
        raise ValidationError(f"the {name} must hold one choice per presentation, got shape {assembly.shape}")
    frame = pd.DataFrame({"stimulus": np.asarray(assembly[stimulus_coord].values),
                          "correct": choices == np.asarray(assembly[truth_coord].values),
                          "valid": ~np.isin(choices.astype(str), MISSING_RESPONSES)})
    if condition_coord in assembly.coords:
        frame["condition"] = np.asarray(assembly[condition_coord].values)
    if subject_coord:
        frame["subject"] = np.asarray(assembly[subject_coord].values)
    return frame


def _resampled_kappa(weights: np.ndarray, units: np.ndarray, correct1: np.ndarray, correct2: np.ndarray) -> np.ndarray:
    """Error-consistency kappa of two observers' trials on every resample of the stimuli.

    ``weights`` (resamples x stimuli) gives how often each stimulus was drawn; trial t (stimulus
    ``units[t]``, an index into the columns) counts ``weights[:, units[t]]`` times. Returns (resamples,),
    NaN where chance agreement is 1 (as :func:`cohens_kappa`). ``weights`` may be a tensor on a
    device (:func:`_weights_on`): the resample sums are then one product there, equal to numpy to
    rounding (exactly, for 0/1 correctness and integer counts).
    """
    if not isinstance(weights, np.ndarray):
        return _resampled_kappa_on(weights, units, correct1, correct2)
    w = weights[:, units]                                     # (B, n_trials)
    c1, c2 = np.asarray(correct1, dtype=np.float64), np.asarray(correct2, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        total = w.sum(axis=1)
        a1, a2 = (w @ c1) / total, (w @ c2) / total
        observed = (w @ (c1 == c2).astype(np.float64)) / total
        expected = np.clip(a1 * a2 + (1 - a1) * (1 - a2), 0.0, 1.0)
        kappa = (observed - expected) / (1.0 - expected)
    kappa[expected >= 1.0] = np.nan
    return kappa


def _weights_on(weights: np.ndarray) -> Any:
    """``weights`` on the metrics' device (:func:`brainscore.metrics.device.effective_device`), once per bootstrap; numpy without one."""
    device = effective_device(None)
    return weights if device is None else on_device(np.asarray(weights, dtype=np.float64), device)


def _resampled_kappa_on(weights: Any, units: np.ndarray, correct1: np.ndarray, correct2: np.ndarray) -> np.ndarray:
    """:func:`_resampled_kappa` with ``weights`` a tensor on a device: one product for the three sums."""
    xp = namespace(weights)
    device = array_device(weights)
    c1, c2 = np.asarray(correct1, dtype=np.float64), np.asarray(correct2, dtype=np.float64)
    columns = xp.asarray(np.stack([np.ones_like(c1), c1, c2, (c1 == c2).astype(np.float64)], axis=1), device=device)
    w = xp.take(weights, xp.asarray(np.asarray(units, dtype=np.int64), device=device), axis=1)
    sums = to_numpy(w @ columns)                              # (B, 4): total, both accuracies, agreement
    total = sums[:, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        a1, a2 = sums[:, 1] / total, sums[:, 2] / total
        observed = sums[:, 3] / total
        expected = np.clip(a1 * a2 + (1 - a1) * (1 - a2), 0.0, 1.0)
        kappa = (observed - expected) / (1.0 - expected)
    kappa[expected >= 1.0] = np.nan
    return kappa


def _resampled_aggregate(kappas: np.ndarray) -> np.ndarray:
    """(resamples, conditions, columns) kappas -> |mean over columns of the mean over conditions| per resample."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.abs(np.nanmean(np.nanmean(kappas, axis=1), axis=1))


def _unit_index(stimuli: np.ndarray, stimulus_ids: np.ndarray) -> np.ndarray:
    """Position in ``stimulus_ids`` (the bootstrap's units, shape (n,)) of each trial's stimulus (shape (m,)), both
    compared as text; a repeated id counts at its first position.

    Raises
    ------
    AlignmentError
        If a trial's stimulus is not among the bootstrap's (:func:`~brainscore.data.presentation_order`).
    """
    return presentation_order(np.asarray(stimulus_ids).astype(str), np.asarray(stimuli).astype(str), "stimulus_id",
                              repeats="first", entry="bootstrap unit", sides=("bootstrap", "trials"))


def _aggregate(kappas: np.ndarray, conditions, columns, column_dim: str, **coords) -> Score:
    """|mean over conditions, then columns| with error = std over all (NaN skipped)."""
    with warnings.catch_warnings():  # all-NaN slices give NaN, as intended
        warnings.simplefilter("ignore", RuntimeWarning)
        per_column = np.nanmean(kappas, axis=0)
        center = abs(float(np.nanmean(per_column)))
        error = float(np.nanstd(kappas))
    if not np.isfinite(center):
        raise ValidationError(f"error consistency is undefined for every one of the {kappas.size} (condition, "
                              f"{column_dim}) pairs: in each, the observers are always right or always wrong "
                              f"(expected agreement 1, kappa 0/0), so there are no errors to compare; use "
                              f"conditions where the model and the subjects make some errors")
    raw = DataAssembly(kappas, dims=("condition", column_dim),
                       coords={"condition": list(conditions), column_dim: list(columns), **coords})
    return Score.of(center, error=error, raw=raw)


class ErrorConsistency(Metric):
    """Error consistency of a model with each human subject (Geirhos et al. 2020), Brain-Score's ``error_consistency``.

    Parameters
    ----------
    subject_coord, condition_coord, truth_coord, stimulus_coord : str
        Coordinates of the presentations: the subject, the experimental condition, the correct
        label, and the stimulus identity.

    Input (``__call__``)
    --------------------
    source : BehavioralAssembly of shape (n_presentations,)
        The model's choice (label) per stimulus, with ``stimulus_id`` and ``truth``; ``condition``
        is taken from the target by stimulus if the source lacks it.
    target : BehavioralAssembly of shape (n_trials,)
        Human choices, with ``stimulus_id``, ``truth``, ``condition`` and ``subject``.

    Returns (``__call__``)
    ----------------------
    Score
        ``|mean_subjects mean_conditions kappa|``; ``error`` = std over (condition, subject);
        ``raw`` = the kappas with dims (condition, subject).

    Raises
    ------
    AlignmentError
        If the model did not see a stimulus a subject saw in a condition.
    """

    def __init__(self, subject_coord: str = "subject", condition_coord: str = "condition",
                 truth_coord: str = "truth", stimulus_coord: str = "stimulus_id", valid_only: bool = False):
        self.subject_coord = subject_coord
        self.condition_coord = condition_coord
        self.truth_coord = truth_coord
        self.stimulus_coord = stimulus_coord
        self.valid_only = valid_only

    def _valid(self, valid1: np.ndarray, valid2: np.ndarray) -> np.ndarray:
        """Which paired trials count: all, or (``valid_only``) those with a response from both observers."""
        return (np.asarray(valid1) & np.asarray(valid2)) if self.valid_only else np.ones(len(valid1), dtype=bool)

    def _target(self, target) -> pd.DataFrame:
        frame = _trials(target, self.subject_coord, self.condition_coord, self.truth_coord, self.stimulus_coord,
                        "target")
        if "condition" not in frame:
            frame["condition"] = 0
        return frame

    def __call__(self, source, target) -> Score:
        humans = self._target(target)
        model = _trials(source, None, self.condition_coord, self.truth_coord, self.stimulus_coord, "source")
        if "condition" not in model:
            condition_of = humans.drop_duplicates("stimulus").set_index("stimulus")["condition"]
            model["condition"] = model["stimulus"].map(condition_of).to_numpy()
        if model.duplicated(["condition", "stimulus"]).any():
            raise ValidationError("the source repeats stimuli within a condition; give one choice per stimulus")
        model_correct = model.set_index(["condition", "stimulus"])["correct"]
        model_valid = model.set_index(["condition", "stimulus"])["valid"]
        subjects = sorted(humans["subject"].unique())
        conditions = sorted(humans["condition"].unique())
        kappas = np.full((len(conditions), len(subjects)), np.nan)
        for (subject, condition), trials in humans.groupby(["subject", "condition"], sort=False):
            keys = pd.MultiIndex.from_arrays([np.full(len(trials), condition, dtype=object),
                                              trials["stimulus"].to_numpy()])
            missing = ~keys.isin(model_correct.index)
            if missing.any():
                raise AlignmentError(f"the source has no response to {missing.sum()} stimuli that subject {subject!r} "
                                     f"saw in condition {condition!r}, e.g. {list(trials['stimulus'][missing][:3])}")
            valid = self._valid(model_valid.loc[keys].to_numpy(), trials["valid"].to_numpy())
            if valid.any():
                kappas[conditions.index(condition), subjects.index(subject)] = error_consistency_kappa(
                    model_correct.loc[keys].to_numpy()[valid], trials["correct"].to_numpy()[valid])
        return _aggregate(kappas, conditions, subjects, "subject")

    def bootstrap(self, source, target, weights: np.ndarray, stimulus_ids: np.ndarray) -> np.ndarray:
        """The score on bootstrap resamples of the stimuli (images): one value per row of ``weights``.

        Every subject's trials on a stimulus drawn k times count k times, in every (subject,
        condition) kappa of the same resample; aggregation as in :meth:`__call__`.

        Parameters
        ----------
        source, target : as :meth:`__call__`
        weights : ndarray of shape (resamples, n_stimuli)
        stimulus_ids : ndarray of shape (n_stimuli,), sorted
        """
        humans = self._target(target)
        model = _trials(source, None, self.condition_coord, self.truth_coord, self.stimulus_coord, "source")
        if "condition" not in model:
            condition_of = humans.drop_duplicates("stimulus").set_index("stimulus")["condition"]
            model["condition"] = model["stimulus"].map(condition_of).to_numpy()
        model_correct = model.set_index(["condition", "stimulus"])["correct"]
        model_valid = model.set_index(["condition", "stimulus"])["valid"]
        subjects = sorted(humans["subject"].unique())
        conditions = sorted(humans["condition"].unique())
        kappas = np.full((weights.shape[0], len(conditions), len(subjects)), np.nan)
        weights = _weights_on(weights)                        # on the metrics' device, if any: copied once
        for (subject, condition), trials in humans.groupby(["subject", "condition"], sort=False):
            keys = pd.MultiIndex.from_arrays([np.full(len(trials), condition, dtype=object),
                                              trials["stimulus"].to_numpy()])
            valid = self._valid(model_valid.loc[keys].to_numpy(), trials["valid"].to_numpy())
            if valid.any():
                kappas[:, conditions.index(condition), subjects.index(subject)] = _resampled_kappa(
                    weights, _unit_index(trials["stimulus"].to_numpy()[valid], stimulus_ids),
                    model_correct.loc[keys].to_numpy()[valid], trials["correct"].to_numpy()[valid])
        return _resampled_aggregate(kappas)

    def ceiling(self, assembly) -> Score:
        """The same statistic over all pairs of subjects; see :class:`ErrorConsistencyCeiling`."""
        return ErrorConsistencyCeiling(self.subject_coord, self.condition_coord, self.truth_coord,
                                       self.stimulus_coord)(assembly)


class ErrorConsistencyCeiling(Ceiling):
    """Human-to-human error consistency over all subject pairs (Geirhos et al. 2020), Brain-Score's ceiling.

    For every pair of subjects (sorted, ``itertools.combinations``) and condition, kappa on the
    stimuli both saw in that condition; aggregated as :class:`ErrorConsistency` with pairs in place
    of subjects.

    Parameters
    ----------
    As :class:`ErrorConsistency`.

    Returns (``__call__``)
    ----------------------
    Score
        ``|mean_pairs mean_conditions kappa|``, ``error`` = std over (condition, pair), ``raw``
        with dims (condition, pair) and coordinates ``subject_left``, ``subject_right``.
    """

    def __init__(self, subject_coord: str = "subject", condition_coord: str = "condition",
                 truth_coord: str = "truth", stimulus_coord: str = "stimulus_id", valid_only: bool = False):
        self._metric = ErrorConsistency(subject_coord, condition_coord, truth_coord, stimulus_coord, valid_only)

    def __call__(self, assembly) -> Score:
        humans = self._metric._target(assembly)
        subjects = sorted(humans["subject"].unique())
        if len(subjects) < 2:
            raise ValidationError(f"a ceiling across subjects needs at least 2 subjects, got {len(subjects)}")
        conditions = sorted(humans["condition"].unique())
        correct = {key: trials.set_index("stimulus")[["correct", "valid"]]
                   for key, trials in humans.groupby(["subject", "condition"], sort=False)}
        pairs = list(itertools.combinations(subjects, 2))
        kappas = np.full((len(conditions), len(pairs)), np.nan)
        for p, (left, right) in enumerate(pairs):
            for c, condition in enumerate(conditions):
                a, b = correct.get((left, condition)), correct.get((right, condition))
                if a is None or b is None:
                    continue
                if not a.index.is_unique or not b.index.is_unique:
                    raise ValidationError(f"subject {left!r} or {right!r} saw a stimulus twice in condition "
                                          f"{condition!r}")
                if len(a) != len(b) or not a.index.isin(b.index).all():
                    raise AlignmentError(f"subjects {left!r} and {right!r} saw different stimuli in condition "
                                         f"{condition!r}; error consistency needs the same trials")
                b = b.loc[a.index]
                valid = self._metric._valid(a["valid"].to_numpy(), b["valid"].to_numpy())
                if valid.any():
                    kappas[c, p] = error_consistency_kappa(a["correct"].to_numpy()[valid],
                                                           b["correct"].to_numpy()[valid])
        return _aggregate(kappas, conditions, range(len(pairs)), "pair",
                          subject_left=("pair", [l for l, _ in pairs]), subject_right=("pair", [r for _, r in pairs]))

    def bootstrap(self, assembly, weights: np.ndarray, stimulus_ids: np.ndarray) -> np.ndarray:
        """The ceiling on bootstrap resamples of the stimuli (see :meth:`ErrorConsistency.bootstrap`)."""
        humans = self._metric._target(assembly)
        subjects = sorted(humans["subject"].unique())
        conditions = sorted(humans["condition"].unique())
        correct = {key: trials.set_index("stimulus")[["correct", "valid"]]
                   for key, trials in humans.groupby(["subject", "condition"], sort=False)}
        pairs = list(itertools.combinations(subjects, 2))
        kappas = np.full((weights.shape[0], len(conditions), len(pairs)), np.nan)
        weights = _weights_on(weights)                        # on the metrics' device, if any: copied once
        for p, (left, right) in enumerate(pairs):
            for c, condition in enumerate(conditions):
                a, b = correct.get((left, condition)), correct.get((right, condition))
                if a is None or b is None:
                    continue
                b = b.loc[a.index]
                valid = self._metric._valid(a["valid"].to_numpy(), b["valid"].to_numpy())
                if valid.any():
                    kappas[:, c, p] = _resampled_kappa(weights, _unit_index(a.index.to_numpy()[valid], stimulus_ids),
                                                       a["correct"].to_numpy()[valid], b["correct"].to_numpy()[valid])
        return _resampled_aggregate(kappas)


def error_consistency(**kwargs) -> ErrorConsistency:
    """Factory of ``error_consistency``."""
    return ErrorConsistency(**kwargs)


def error_consistency_ceiling(**kwargs) -> ErrorConsistencyCeiling:
    """Factory of the ``error_consistency`` ceiling."""
    return ErrorConsistencyCeiling(**kwargs)
