"""A BrainModel that answers from stored responses: for testing benchmarks without a network.

Brain-Score tests its benchmarks this way (``PrecomputedFeatures`` in the reference's
``benchmark_helpers``): the expected score of a benchmark is computed from features (or answers)
stored once, so the test needs neither a network nor images to be run through one.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from brainscore.data.assemblies import BehavioralAssembly, DataAssembly, NeuroidAssembly, presentation_order
from brainscore.data.stimuli import StimulusSet
from brainscore.errors import AlignmentError, ValidationError
from brainscore.models.interface import BrainModel, Task


class PrecomputedFeatures(BrainModel):
    """Serve stored responses by ``stimulus_id``, as if a model had produced them.

    Parameters
    ----------
    features : NeuroidAssembly or BehavioralAssembly
        Either stored neural features, ``presentation x neuroid [x time_bin]`` with ``stimulus_id``
        on ``presentation`` (served after :meth:`start_recording`), or stored behavioural answers,
        one value per ``presentation`` (e.g. the label chosen on each trial; served after
        :meth:`start_task`). A stimulus may have several presentations (trials); all are served.
    visual_degrees : float
        The field of view the stored responses were computed for; benchmarks place their stimuli
        on screen for it (:func:`~brainscore.benchmarks.screen.place_on_screen` keeps each
        ``stimulus_id``, so the stored rows are found again whatever the images' new files).
    identifier : str, optional
        Name of the model (default ``"precomputed"``).

    Notes
    -----
    - With a ``region`` coordinate on ``neuroid``, a recording from ``V4`` (say) serves only the
      neuroids whose region is ``V4``; without it, every neuroid is served for every region.
    - With a ``time_bin`` dim, the requested time bins are selected by (start, end) when all of them
      are stored; otherwise the stored bins are served unchanged.
    - ``number_of_trials`` is ignored: stored responses are what they are (as for a deterministic
      network, whose repeated trials are identical).
    - Stored answers are served whatever the task's label set; the benchmark's metric decides what
      an answer outside it means.

    Raises
    ------
    ValidationError
        From the constructor, if ``features`` has no ``stimulus_id`` on ``presentation`` or is not a
        Neuroid/BehavioralAssembly.

    Examples
    --------
    >>> model = PrecomputedFeatures(load_dataset("Geirhos2019.cue-conflict.alexnet"), visual_degrees=3)  # doctest: +SKIP
    >>> benchmark = load_benchmark("Hermann2020cueconflict-shape_bias")  # doctest: +SKIP
    >>> float(benchmark(model))  # doctest: +SKIP
    0.4294...
    """

    def __init__(self, features: DataAssembly, visual_degrees: float, identifier: str | None = None):
        if not isinstance(features, (NeuroidAssembly, BehavioralAssembly)):
            if isinstance(features, DataAssembly) and "neuroid" in features.dims:
                features = NeuroidAssembly(features)
            elif isinstance(features, DataAssembly) and features.dims == ("presentation",):
                features = BehavioralAssembly(features)
            else:
                raise ValidationError(f"features must be a NeuroidAssembly (presentation x neuroid) or a "
                                      f"BehavioralAssembly (presentation), got {type(features).__name__} with dims "
                                      f"{getattr(features, 'dims', None)}")
        if "stimulus_id" not in features.coords or features["stimulus_id"].dims != ("presentation",):
            raise ValidationError("stored features need a 'stimulus_id' coordinate on the 'presentation' dim")
        if visual_degrees <= 0:
            raise ValueError(f"visual_degrees must be positive, got {visual_degrees}")
        self.features = features
        self._visual_degrees = float(visual_degrees)
        self._identifier = identifier or "precomputed"
        self._ids = pd.Index(np.asarray(features["stimulus_id"].values).astype(str))
        self.recording_target: str | None = None
        self.time_bins: list[tuple[int, int]] | None = None
        self.task: str | None = None
        self.fitting_stimuli = None

    @property
    def identifier(self) -> str:
        return self._identifier

    @property
    def behavioral(self) -> bool:
        """True when the stored responses are behavioural answers."""
        return isinstance(self.features, BehavioralAssembly)

    def visual_degrees(self) -> float:
        return self._visual_degrees

    def start_task(self, task: str, fitting_stimuli=None) -> None:
        """Answer ``task`` from the stored answers.

        Raises
        ------
        ValueError
            If the stored responses are neural features (they cannot answer a task other than passive).
        """
        if task != Task.passive and not self.behavioral:
            raise ValueError(f"{self.identifier} stores neural features, not answers; it cannot do the "
                             f"{task!r} task. Store a BehavioralAssembly of answers to test a behavioural benchmark.")
        self.task, self.fitting_stimuli, self.recording_target = task, fitting_stimuli, None

    def start_recording(self, recording_target: str, time_bins: Sequence[tuple[int, int]] | None = None) -> None:
        """Serve the stored features of ``recording_target`` in ``time_bins``.

        Raises
        ------
        ValueError
            If the stored responses are behavioural answers, or no stored neuroid lies in the region.
        """
        if self.behavioral:
            raise ValueError(f"{self.identifier} stores behavioural answers, not neural features; it cannot be "
                             f"recorded from {recording_target!r}")
        if "region" in self.features.coords and self.features["region"].dims == ("neuroid",):
            if recording_target not in set(self.features["region"].values):
                raise ValueError(f"{self.identifier} stores no neuroid in region {recording_target!r}; regions: "
                                 f"{sorted(set(self.features['region'].values))}")
        self.recording_target, self.task = recording_target, None
        self.time_bins = [tuple(int(t) for t in b) for b in time_bins] if time_bins is not None else None

    def look_at(self, stimuli: StimulusSet, number_of_trials: int = 1) -> DataAssembly:
        """The stored responses to ``stimuli``, in the stimulus set's order, with its columns as coordinates.

        Raises
        ------
        AlignmentError
            If a stimulus has no stored response; the message names examples.
        """
        wanted = np.asarray(stimuli["stimulus_id"]).astype(str)
        missing = np.setdiff1d(wanted, self._ids.unique())
        if len(missing):
            raise AlignmentError(f"{self.identifier} has no stored response to {len(missing)} of the {len(wanted)} "
                                 f"stimuli (stimulus_id e.g. {list(missing[:5])}); store features for every "
                                 f"stimulus of the benchmark")
        positions = self._positions(wanted)
        result = self.features.isel(presentation=positions)
        result = self._select_neuroids_and_time(result)
        # the stimulus set's columns, as the reference's activations carry them (stored coordinates win)
        frame = pd.DataFrame(stimuli)
        rows = presentation_order(frame["stimulus_id"].astype(str).to_numpy(),
                                  np.asarray(result["stimulus_id"].values).astype(str), "stimulus_id",
                                  repeats="first", entry="row", sides=("stimulus set", "stored responses"))
        extra = {column: ("presentation", frame[column].to_numpy()[rows])
                 for column in frame.columns if column not in result.coords and column != "stimulus_id"}
        result = result.assign_coords(extra)
        result.attrs = {**result.attrs, "model_identifier": self.identifier,
                        "stimulus_set_identifier": getattr(stimuli, "identifier", None)}
        result.attrs.pop("stimulus_set", None)
        return result

    def _positions(self, wanted: np.ndarray) -> np.ndarray:
        """Stored rows of each wanted stimulus id (all its trials), in the order of ``wanted``."""
        order = np.argsort(self._ids.to_numpy(), kind="stable")
        sorted_ids = self._ids.to_numpy()[order]
        starts = np.searchsorted(sorted_ids, wanted, side="left")
        ends = np.searchsorted(sorted_ids, wanted, side="right")
        return np.concatenate([order[s:e] for s, e in zip(starts, ends)]) if len(wanted) else np.array([], int)

    def _select_neuroids_and_time(self, result: DataAssembly) -> DataAssembly:
        if self.behavioral or self.recording_target is None:
            return result
        if "region" in result.coords and result["region"].dims == ("neuroid",):
            result = result.isel(neuroid=np.flatnonzero(result["region"].values == self.recording_target))
        if self.time_bins and "time_bin" in result.dims and {"time_bin_start", "time_bin_end"} <= set(result.coords):
            stored = list(zip(np.atleast_1d(result["time_bin_start"].values).astype(int),
                              np.atleast_1d(result["time_bin_end"].values).astype(int)))
            if all(b in stored for b in self.time_bins):
                result = result.isel(time_bin=[stored.index(b) for b in self.time_bins])
        return result
