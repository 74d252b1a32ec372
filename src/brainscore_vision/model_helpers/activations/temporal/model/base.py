"""The reference's temporal ``ActivationWrapper``: a model's ``get_activations`` with an inferencer (default
:class:`~..core.TemporalInferencer`) and an extractor (:class:`~..core.ActivationsExtractor`) around it."""
from __future__ import annotations

from typing import Any, Callable, Dict, List

import numpy as np

from brainscore_vision.model_helpers.activations.temporal.core import ActivationsExtractor, TemporalInferencer

__all__ = ["ActivationWrapper"]


class ActivationWrapper:
    """A video model: ``wrapper(stimuli, layers)`` gives its activations; subclasses define :meth:`get_activations`.

    ``preprocessing``: ``Video -> model input``, one stimulus at a time; ``**extractor_kwargs`` go to
    ``inferencer_cls`` (``fps``, ``layer_activation_format``, ``num_frames``, ``duration``, ...).
    """

    def __init__(self, identifier: str, preprocessing: Callable, inferencer_cls: type = TemporalInferencer,
                 **extractor_kwargs: Any):
        self.identifier = identifier
        self.preprocessing = preprocessing
        self.build_extractor(inferencer_cls, **extractor_kwargs)

    def get_activations(self, inputs: List[Any], layers: List[str]) -> Dict[str, np.ndarray]:
        """``{layer: array (batch, ...)}`` for a batch of preprocessed inputs (subclasses define it)."""
        raise NotImplementedError(f"{type(self).__name__} must define get_activations(inputs, layers)")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._extractor(*args, **kwargs)

    @property
    def inferencer(self) -> Any:
        """The inferencer the extractor runs."""
        return self._extractor.inferencer

    @property
    def cacheable(self) -> bool:
        """Whether its activations and layer choices may be stored (it has a :meth:`cache_key`)."""
        return self._extractor.cacheable

    def build_extractor(self, inferencer_cls: type, *args: Any, **kwargs: Any) -> None:
        """(Re)build the extractor around a new ``inferencer_cls(get_activations, preprocessing, ...)``."""
        inferencer = inferencer_cls(*args, get_activations=self.get_activations, preprocessing=self.preprocessing,
                                    **kwargs)
        self._extractor = ActivationsExtractor(identifier=self.identifier, inferencer=inferencer,
                                               model_key=self.cache_key)
        self._extractor.insert_attrs(self)

    def cache_key(self) -> str | None:
        """The key stored activations are filed under: the identifier and the source keys
        (:func:`brainscore.models.extraction.function.function_source_key`) of ``get_activations`` and
        ``preprocessing``; None (computed on every call, never stored) when either has none."""
        return _sources_key(self.identifier, self.get_activations, self.preprocessing)


def _sources_key(identifier: str, *functions: Any, **parts: Any) -> str | None:
    """``content_key`` of ``identifier``, ``parts`` and the source key of each function, or None if one has none."""
    from brainscore.caching import content_key
    from brainscore.models.extraction.function import function_source_key

    sources = [function_source_key(function)[0] for function in functions]
    if any(source is None for source in sources):
        return None
    return content_key(kind="temporal-model", identifier=identifier, sources=[str(s) for s in sources], **parts)
