"""``TemporalAligned``: a layer model's responses put on the time bins a benchmark asks for.

``TemporalAligned(layer_model)`` forwards ``start_recording(target, time_bins)`` and ``look_at`` to
``layer_model``; a static response is repeated in every requested bin, a temporal one (with
``time_bin_start``/``time_bin_end``) is averaged into them weighted by overlap
(:func:`brainscore.models.time_bins.align_time_bins`, the reference's ``assembly_time_align``). With
one requested bin, the ``time_bin`` dim is squeezed out, as in the reference.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from brainscore.models.time_bins import align_time_bins, repeat_time_bins, time_bin_weights

__all__ = ["TemporalAligned", "time_align", "assembly_time_align"]


def time_align(source_time_bins: Sequence[tuple[float, float]], target_time_bins: Sequence[tuple[float, float]],
               mode: str = "portion") -> np.ndarray:
    """``(n_target, n_source)`` weights of the source bins in each target bin
    (:func:`brainscore.models.time_bins.time_bin_weights`: ``"portion"`` of each source bin covered, or
    ``"center"``)."""
    return time_bin_weights(source_time_bins, target_time_bins, mode)


def assembly_time_align(assembly: Any, time_bins: Sequence[tuple[int, int]], mode: str = "portion") -> Any:
    """``assembly`` on ``time_bins``: averaged by :func:`time_align` weights (a requested bin the assembly's bins do
    not cover is a ``ValidationError``); an assembly without a ``time_bin`` dim is repeated in every bin."""
    if "time_bin" in assembly.dims:
        return align_time_bins(assembly, time_bins, mode)
    return repeat_time_bins(assembly, time_bins)


class TemporalAligned:
    """A layer model (``start_recording``/``look_at``) answered on the requested time bins (see the module notes).

    Attributes copied from ``layer_model`` for outside use: ``region_layer_map``, ``activations_model``,
    ``start_task``.
    """

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
