"""``brainscore score --model M --benchmark B``: the main job from the command line."""
from __future__ import annotations

import json
import math

from brainscore.errors import BrainScoreError


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("score", help="score a model on a benchmark",
                                   description="Score a model on a benchmark and print the ceiled score, the raw "
                                               "score, the ceiling, the error and the committed layer.")
    parser.add_argument("--model", required=True, help="model identifier, e.g. efficientnet-lite0")
    parser.add_argument("--benchmark", required=True, help="benchmark identifier, e.g. Cowley2026.210325.V4-pls")
    parser.add_argument("--layer", default=None,
                        help="commit the benchmark's region to this layer instead of the model's map")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def _number(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def summarise(result, model: str, benchmark: str) -> dict:
    """The printed fields of a score: model, benchmark, score, raw, ceiling, error, layer, duration."""
    layers = result.attrs.get("layers") or {}
    region = result.attrs.get("region")
    layer = layers.get(region) if region else (next(iter(layers.values())) if len(layers) == 1 else None)
    return {
        "model": model, "benchmark": benchmark,
        "score": _number(result), "raw": _number(result.attrs.get("raw")),
        "ceiling": _number(result.attrs.get("ceiling")), "error": _number(result.attrs.get("error")),
        "layer": layer, "layers": layers or None,
        "duration_s": round(float(result.attrs.get("duration_s", float("nan"))), 2),
    }


def _refuse_non_finite(result, model: str, benchmark: str) -> None:
    """A NaN or infinite score is an error (exit code 2) with its reason, never ``"score": null``."""
    value = float(result)
    if math.isfinite(value):
        return
    reasons = []
    for name in ("raw", "ceiling"):
        part = result.attrs.get(name)
        if part is not None and not math.isfinite(float(part)):
            reasons.append(f"the {name} score is {float(part)}")
    ceiling = result.attrs.get("ceiling")
    if ceiling is not None and math.isfinite(float(ceiling)) and float(ceiling) == 0:
        reasons.append("the ceiling is 0 (the data are not reliable enough to normalise by)")
    reason = "; ".join(reasons) or "the metric returned a non-finite value"
    raise BrainScoreError(f"the score of {model} on {benchmark} is {value} ({reason}); no number is reported. "
                          f"Check the model's activations and the benchmark's data for constant or missing values")


def run(args) -> int:
    from brainscore import api

    kwargs = {}
    if args.layer:
        benchmark = api.load_benchmark(args.benchmark)
        region = getattr(benchmark, "region", None)
        if region is None:
            raise SystemExit(f"error: --layer needs a neural benchmark; {args.benchmark} records no region")
        kwargs["region_layer_map"] = {region: args.layer}
    result = api.score(args.model, args.benchmark, **kwargs)
    _refuse_non_finite(result, args.model, args.benchmark)
    summary = summarise(result, args.model, args.benchmark)
    if args.json:
        print(json.dumps(summary))
        return 0
    width = max(len(k) for k in summary)
    for key, value in summary.items():
        if key == "layers":
            continue
        text = f"{value:.4f}" if isinstance(value, float) and key != "duration_s" else value
        print(f"{key:<{width}}  {text}")
    return 0
