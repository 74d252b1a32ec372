"""Image-level behavioural consistency, I1 and I2 (Rajalingham, Issa et al. 2018), as Brain-Score computes it.

Task: binary match-to-sample. A trial shows an image of object ``truth``, then two choices: the
``sample_obj`` (= truth) and a distractor ``dist_obj``.

Response matrix (images x distractor objects)
    Humans: for image ``i`` and object ``c``, the fraction of trials on which ``c`` was chosen among
    the trials where ``c`` was offered (as sample or distractor): the false-alarm rate of image ``i``
    towards ``c``. Models give probabilities ``p`` over the objects; the corresponding score is
    ``p(c) / (p(c) + p(truth))``. Entries with ``c == truth`` are undefined (NaN).

Sensitivity (d')
    ``d'(i, c) = Φ⁻¹(1 - FA(i, c)) - Φ⁻¹(mean FA of object c's images towards truth(i))``, with
    ``Φ⁻¹`` the standard normal quantile, clipped to ±5. (Schrimpf et al. 2018's modification:
    the false-alarm rate is averaged per object pair.) The ``n`` (normalised) variants subtract the
    mean d' over the images of the same (truth, distractor) pair. I1 averages d' over distractors
    (one number per image); I2 keeps one per (image, distractor).

Consistency
    Pearson correlation between model and human d' over all entries defined in the human data.
    The human target is a random half of the trials: a ``RandomState(0)`` is created anew on each
    call and shuffles the trials once per repetition (2 repetitions), so the metric and the ceiling
    draw the same halves. Score = mean over repetitions; error = their std (ddof=0).

Ceiling
    Split-half consistency: Pearson between the d' of the two halves, per repetition, **without**
    Spearman-Brown correction. A benchmark ceils each repetition as ``score / sqrt(ceiling)`` and
    averages (:func:`ceil_split_scores`).

Input
    ``source``: model probabilities, an assembly with dims (``presentation``, ``choice``), a
    ``stimulus_id`` coordinate on presentations and the object labels as the ``choice`` coordinate;
    repeated presentations of a stimulus are averaged. ``target``: human trials, a
    BehavioralAssembly of chosen labels with ``stimulus_id``, ``truth``, ``sample_obj`` and
    ``dist_obj`` coordinates.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import scipy.stats
import xarray as xr

from brainscore.data.assemblies import DataAssembly, nan_group_mean
from brainscore.errors import AlignmentError, ValidationError
from brainscore.metrics.base import Ceiling, Metric
from brainscore.metrics.kernels.rdm import pearson
from brainscore.metrics.score import Score

__all__ = ["ResponseMatrix", "model_response_matrix", "human_response_matrix", "dprimes", "split_halves",
           "BehavioralConsistency", "BehavioralConsistencyCeiling", "I1", "I1n", "I2", "I2n", "ceil_split_scores",
           "i1", "i1n", "i2", "i2n", "i2n_ceiling", "i1n_ceiling"]


class ResponseMatrix:
    """Images x objects values with their labels (a plain container; rows and columns sorted).

    Attributes
    ----------
    images : ndarray of shape (n_images,)
        Stimulus ids, sorted.
    objects : ndarray of shape (n_objects,)
        Choice (distractor) labels, sorted.
    truth : ndarray of shape (n_images,)
        Object shown in each image.
    values : ndarray of shape (n_images, n_objects)
    """

    def __init__(self, images: np.ndarray, objects: np.ndarray, truth: np.ndarray, values: np.ndarray):
        self.images, self.objects, self.truth, self.values = images, objects, truth, values

    def truth_columns(self) -> np.ndarray:
        """Column of each image's truth among :attr:`objects`, -1 where it is not a column."""
        position = np.searchsorted(self.objects, self.truth)
        position = np.minimum(position, len(self.objects) - 1)
        return np.where(self.objects[position] == self.truth, position, -1)


def model_response_matrix(probabilities, truth_of: pd.Series, stimulus_coord: str = "stimulus_id",
                          choice_dim: str = "choice") -> ResponseMatrix:
    """Per image and distractor ``c``: ``p(c) / (p(c) + p(truth))``, NaN at the truth.

    Parameters
    ----------
    probabilities : DataAssembly of shape (n_presentations, n_objects)
        Model probabilities, the object labels as coordinate ``choice_dim``.
    truth_of : pandas.Series
        The object of each stimulus, indexed by stimulus id (from the human data).

    Returns
    -------
    ResponseMatrix
    """
    if not isinstance(probabilities, xr.DataArray) or choice_dim not in probabilities.dims:
        raise ValidationError(f"model probabilities must be an assembly with a {choice_dim!r} dim (one column per "
                              f"object label) and a presentation dim")
    (stimulus_dim,) = probabilities[stimulus_coord].dims
    probabilities = probabilities.transpose(stimulus_dim, choice_dim)
    labels = np.asarray(probabilities[choice_dim].values)
    column_order = np.argsort(labels, kind="stable")
    objects = labels[column_order]
    ids = np.asarray(probabilities[stimulus_coord].values)
    images, inverse = np.unique(ids, return_inverse=True)
    values = np.asarray(probabilities.values, dtype=float)[:, column_order]
    p = np.zeros((len(images), len(objects)))
    np.add.at(p, inverse, values)
    p /= np.bincount(inverse, minlength=len(images))[:, None]  # average repeated presentations
    missing = ~pd.Index(images).isin(truth_of.index)
    if missing.any():
        raise AlignmentError(f"{missing.sum()} stimuli of the model are not in the human data, e.g. "
                             f"{list(images[missing][:3])}")
    truth = truth_of.loc[images].to_numpy()
    matrix = ResponseMatrix(images, objects, truth, p)
    columns = matrix.truth_columns()
    if (columns < 0).any():
        raise ValidationError(f"the model gives no probability for objects {sorted(set(truth[columns < 0]))}; "
                              f"its choice labels are {list(objects)}")
    rows = np.arange(len(images))
    p_truth = p[rows, columns]
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = p / (p + p_truth[:, None])
    scores[rows, columns] = np.nan
    matrix.values = scores
    return matrix


def human_response_matrix(stimulus_ids, choices, truth, sample_obj, dist_obj) -> ResponseMatrix:
    """Per image and object ``c``: how often ``c`` was chosen when it was offered (NaN if never offered or the truth).

    Parameters
    ----------
    stimulus_ids, choices, truth, sample_obj, dist_obj : array-like of shape (n_trials,)
        One entry per trial. Columns are the labels that were chosen at least once.

    Returns
    -------
    ResponseMatrix
    """
    stimulus_ids, choices, truth, sample_obj, dist_obj = (np.asarray(a) for a in
                                                         (stimulus_ids, choices, truth, sample_obj, dist_obj))
    images, first, inverse = np.unique(stimulus_ids, return_index=True, return_inverse=True)
    objects = np.unique(choices)
    chosen = np.zeros((len(images), len(objects)))
    np.add.at(chosen, (inverse, np.searchsorted(objects, choices)), 1)
    offered = np.zeros_like(chosen)
    for option in (sample_obj, dist_obj):
        position = np.minimum(np.searchsorted(objects, option), len(objects) - 1)
        valid = objects[position] == option
        np.add.at(offered, (inverse[valid], position[valid]), 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.where(offered > 0, chosen / offered, np.nan)
    matrix = ResponseMatrix(images, objects, truth[first], rates)
    columns = matrix.truth_columns()
    rows = np.flatnonzero(columns >= 0)
    matrix.values[rows, columns[rows]] = np.nan
    return matrix


def dprimes(matrix: ResponseMatrix, normalize: bool, cap: float = 5.0) -> ResponseMatrix:
    """d' per (image, distractor), clipped to ±``cap``, optionally minus its (truth, distractor) mean.

    ``d'(i, c) = Φ⁻¹(1 - FA(i, c)) - Φ⁻¹(FA(c -> truth(i)))`` where ``FA(c -> t)`` is the mean
    false-alarm rate towards ``t`` over the images of object ``c`` (NaN when undefined).
    """
    values = matrix.values
    objects, truth = matrix.objects, matrix.truth
    truth_objects, truth_group = np.unique(truth, return_inverse=True)
    false_alarms = nan_group_mean(values, truth_group, len(truth_objects))  # [truth object, column]
    # for column c: the row of object c among the truth objects (-1 if no image shows c)
    position = np.minimum(np.searchsorted(truth_objects, objects), len(truth_objects) - 1)
    object_row = np.where(truth_objects[position] == objects, position, -1)
    truth_column = matrix.truth_columns()
    pair = false_alarms[np.maximum(object_row, 0)[None, :], np.maximum(truth_column, 0)[:, None]]
    pair[:, object_row < 0] = np.nan
    pair[truth_column < 0, :] = np.nan
    with np.errstate(invalid="ignore"):
        result = scipy.stats.norm.ppf(1 - values) - scipy.stats.norm.ppf(pair)
    result = np.clip(result, -cap, cap)
    if normalize:
        result = result - nan_group_mean(result, truth_group, len(truth_objects))[truth_group]
    return ResponseMatrix(matrix.images, objects, truth, result)


def split_halves(n: int, random_state: np.random.RandomState) -> tuple[np.ndarray, np.ndarray]:
    """Shuffle ``range(n)`` with ``random_state`` and cut it at ``n // 2``: (first half, second half)."""
    indices = np.arange(n)
    random_state.shuffle(indices)
    return indices[: n // 2], indices[n // 2:]


def _correlate(source: ResponseMatrix, target: ResponseMatrix, collapse: bool, skipna: bool,
               intersect: bool = False) -> float:
    """Pearson over the entries defined in ``target`` (and in ``source`` if ``skipna``), aligned by label."""
    if intersect:
        images = np.intersect1d(source.images, target.images)
        objects = np.intersect1d(source.objects, target.objects)
    else:
        images, objects = target.images, target.objects
        for name, wanted, have in (("stimuli", images, source.images), ("objects", objects, source.objects)):
            missing = ~np.isin(wanted, have)
            if missing.any():
                raise AlignmentError(f"the model has no responses for {missing.sum()} {name} of the human data, "
                                     f"e.g. {list(wanted[missing][:3])}")

    def select(matrix: ResponseMatrix) -> np.ndarray:
        rows, columns = np.searchsorted(matrix.images, images), np.searchsorted(matrix.objects, objects)
        values = matrix.values[np.ix_(rows, columns)]
        if collapse:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                values = np.nanmean(values, axis=1)
        return values.reshape(-1)

    s, t = select(source), select(target)
    keep = ~np.isnan(t)
    if skipna:
        keep &= ~np.isnan(s)
    elif np.isnan(s[keep]).any():
        raise ValidationError(f"the model's d' is undefined on {np.isnan(s[keep]).sum()} entries where the human "
                              f"data are defined (probabilities 0 for both objects?)")
    return pearson(s[keep], t[keep])


def _aggregate(values: list[float], **attrs) -> Score:
    values = np.asarray(values, dtype=float)
    raw = DataAssembly(values, dims=("split",), coords={"split": np.arange(len(values))})
    return Score.of(values.mean(), error=values.std(), raw=raw, **attrs)


class BehavioralConsistency(Metric):
    """I1/I2 consistency of model and human d' (Rajalingham et al. 2018); see the module docstring.

    Parameters
    ----------
    collapse_distractors : bool
        True for I1 (one d' per image, mean over distractors), False for I2.
    normalize : bool
        Subtract the mean d' of each (truth, distractor) pair (the ``n`` variants).
    repetitions : int
        Number of random halves of the human trials (2).
    random_state : int
        Seed of the ``RandomState`` created on every call (0).
    cap : float
        d' is clipped to ±cap (5).
    stimulus_coord, choice_dim : str

    Returns (``__call__(source, target)``)
    --------------------------------------
    Score
        Mean Pearson r over repetitions; ``error`` = std (ddof=0); ``raw`` = per repetition
        (dim ``split``).
    """

    def __init__(self, collapse_distractors: bool, normalize: bool, repetitions: int = 2, random_state: int = 0,
                 cap: float = 5.0, stimulus_coord: str = "stimulus_id", choice_dim: str = "choice"):
        self.collapse_distractors = collapse_distractors
        self.normalize = normalize
        self.repetitions = repetitions
        self.random_state = random_state
        self.cap = cap
        self.stimulus_coord = stimulus_coord
        self.choice_dim = choice_dim

    def _trial_columns(self, target) -> dict[str, np.ndarray]:
        needed = (self.stimulus_coord, "truth", "sample_obj", "dist_obj")
        missing = [c for c in needed if c not in target.coords]
        if missing:
            raise ValidationError(f"human trials need coordinates {list(needed)}; missing {missing}")
        columns = {c: np.asarray(target[c].values) for c in needed}
        columns["choice"] = np.asarray(target.values).reshape(-1)
        return columns

    def _human_dprimes(self, columns: dict[str, np.ndarray], trials: np.ndarray) -> ResponseMatrix:
        matrix = human_response_matrix(*(columns[c][trials] for c in
                                         (self.stimulus_coord, "choice", "truth", "sample_obj", "dist_obj")))
        return dprimes(matrix, normalize=self.normalize, cap=self.cap)

    def __call__(self, source, target) -> Score:
        columns = self._trial_columns(target)
        truth_of = pd.Series(columns["truth"], index=columns[self.stimulus_coord])
        truth_of = truth_of[~truth_of.index.duplicated()]
        model = dprimes(model_response_matrix(source, truth_of, self.stimulus_coord, self.choice_dim),
                        normalize=self.normalize, cap=self.cap)
        random_state = np.random.RandomState(self.random_state)
        values = []
        for _ in range(self.repetitions):
            half, _ = split_halves(len(columns["choice"]), random_state)
            values.append(_correlate(model, self._human_dprimes(columns, half), self.collapse_distractors,
                                     skipna=False))
        return _aggregate(values)

    @staticmethod
    def aggregate(scores) -> Score:
        """Scores per repetition (dim ``split``) as one: their mean, ``error`` their std (ddof=0), as this metric
        aggregates its own (the reference's ``aggregate``, which its Rajalingham2018 benchmarks call)."""
        score = Score(scores.mean("split"))
        score.attrs["error"] = float(scores.std("split"))
        return score

    def ceiling(self, assembly, skipna: bool = True) -> Score:
        """Split-half consistency of the human d'; see :class:`BehavioralConsistencyCeiling`."""
        return BehavioralConsistencyCeiling(self, skipna=skipna)(assembly)


class BehavioralConsistencyCeiling(Ceiling):
    """Split-half ceiling of I1/I2: Pearson between the d' of two random halves of the human trials.

    The halves are those the metric draws (same seed, same order); no Spearman-Brown correction.

    Parameters
    ----------
    metric : BehavioralConsistency
        Whose settings (I1/I2, normalisation, repetitions, seed) the ceiling uses.
    skipna : bool
        Drop entries undefined in either half (True, as the Rajalingham2018 benchmarks call it).

    Returns (``__call__(assembly)``)
    --------------------------------
    Score
        Mean over repetitions; ``error`` = std; ``raw`` per repetition.
    """

    def __init__(self, metric: BehavioralConsistency, skipna: bool = True):
        self.metric = metric
        self.skipna = skipna

    def __call__(self, assembly) -> Score:
        columns = self.metric._trial_columns(assembly)
        random_state = np.random.RandomState(self.metric.random_state)
        values = []
        for _ in range(self.metric.repetitions):
            first, second = split_halves(len(columns["choice"]), random_state)
            values.append(_correlate(self.metric._human_dprimes(columns, first),
                                     self.metric._human_dprimes(columns, second),
                                     self.metric.collapse_distractors, skipna=self.skipna, intersect=True))
        return _aggregate(values)


def I1(**kwargs) -> BehavioralConsistency:
    """I1: one d' per image, not normalised."""
    return BehavioralConsistency(collapse_distractors=True, normalize=False, **kwargs)


def I1n(**kwargs) -> BehavioralConsistency:
    """I1n: one d' per image, normalised by the (truth, distractor) means."""
    return BehavioralConsistency(collapse_distractors=True, normalize=True, **kwargs)


def I2(**kwargs) -> BehavioralConsistency:
    """I2: one d' per (image, distractor), not normalised."""
    return BehavioralConsistency(collapse_distractors=False, normalize=False, **kwargs)


def I2n(**kwargs) -> BehavioralConsistency:
    """I2n: one d' per (image, distractor), normalised (Rajalingham et al. 2018's main metric)."""
    return BehavioralConsistency(collapse_distractors=False, normalize=True, **kwargs)


def ceil_split_scores(score: Score, ceiling: Score) -> Score:
    """Ceil an I1/I2 score per repetition: ``mean_split(score_split / sqrt(ceiling_split))``.

    As the Rajalingham2018 benchmarks do. Both must come from the same number of repetitions.

    Returns
    -------
    Score
        Mean; ``error`` = std over repetitions; ``raw`` = the unceiled score; ``ceiling``.
    """
    scores, ceilings = np.asarray(score.raw.values, dtype=float), np.asarray(ceiling.raw.values, dtype=float)
    if scores.shape != ceilings.shape:
        raise ValidationError(f"score and ceiling have different repetitions: {scores.shape} vs {ceilings.shape}")
    ceiled = scores / np.sqrt(ceilings)
    return Score.of(ceiled.mean(), error=ceiled.std(), raw=score, ceiling=ceiling)


# factories of the registered identifiers
i1, i1n, i2, i2n = I1, I1n, I2, I2n


def i2n_ceiling(skipna: bool = True, **kwargs) -> BehavioralConsistencyCeiling:
    """Factory of the ``i2n`` ceiling."""
    return BehavioralConsistencyCeiling(I2n(**kwargs), skipna=skipna)


def i1n_ceiling(skipna: bool = True, **kwargs) -> BehavioralConsistencyCeiling:
    """Factory of the ``i1n`` ceiling."""
    return BehavioralConsistencyCeiling(I1n(**kwargs), skipna=skipna)
