"""``brainscore compare-twin BENCHMARK --model M --plugin-dir DIR``: a plugin folder's benchmark and the built-in it
replaces (its twin, ``builtin:BENCHMARK``), scored on one model, and where they differ.

Both are scored in this process without a bootstrap and never recorded. The report gives, for each side, the
benchmark's facts (version, parent, region, visual degrees, number of trials, stimuli, data shape) and its score,
raw score and ceiling (or the error it failed with), then the first attribute, in that order, that differs: a
definition that differs is named before the numbers it leads to.
"""
from __future__ import annotations

import json
import math
import sys
from typing import Any

from brainscore.cli import add_plugin_dir_argument

#: the benchmark's facts compared, in order (each read from the attribute or its ``_``-prefixed twin)
FACTS = ("version", "parent", "region", "visual_degrees", "number_of_trials")
NUMBERS = ("ceiling", "raw", "score")


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare-twin", help="score a plugin folder's benchmark and the built-in it replaces on a model; say where "
                             "they differ")
    parser.add_argument("benchmark", help="a benchmark identifier that a plugin folder declares and a built-in too "
                                          "(the built-in is builtin:BENCHMARK)")
    parser.add_argument("--model", required=True, help="the model to score both on, e.g. efficientnet-lite0")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_plugin_dir_argument(parser)
    parser.set_defaults(func=run)


def _fact(benchmark: Any, name: str) -> Any:
    for attribute in (name, f"_{name}"):
        try:
            value = getattr(benchmark, attribute)
        except Exception:  # noqa: BLE001 - a lazy property of plugin code may fail: the fact is unknown
            continue
        if callable(value):
            try:
                value = value()
            except Exception:  # noqa: BLE001
                continue
        if value is not None:
            return value if isinstance(value, (str, int, float, bool)) else str(value)
    return None


def _side(identifier: str, model: str) -> dict[str, Any]:
    """One side: its facts, and its numbers or the error it failed with (one line)."""
    from brainscore import api

    side: dict[str, Any] = {"identifier": identifier}
    try:
        benchmark = api.load_benchmark(identifier)
    except Exception as failure:  # noqa: BLE001 - reported as this side's outcome
        side["error"] = f"{type(failure).__name__}: {' '.join(str(failure).split())}"
        return side
    side["class"] = f"{type(benchmark).__module__}.{type(benchmark).__qualname__}"
    side.update({name: _fact(benchmark, name) for name in FACTS})
    try:
        result = api.score(model, identifier, bootstrap=0)
    except Exception as failure:  # noqa: BLE001
        side["error"] = f"{type(failure).__name__}: {' '.join(str(failure).split())}"
        return side
    side["score"] = float(result)
    for name in ("raw", "ceiling"):
        value = result.attrs.get(name)
        try:
            side[name] = float(value) if value is not None and getattr(value, "ndim", 0) == 0 else None
        except (TypeError, ValueError):
            side[name] = None
    return side


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) or (math.isnan(a) and math.isnan(b))
    return a == b


def differences(folder: dict[str, Any], builtin: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """(attribute, the folder's value, the built-in's) for each attribute that differs, in the order of
    :data:`FACTS`, then whether either failed, then :data:`NUMBERS`."""
    found = [(name, folder.get(name), builtin.get(name)) for name in FACTS
             if not _same(folder.get(name), builtin.get(name))]
    if "error" in folder or "error" in builtin:
        found.append(("outcome", folder.get("error", "scored"), builtin.get("error", "scored")))
        return found
    found += [(name, folder.get(name), builtin.get(name)) for name in NUMBERS
              if not _same(folder.get(name), builtin.get(name))]
    return found


def run(args) -> int:
    from brainscore import registry
    from brainscore.errors import ValidationError

    twins = registry.twins()
    if ("benchmark", args.benchmark) not in twins:
        raise ValidationError(
            f"no plugin folder on the plugin path replaces a built-in benchmark {args.benchmark!r}: give the folder "
            f"with --plugin-dir DIR (a folder laid out like the reference's brainscore_vision/, declaring "
            f"{args.benchmark!r} where a built-in does too)")
    folder_path, builtin_module = twins[("benchmark", args.benchmark)]
    folder = _side(args.benchmark, args.model)
    builtin = _side(registry.BUILTIN_PREFIX + args.benchmark, args.model)
    found = differences(folder, builtin)
    report = {"benchmark": args.benchmark, "model": args.model, "folder": str(folder_path),
              "builtin": builtin_module, "sides": {"folder": folder, "builtin": builtin},
              "first_difference": (dict(zip(("attribute", "folder", "builtin"), found[0])) if found else None),
              "differences": [dict(zip(("attribute", "folder", "builtin"), d)) for d in found]}
    if args.json:
        print(json.dumps(report))
        return 0
    width = max(len(n) for n in ("class", *FACTS, *NUMBERS, "error"))
    lines = [f"{args.benchmark} on {args.model}: your folder {folder_path} vs brainscore's built-in "
             f"{builtin_module} (builtin:{args.benchmark})",
             f"{'':{width}}  {'folder':>24}  {'built-in':>24}"]
    for name in ("class", *FACTS, *NUMBERS, "error"):
        if name in folder or name in builtin:
            a, b = folder.get(name), builtin.get(name)
            show = [(f"{v:.6g}" if isinstance(v, float) else ("-" if v is None else str(v))) for v in (a, b)]
            lines.append(f"{name:{width}}  {show[0][-24:]:>24}  {show[1][-24:]:>24}")
    if found:
        name, a, b = found[0]
        lines.append(f"first difference: {name} (folder {a!r}, built-in {b!r})"
                     + (f"; also {', '.join(d[0] for d in found[1:])}" if len(found) > 1 else ""))
    else:
        lines.append("no difference: the same facts, score, raw score and ceiling")
    print("\n".join(lines))
    for side, values in (("folder", folder), ("built-in", builtin)):
        if "error" in values:
            print(f"{side} failed: {values['error']}", file=sys.stderr)
    return 0
