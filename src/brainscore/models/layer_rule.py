"""Commit a region to a layer by relative depth, where the region has no selection data.

Brain-Score chooses each region's layer on selection data (Schrimpf et al. 2020: V1 and V2 on
FreemanZiemba2013, V4 and IT on MajajHong2015). Where this installation has no selection data for
a region, the layer is committed by a rule that never looks at the benchmark being scored:

    the candidate at relative depth ``q[region]`` among the model's candidate layers,
    ``index = round(q[region] * (n_candidates - 1))``,

with ``q`` the median relative depth of the layers the reference committed to that region in its
published region->layer maps (``brainscore_vision/models/*/region_layer_map/*.json`` of
https://github.com/brain-score/vision), each map's committed layer placed among the candidate layers
of its architecture as :func:`brainscore.models.structure.structural_candidates` defines them.
Each plugin of the reference (one submission, often several seeds or variants of one recipe) weighs
the same in the median, so one submission's many variants do not outvote the others. ``tools/derive_layer_rule.py`` derives the numbers into ``layer_rule.json``
(next to this module); ``perf/layer_rule.py`` prints how often the rule, fitted without a model's
plugin, picks that model's reference layer or a neighbour; ``docs/layer_commitment.md`` reports it.
"""
from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from brainscore.errors import ValidationError

__all__ = ["REGIONS", "RULE_NAME", "rule_layer", "rule_parameters", "load", "fit", "held_out_agreement",
           "relative_depths", "fit_file"]

REGIONS = ("V1", "V2", "V4", "IT")
RULE_NAME = "relative-depth-median-v1"
DATA_FILE = Path(__file__).with_name("layer_rule.json")
FOLDS = 5


@functools.lru_cache(maxsize=1)
def load() -> dict[str, Any]:
    """The derived data (``layer_rule.json``): source, statistics, rule and held-out agreement."""
    try:
        return json.loads(DATA_FILE.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValidationError(f"{DATA_FILE} is missing; derive it with `python tools/derive_layer_rule.py "
                              f"PATH_TO_brain-score_vision`") from None


def rule_parameters(region: str, data: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The rule's parameters for ``region``: ``{"rule", "relative_depth", "maps"}``.

    Raises
    ------
    ValidationError
        For a region the rule has no data for (only V1, V2, V4 and IT are mapped by the reference).
    """
    rule = (data or load())["rule"]
    if region not in rule["relative_depth"]:
        raise ValidationError(f"no layer rule for region {region!r} (the reference's maps commit "
                              f"{sorted(rule['relative_depth'])}); give the model region_layer_map={{{region!r}: ...}}")
    return {"rule": rule["name"], "relative_depth": float(rule["relative_depth"][region]),
            "maps": int(rule["maps"])}


def rule_layer(region: str, candidates: Sequence[str], data: Mapping[str, Any] | None = None) -> tuple[str, dict]:
    """The layer the rule commits to ``region`` among ``candidates`` (in depth order), and its parameters.

    Parameters
    ----------
    region : str
        ``V1``, ``V2``, ``V4`` or ``IT``.
    candidates : sequence of str
        The model's candidate layers, shallowest first (at least one).
    data : mapping, optional
        The derived data (default: :func:`load`).

    Returns
    -------
    (str, dict)
        The layer and ``{"rule", "relative_depth", "maps", "index", "n_candidates"}``.

    Raises
    ------
    ValidationError
        With no candidates or a region without a rule.
    """
    candidates = list(candidates)
    if not candidates:
        raise ValidationError("the layer rule needs at least one candidate layer")
    parameters = rule_parameters(region, data)
    index = _index(parameters["relative_depth"], len(candidates))
    return candidates[index], {**parameters, "index": index, "n_candidates": len(candidates)}


def _index(relative_depth: float, n: int) -> int:
    # round half up, so the choice does not depend on numpy's banker's rounding
    return int(min(n - 1, max(0, np.floor(relative_depth * (n - 1) + 0.5))))


# ---- deriving the rule (tools/derive_layer_rule.py, perf/layer_rule.py) ---------------------------
def relative_depths(maps: Sequence[Mapping[str, Any]], region: str) -> np.ndarray:
    """Relative depth ``index / (n_candidates - 1)`` of ``region``'s layer in each map (0 for one candidate)."""
    return np.array([m["index"][region] / max(1, m["n_candidates"] - 1) for m in maps], dtype=float)


def _weights(maps: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """Each map's weight: 1 / (maps of its plugin), so each plugin (submission) weighs the same."""
    counts: dict[str, int] = {}
    for m in maps:
        counts[m["plugin"]] = counts.get(m["plugin"], 0) + 1
    return np.array([1.0 / counts[m["plugin"]] for m in maps])


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """The ``q`` quantile of ``values`` with ``weights``: the smallest value whose cumulative weight reaches q.

    Raises
    ------
    ValidationError
        With no values.
    """
    if len(values) == 0:
        raise ValidationError("a quantile needs at least one value")
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order]) / np.sum(weights)
    return float(values[order][np.searchsorted(cumulative, q - 1e-12)])


def fit(maps: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Region -> the weighted median relative depth of its committed layer over ``maps``."""
    if not maps:
        raise ValidationError("fitting the layer rule needs at least one map")
    weights = _weights(maps)
    return {region: weighted_quantile(relative_depths(maps, region), weights, 0.5) for region in REGIONS}


def _fold(plugin: str) -> int:
    return int(hashlib.sha256(plugin.encode()).hexdigest(), 16) % FOLDS


def held_out_agreement(maps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """How often the rule, fitted without a map's plugin, picks the map's layer (exact) or a neighbour (+-1).

    Maps are split into :data:`FOLDS` folds by their plugin (a hash of its name), so all models of
    one plugin (e.g. the seeds of one training recipe) are held out together.

    Returns
    -------
    dict
        ``{"folds", "maps", "per_region": {region: {"exact", "neighbour"}}, "all": {"exact", "neighbour"}}``,
        fractions of held-out maps (``neighbour`` includes exact hits); also ``middle_baseline`` (the
        middle candidate for every region, for comparison), ``per_architecture`` fractions over the
        four regions and their mean ``architecture_mean_neighbour``.
    """
    exact = {region: 0 for region in REGIONS}
    near = {region: 0 for region in REGIONS}
    middle = [0, 0]  # baseline: the middle candidate for every region
    per_architecture: dict[str, list[int]] = {}
    for fold in range(FOLDS):
        train = [m for m in maps if _fold(m["plugin"]) != fold]
        test = [m for m in maps if _fold(m["plugin"]) == fold]
        if not test:
            continue
        depth = fit(train)
        for m in test:
            hits = per_architecture.setdefault(m["architecture"], [0, 0, 0])
            for region in REGIONS:
                distance = abs(_index(depth[region], m["n_candidates"]) - m["index"][region])
                exact[region] += distance == 0
                near[region] += distance <= 1
                hits[0] += distance == 0
                hits[1] += distance <= 1
                hits[2] += 1
                baseline = abs(_index(0.5, m["n_candidates"]) - m["index"][region])
                middle[0] += baseline == 0
                middle[1] += baseline <= 1
    n = len(maps)
    return {"folds": FOLDS, "maps": n,
            "per_region": {r: {"exact": exact[r] / n, "neighbour": near[r] / n} for r in REGIONS},
            "all": {"exact": sum(exact.values()) / (4 * n), "neighbour": sum(near.values()) / (4 * n)},
            "middle_baseline": {"exact": middle[0] / (4 * n), "neighbour": middle[1] / (4 * n)},
            "architecture_mean_neighbour": float(np.mean([h[1] / h[2] for h in per_architecture.values()])),
            "per_architecture": {a: {"exact": h[0] / h[2], "neighbour": h[1] / h[2], "maps": h[2] // 4}
                                 for a, h in sorted(per_architecture.items())}}


def fit_file(derived: Mapping[str, Any]) -> dict[str, Any]:
    """The contents of ``layer_rule.json`` from :func:`tools.derive_layer_rule.derive`'s output."""
    maps = list(derived["maps"])
    weights = _weights(maps)
    quantiles = (0.1, 0.25, 0.5, 0.75, 0.9)
    statistics = {region: {"per_map": {str(q): round(float(np.quantile(relative_depths(maps, region), q)), 4)
                                       for q in quantiles},
                           "per_plugin": {str(q): round(weighted_quantile(relative_depths(maps, region), weights, q), 4)
                                                for q in quantiles}}
                  for region in REGIONS}
    return {"source": derived["source"],
            "candidates": "brainscore.models.structure.structural_candidates (top-level-blocks-v1)",
            "architectures": len({m["architecture"] for m in maps}),
            "statistics": statistics,
            "rule": {"name": RULE_NAME, "maps": len(maps),
                     "relative_depth": {r: round(v, 4) for r, v in fit(maps).items()},
                     "weighting": "each plugin weighs the same (1 / its number of maps)"},
            "held_out": held_out_agreement(maps),
            "maps": maps}


def describe(commitment: Mapping[str, Any] | None) -> str:
    """One line saying how a region's layer was chosen, from a commitment record (``layer_commitments`` entry).

    ``declared`` -> "declared by the model"; ``selection`` -> "selected on N benchmarks (names)";
    ``rule`` -> "rule <name>: relative depth q -> candidate i+1 of n (fitted on M reference maps)".
    An empty string for None (no region, or a record from before methods were kept).
    """
    if not commitment:
        return ""
    method = commitment.get("method")
    if method == "declared":
        return "declared by the model"
    if method == "selection":
        benchmarks = list(commitment.get("benchmarks") or [])
        return (f"selected on {len(benchmarks)} benchmark{'s' if len(benchmarks) != 1 else ''} ({', '.join(benchmarks)})"
                if benchmarks else "selected by the model's layer scorer")
    if method == "rule":
        return (f"rule {commitment.get('rule')}: relative depth {float(commitment.get('relative_depth', float('nan'))):.3f}"
                f" -> candidate {int(commitment.get('index', -1)) + 1} of {commitment.get('n_candidates')} "
                f"(fitted on {commitment.get('maps')} reference maps; no selection data for this region)")
    return str(method)
