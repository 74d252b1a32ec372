"""Behavioural benchmarks whose task a model learns from labelled examples, asked about images it was not fitted on.

Some experiments tell the subjects what to report about an image (its shape, or its texture: Geirhos et
al. 2019's instructed cue-conflict experiments). A model with a fixed output (e.g. ImageNet classes) cannot be
told; it is given the task as a readout instead, through the :class:`~brainscore.models.BrainModel` task
interface (Brain-Score's ``probabilities`` task, Rajalingham et al. 2018): the benchmark fits it on
*fitting stimuli* labelled with what the subjects were asked to report, then asks it about other images.

:class:`ReadoutTaskBenchmark` runs this as a cross-validation over folds of the stimulus set: in fold ``k`` the
readout is fitted on the stimuli of the other folds (``start_task("probabilities", fitting_stimuli)``, the
label in ``image_label``) and its answer to each stimulus of fold ``k`` (the most probable label) is kept, so
every stimulus is answered once, by a readout that never saw it. The folds (:func:`exemplar_folds`) keep
every *exemplar* (e.g. the source photograph of a shape, or of a texture, that several images share) within
one fold, so that the answer cannot come from having seen the same exemplar with its label; they are seeded
and balanced per label. The held-out answers are then scored against the human trials as
:class:`~brainscore.benchmarks.behavioral.ErrorConsistencyBenchmark` scores a model's answers: ``raw =
metric(answers, trials)``, the ceiling the metric's statistic between subjects, ``score = raw / ceiling``
clipped to [0, 1].

A model that already answers with labels (stored answers, :class:`~brainscore.models.precomputed.
PrecomputedFeatures`) gives its own answers in every fold; its held-out answers are its answers.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from brainscore.benchmarks.base import Presentation
from brainscore.benchmarks.behavioral import ErrorConsistencyBenchmark, with_stimulus_columns
from brainscore.benchmarks.screen import place_on_screen
from brainscore.data.assemblies import BehavioralAssembly, DataAssembly
from brainscore.data.stimuli import StimulusSet
from brainscore.errors import ValidationError
from brainscore.metrics.score import Score
from brainscore.models.interface import BrainModel, Task

__all__ = ["exemplar_folds", "ReadoutTaskBenchmark"]


def exemplar_folds(stimulus_set: pd.DataFrame, label_coord: str, group_coord: str, n_folds: int,
                   seed: int) -> np.ndarray:
    """The fold of each stimulus: whole exemplars dealt to folds, label by label, in a seeded order.

    For each label (sorted), its exemplars (the distinct values of ``group_coord`` among its stimuli) are
    shuffled with ``numpy.random.default_rng(seed)`` and dealt to the folds in turn, the deal continuing
    from one label to the next; a stimulus goes to its exemplar's fold. Every fold then holds whole
    exemplars, about ``1 / n_folds`` of each label's exemplars, and about as many exemplars as the others.

    Parameters
    ----------
    stimulus_set : DataFrame (e.g. a StimulusSet)
        One row per stimulus with the columns ``label_coord`` and ``group_coord``.
    label_coord : str
        The label a readout is fitted on (e.g. ``original_image_category``, the shape category).
    group_coord : str
        The exemplar each stimulus shows of its label (e.g. ``original_image``: the shape's photograph);
        an exemplar belongs to one label.
    n_folds : int
        At least 2, and at most the number of exemplars of the label that has the fewest.
    seed : int

    Returns
    -------
    ndarray of int, shape (n_stimuli,)
        In ``[0, n_folds)``, in the row order of ``stimulus_set``.

    Raises
    ------
    ValidationError
        If a column is missing, an exemplar spans several labels, or a label has fewer exemplars than
        folds (some fold would then test none of its stimuli).
    """
    for column in (label_coord, group_coord):
        if column not in stimulus_set.columns:
            raise ValidationError(f"the stimuli have no {column!r} column to build folds from; columns are "
                                  f"{list(stimulus_set.columns)}")
    if not isinstance(n_folds, (int, np.integer)) or n_folds < 2:
        raise ValidationError(f"cross-validation needs at least 2 folds, got {n_folds!r}")
    labels = stimulus_set[label_coord].astype(str).to_numpy()
    groups = stimulus_set[group_coord].astype(str).to_numpy()
    labels_of_group = pd.Series(labels).groupby(groups).nunique()
    if (labels_of_group > 1).any():
        raise ValidationError(f"exemplars {list(labels_of_group[labels_of_group > 1].index[:5])} ({group_coord}) "
                              f"appear with several {label_coord} labels; an exemplar must belong to one label")
    rng = np.random.default_rng(seed)
    fold_of_group: dict[str, int] = {}
    dealt = 0
    for label in sorted(set(labels)):
        exemplars = np.unique(groups[labels == label])
        if len(exemplars) < n_folds:
            raise ValidationError(f"label {label!r} has {len(exemplars)} exemplars ({group_coord}), fewer than the "
                                  f"{n_folds} folds: some fold would not test it; use at most {len(exemplars)} folds")
        for exemplar in exemplars[rng.permutation(len(exemplars))]:
            fold_of_group[exemplar] = dealt % n_folds
            dealt += 1
    return np.array([fold_of_group[group] for group in groups], dtype=int)


class ReadoutTaskBenchmark(ErrorConsistencyBenchmark):
    """The subjects' task given to a model through a readout, cross-validated over exemplar folds (module docstring).

    Parameters
    ----------
    identifier, version, parent, bibtex
        As :class:`~brainscore.benchmarks.base.BenchmarkBase`.
    assembly : BehavioralAssembly or callable () -> BehavioralAssembly
        The human trials that score the model (``stimulus_id``, ``subject``, ``truth_coord``), the stimulus
        set in ``attrs["stimulus_set"]``: every stimulus of it is used to fit and answered, the trials'
        stimuli (which may be fewer) are scored.
    label_coord : str
        The stimulus-set column the readout is fitted to report (what the subjects were told to report).
    group_coord : str
        The stimulus-set column of the exemplar each stimulus shows of its label (see :func:`exemplar_folds`).
    truth_coord : str
        The trials' coordinate of the correct answer; it must equal each trial's stimulus's ``label_coord``.
        The model's answers carry it too (the metrics judge both against it).
    metric : callable (model answers, human trials) -> Score
        E.g. ``load_metric("accuracy_distance", truth_coord=...)`` or ``load_metric("error_consistency",
        truth_coord=...)``.
    ceiling : callable (human trials) -> Score
        The same statistic between subjects, e.g. ``load_ceiling("accuracy_distance", truth_coord=...)``.
    visual_degrees : float
        The stimuli's width in the experiment; they are placed on the model's screen.
    n_folds : int
        Folds of the cross-validation (3).
    seed : int
        Seed of :func:`exemplar_folds`.
    number_of_trials : int
        Trials per image (1: one answer per stimulus is needed).
    describe : callable (answers) -> dict, optional
        Further numbers about the model's held-out answers, added to the score's ``attrs`` (e.g. the
        fractions of shape and texture answers).

    The score is ``raw / ceiling`` clipped to [0, 1] (``attrs``: ``raw``, ``ceiling``, ``unbounded``), with
    ``accuracy`` (the model's held-out accuracy on the scored stimuli), ``human_accuracy`` (the mean of the
    subjects' accuracies), ``n_folds``, ``fold_seed``, ``choices`` (the held-out answers, with their ``fold``).
    """

    def __init__(self, identifier: str, version: int, assembly, *, label_coord: str, group_coord: str,
                 truth_coord: str, metric: Callable[[DataAssembly, DataAssembly], Score],
                 ceiling: Callable[[DataAssembly], Score], visual_degrees: float, n_folds: int = 3, seed: int = 0,
                 number_of_trials: int = 1, parent: str = "behavior_vision", bibtex: str = "",
                 describe: Callable[[DataAssembly], Mapping[str, Any]] | None = None):
        super().__init__(identifier=identifier, version=version, assembly=assembly, visual_degrees=visual_degrees,
                         metric=metric, ceiling=ceiling, number_of_trials=number_of_trials, parent=parent,
                         bibtex=bibtex)
        self.label_coord = label_coord
        self.group_coord = group_coord
        self.truth_coord = truth_coord
        self.n_folds = n_folds
        self.seed = seed
        self.describe = describe
        self._folds: np.ndarray | None = None
        self._checked = False

    # ---- data ---------------------------------------------------------------------------------
    @property
    def assembly(self) -> DataAssembly:
        """The human trials, checked once (:meth:`_check_trials`)."""
        assembly = super().assembly
        if not self._checked:
            self._check_trials(assembly)
            self._checked = True
        return assembly

    def _check_trials(self, assembly: DataAssembly) -> None:
        """Each trial's correct answer (``truth_coord``) must be its stimulus's ``label_coord``.

        Raises
        ------
        ValidationError
            If the coordinate is missing or a trial's correct answer differs from its stimulus's label.
        """
        if self.truth_coord not in assembly.coords:
            raise ValidationError(f"{self.identifier}: the human trials have no {self.truth_coord!r} coordinate")
        stimuli = assembly.attrs["stimulus_set"]
        label_of = pd.Series(stimuli[self.label_coord].astype(str).to_numpy(),
                             index=stimuli["stimulus_id"].astype(str).to_numpy())
        expected = label_of.reindex(np.asarray(assembly["stimulus_id"].values).astype(str)).to_numpy()
        if not np.array_equal(expected, np.asarray(assembly[self.truth_coord].values).astype(str)):
            raise ValidationError(f"{self.identifier}: the trials' {self.truth_coord!r} differs from their "
                                  f"stimuli's {self.label_coord!r}; the readout would be fitted on other labels "
                                  f"than those the subjects are judged by")

    def _data_key(self) -> dict[str, Any]:
        key = super()._data_key()
        key[self.truth_coord] = np.asarray(self.assembly[self.truth_coord].values).astype(str)
        key["ceiling_statistic"] = repr(self._ceiling_computation)
        return key

    @property
    def folds(self) -> np.ndarray:
        """The fold of each stimulus of :attr:`stimulus_set`, in its row order (:func:`exemplar_folds`)."""
        if self._folds is None:
            self._folds = exemplar_folds(self.stimulus_set, self.label_coord, self.group_coord, self.n_folds,
                                         self.seed)
        return self._folds

    @property
    def labels(self) -> list[str]:
        """The labels the readout is fitted on: the sorted values of ``label_coord``."""
        return sorted(set(self.stimulus_set[self.label_coord].astype(str)))

    def fitting_stimuli(self, fold: int, stimuli: StimulusSet | None = None) -> StimulusSet:
        """The stimuli outside ``fold`` (rows of ``stimuli``, default :attr:`stimulus_set`), labelled in ``image_label``.

        Raises
        ------
        ValidationError
            If they lack a label (a fold held out all of its exemplars).
        """
        stimuli = self.stimulus_set if stimuli is None else stimuli
        if not np.array_equal(stimuli["stimulus_id"].to_numpy(), self.stimulus_set["stimulus_id"].to_numpy()):
            raise ValidationError(f"{self.identifier}: the stimuli to fit on must be the benchmark's stimulus set "
                                  f"(placed or not), in its row order")
        keep = self.folds != fold
        fitting = StimulusSet(stimuli[keep].assign(image_label=stimuli[self.label_coord].astype(str).to_numpy()[keep]),
                              identifier=stimuli.identifier, stimulus_paths=stimuli.stimulus_paths)
        missing = sorted(set(self.labels) - set(fitting["image_label"]))
        if missing:
            raise ValidationError(f"{self.identifier}: fold {fold}'s fitting stimuli lack the labels {missing}")
        return fitting

    # ---- the experiment -----------------------------------------------------------------------
    def presentations(self, candidate: BrainModel) -> list[Presentation]:
        """Per fold: the readout fitted on the other folds' stimuli, then every stimulus shown (placed on
        ``candidate``'s screen); the answers to the fold's own stimuli are kept (:meth:`choices`).

        Every fold shows all the stimuli, so that a model reads the fitting images' features from the
        same pass (:class:`~brainscore.models.commitment.ModelCommitment` does): the network runs once.
        """
        stimuli = place_on_screen(self.stimulus_set, target_visual_degrees=candidate.visual_degrees(),
                                  source_visual_degrees=self.visual_degrees)
        return [Presentation(stimuli, number_of_trials=self.number_of_trials, task=Task.probabilities,
                             fitting_stimuli=self.fitting_stimuli(fold, stimuli)) for fold in range(self.n_folds)]

    def choices(self, candidate: BrainModel) -> BehavioralAssembly:
        """The held-out answer to every stimulus (the most probable label of the readout of its fold's
        fitting stimuli), with the stimulus-set columns, ``fold`` and ``truth_coord`` as coordinates."""
        from brainscore.progress import stage

        ids = self.stimulus_set["stimulus_id"].astype(str).to_numpy()
        answers = np.empty(len(ids), dtype=object)
        with stage(f"{self.identifier}: {self.n_folds} readouts, each asked about the stimuli it was not fitted on",
                   total=self.n_folds, unit="fold") as progress:
            for fold, shown in enumerate(self.presentations(candidate)):
                held_out = self.folds == fold
                answers[held_out] = _answers_to(shown.show(candidate), ids[held_out], self.identifier)
                progress.update()
        choices = BehavioralAssembly(answers, dims=("presentation",),
                                     coords={"stimulus_id": ("presentation", ids),
                                             "fold": ("presentation", self.folds.copy())})
        choices = with_stimulus_columns(choices, self.stimulus_set, [c for c in self.stimulus_set.columns
                                                                     if c not in ("stimulus_id", "filename")])
        return choices.assign_coords({self.truth_coord: ("presentation",
                                                         self.stimulus_set[self.label_coord].astype(str).to_numpy())})

    def score_choices(self, choices: DataAssembly) -> Score:
        """:class:`ErrorConsistencyBenchmark`'s score of the held-out answers, with the accuracies and
        :attr:`describe`'s numbers in ``attrs``."""
        score = super().score_choices(choices)
        trials = self.assembly
        truth = np.asarray(trials[self.truth_coord].values).astype(str)
        correct = pd.Series(np.asarray(trials.values).astype(str) == truth)
        subjects = np.asarray(trials["subject"].values) if "subject" in trials.coords else np.zeros(len(truth))
        answer_of = pd.Series(np.asarray(choices.values).astype(str),
                              index=np.asarray(choices["stimulus_id"].values).astype(str))
        scored = np.unique(np.asarray(trials["stimulus_id"].values).astype(str))
        truth_of = pd.Series(truth, index=np.asarray(trials["stimulus_id"].values).astype(str))
        truth_of = truth_of[~truth_of.index.duplicated()]
        score.attrs["accuracy"] = float(np.mean(answer_of.reindex(scored).to_numpy() == truth_of.reindex(scored).to_numpy()))
        score.attrs["human_accuracy"] = float(correct.groupby(subjects).mean().mean())
        score.attrs["n_folds"], score.attrs["fold_seed"] = int(self.n_folds), int(self.seed)
        for name, value in (self.describe(choices) if self.describe is not None else {}).items():
            score.attrs[name] = value
        return score


def _answers_to(answers: DataAssembly, stimulus_ids: np.ndarray, identifier: str) -> np.ndarray:
    """The label answered to each of ``stimulus_ids``: the most probable ``choice`` of probabilities
    (``presentation x choice``), or the answer itself (one label per presentation).

    Raises
    ------
    ValidationError
        If the answers lack a stimulus, repeat one, or are neither labels nor probabilities.
    """
    if "stimulus_id" not in answers.coords or "presentation" not in answers.dims:
        raise ValidationError(f"{identifier}: the model's answers need a presentation dim with stimulus_id, got dims "
                              f"{answers.dims}")
    if "choice" in answers.dims:
        answers = answers.transpose("presentation", "choice")
        labels = np.asarray(answers["choice"].values).astype(str)
        values = labels[np.argmax(np.asarray(answers.values, dtype=float), axis=1)]
    elif answers.ndim == 1:
        values = np.asarray(answers.values).astype(str)
    else:
        raise ValidationError(f"{identifier}: the model answered with dims {answers.dims}; expected probabilities "
                              f"(presentation x choice) or one label per presentation")
    answered = pd.Series(values, index=np.asarray(answers["stimulus_id"].values).astype(str))
    if not answered.index.is_unique:
        raise ValidationError(f"{identifier}: the model answered some stimuli more than once; one answer per stimulus "
                              f"is scored (number_of_trials=1)")
    missing = np.setdiff1d(stimulus_ids, answered.index)
    if len(missing):
        raise ValidationError(f"{identifier}: the model gave no answer to {len(missing)} stimuli, e.g. "
                              f"{list(missing[:3])}")
    return answered.reindex(stimulus_ids).to_numpy()
