"""``ModelCommitment``: the reference's brain transformation, :class:`brainscore.models.commitment.ModelCommitment`
(which documents layer selection, the layer rule and ``layers=None``); also ``LayerMappedModel`` (:mod:`.neural`),
``TemporalAligned`` (:mod:`.temporal`) and ``ProbabilitiesMapping`` (:mod:`.behavior`), as in the reference.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from brainscore.models import commitment as _commitment

__all__ = ["ModelCommitment", "LayerMappedModel", "TemporalAligned", "ProbabilitiesMapping"]

_LAZY = {"LayerMappedModel": "neural", "TemporalAligned": "temporal", "ProbabilitiesMapping": "behavior"}


def __getattr__(name: str):
    """The reference's other brain-transformation names, from their submodules (PEP 562)."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ModelCommitment(_commitment.ModelCommitment):
    """The reference's ``ModelCommitment(identifier, activations_model, layers, behavioral_readout_layer=None,
    region_layer_map=None, visual_degrees=8)``: :class:`brainscore.models.commitment.ModelCommitment` with the
    reference's argument order."""

    def __init__(self, identifier: str, activations_model: Any, layers: Sequence[str] | None = None,
                 behavioral_readout_layer: str | None = None, region_layer_map: Mapping[str, str] | None = None,
                 visual_degrees: float = 8, **kwargs: Any):
        super().__init__(identifier, activations_model, None if layers is None else list(layers),
                         region_layer_map=region_layer_map,
                         visual_degrees=visual_degrees, behavioral_readout_layer=behavioral_readout_layer, **kwargs)

    def look_at(self, stimuli: Any, number_of_trials: int = 1, require_variance: bool = False) -> Any:
        """brainscore's ``look_at``, also on a list of image paths; the result of the reference's assembly classes."""
        from brainscore_core.supported_data_standards.brainio.assemblies import as_reference_class

        return as_reference_class(super().look_at(as_stimulus_set(stimuli), number_of_trials, require_variance))


def as_stimulus_set(stimuli: Any) -> Any:
    """``stimuli`` as a StimulusSet: one unchanged, a list of image paths by
    :func:`brainscore.data.stimuli.stimulus_set_of_files`."""
    from brainscore.data.stimuli import StimulusSet, stimulus_set_of_files

    return stimuli if isinstance(stimuli, StimulusSet) else stimulus_set_of_files(stimuli)
