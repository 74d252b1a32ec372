"""The reference's temporal ``ActivationsExtractor``: :class:`brainscore.models.extraction.temporal.TemporalExtractor`,
returning the reference's assembly classes."""
from __future__ import annotations

from typing import Any

from brainscore.models.extraction.temporal_store import TemporalExtractor

__all__ = ["ActivationsExtractor"]


class ActivationsExtractor(TemporalExtractor):
    __doc__ = TemporalExtractor.__doc__

    def from_paths(self, stimuli_paths, layers, stimuli_identifier=None) -> Any:
        from brainscore_core.supported_data_standards.brainio.assemblies import as_reference_class

        return as_reference_class(super().from_paths(stimuli_paths, layers, stimuli_identifier=stimuli_identifier))

    def from_stimulus_set(self, stimulus_set, layers, stimuli_identifier=None) -> Any:
        from brainscore_core.supported_data_standards.brainio.assemblies import as_reference_class

        return as_reference_class(super().from_stimulus_set(stimulus_set, layers, stimuli_identifier))
