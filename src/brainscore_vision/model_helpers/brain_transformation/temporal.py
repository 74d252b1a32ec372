"""``TemporalAligned``, ``time_align`` and ``assembly_time_align``: the reference's time-bin alignment, on
:mod:`brainscore.models.time_bins`."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from brainscore.models.time_bins import on_time_bins, time_bin_weights

__all__ = ["TemporalAligned", "time_align", "assembly_time_align"]


def time_align(source_time_bins: Sequence[tuple[float, float]], target_time_bins: Sequence[tuple[float, float]],
               mode: str = "portion") -> np.ndarray:
    """The reference's name for :func:`brainscore.models.time_bins.time_bin_weights`."""
    return time_bin_weights(source_time_bins, target_time_bins, mode)


def assembly_time_align(assembly: Any, time_bins: Sequence[tuple[int, int]], mode: str = "portion") -> Any:
    """The reference's name for :func:`brainscore.models.time_bins.on_time_bins`."""
    return on_time_bins(assembly, time_bins, mode)


class TemporalAligned:
    """``TemporalAligned(layer_model)``: its ``start_recording``/``look_at`` answered on the requested time bins
    (:func:`assembly_time_align`), the ``time_bin`` dim squeezed out for one bin (as the reference); its
    ``region_layer_map``, ``activations_model`` and ``start_task`` are ``layer_model``'s."""

    def __init__(self, layer_model: Any):
        self._layer_model = layer_model
        self.region_layer_map = getattr(layer_model, "region_layer_map", None)
        self.activations_model = getattr(layer_model, "activations_model", None)
        self.start_task = getattr(layer_model, "start_task", None)
        self._time_bins: list[tuple[int, int]] | None = None

    def start_recording(self, recording_target: str, time_bins: Sequence[tuple[int, int]]) -> None:
        self._layer_model.start_recording(recording_target)
        self._time_bins = [tuple(b) for b in time_bins]

    def look_at(self, stimuli: Any, number_of_trials: int = 1) -> Any:
        responses = self._layer_model.look_at(stimuli, number_of_trials=number_of_trials)
        if self._time_bins is None:
            return responses
        aligned = assembly_time_align(responses, self._time_bins)
        if len(self._time_bins) == 1:
            aligned = aligned.squeeze("time_bin")
        return aligned
