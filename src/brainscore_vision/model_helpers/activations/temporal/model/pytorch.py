"""The reference's temporal ``PytorchWrapper``: a ``torch.nn.Module`` read by forward hooks on its sub-modules
(:func:`brainscore.models.extraction.pytorch.get_module`), one batch of preprocessed clips at a time."""
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
    """A video network as an :class:`ActivationWrapper`.

    Parameters
    ----------
    identifier : str
    model : torch.nn.Module
        Moved to CUDA when torch sees a GPU, else CPU (as the reference); run in ``eval`` mode without gradients.
    preprocessing : callable
        ``Video -> tensor``; a batch is ``torch.stack`` of them.
    process_output : callable, optional
        ``(module, layer_name, inputs, output) -> tensor``, e.g. to unpack a tuple output.
    **kwargs
        The inferencer's arguments (``fps``, ``layer_activation_format``, ...).

    Attributes
    ----------
    weights_hash : str
        sha256 of the network's parameters and buffers (:func:`brainscore.models.extraction.pytorch.state_dict_hash`),
        with the inferencer's identifier and the preprocessing's identity: what keys this model's stored selections and scores.
    """

    def __init__(self, identifier: str, model: Any, preprocessing: Callable, process_output: Callable | None = None,
                 *args: Any, **kwargs: Any):
        import torch

        self._device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self._model = model.to(self._device)
        self._process_activation = process_output or default_process_activation
        super().__init__(identifier, preprocessing, *args, **kwargs)

    def cache_key(self) -> str | None:
        """The content key stored activations are filed under: the network's weights hash, this wrapper's code and
        the content of the folders that define ``preprocessing`` and ``process_output`` (None when one of them is
        not defined in a file: computed on every call, never stored)."""
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
        """``{layer: ndarray (batch, ...)}`` of one forward pass (``"logits"``: the last leaf module's output)."""
        import torch

        self._model.eval()
        results: "OrderedDict[str, Any]" = OrderedDict()
        handles = [self.get_layer(name).register_forward_hook(self._hook(name, results)) for name in layer_names]
        try:
            with torch.no_grad():
                self.forward(inputs)
        finally:
            for handle in handles:
                handle.remove()
        return OrderedDict((name, results[name]) for name in layer_names)

    def _hook(self, name: str, results: dict) -> Callable:
        def hook(module, inputs, output):
            results[name] = self._process_activation(module, name, inputs, output).detach().cpu().numpy()
        return hook

    def get_layer(self, layer_name: str) -> Any:
        """The sub-module named ``layer_name`` (dotted path; ``"logits"``: the last leaf module).

        Raises
        ------
        ValidationError
            If a part of the path names no sub-module (the message lists the children there).
        """
        from brainscore.models.extraction.pytorch import get_module

        if layer_name == "logits":
            module = self._model
            while list(module.children()):
                module = list(module.children())[-1]
            return module
        return get_module(self._model, layer_name)

    def layers(self):
        """``(name, module)`` of every leaf module."""
        for name, module in self._model.named_modules():
            if not list(module.children()):
                yield name, module

    def __repr__(self) -> str:
        return repr(self._model)
