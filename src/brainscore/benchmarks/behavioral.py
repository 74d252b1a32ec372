"""Behavioural benchmarks: the model does the subjects' task, its answers are compared with theirs.

All benchmarks here use the label task (Brain-Score's ``BrainModel.Task.label``): the model is
told the set of labels it may answer (the sorted categories of the stimulus set, unless given),
shown the stimuli (placed on its screen at the experiment's visual angle) and answers one label
per trial. Three families:

- :class:`ErrorConsistencyBenchmark` (Geirhos, Meding & Wichmann 2020): Cohen's kappa between the
  model's and each human's correctness per trial, ``raw`` = |mean over conditions and subjects|;
  ceiling = the same statistic over all pairs of human subjects; ``score = raw / ceiling`` clipped
  to [0, 1] (the reference's ``bound_score``).
- :class:`AccuracyBenchmark` (engineering ``-top1``): fraction of trials answered with the true
  label; ceiling 1.
- :class:`ShapeBiasBenchmark` (Geirhos et al. 2019; Hermann, Chen & Kornblith 2020): on the
  cue-conflict trials, the fraction of answers naming the shape category (``shape_match``), the
  texture category (``texture_match``), or their ratio ``shape_bias``; ceiling 1.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from brainscore.benchmarks.base import BenchmarkBase, Presentation, check_metric_call, takes_device
from brainscore.benchmarks.screen import place_on_screen
from brainscore.data.assemblies import DataAssembly, presentation_order
from brainscore.data.stimuli import StimulusSet
from brainscore.errors import ValidationError
from brainscore.metrics.bootstrap import BootstrapSamples, resample_counts, unit_sums
from brainscore.metrics.score import Score
from brainscore.models.interface import BrainModel, Task


def _load(source):
    return source() if callable(source) and not isinstance(source, (DataAssembly, StimulusSet)) else source


def with_stimulus_columns(choices: DataAssembly, stimulus_set: StimulusSet, columns: Sequence[str]) -> DataAssembly:
    """``choices`` with the stimulus set's ``columns`` as presentation coordinates, looked up by ``stimulus_id``.

    Columns the choices already carry are kept as they are.

    Raises
    ------
    AlignmentError
        If a choice names a stimulus the stimulus set lacks.
    """
    missing = [c for c in columns if c not in choices.coords]
    if not missing:
        return choices
    frame = pd.DataFrame(stimulus_set).drop_duplicates("stimulus_id")
    position = presentation_order(frame["stimulus_id"].astype(str).to_numpy(),
                                  np.asarray(choices["stimulus_id"].values).astype(str), "stimulus_id",
                                  repeats="first", entry="row",
                                  sides=(f"stimulus set {stimulus_set.identifier!r}", "answers"))
    return choices.assign_coords({c: ("presentation", frame[c].to_numpy()[position]) for c in missing})


class LabelTaskBenchmark(BenchmarkBase):
    """The label task on a stimulus set; subclasses say how the answers are scored.

    Parameters
    ----------
    identifier, version, parent, bibtex : see :class:`~brainscore.benchmarks.base.BenchmarkBase`
    stimulus_set : StimulusSet or callable () -> StimulusSet
    visual_degrees : float or None
        Visual angle of the stimuli in the experiment; None shows the images as they are, filling
        the model's field of view (as the reference's Hermann2020 benchmarks do).
    number_of_trials : int
    ceiling_func : callable () -> Score, or None
        None: ceiling 1.
    labels : sequence of str, optional
        The labels the model may answer; default the sorted unique values of ``label_coord``.
    label_coord : str
        Stimulus-set column of the true label (``truth``).
    """

    def __init__(self, identifier: str, version: int, stimulus_set, visual_degrees: float | None,
                 number_of_trials: int, ceiling_func: Callable[[], Score] | None, parent: str, bibtex: str = "",
                 labels: Sequence[str] | None = None, label_coord: str = "truth",
                 ceiling_key: Callable[[], dict[str, Any]] | None = None):
        super().__init__(identifier=identifier, version=version, ceiling_func=ceiling_func, parent=parent,
                         bibtex=bibtex, ceiling_key=ceiling_key)
        self._stimuli_source = stimulus_set
        self._stimulus_set: StimulusSet | None = None
        self.visual_degrees = visual_degrees
        self.number_of_trials = number_of_trials
        self._labels = list(labels) if labels is not None else None
        self.label_coord = label_coord

    @property
    def stimulus_set(self) -> StimulusSet:
        if self._stimulus_set is None:
            self._stimulus_set = _load(self._stimuli_source)
        return self._stimulus_set

    @property
    def labels(self) -> list[str]:
        """The label set of the task: sorted unique true labels of the stimuli, unless given."""
        if self._labels is None:
            if self.label_coord not in self.stimulus_set.columns:
                raise ValidationError(f"{self.identifier}: the stimulus set has no {self.label_coord!r} column")
            self._labels = sorted(set(map(str, self.stimulus_set[self.label_coord])))
        return self._labels

    def presentations(self, candidate: BrainModel) -> list[Presentation]:
        """The stimuli (placed on ``candidate``'s screen, unless the benchmark shows them as the files are) for
        the label task over :attr:`labels`."""
        labels = self.labels
        stimuli = self.stimulus_set
        if self.visual_degrees is not None:
            stimuli = place_on_screen(stimuli, target_visual_degrees=candidate.visual_degrees(),
                                      source_visual_degrees=self.visual_degrees)
        return [Presentation(stimuli, number_of_trials=self.number_of_trials, task=Task.label, fitting_stimuli=labels)]

    def choices(self, candidate: BrainModel) -> DataAssembly:
        """Run the label task on ``candidate``: its answers, one per presentation, with the stimulus columns."""
        shown, = self.presentations(candidate)
        answers = shown.show(candidate)
        if "presentation" not in answers.dims or "stimulus_id" not in answers.coords:
            raise ValidationError(f"{self.identifier}: the model's answers need a presentation dim with stimulus_id, "
                                  f"got dims {answers.dims}")
        if answers.ndim != 1:
            answers = answers.squeeze(drop=True)
        return with_stimulus_columns(answers, self.stimulus_set, [c for c in self.stimulus_set.columns
                                                                  if c not in ("stimulus_id", "filename")])

    @takes_device
    def __call__(self, candidate: BrainModel) -> Score:
        """Run the task on ``candidate`` and score its answers (:meth:`score_choices`)."""
        from brainscore.progress import stage

        choices = self.choices(candidate)
        with stage(f"{self.identifier}: comparing {choices.sizes.get('presentation', len(choices))} model trials "
                   f"with the data", unit="trial"):
            return self.score_choices(choices)

    def score_choices(self, choices: DataAssembly) -> Score:  # pragma: no cover - abstract
        """Score answers already given (one per presentation, ``stimulus_id`` and stimulus columns as coords)."""
        raise NotImplementedError

    def _finish(self, score: Score, choices: DataAssembly | None = None) -> Score:
        score.attrs["benchmark_identifier"] = self.identifier
        score.attrs["benchmark_version"] = self.version
        if choices is not None:
            score.attrs["choices"] = choices  # the model's answers, for the bootstrap over images
        return score

    def _units(self, result: Score) -> tuple[DataAssembly, np.ndarray] | None:
        """The model's answers and the sorted images the bootstrap resamples (None if no answers were kept)."""
        choices = result.attrs.get("choices")
        if choices is None or "stimulus_id" not in getattr(choices, "coords", {}):
            return None
        return choices, np.unique(np.asarray(choices["stimulus_id"].values).astype(str))

    @takes_device
    def bootstrap(self, result: Score, resamples: int = 1000, seed: int = 0) -> BootstrapSamples | None:
        """The score on ``resamples`` bootstrap resamples of the images (with all of an image's trials).

        The unit is the image: the experiment sampled images, and a model's (or subject's) trials on
        one image are not independent. The answers are fixed (no model is re-run); the statistic is
        recomputed with each resample's image weights. Returns None where the answers were not kept.
        """
        found = self._units(result)
        if found is None:
            return None
        choices, units = found
        weights = resample_counts(len(units), resamples, seed)
        return self._bootstrap(choices, units, weights)

    def _bootstrap(self, choices: DataAssembly, units: np.ndarray, weights: np.ndarray) -> BootstrapSamples | None:
        return None


class ErrorConsistencyBenchmark(LabelTaskBenchmark):
    """Error consistency with human subjects (Geirhos et al. 2020), ceiled by human-human consistency.

    Parameters
    ----------
    identifier, version, parent, bibtex, visual_degrees, number_of_trials, labels
        As :class:`LabelTaskBenchmark`.
    assembly : BehavioralAssembly or callable () -> BehavioralAssembly
        Human trials (``stimulus_id``, ``truth``, ``condition``, ``subject``), the stimulus set in
        ``attrs["stimulus_set"]``.
    metric : callable (model choices, human trials) -> Score
        E.g. ``load_metric("error_consistency")``.
    ceiling : callable (human trials) -> Score
        E.g. ``load_ceiling("error_consistency")``: the same statistic over pairs of subjects.

    The score is ``raw / ceiling`` clipped to [0, 1], with ``attrs["raw"]`` (the metric's score,
        kappas per condition and subject in its ``raw``) and ``attrs["ceiling"]``.
    """

    def __init__(self, identifier: str, version: int, assembly, visual_degrees: float | None, *,
                 metric: Callable[[DataAssembly, DataAssembly], Score], ceiling: Callable[[DataAssembly], Score],
                 number_of_trials: int = 1, parent: str = "behavior_vision", bibtex: str = "",
                 labels: Sequence[str] | None = None):
        self._assembly_source = assembly
        self._assembly: DataAssembly | None = None
        check_metric_call(identifier, metric, "metric(choices, assembly)", positional=2,
                          hint="Use a metric of answers against the data's, e.g. load_metric('error_consistency').")
        self.metric = metric
        self._ceiling_computation = ceiling
        super().__init__(identifier=identifier, version=version, stimulus_set=lambda: self.assembly.attrs["stimulus_set"],
                         visual_degrees=visual_degrees, number_of_trials=number_of_trials,
                         ceiling_func=self._compute_ceiling, parent=parent, bibtex=bibtex, labels=labels,
                         ceiling_key=self._data_key)

    @property
    def assembly(self) -> DataAssembly:
        """The human trials."""
        if self._assembly is None:
            self._assembly = _load(self._assembly_source)
        return self._assembly

    def _compute_ceiling(self) -> Score:
        return self._ceiling_computation(self.assembly)

    def _data_key(self) -> dict[str, Any]:
        assembly = self.assembly
        return {name: np.asarray(assembly[name].values).astype(str)
                for name in ("stimulus_id", "choice", "truth", "condition", "subject") if name in assembly.coords}

    def score_choices(self, choices: DataAssembly) -> Score:
        from brainscore.metrics.normalisation import bound_score, ceil_score

        raw = self.metric(choices, self.assembly)
        score = bound_score(ceil_score(raw, self.ceiling))
        return self._finish(score, choices)

    def _units(self, result: Score) -> tuple[DataAssembly, np.ndarray] | None:
        found = super()._units(result)
        if found is None:
            return None
        humans = np.asarray(self.assembly["stimulus_id"].values).astype(str)
        return found[0], np.unique(np.concatenate([found[1], humans]))

    def _bootstrap(self, choices: DataAssembly, units: np.ndarray, weights: np.ndarray) -> BootstrapSamples | None:
        """Model and human trials resampled by image; the ceiling (human-human) on the same resamples."""
        metric_bootstrap = getattr(self.metric, "bootstrap", None)
        ceiling_bootstrap = getattr(self._ceiling_computation, "bootstrap", None)
        if metric_bootstrap is None:
            return None
        raw = metric_bootstrap(choices, self.assembly, weights, units)
        if ceiling_bootstrap is not None:
            ceiling = ceiling_bootstrap(self.assembly, weights, units)
            method = "trials resampled by image; ceiling (human-human) recomputed on the same resamples"
        else:
            ceiling, method = np.full(len(raw), float(self.ceiling)), "trials resampled by image; ceiling held fixed"
        with np.errstate(invalid="ignore", divide="ignore"):
            ceiled = np.clip(raw / ceiling, 0.0, 1.0)
        return BootstrapSamples(score=ceiled, ceiling=ceiling if ceiling_bootstrap is not None else None,
                                unit="image", method=method)


class AccuracyBenchmark(LabelTaskBenchmark):
    """Fraction of trials answered with the true label (engineering ``-top1``); ceiling 1.

    Parameters
    ----------
    As :class:`LabelTaskBenchmark` (without ``ceiling_func``); ``number_of_trials`` 10 as the reference.
    metric : callable (answers, true labels) -> Score
        E.g. ``load_metric("accuracy")``, called on two arrays of strings of one entry per trial.
    """

    def __init__(self, identifier: str, version: int, stimulus_set, visual_degrees: float | None, *,
                 metric: Callable[[np.ndarray, np.ndarray], Score], number_of_trials: int = 10,
                 parent: str = "engineering_vision", bibtex: str = "", labels: Sequence[str] | None = None,
                 label_coord: str = "truth"):
        super().__init__(identifier=identifier, version=version, stimulus_set=stimulus_set,
                         visual_degrees=visual_degrees, number_of_trials=number_of_trials, ceiling_func=None,
                         parent=parent, bibtex=bibtex, labels=labels, label_coord=label_coord)
        check_metric_call(identifier, metric, "metric(answers, true_labels)", positional=2,
                          hint="Use a metric of answers against labels, e.g. load_metric('accuracy').")
        self.metric = metric

    def score_choices(self, choices: DataAssembly) -> Score:
        """Accuracy of every answer (all trials) against its stimulus' true label."""
        from brainscore.metrics.normalisation import ceil_score

        truth = np.asarray(choices[self.label_coord].values).astype(str)
        raw = self.metric(np.asarray(choices.values).astype(str), truth)
        return self._finish(ceil_score(raw, self.ceiling), choices)

    def _bootstrap(self, choices: DataAssembly, units: np.ndarray, weights: np.ndarray) -> BootstrapSamples:
        """Accuracy on image resamples: resampled correct trials / resampled trials (ceiling 1, fixed)."""
        correct = np.asarray(choices.values).astype(str) == np.asarray(choices[self.label_coord].values).astype(str)
        sums = unit_sums(np.asarray(choices["stimulus_id"].values), units,
                         np.stack([correct, np.ones(len(correct))], axis=1))
        hits, trials = (weights @ sums).T
        return BootstrapSamples(score=hits / trials / float(self.ceiling), ceiling=None, unit="image",
                                method="trials resampled by image (all trials of an image together)")


class ShapeBiasBenchmark(LabelTaskBenchmark):
    """Shape bias, shape match or texture match on cue-conflict images (Geirhos et al. 2019; Hermann et al. 2020).

    Trials whose shape and texture categories coincide are left out by the metric; ceiling 1.

    Parameters
    ----------
    identifier, version, parent, bibtex, stimulus_set, visual_degrees, number_of_trials, labels
        As :class:`LabelTaskBenchmark`; the stimulus set needs the shape (``original_image_category``)
        and texture (``conflict_image_category``) category of each image.
    metric : callable (answers with shape and texture categories) -> Score
        E.g. ``load_metric("shape_bias")``, ``"shape_match"`` or ``"texture_match"``.
    """

    def __init__(self, identifier: str, version: int, stimulus_set, metric: Callable[[DataAssembly], Score],
                 visual_degrees: float | None = None, number_of_trials: int = 1, parent: str = "behavior_vision",
                 bibtex: str = "", labels: Sequence[str] | None = None):
        if not callable(metric):
            raise ValueError(f"metric must be a callable such as load_metric('shape_bias'), got {metric!r}")
        check_metric_call(identifier, metric, "metric(choices)", positional=1,
                          hint="Use a callable such as load_metric('shape_bias').")
        super().__init__(identifier=identifier, version=version, stimulus_set=stimulus_set,
                         visual_degrees=visual_degrees, number_of_trials=number_of_trials, ceiling_func=None,
                         parent=parent, bibtex=bibtex, labels=labels)
        self.metric = metric

    def score_choices(self, choices: DataAssembly) -> Score:
        from brainscore.metrics.normalisation import ceil_score

        raw = self.metric(choices)
        score = ceil_score(raw, self.ceiling)
        for name in ("shape_match", "texture_match", "n_trials"):
            if name in raw.attrs:
                score.attrs[name] = raw.attrs[name]
        return self._finish(score, choices)

    def _bootstrap(self, choices: DataAssembly, units: np.ndarray, weights: np.ndarray) -> BootstrapSamples | None:
        """The metric on image resamples of the cue-conflict trials (ceiling 1, fixed)."""
        metric_bootstrap = getattr(self.metric, "bootstrap", None)
        if metric_bootstrap is None:
            return None
        values = metric_bootstrap(choices, weights, units) / float(self.ceiling)
        return BootstrapSamples(score=values, ceiling=None, unit="image", method="cue-conflict trials resampled by image")
