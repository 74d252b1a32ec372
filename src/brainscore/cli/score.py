"""``brainscore score --model M --benchmark B``: the main job from the command line."""
from __future__ import annotations

import json
import sys


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("score", help="score a model on a benchmark (or several, in this process)",
                                   description="Score a model on a benchmark and print the ceiled score, the raw "
                                               "score, the ceiling, the error and the committed layer. Patterns and "
                                               "comma lists score every pair one after the other and print one table "
                                               "(`brainscore run` does the same on Dask).")
    parser.add_argument("--model", required=True, help="model identifier, e.g. efficientnet-lite0; or identifiers "
                                                       "and shell patterns, comma-separated")
    parser.add_argument("--benchmark", required=True, help="benchmark identifier, e.g. Cowley2026.210325.V4-pls; or "
                                                           "identifiers and patterns, e.g. 'Cowley2026*,Mur2013-rdm'")
    parser.add_argument("--layer", default=None,
                        help="commit the benchmark's region to this layer instead of the model's map")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def _several(spec: str) -> bool:
    return any(c in spec for c in ",*?[")


def run_grid(args) -> int:
    """Several pairs, one after the other in this process: one JSON line per pair, or one table."""
    from brainscore import runner
    from brainscore.runner import report

    if args.layer:
        raise SystemExit("error: --layer applies to one benchmark; name a single --benchmark with it")
    pairs = runner.pairs(args.model, args.benchmark)
    on_result = (lambda s: print(report.json_line(s), flush=True)) if args.json else None
    summaries = runner.run_sequential(pairs, on_result=on_result)
    if not args.json:
        print(report.table(summaries))
    return 1 if report.failures(summaries, sys.stderr) else 0


def run(args) -> int:
    if _several(args.model) or _several(args.benchmark):
        return run_grid(args)
    from brainscore import api
    from brainscore.runner.stages import summarise

    kwargs = {}
    if args.layer:
        benchmark = api.load_benchmark(args.benchmark)
        region = getattr(benchmark, "region", None)
        if region is None:
            raise SystemExit(f"error: --layer needs a neural benchmark; {args.benchmark} records no region")
        kwargs["region_layer_map"] = {region: args.layer}
    result = api.score(args.model, args.benchmark, **kwargs)
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
