"""The reference's temporal ``ActivationWrapper``: a model's ``get_activations`` with an inferencer (default
:class:`~..core.TemporalInferencer`) and an extractor (:class:`~..core.ActivationsExtractor`) around it."""
from __future__ import annotations

from typing import Any, Callable, Dict, List

import numpy as np

from brainscore_vision.model_helpers.activations.temporal.core import ActivationsExtractor, TemporalInferencer

__all__ = ["ActivationWrapper"]


class ActivationWrapper:
    """A video model: ``wrapper(stimuli, layers)`` gives its activations (see the extractor).

    Parameters
    ----------
    identifier : str
    preprocessing : callable
        ``Video -> model input`` (one stimulus at a time).
    inferencer_cls : type
        Default ``TemporalInferencer``.
    **extractor_kwargs
        The inferencer's arguments (``fps``, ``layer_activation_format``, ``num_frames``, ``duration``, ...).

    Subclasses define :meth:`get_activations`.
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

    def build_extractor(self, inferencer_cls: type, *args: Any, **kwargs: Any) -> None:
        """(Re)build the extractor around a new ``inferencer_cls(get_activations, preprocessing, ...)``."""
        inferencer = inferencer_cls(*args, get_activations=self.get_activations, preprocessing=self.preprocessing,
                                    **kwargs)
        self._extractor = ActivationsExtractor(identifier=self.identifier, inferencer=inferencer)
        self._extractor.insert_attrs(self)
