"""The overlap average of a video model's time bins (:func:`brainscore.models.time_bins.average_time_bins`) against
the per-bin sums it replaced, side by side on one array the size of a video network's early layer.

A video model's layer comes as ``(stimuli, units, steps)``; the temporal inferencer averages its steps onto bins of
``1000 / fps`` ms, and a commitment averages those onto the benchmark's window. The per-bin way (the reference's
``assembly_time_align``, and this project before) converts the whole array to float64 and, for each target bin, copies
the source bins it overlaps (fancy indexing) and takes their weighted sum. Now rows are converted a block at a time
and averaged by one matrix product (rows holding NaN or inf keep the per-bin sums over overlapping bins only). Defaults:
16 stimuli x 200,704 units (r3d_18's stem: 64 channels x 56 x 56) x 25 steps, float16, onto 25 bins of 40 ms::

    python perf/time_bins.py
    python perf/time_bins.py --stimuli 64 --steps 16 --targets 1    # onto one benchmark window
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def per_bin(values: np.ndarray, source_bins, target_bins) -> np.ndarray:
    """The replaced computation: float64 copy, then one fancy-indexed weighted sum per target bin."""
    from brainscore.models.time_bins import time_bin_weights

    weights = time_bin_weights(source_bins, target_bins)
    values = np.asarray(values, dtype=np.float64)
    averaged = np.empty((*values.shape[:-1], len(weights)))
    for target, row in enumerate(weights / weights.sum(axis=1)[:, None]):
        overlapping = np.flatnonzero(row > 0)
        averaged[..., target] = values[..., overlapping] @ row[overlapping]
    return averaged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stimuli", type=int, default=16)
    parser.add_argument("--units", type=int, default=64 * 56 * 56)
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--targets", type=int, default=25, help="target bins over the same 1000 ms (1: one window)")
    args = parser.parse_args(argv)

    from brainscore.models.time_bins import average_time_bins

    rng = np.random.default_rng(0)
    values = rng.standard_normal((args.stimuli, args.units, args.steps)).astype(np.float16)
    edges = np.linspace(0, 1000, args.steps + 1)
    source = list(zip(edges[:-1], edges[1:]))
    target_edges = np.linspace(0, 1000, args.targets + 1) if args.targets > 1 else np.array([70.0, 170.0])
    target = list(zip(target_edges[:-1], target_edges[1:]))
    timings = {}
    for name, function in (("per-bin sums", per_bin), ("block products", average_time_bins)):
        start = time.perf_counter()
        result = function(values, source, target)
        timings[name] = (time.perf_counter() - start, result)
    (before, old), (after, new) = timings["per-bin sums"], timings["block products"]
    difference = float(np.max(np.abs(old - new)))
    print(f"{args.stimuli} x {args.units:,} x {args.steps} float16 onto {len(target)} bins")
    print("| per-bin sums (s) | block products (s) | speed-up | largest difference |")
    print("|---:|---:|---:|---:|")
    print(f"| {before:.2f} | {after:.2f} | {before / after:.1f}x | {difference:.1e} |")
    return 0 if difference <= 1e-12 * max(1.0, float(np.max(np.abs(old)))) else 1


if __name__ == "__main__":
    raise SystemExit(main())
