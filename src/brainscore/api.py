"""The user-facing functions: load anything by identifier, list what is registered, score a model.

Every ``load_*`` has a ``list_*`` counterpart taking a shell-style pattern. Loading lives in
:mod:`brainscore.registry` (which plugins use too); :func:`score` and :func:`load_model` (which
gives a model the default layer selection) live in :mod:`brainscore.scoring`.
"""
from __future__ import annotations

from brainscore import registry
from brainscore.registry import load_benchmark, load_ceiling, load_dataset, load_metric, load_stimulus_set
from brainscore.scoring import load_model, score

__all__ = ["load_dataset", "load_stimulus_set", "load_metric", "load_ceiling", "load_benchmark", "load_model",
           "list_datasets", "list_stimulus_sets", "list_metrics", "list_ceilings", "list_benchmarks", "list_models",
           "score"]


def list_datasets(pattern: str | None = None) -> list[str]:
    """Registered dataset identifiers matching the shell-style ``pattern``."""
    return registry.datasets.list(pattern)


def list_stimulus_sets(pattern: str | None = None) -> list[str]:
    """Registered stimulus-set identifiers matching ``pattern``."""
    return registry.stimulus_sets.list(pattern)


def list_metrics(pattern: str | None = None) -> list[str]:
    """Registered metric identifiers matching ``pattern``."""
    return registry.metrics.list(pattern)


def list_ceilings(pattern: str | None = None) -> list[str]:
    """Registered ceiling identifiers matching ``pattern``."""
    return registry.ceilings.list(pattern)


def list_benchmarks(pattern: str | None = None) -> list[str]:
    """Registered benchmark identifiers matching ``pattern`` (e.g. ``"Cowley2026*"``)."""
    return registry.benchmarks.list(pattern)


def list_models(pattern: str | None = None) -> list[str]:
    """Registered model identifiers matching ``pattern`` (e.g. ``"efficientnet*"``)."""
    return registry.models.list(pattern)
