"""``ModelCommitment``: the reference's brain transformation, as :class:`brainscore.models.commitment.ModelCommitment`.

Also here, as in the reference: ``LayerMappedModel`` (:mod:`.neural`), ``TemporalAligned`` (:mod:`.temporal`)
and ``ProbabilitiesMapping`` (:mod:`.behavior`).

``ModelCommitment(identifier, activations_model, layers, behavioral_readout_layer=None,
region_layer_map=None, visual_degrees=8)`` takes the reference's argument order and is ``brainscore``'s
commitment: regions in ``region_layer_map`` are recorded from those layers; a region missing from
it is chosen among ``layers`` by ``brainscore``'s layer selection when the model is loaded through
the registry (``load_model``/``score``), which gives it a layer scorer, or, for a region without
selection data, by the relative-depth rule (:mod:`brainscore.models.layer_rule`). ``layers=None``
takes the outputs of the network's top-level blocks (:mod:`brainscore.models.structure`).
Behavioural tasks read ``behavioral_readout_layer`` (default the last of ``layers``).
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
    """A network committed to regions and behaviour, with the reference's signature.

    Parameters
    ----------
    identifier : str
    activations_model : PytorchWrapper
        (or any ``brainscore`` activations extractor).
    layers : sequence of str or None
        Candidate layers in depth order; None: the outputs of the network's top-level blocks.
    behavioral_readout_layer : str, optional
    region_layer_map : dict of str to str, optional
        E.g. ``{'V4': 'features.7', 'IT': 'features.12'}``.
    visual_degrees : float
        Default 8.
    """

    def __init__(self, identifier: str, activations_model: Any, layers: Sequence[str] | None = None,
                 behavioral_readout_layer: str | None = None, region_layer_map: Mapping[str, str] | None = None,
                 visual_degrees: float = 8, **kwargs: Any):
        super().__init__(identifier, activations_model, None if layers is None else list(layers),
                         region_layer_map=region_layer_map,
                         visual_degrees=visual_degrees, behavioral_readout_layer=behavioral_readout_layer, **kwargs)

    def look_at(self, stimuli: Any, number_of_trials: int = 1, require_variance: bool = False) -> Any:
        """``brainscore``'s ``look_at``, on a StimulusSet or (as the reference also takes) a list of image paths;
        the result is of the reference's assembly classes (``brainscore_core...assemblies``)."""
        from brainscore_core.supported_data_standards.brainio.assemblies import as_reference_class

        return as_reference_class(super().look_at(as_stimulus_set(stimuli), number_of_trials, require_variance))


def as_stimulus_set(stimuli: Any) -> Any:
    """``stimuli`` as a StimulusSet: one unchanged, a list of image paths as one row per file (``stimulus_id`` and
    ``stimulus_path`` the path)."""
    from brainscore.data.stimuli import StimulusSet

    if isinstance(stimuli, StimulusSet):
        return stimuli
    paths = list(dict.fromkeys(str(path) for path in stimuli))
    return StimulusSet({"stimulus_id": paths, "stimulus_path": paths}, stimulus_paths={p: p for p in paths})
