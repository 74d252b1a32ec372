"""``brainscore_core``: the reference Brain-Score's core names (``Score``, ``metrics.Metric``, the BrainIO data
standards) as thin adapters over :mod:`brainscore`, which never imports this package.

>>> from brainscore_core import Score
>>> float(Score(0.79))
0.79
"""
from __future__ import annotations

import importlib

from brainscore_core._clone import adopt as _adopt_clone

_adopt_clone()  # a clone of the reference's repository as the current folder: brainscore_vision is still brainscore's

from brainscore.shadowing import check as _check_shadow  # noqa: E402 (after adopting a clone)

_check_shadow("brainscore_core")  # a real brainscore_core installed too: say which one is in use

_LAZY = {"Score": "brainscore_core.metrics", "Metric": "brainscore_core.metrics"}

__all__ = ["Score", "Metric"]


def __getattr__(name: str):
    """Import a name's module on first use (PEP 562), so ``import brainscore_core`` stays cheap."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'brainscore_core' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
