"""The reference's temporal ``PytorchWrapper``: a ``torch.nn.Module`` read by forward hooks on its sub-modules."""
from __future__ import annotations

import functools
from collections import OrderedDict
from typing import Any, Callable, List

from brainscore_vision.model_helpers.activations.temporal.model.base import ActivationWrapper, _sources_key

__all__ = ["PytorchWrapper"]


def default_process_activation(layer: Any, layer_name: str, inputs: Any, output: Any) -> Any:
    """The layer's output unchanged."""
    return output


class PytorchWrapper(ActivationWrapper):
    """A video network (``torch.nn.Module``) as an :class:`ActivationWrapper`: moved to CUDA when torch sees a GPU,
    else CPU (as the reference), run in ``eval`` mode without gradients on ``torch.stack`` of the preprocessed
    clips. ``process_output(module, layer_name, inputs, output) -> tensor`` (e.g. to unpack a tuple output).
    ``weights_hash`` keys its stored selections and scores: the weights
    (:func:`brainscore.models.extraction.pytorch.state_dict_hash`), the inferencer and the preprocessing's identity.
    """

    def __init__(self, identifier: str, model: Any, preprocessing: Callable, process_output: Callable | None = None,
                 *args: Any, **kwargs: Any):
        import torch

        self._device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self._model = model.to(self._device)
        self._process_activation = process_output or default_process_activation
        super().__init__(identifier, preprocessing, *args, **kwargs)

    def cache_key(self) -> str | None:
        """As :meth:`ActivationWrapper.cache_key`, over this class's ``get_activations``, ``preprocessing`` and
        ``process_output``, with the network's weights hash."""
        from brainscore.models.extraction.pytorch import state_dict_hash

        return _sources_key(self.identifier, PytorchWrapper.get_activations, self.preprocessing,
                            self._process_activation, weights=state_dict_hash(self._model))

    @functools.cached_property
    def weights_hash(self) -> str:
        from brainscore.caching import callable_identity, content_key
        from brainscore.models.extraction.pytorch import state_dict_hash

        return content_key(kind="temporal-pytorch", weights=state_dict_hash(self._model),
                           inferencer=self.inferencer.identifier, preprocessing=callable_identity(self.preprocessing))

    def forward(self, inputs: List[Any]) -> Any:
        import torch

        return self._model(torch.stack(list(inputs)).to(self._device))

    def get_activations(self, inputs: List[Any], layer_names: List[str]) -> "OrderedDict[str, Any]":
        """``{layer: ndarray (batch, ...)}`` of one forward pass, in ``eval`` mode
        (:func:`brainscore.models.extraction.pytorch.forward_outputs`)."""
        from brainscore.models.extraction.pytorch import forward_outputs

        self._model.eval()
        modules = {name: self.get_layer(name) for name in layer_names}
        return OrderedDict(forward_outputs(modules, lambda: self.forward(inputs), self._process_activation))

    def get_layer(self, layer_name: str) -> Any:
        """The sub-module named ``layer_name`` (:func:`brainscore.models.extraction.pytorch.get_module`; ``"logits"``:
        :func:`~brainscore.models.extraction.pytorch.last_leaf_module`)."""
        from brainscore.models.extraction.pytorch import get_module, last_leaf_module

        return last_leaf_module(self._model) if layer_name == "logits" else get_module(self._model, layer_name)

    def layers(self):
        """``(name, module)`` of every leaf module."""
        for name, module in self._model.named_modules():
            if not list(module.children()):
                yield name, module

    def __repr__(self) -> str:
        return repr(self._model)
