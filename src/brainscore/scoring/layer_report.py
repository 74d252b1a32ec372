"""Score every candidate layer of a model on one benchmark: where along its depth does it match the brain?

The stimuli are placed on the model's screen once, every candidate layer is recorded in one pass
over the images (all layers hooked together, each streamed to the activation cache), and each
layer's features are then read back one layer at a time and scored with the benchmark's
``score_features`` (its metric and ceiling normalisation), so memory holds one layer at a time.
This is the curve that layer selection takes the argmax of (Schrimpf et al. 2020), drawn on the
benchmark's own data.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from brainscore import registry
from brainscore.scoring.job import load_model
from brainscore.errors import BrainScoreError


@dataclass
class LayerScore:
    """One row of a layer report."""

    depth: int
    layer: str
    n_features: int
    score: float
    error: float
    raw: float
    ceiling: float


def _number(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def layer_report(model, benchmark, layers: Sequence[str] | None = None, pca: bool = False,
                 progress: bool = True) -> list[LayerScore]:
    """Score each candidate layer of ``model`` on ``benchmark``.

    Parameters
    ----------
    model : str or ModelCommitment
        A model identifier or a loaded commitment (it needs ``activations_model`` and ``layers``).
    benchmark : str or NeuralBenchmark
        A benchmark with ``stimulus_set``, ``visual_degrees`` and ``score_features(features)``.
    layers : sequence of str, optional
        Default: the model's candidate layers.
    pca : bool
        Score the features layer selection sees (layers above 1000 units reduced to 1000 principal
        components) instead of the raw features.
    progress : bool
        Print one line per scored layer.

    Returns
    -------
    list of LayerScore
        In depth order.

    Raises
    ------
    BrainScoreError
        If the model has no activations model or the benchmark cannot score features.
    """
    from brainscore.benchmarks.screen import place_on_screen

    model = load_model(model) if isinstance(model, str) else model
    benchmark = registry.load_benchmark(benchmark) if isinstance(benchmark, str) else benchmark
    extractor = getattr(model, "activations_model", None)
    if extractor is None or not hasattr(extractor, "extract"):
        raise BrainScoreError(f"model {model.identifier!r} exposes no activations model: a layer report needs a "
                              f"network committed with brainscore.models.ModelCommitment")
    if not hasattr(benchmark, "score_features"):
        raise BrainScoreError(f"benchmark {benchmark.identifier!r} cannot score features directly (it has no "
                              f"score_features); layer reports are for neural benchmarks")
    layers = list(layers) if layers is not None else list(model.layers)
    stimuli = place_on_screen(benchmark.stimulus_set, target_visual_degrees=model.visual_degrees(),
                              source_visual_degrees=benchmark.visual_degrees)
    if pca:
        from brainscore.models.commitment import LayerCandidates

        features = LayerCandidates(model, layers).look_at_layers(stimuli)
        assemblies = {layer: (lambda layer=layer: features[layer]) for layer in layers}
    else:
        stored = extractor.extract(stimuli, layers)
        assemblies = {layer: (lambda layer=layer: stored[layer].assembly(stimuli, model.identifier))
                      for layer in layers}
    rows = []
    for depth, layer in enumerate(layers):
        assembly = assemblies[layer]()
        score = benchmark.score_features(assembly)
        ceiling = score.attrs.get("ceiling")
        rows.append(LayerScore(depth, layer, int(assembly.sizes["neuroid"]), _number(score),
                               _number(score.attrs.get("error")), _number(score.attrs.get("raw")), _number(ceiling)))
        del assembly
        if progress:
            print(f"  {layer}: {rows[-1].score:.4f}", flush=True)
    return rows


def format_table(rows: Sequence[LayerScore]) -> str:
    """The report as an aligned text table (best layer marked with ``*``)."""
    best = max(range(len(rows)), key=lambda i: -math.inf if math.isnan(rows[i].score) else rows[i].score) \
        if rows else None
    width = max([len("layer")] + [len(r.layer) for r in rows])
    lines = [f"{'depth':>5}  {'layer':<{width}}  {'units':>9}  {'score':>8}  {'error':>8}  {'raw':>8}  {'ceiling':>8}"]
    for i, r in enumerate(rows):
        mark = "*" if i == best else " "
        lines.append(f"{r.depth:>5}  {r.layer:<{width}}  {r.n_features:>9}  {r.score:>8.4f}  {r.error:>8.4f}  "
                     f"{r.raw:>8.4f}  {r.ceiling:>8.4f} {mark}")
    return "\n".join(lines)


def plot(rows: Sequence[LayerScore], path: str | Path, title: str = "") -> Path:
    """Draw score against depth with error bars (standard error over splits) to ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    depth = np.array([r.depth for r in rows])
    score = np.array([r.score for r in rows])
    error = np.nan_to_num(np.array([r.error for r in rows]))
    figure, axis = plt.subplots(figsize=(max(6, 0.45 * len(rows) + 2), 4.5))
    axis.errorbar(depth, score, yerr=error, marker="o", capsize=3, color="tab:blue")
    if np.isfinite(score).any():
        best = int(np.nanargmax(score))
        axis.plot(depth[best], score[best], marker="*", markersize=16, color="tab:red",
                  label=f"best: {rows[best].layer}")
        axis.legend(loc="best")
    axis.set_xticks(depth)
    axis.set_xticklabels([r.layer for r in rows], rotation=60, ha="right", fontsize=8)
    axis.set_xlabel("layer (depth order)")
    axis.set_ylabel("score (ceiled)")
    axis.set_title(title)
    axis.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def as_dicts(rows: Sequence[LayerScore]) -> list[dict]:
    """The rows as plain dictionaries (for JSON or CSV)."""
    return [asdict(r) for r in rows]
