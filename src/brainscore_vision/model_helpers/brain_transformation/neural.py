"""``LayerMappedModel`` (each region recorded from given layers, no selection) and ``LayerSelection``
(:mod:`brainscore.scoring.selection` for one region): the reference's, on brainscore's pieces."""
from __future__ import annotations

import logging
from typing import Any, Mapping, Sequence

import numpy as np

from brainscore.errors import BrainScoreError, NoSelectionDataError, ValidationError
from brainscore.metrics.score import Score
from brainscore.models.time_bins import on_time_bins
from brainscore_core.supported_data_standards.brainio.assemblies import NeuroidAssembly
from brainscore_vision._result_caching import store
from brainscore_vision.model_interface import BrainModel

__all__ = ["LayerMappedModel", "LayerSelection"]


class LayerMappedModel(BrainModel):
    """Record a region from its layer or layers (``{'IT': 'relu2'}``, ``{'IT': ['linear', 'relu2']}``: concatenated
    along ``neuroid``), with a ``region`` coordinate, on the time bins ``start_recording`` was given, if any
    (:func:`brainscore.models.time_bins.on_time_bins`)."""

    def __init__(self, identifier: str, activations_model: Any, region_layer_map: Mapping[str, Any],
                 visual_degrees: float = 8):
        self.identifier = identifier
        self.activations_model = activations_model
        self.region_layer_map = dict(region_layer_map)
        self._visual_degrees = float(visual_degrees)
        self.recording_target: str | None = None
        self.time_bins: list[tuple[int, int]] | None = None
        if hasattr(activations_model, "set_visual_degrees"):
            activations_model.set_visual_degrees(self._visual_degrees)

    def visual_degrees(self) -> float:
        return self._visual_degrees

    def start_task(self, task: str, fitting_stimuli: Any = None) -> None:
        """Only recording is supported (``task`` ``passive``)."""
        if task != BrainModel.Task.passive:
            raise NotImplementedError(f"LayerMappedModel records regions; it does not perform task {task!r}")

    def start_recording(self, recording_target: str, time_bins: Sequence[tuple[int, int]] | None = None) -> None:
        """Record ``recording_target`` (a region of ``region_layer_map``; ValidationError for another) from now on."""
        if str(recording_target) not in self.region_layer_map:
            raise ValidationError(f"model {self.identifier!r} maps no layer to region {recording_target!r}; mapped "
                                  f"regions: {sorted(self.region_layer_map)}")
        self.recording_target = str(recording_target)
        self.time_bins = None if time_bins is None else [tuple(b) for b in time_bins]

    def look_at(self, stimuli: Any, number_of_trials: int = 1, require_variance: bool = False) -> NeuroidAssembly:
        if self.recording_target is None:
            raise BrainScoreError(f"model {self.identifier!r}: call start_recording(region) before look_at")
        layers = self.region_layer_map[self.recording_target]
        layers = [layers] if isinstance(layers, str) else list(layers)
        features = self.activations_model(stimuli, layers=layers, number_of_trials=number_of_trials,
                                          require_variance=require_variance)
        features = features.assign_coords(region=("neuroid", np.full(features.sizes["neuroid"],
                                                                     self.recording_target, dtype=object)))
        if self.time_bins is not None:
            features = on_time_bins(features, self.time_bins)
        return NeuroidAssembly(features)


class LayerSelection:
    """``LayerSelection(model_identifier, activations_model, layers, visual_degrees)(selection_identifier='IT')``:
    the best of ``layers`` by :func:`brainscore.scoring.selection.layer_scorer`, in the reference's structure
    ``__call__`` -> ``_call`` (decorated, ``__wrapped__`` the undecorated choice) -> ``_layer_scoring`` (brainscore's
    selection scores) -> the first of the highest finite scores in ``layers`` order. A region without selection data
    is committed by the layer rule. ``__call__`` raises NotImplementedError if a ``benchmark`` is given (brainscore
    selects on the region's selection benchmarks), BrainScoreError if no layer has a finite score.
    """

    def __init__(self, model_identifier: str, activations_model: Any, layers: Sequence[str], visual_degrees: float = 8):
        self.model_identifier, self.activations_model = model_identifier, activations_model
        self.layers, self.visual_degrees = list(layers), visual_degrees
        self._logger = logging.getLogger(f"{__name__}.{type(self).__name__}")
        self._commitment: Any = None

    def __call__(self, selection_identifier: str, benchmark: Any = None) -> str:
        if benchmark is not None:
            raise NotImplementedError("LayerSelection: brainscore selects a region's layer on that region's selection "
                                      "benchmarks (brainscore.scoring.selection); a benchmark cannot be given")
        try:
            return self._call(model_identifier=self.model_identifier, selection_identifier=selection_identifier,
                              benchmark=benchmark)
        except NoSelectionDataError:
            return self._committed().commit_by_rule(selection_identifier)

    @store(identifier_ignore=["benchmark"])  # caches nothing: the choice is stored by content underneath
    def _call(self, model_identifier: str, selection_identifier: str, benchmark: Any) -> str:
        """The layer with the highest score of ``_layer_scoring`` (a ``layer`` Score; attributes not needed, so a
        score read back without them, as from a netCDF file, serves too)."""
        scores = self._layer_scoring(model_identifier=model_identifier, layers=self.layers, benchmark=benchmark,
                                     benchmark_identifier=selection_identifier)
        values = np.asarray(scores.values, dtype=float).reshape(-1)
        values = np.where(np.isfinite(values), values, np.nan)  # as brainscore's selection: finite scores only
        if np.isnan(values).all():
            raise BrainScoreError(f"layer selection of {model_identifier!r} for {selection_identifier!r}: no layer has "
                                  f"a finite score ({dict(zip(map(str, scores['layer'].values), values))})")
        best = str(scores["layer"].values[int(np.nanargmax(values))])
        self._logger.debug("layer scores (unceiled) for %s: %s; best %s", selection_identifier,
                           dict(zip(map(str, scores["layer"].values), values)), best)
        return best

    def _committed(self) -> Any:
        if self._commitment is None:
            from brainscore.models.commitment import ModelCommitment
            from brainscore.scoring.selection import layer_scorer

            self._commitment = ModelCommitment(self.model_identifier, self.activations_model, self.layers,
                                               visual_degrees=self.visual_degrees, layer_scorer=layer_scorer)
        return self._commitment

    def _layer_scoring(self, model_identifier: str, layers: Sequence[str], benchmark: Any,
                       benchmark_identifier: str) -> Score:
        """One score per layer of ``layers`` for region ``benchmark_identifier`` (brainscore's selection scores;
        NoSelectionDataError if the region has none)."""
        commitment = self._committed()
        commitment.layer_for(benchmark_identifier)
        scores = commitment.layer_scores.get(benchmark_identifier)
        if scores is None:
            raise NoSelectionDataError(f"no selection data for region {benchmark_identifier!r}")
        return Score([scores.get(layer, np.nan) for layer in layers], coords={"layer": list(layers)}, dims=["layer"])
