"""Choose the layer a model commits to a brain region, on data the scored benchmark never uses.

Brain-Score commits each region to the model layer that best predicts that region's neurons on a
*selection* benchmark (Schrimpf et al. 2020). Here the candidate layers are recorded in one pass
over the selection stimuli (all layers hooked together, layers above 1000 features reduced to
1000 principal components by the model side), each layer is scored with the selection
benchmark's metric, and the scores are averaged over the region's selection benchmarks.

A region's selection benchmarks are those whose plugin declares ``selection_for=<region>`` when
registering them (:func:`selection_benchmarks`); they never count toward the leaderboard. For a
region without any, the scorer raises :class:`~brainscore.errors.NoSelectionDataError` and the
model commits the region by the relative-depth rule (:mod:`brainscore.models.layer_rule`).

The raw (unceiled) metric is used: a per-benchmark ceiling is the same for every layer, so it does
not change the argmax within a benchmark (and selection data often have no repetitions to
compute one from).
"""
from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np

from brainscore import registry
from brainscore.benchmarks.screen import place_on_screen
from brainscore.errors import NoSelectionDataError
from brainscore.progress import stage

__all__ = ["NoSelectionDataError", "LayerCandidates", "selection_benchmarks", "selection_features", "layer_scorer"]

VERSION = 1  # bump when the choice of benchmarks or the rule changes (invalidates stored choices)


class LayerCandidates(Protocol):
    """What the model side hands the scorer (see ``brainscore.models.candidates``)."""

    layers: Sequence[str]
    identifier: str

    def visual_degrees(self) -> float: ...

    def look_at_layers(self, stimuli, time_bins=None): ...


def selection_benchmarks() -> dict[str, tuple[str, ...]]:
    """Region -> identifiers of the benchmarks its plugins declare for layer selection (``selection_for``)."""
    regions: dict[str, list[str]] = {}
    for identifier in registry.benchmarks.declaring("selection_for"):
        regions.setdefault(registry.benchmarks.metadata(identifier)["selection_for"], []).append(identifier)
    return {region: tuple(sorted(ids)) for region, ids in sorted(regions.items())}


def selection_features(identifier: str, candidates: LayerCandidates):
    """The selection benchmark ``identifier`` and every candidate layer's features on its stimuli (one pass, cached).

    The stimuli are placed on the model's screen as the benchmark would; the features are those of
    ``candidates.look_at_layers`` (PCA-reduced, cached by content; a video model's averaged over the window of the
    benchmark's ``time_bins``), so calling this ahead of
    :func:`layer_scorer` (as ``brainscore run`` does, one selection benchmark per worker) leaves the
    scorer only the metric to compute.

    Returns
    -------
    (Benchmark, dict of str to NeuroidAssembly)
    """
    benchmark = registry.load_benchmark(identifier)
    stimuli = place_on_screen(benchmark.stimulus_set, target_visual_degrees=candidates.visual_degrees(),
                              source_visual_degrees=benchmark.visual_degrees)
    return benchmark, candidates.look_at_layers(stimuli, time_bins=getattr(benchmark, "time_bins", None))


def layer_scorer(region: str, candidates: LayerCandidates) -> dict[str, float]:
    """Score every candidate layer for ``region`` on the region's selection benchmarks.

    Parameters
    ----------
    region : str
        A region with selection benchmarks (:func:`selection_benchmarks`), e.g. ``"V4"``.
    candidates : LayerCandidates
        Gives the candidate layers and records them all in one pass.

    Returns
    -------
    dict of str to float
        Mean raw score (median Pearson r) per layer over the selection benchmarks.

    Raises
    ------
    NoSelectionDataError
        If the region has no selection benchmark (the model then commits it by the layer rule).
    """
    available = selection_benchmarks()
    if region not in available:
        raise NoSelectionDataError(
            f"no selection data for region {region!r} (available: {sorted(available)}); the layer rule "
            f"commits it, or give the model an explicit map, e.g. load_model(..., "
            f"region_layer_map={{'{region}': '<layer>'}}) or `brainscore score ... --layer <layer>`")
    per_layer: dict[str, list[float]] = {layer: [] for layer in candidates.layers}
    for identifier in available[region]:
        benchmark, features = selection_features(identifier, candidates)
        with stage(f"{region} layer selection on {identifier}", total=len(candidates.layers), unit="layer") as progress:
            for layer in candidates.layers:
                raw = benchmark.metric(features[layer], benchmark.assembly)
                per_layer[layer].append(float(raw))
                progress.update()
    return {layer: float(np.mean(values)) for layer, values in per_layer.items()}


#: the scorer's regions and benchmarks, for the record of a selection (``ModelCommitment.layer_methods``)
layer_scorer.benchmarks = lambda region: selection_benchmarks().get(region, ())  # type: ignore[attr-defined]
layer_scorer.identifier = f"brainscore.scoring.selection.layer_scorer-v{VERSION}"  # type: ignore[attr-defined]
