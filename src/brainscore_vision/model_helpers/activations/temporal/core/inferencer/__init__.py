"""The reference's temporal inferencers: :mod:`brainscore.models.extraction.temporal`'s, which documents them."""
from brainscore.models.extraction.temporal import BlockInferencer, CausalInferencer, Inferencer, TemporalInferencer

__all__ = ["Inferencer", "TemporalInferencer", "CausalInferencer", "BlockInferencer"]
