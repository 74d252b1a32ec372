"""The reference's ``temporal.core``: the extractor (:mod:`.extractor`), the batch executor and the inferencers
(:mod:`.inferencer`), over :mod:`brainscore.models.extraction.temporal`."""
from brainscore.models.extraction.temporal import BatchExecutor
from brainscore_vision.model_helpers.activations.temporal.core.extractor import ActivationsExtractor
from brainscore_vision.model_helpers.activations.temporal.core.inferencer import (BlockInferencer, CausalInferencer,
                                                                                   Inferencer, TemporalInferencer)

__all__ = ["ActivationsExtractor", "BatchExecutor", "Inferencer", "TemporalInferencer", "CausalInferencer",
           "BlockInferencer"]
