"""``ActivationsExtractorHelper`` and ``flatten``: the reference's activations core, on ``brainscore``'s extractor.

``ActivationsExtractorHelper(get_activations, preprocessing, identifier, batch_size)`` is the reference's
framework-agnostic extractor (``get_activations(images, layer_names) -> {layer: array}``, used by its
TensorFlow/Keras plugins). It is not available here: ``brainscore`` keys stored activations by the
network's weights and architecture, which it reads from a ``torch.nn.Module``; a function of images
hides both, and a cache keyed by its name alone could serve another network's features. Building one
raises :class:`NotImplementedError` saying so (wrap a PyTorch network in ``PytorchWrapper``).

``flatten(layer_output, return_index=False)``: ``(N, ...)`` -> ``(N, prod(...))`` in C order, with the
multi-index of each flattened unit when asked.
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["ActivationsExtractorHelper", "flatten"]


def flatten(layer_output: np.ndarray, return_index: bool = False) -> Any:
    """``layer_output`` ``(N, d1, d2, ...)`` as ``(N, d1 * d2 * ...)`` (C order).

    With ``return_index``: also the ``(d1 * d2 * ..., k)`` array of each column's index ``(i1, i2, ...)``.
    """
    layer_output = np.asarray(layer_output)
    flat = layer_output.reshape(layer_output.shape[0], -1)
    if not return_index:
        return flat
    unit_shape = layer_output.shape[1:]
    index = np.stack(np.unravel_index(np.arange(int(np.prod(unit_shape))), unit_shape), axis=1)
    return flat, index


class ActivationsExtractorHelper:
    """The reference's framework-agnostic extractor; not available here (see the module notes).

    Raises
    ------
    NotImplementedError
        When built.
    """

    def __init__(self, get_activations: Any = None, preprocessing: Any = None, identifier: Any = False,
                 batch_size: int = 64, **kwargs: Any):
        raise NotImplementedError(
            f"ActivationsExtractorHelper (model {identifier!r}): brainscore extracts activations from PyTorch "
            f"networks only (PytorchWrapper), because it keys stored activations by the network's weights and "
            f"architecture; a get_activations function hides both")


