"""Time our metrics against the reference's way of computing them, side by side in one run.

Usage::

    python perf/metrics.py                       # every case, full size (minutes)
    python perf/metrics.py --list                # the cases and where they come from
    python perf/metrics.py --case pls --case internal --size small --markdown
    python perf/metrics.py --case "pls 3200x1000" --repeats 5 --threads 1

Cases are collected from every ``perf/cases_*.py`` module next to this file. Each module
defines ``CASES``, a list of dicts:

``name`` : str
    Unique, e.g. ``"pls 3200x20000 vs 168"``; ``--case`` selects by substring.
``setup`` : callable(size) -> inputs
    Builds the inputs once per case (not timed). ``size`` is ``"full"``, ``"small"`` or an int
    (number of stimuli); each module maps the names to its own sizes.
``ours`` : callable(inputs) -> value
    Our computation (usually the registered metric on assemblies).
``reference`` : callable(inputs) -> value
    The reference implementation's way of computing the same number, on bare arrays.
Optional keys:
``reference_scale`` : float (default 1)
    The reference does only a fraction of the work (e.g. 1 of 10 cross-validation splits); its
    time is multiplied by this to estimate the whole, and the table says so.
``reference_warmup`` : bool (default True)
    Run the reference once untimed first (set False where one run takes minutes; the process is
    warmed up anyway, see below).
``repeats`` : int
    At most this many timed runs of ours (for cases where one run takes a minute).
``ours_warmup`` : bool (default True)
    Run ours once untimed first.
``difference`` : callable(ours_value, reference_value) -> float
    How far apart the two answers are (default ``|float(ours) - float(reference)|``).
``note`` : str
    Shown in the table.

Timing: one large matrix product warms the process up first (the first heavy BLAS call of a fresh
process can be several times slower on shared machines); then, per case, ours runs once untimed
and ``--repeats`` times timed, the reference ``--reference-repeats`` times (after its warm-up
unless the case says not to); the table gives medians. ``--threads N`` limits BLAS/OpenMP (and
torch) threads for both sides alike.
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import platform
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

HERE = Path(__file__).resolve().parent


def load_cases(directory: Path = HERE) -> list[dict[str, Any]]:
    """Every case of every ``cases_*.py`` module in ``directory``, with ``module`` added to each."""
    cases = []
    for path in sorted(directory.glob("cases_*.py")):
        spec = importlib.util.spec_from_file_location(f"benchmark_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        for case in getattr(module, "CASES", []):
            missing = {"name", "setup", "ours", "reference"} - set(case)
            if missing:
                raise ValueError(f"{path.name}: case {case.get('name', '?')!r} lacks {sorted(missing)}")
            cases.append({**case, "module": path.stem})
    names = [c["name"] for c in cases]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise ValueError(f"duplicate case names: {sorted(duplicates)}")
    return cases


def _timed(fn: Callable[[Any], Any], inputs: Any, repeats: int, warmup: bool) -> tuple[float, Any]:
    value = fn(inputs) if warmup else None
    times = []
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        value = fn(inputs)
        times.append(time.perf_counter() - start)
    return float(np.median(times)), value


def _warm_up() -> None:
    a = np.random.default_rng(0).standard_normal((2000, 2000)).astype(np.float32)
    for _ in range(3):
        a @ a.T
    b = np.random.default_rng(1).standard_normal((800, 800))
    np.linalg.eigh(b @ b.T)


def _difference(case: dict[str, Any], ours: Any, reference: Any) -> float:
    try:
        if "difference" in case:
            return float(case["difference"](ours, reference))
        return abs(float(ours) - float(reference))
    except (TypeError, ValueError):
        return math.nan


def run(cases: list[dict[str, Any]], size: Any, repeats: int, reference_repeats: int, skip_reference: bool,
        echo: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Time ``cases``; returns one row per case (seconds, speed-up, difference, notes)."""
    _warm_up()
    rows = []
    for case in cases:
        inputs = case["setup"](size)
        ours_time, ours_value = _timed(case["ours"], inputs, min(repeats, int(case.get("repeats", repeats))),
                                       warmup=bool(case.get("ours_warmup", True)))
        row = {"case": case["name"], "ours": ours_time, "reference": math.nan, "speedup": math.nan,
               "difference": math.nan, "note": case.get("note", "")}
        if not skip_reference:
            scale = float(case.get("reference_scale", 1.0))
            reference_time, reference_value = _timed(case["reference"], inputs, reference_repeats,
                                                     warmup=bool(case.get("reference_warmup", True)))
            row["reference"] = reference_time * scale
            row["speedup"] = row["reference"] / ours_time
            row["difference"] = _difference(case, ours_value, reference_value)
        rows.append(row)
        del inputs
        if echo:
            echo(row)
    return rows


HEADER = ("case", "ours (s)", "reference (s)", "speed-up", "|difference|", "note")


def _cells(row: dict[str, Any]) -> list[str]:
    def number(x, fmt):
        return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)
    return [row["case"], number(row["ours"], ".3f"), number(row["reference"], ".2f"),
            "-" if math.isnan(row["speedup"]) else f"{row['speedup']:.1f}x", number(row["difference"], ".1e"),
            row["note"]]


def format_table(rows: list[dict[str, Any]], markdown: bool) -> str:
    """The rows as an aligned text table, or as a Markdown table."""
    cells = [_cells(r) for r in rows]
    if markdown:
        lines = ["| " + " | ".join(HEADER) + " |", "|" + "|".join(["---"] + ["---:"] * 4 + ["---"]) + "|"]
        lines += ["| " + " | ".join(c) + " |" for c in cells]
        return "\n".join(lines)
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(HEADER)]
    fmt = lambda c: "  ".join(x.ljust(w) if i in (0, 5) else x.rjust(w) for i, (x, w) in enumerate(zip(c, widths)))  # noqa: E731
    return "\n".join([fmt(list(HEADER)), fmt(["-" * w for w in widths])] + [fmt(c) for c in cells])


def _limit_threads(threads: int | None):
    import contextlib
    if not threads:
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits
    try:
        import torch
        torch.set_num_threads(threads)
    except ImportError:
        pass
    return threadpool_limits(threads)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Time our metrics against the reference's way of computing them.")
    parser.add_argument("--case", action="append", default=[],
                        help="run cases whose name contains this (repeatable; default: all)")
    parser.add_argument("--size", default="full", help="'full' (3200 stimuli), 'small' (400) or a number of stimuli")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of ours (median reported)")
    parser.add_argument("--reference-repeats", type=int, default=1, help="timed runs of the reference")
    parser.add_argument("--no-reference", action="store_true", help="time ours only")
    parser.add_argument("--threads", type=int, default=None, help="limit BLAS/OpenMP threads for both sides")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    args = parser.parse_args(argv)

    cases = load_cases()
    if args.case:
        cases = [c for c in cases if any(s in c["name"] for s in args.case)]
    if args.list or not cases:
        for c in cases:
            print(f"{c['name']:45s} {c['module']}")
        return 0 if cases or args.list else 1
    size = args.size if args.size in ("full", "small") else int(args.size)

    import os
    cpus = os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan
    print(f"# {len(cases)} cases, size {size}; ours: median of {args.repeats} after a warm-up run, reference: "
          f"median of {args.reference_repeats}; {cpus} CPUs, load {load:.1f} at start, threads "
          f"{args.threads or 'default'}; {platform.machine()} numpy {np.__version__}", flush=True)
    with _limit_threads(args.threads):
        stream = sys.stderr if args.markdown else sys.stdout          # progress, one line per case
        echo = lambda row: print("  " + " | ".join(_cells(row)), file=stream, flush=True)  # noqa: E731
        rows = run(cases, size, args.repeats, args.reference_repeats, args.no_reference, echo=echo)
    print()
    print(format_table(rows, args.markdown))
    scaled = [r["case"] for r, c in zip(rows, cases) if c.get("reference_scale", 1) != 1 and not args.no_reference]
    if scaled:
        print(f"\nReference times of {', '.join(scaled)} are scaled from the splits it ran (see note) to all 10.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
