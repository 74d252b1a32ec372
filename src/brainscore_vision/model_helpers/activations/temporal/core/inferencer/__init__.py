"""The reference's temporal inferencers: :mod:`brainscore.models.extraction.temporal`'s (the video inferencers
load stimuli as :class:`brainscore.data.clips.Video`, images held still; ``Inferencer`` takes its
``stimulus_type``, 4th argument, as in the reference). What each computes, and where brainscore deviates, is
documented there."""
from brainscore.models.extraction.temporal import BlockInferencer, CausalInferencer, Inferencer, TemporalInferencer

__all__ = ["Inferencer", "TemporalInferencer", "CausalInferencer", "BlockInferencer"]
