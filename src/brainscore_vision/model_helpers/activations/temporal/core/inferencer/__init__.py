"""The reference's temporal inferencers, as :mod:`brainscore.models.extraction.temporal`'s, loading stimuli with
this adapter's :class:`~brainscore_vision.model_helpers.activations.temporal.inputs.Video` (images held still).

``Inferencer`` takes its ``stimulus_type`` (4th argument) as in the reference; the video inferencers default it to
``Video``. What each computes, and where brainscore deviates, is documented there.
"""
from __future__ import annotations

from brainscore.models.extraction import temporal as _temporal
from brainscore_vision.model_helpers.activations.temporal.inputs import Video

__all__ = ["Inferencer", "TemporalInferencer", "CausalInferencer", "BlockInferencer"]

Inferencer = _temporal.Inferencer


class TemporalInferencer(_temporal.TemporalInferencer):
    __doc__ = _temporal.TemporalInferencer.__doc__
    default_stimulus_type = Video


class CausalInferencer(_temporal.CausalInferencer):
    __doc__ = _temporal.CausalInferencer.__doc__
    default_stimulus_type = Video


class BlockInferencer(_temporal.BlockInferencer):
    __doc__ = _temporal.BlockInferencer.__doc__
    default_stimulus_type = Video
