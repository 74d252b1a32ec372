"""``brainscore layers --model M [--benchmark B] [--output plot.png]``.

Without ``--benchmark``: the model's layer for each region and how it was chosen (declared, selection,
rule). With one: score every candidate layer on that benchmark.
"""
from __future__ import annotations

from brainscore.cli import add_plugin_dir_argument

import json


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "layers", help="a model's layer per region and how it was chosen, or every layer's score on a benchmark",
        description="Without --benchmark: list the layer the model commits to each region (V1, V2, V4, IT) and the "
                    "method (declared by the model, selected on selection data, or the relative-depth rule). With "
                    "--benchmark: record all candidate layers of a model in one pass over the benchmark's stimuli, "
                    "score each layer with the benchmark's metric and ceiling, print a table and optionally draw "
                    "score against depth.")
    parser.add_argument("--model", required=True, help="model identifier, e.g. efficientnet-lite0")
    parser.add_argument("--benchmark", default=None,
                        help="neural benchmark identifier, e.g. Cowley2026.210325.V4-pls (omit to list the "
                             "committed layer and method per region)")
    parser.add_argument("--select", action="store_true",
                        help="without --benchmark: run layer selection for regions whose choice is not cached yet")
    parser.add_argument("--layers", default=None, help="comma-separated layers (default: the model's candidates)")
    parser.add_argument("--pca", action="store_true",
                        help="score the PCA-reduced features layer selection sees (1000 components)")
    parser.add_argument("--output", default=None, help="write a score-vs-depth plot to this PNG file")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    add_plugin_dir_argument(parser)
    parser.set_defaults(func=run)


def run(args) -> int:
    from brainscore.scoring.layer_report import (as_dicts, commitment_table, format_commitments, format_table,
                                                 layer_report, plot)

    if args.benchmark is None:
        if args.layers or args.pca or args.output:
            raise SystemExit("error: --layers, --pca and --output score layers on a benchmark; name one with --benchmark")
        rows = commitment_table(args.model, select=args.select)
        print(json.dumps(rows) if args.json else format_commitments(rows))
        return 0

    layers = [layer.strip() for layer in args.layers.split(",") if layer.strip()] if args.layers else None
    rows = layer_report(args.model, args.benchmark, layers=layers, pca=args.pca)
    if args.json:
        print(json.dumps(as_dicts(rows)))
    else:
        print(format_table(rows))
    if args.output:
        path = plot(rows, args.output, title=f"{args.model} on {args.benchmark}")
        if not args.json:
            print(f"plot: {path}")
    return 0
