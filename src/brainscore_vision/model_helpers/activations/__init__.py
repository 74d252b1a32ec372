"""The reference's activations helpers: ``PytorchWrapper`` (:mod:`.pytorch`), ``ActivationsExtractorHelper`` and
``flatten`` (:mod:`.core`), ``LayerPCA`` (:mod:`.pca`).

``from brainscore_vision.model_helpers.activations import PytorchWrapper`` imports torch on first use
only (PEP 562), so importing this package stays cheap.
"""
from __future__ import annotations

__all__ = ["PytorchWrapper", "ActivationsExtractorHelper"]

_LAZY = {"PytorchWrapper": "brainscore_vision.model_helpers.activations.pytorch",
         "ActivationsExtractorHelper": "brainscore_vision.model_helpers.activations.core"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'brainscore_vision.model_helpers.activations' has no attribute {name!r}")
