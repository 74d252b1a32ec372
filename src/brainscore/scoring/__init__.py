"""Scoring: the one job (:func:`score`), layer selection, the per-layer report.

This layer sits above the registry and the plugins: it loads models and benchmarks by identifier and
runs one on the other. Nothing below it (benchmarks, metrics, models, data) imports it.

:func:`score` and :func:`load_model` are imported on first use, so that what needs only a light module of
this package (:mod:`brainscore.scoring.outcome`, read by the results database) does not import the
scientific stack (``brainscore leaderboard`` and ``brainscore records`` start in a fraction of the time).
"""
from __future__ import annotations

import importlib
from typing import Any

__all__ = ["score", "load_model"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("brainscore.scoring.job"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
