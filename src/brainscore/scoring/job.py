"""The main job: score a model on a benchmark."""
from __future__ import annotations

import time
from typing import Any

from brainscore import registry
from brainscore.metrics.score import Score
from brainscore.progress import stage
from brainscore.scoring import selection


def load_model(identifier: str, **kwargs) -> Any:
    """The :class:`~brainscore.models.BrainModel` registered as ``identifier`` (e.g. ``"efficientnet-lite0"``).

    ``kwargs`` go to the model's factory (e.g. ``region_layer_map={"V4": "_blocks.5"}``). A model that
    commits regions to layers but has no layer scorer gets :func:`brainscore.scoring.selection.layer_scorer`,
    which chooses a region's layer on selection data the scored benchmarks never use.

    Raises
    ------
    UnknownIdentifierError
        If no plugin registers ``identifier``; the message lists the closest identifiers.
    """
    model = registry.models.load(identifier, **kwargs)
    if getattr(model, "layer_scorer", False) is None:
        model.layer_scorer = selection.layer_scorer
    return model


def score(model_identifier: str, benchmark_identifier: str, **model_kwargs) -> Score:
    """Score a model on a benchmark: the main job.

    Parameters
    ----------
    model_identifier : str
        A registered model, e.g. ``"efficientnet-lite0"``.
    benchmark_identifier : str
        A registered benchmark, e.g. ``"Cowley2026.210325.V4-pls"``.
    **model_kwargs
        Passed to the model's factory, e.g. ``region_layer_map={"V4": "_blocks.5"}``.

    Returns
    -------
    Score
        The ceiled score, with attrs ``raw``, ``ceiling``, ``error``, ``model_identifier``,
        ``benchmark_identifier``, ``layers`` (the committed region -> layer map, where the model has
        one) and ``duration_s``.

    Raises
    ------
    UnknownIdentifierError
        If the model or the benchmark is not registered.
    """
    start = time.perf_counter()
    benchmark = registry.load_benchmark(benchmark_identifier)
    model = load_model(model_identifier, **model_kwargs)
    with stage(f"scoring {model_identifier} on {benchmark_identifier}"):
        result = benchmark(model)
    result.attrs["model_identifier"] = model_identifier
    result.attrs["benchmark_identifier"] = benchmark_identifier
    layers = getattr(model, "region_layer_map", None)
    if layers is not None:
        result.attrs["layers"] = dict(layers)
    result.attrs["duration_s"] = time.perf_counter() - start
    return result
