"""Activations of a network's layers on stimulus sets, streamed to a content-keyed cache.

Two modules, as the reference splits ``activations/core.py`` from ``activations/pytorch.py``:

- :mod:`.core`: what does not depend on the network's framework: batching, the cache keys and the
  per-entry locks, files on disk (:class:`~.core.LayerFeatures`), the ``presentation x neuroid``
  assemblies, microsaccade plans;
- :mod:`.pytorch`: a PyTorch network run with forward hooks on its modules
  (:class:`~.pytorch.ActivationsExtractor`), its weights hash, tensors and devices.

The names model plugins and other packages use are importable from here.
"""
from brainscore.models.extraction.core import (LOGITS, MICROSACCADE_EXTENT_DEGREES, ActivationsCore, LayerFeatures,
                                               microsaccade_shifts, package_features)
from brainscore.models.extraction.pytorch import (DEFAULT_BATCH_SIZE, DEFAULT_GPU_BATCH_SIZE, ActivationsExtractor,
                                                  get_module, state_dict_hash, translate)

__all__ = ["ActivationsExtractor", "ActivationsCore", "LayerFeatures", "package_features", "microsaccade_shifts",
           "state_dict_hash", "get_module", "translate", "DEFAULT_BATCH_SIZE", "DEFAULT_GPU_BATCH_SIZE", "LOGITS",
           "MICROSACCADE_EXTENT_DEGREES"]
