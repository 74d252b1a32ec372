"""Score every candidate layer of a model on one benchmark: where along its depth does it match the brain?

The stimuli are placed on the model's screen once, every candidate layer is recorded in one pass
over the images (all layers hooked together, each streamed to the activation cache), and each
layer's features are then read back one layer at a time and scored with the benchmark's
``score_features`` (its metric and ceiling normalisation), so memory holds one layer at a time.
This is the curve that layer selection takes the argmax of (Schrimpf et al. 2020), drawn on the
benchmark's own data.

Read it with care: the best layer *on this benchmark* is not the layer the model is scored with.
A model commits each region to one layer, chosen on separate selection data (or given by its
author), never on the benchmark being scored; the report marks that committed layer separately.
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from brainscore import registry
from brainscore.scoring.job import load_model
from brainscore.errors import BrainScoreError
from brainscore.progress import Stage, stage


@dataclass
class LayerScore:
    """One row of a layer report."""

    depth: int
    layer: str
    n_features: int
    score: float
    split_se: float  # the metric's standard error over its cross-validation splits (not the bootstrap ``error``)
    raw: float
    ceiling: float
    committed: bool = False  # the layer the model commits the benchmark's region to (what `score` uses)
    formula: str = ""  # how score follows from raw and ceiling (:func:`brainscore.scoring.job.formula_of`)


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
        Report the layers as they are scored (:func:`brainscore.progress.stage`: a bar on a terminal, start and end
        lines in a log, when it takes over 2 s; the scores themselves are in the returned rows).

    Returns
    -------
    list of LayerScore
        In depth order; ``committed`` is set on the layer the model commits the benchmark's region
        to (none when the benchmark has no region or the model cannot commit one).

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
        from brainscore.models.candidates import LayerCandidates

        features = LayerCandidates(model, layers).look_at_layers(stimuli)
        assemblies = {layer: (lambda layer=layer: features[layer]) for layer in layers}
    else:
        stored = extractor.extract(stimuli, layers)
        assemblies = {layer: (lambda layer=layer: stored[layer].assembly(stimuli, model.identifier))
                      for layer in layers}
    committed = committed_layer(model, benchmark)
    rows = []
    with contextlib.ExitStack() as shown:
        step = (shown.enter_context(stage(f"{benchmark.identifier}: scoring {len(layers)} layers of {model.identifier}",
                                          total=len(layers), unit="layer")) if progress else Stage())
        for depth, layer in enumerate(layers):
            assembly = assemblies[layer]()
            score = benchmark.score_features(assembly)
            ceiling = score.attrs.get("ceiling")
            rows.append(LayerScore(depth, layer, int(assembly.sizes["neuroid"]), _number(score),
                                   _number(score.attrs.get("error")), _number(score.attrs.get("raw")),
                                   _number(ceiling), committed=layer == committed,
                                   formula=str(score.attrs.get("formula") or "")))
            del assembly
            step.update()
    return rows


def committed_layer(model, benchmark) -> str | None:
    """The layer ``model`` commits the region of ``benchmark`` to (what scoring uses), or None.

    None when the benchmark records no region, or the model has no layer for it and cannot select
    one (no selection data). Selection, when it runs, is cached as in scoring.
    """
    region = getattr(benchmark, "region", None)
    if region is None or not hasattr(model, "layer_for"):
        return None
    try:
        return model.layer_for(region)
    except BrainScoreError:
        return None


_LEGEND = ("* = the best layer on this benchmark's own data: what the curve peaks at, NOT the layer the model is\n"
           "    scored with (a region's layer is chosen on separate selection data, or given by the model's author)\n"
           "C = the committed layer: the one `brainscore score` uses for this benchmark's region\n"
           "score = {formula}; split SE = standard error of the score over the metric's cross-validation splits\n"
           "    (the metric's own error; `brainscore score` reports `error`, the bootstrap standard error, instead)")

_FORMULAS = {"r2_over_ceiling": "r² / ceiling (r: the raw correlation)", "legacy": "(raw / ceiling)²",
             "raw_over_ceiling": "raw / ceiling", "raw_over_ceiling_clipped": "raw / ceiling, clipped to [0, 1]",
             "r2": "r² (no ceiling)", "raw": "raw (no ceiling)"}


def _formula(rows: Sequence[LayerScore]) -> str:
    """How the rows' score follows from raw and ceiling, in symbols."""
    formulas = {r.formula for r in rows if r.formula}
    if len(formulas) == 1:
        (formula,) = formulas
        return _FORMULAS.get(formula, formula)
    return "the benchmark's normalised score"


def format_table(rows: Sequence[LayerScore], legend: bool = True) -> str:
    """The report as an aligned text table, each layer once.

    The best layer on this benchmark is marked ``*``, the committed layer ``C``; with ``legend`` a
    key under the table says what the marks, the split SE and the score mean.
    """
    best = _best(rows)
    width = max([len("layer")] + [len(r.layer) for r in rows])
    lines = [f"{'depth':>5}  {'layer':<{width}}  {'units':>9}  {'score':>8}  {'split SE':>8}  {'raw':>8}  {'ceiling':>8}"]
    for i, r in enumerate(rows):
        mark = ("*" if i == best else " ") + ("C" if r.committed else " ")
        lines.append(f"{r.depth:>5}  {r.layer:<{width}}  {r.n_features:>9}  {r.score:>8.4f}  {r.split_se:>8.4f}  "
                     f"{r.raw:>8.4f}  {r.ceiling:>8.4f} {mark}".rstrip())
    if legend:
        lines += ["", _LEGEND.format(formula=_formula(rows))]
    return "\n".join(lines)


def _best(rows: Sequence[LayerScore]) -> int | None:
    finite = [i for i, r in enumerate(rows) if not math.isnan(r.score)]
    return max(finite, key=lambda i: rows[i].score) if finite else None


def plot(rows: Sequence[LayerScore], path: str | Path, title: str = "") -> Path:
    """Draw score against depth to ``path`` (PNG), saying what it shows.

    Error bars are ±1 standard error over the cross-validation splits; a red star marks the best
    layer on this benchmark (not the committed one), a green diamond and dashed line the committed
    layer (what scoring uses), when the rows know it.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    depth = np.array([r.depth for r in rows])
    score = np.array([r.score for r in rows])
    error = np.nan_to_num(np.array([r.split_se for r in rows]))
    figure, axis = plt.subplots(figsize=(max(6, 0.45 * len(rows) + 2), 4.5))
    axis.errorbar(depth, score, yerr=error, marker="o", capsize=3, color="tab:blue",
                  label="score per layer (error bars: ±1 standard error over splits)")
    best = _best(rows)
    if best is not None:
        axis.plot(depth[best], score[best], marker="*", markersize=16, color="tab:red", linestyle="none",
                  label=f"best on this benchmark: {rows[best].layer} (not the committed layer)")
    committed = [i for i, r in enumerate(rows) if r.committed]
    if committed:
        i = committed[0]
        axis.axvline(depth[i], color="tab:green", linestyle="--", alpha=0.7)
        axis.plot(depth[i], score[i], marker="D", markersize=9, markerfacecolor="none", markeredgewidth=2,
                  color="tab:green", linestyle="none",
                  label=f"committed layer: {rows[i].layer} (what `brainscore score` uses)")
    axis.legend(loc="best", fontsize=8)
    axis.set_xticks(depth)
    axis.set_xticklabels([r.layer for r in rows], rotation=60, ha="right", fontsize=8)
    axis.set_xlabel("layer (depth order)")
    axis.set_ylabel(f"score = {_formula(rows)}")
    axis.set_title(title)
    axis.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def as_dicts(rows: Sequence[LayerScore]) -> list[dict]:
    """The rows as plain dictionaries (for JSON or CSV)."""
    return [asdict(r) for r in rows]


def commitment_table(model, select: bool = False) -> list[dict]:
    """How ``model`` commits each region (V1, V2, V4, IT) to a layer: one row per region.

    A region its map names is ``declared``; a region with selection data is ``selection`` (run now
    only when ``select`` is true or its choice is cached, else ``layer`` is None and ``detail`` says
    so); any other is committed by the layer ``rule`` (:mod:`brainscore.models.layer_rule`, instant).

    Parameters
    ----------
    model : str or ModelCommitment
    select : bool
        Run layer selection for regions whose choice is not cached yet (minutes per region).

    Returns
    -------
    list of dict
        ``{"region", "layer", "method", "detail", "candidates"}``; ``candidates`` is ``declared`` or the
        structural definition used.

    Raises
    ------
    BrainScoreError
        For a model that commits no layers (no ``layer_for``).
    """
    from brainscore.models.layer_rule import REGIONS, describe
    from brainscore.scoring import selection

    if isinstance(model, str):
        model = load_model(model)
    if not hasattr(model, "layer_for") or not hasattr(model, "layer_commitments"):
        raise BrainScoreError(f"model {getattr(model, 'identifier', model)!r} commits no layers to regions "
                              f"(it is not a ModelCommitment)")
    available = selection.selection_benchmarks()
    rows = []
    for region in REGIONS:
        declared = region in model.region_layer_map and \
            model.layer_methods.get(region, {"method": "declared"})["method"] == "declared"
        if not declared and region in available and getattr(model, "layer_scorer", None) is not None \
                and not select and not model.selection_cached(region):
            rows.append({"region": region, "layer": None, "method": "selection",
                         "detail": f"on {len(available[region])} benchmarks ({', '.join(available[region])}); "
                                   f"not run yet (--select runs it)",
                         "candidates": model.candidates_source})
            continue
        model.layer_for(region)
        entry = model.layer_commitments()[region]
        rows.append({"region": region, "layer": entry["layer"], "method": entry["method"],
                     "detail": describe(entry), "candidates": model.candidates_source})
    return rows


def format_commitments(rows: Sequence[dict]) -> str:
    """The commitment table as text: region, layer, method, how."""
    width = max([len("layer")] + [len(str(row["layer"] or "-")) for row in rows])
    lines = [f"{'region':<7}{'layer':<{width + 2}}{'method':<10}how", "-" * (width + 40)]
    for row in rows:
        lines.append(f"{row['region']:<7}{str(row['layer'] or '-'):<{width + 2}}{row['method']:<10}{row['detail']}")
    if rows:
        lines.append(f"candidate layers: {rows[0]['candidates']}")
    return "\n".join(lines)
