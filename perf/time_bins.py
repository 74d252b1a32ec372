"""The overlap average of a video model's time bins (:func:`brainscore.models.time_bins.average_time_bins`) against
the per-bin sums it replaced, side by side on one array the size of a video network's early layer.

A video model's layer comes as ``(stimuli, units, steps)``; the temporal inferencer averages its steps onto bins of
``1000 / fps`` ms, and a commitment averages those onto the benchmark's window. The reference's ``assembly_time_align``
takes, for each target bin, the source bins it overlaps (fancy indexing) of the whole array, their weighted sum in
float64 and divides by the weights' sum. ``average_time_bins`` does the same operations (so the same bits) on blocks
of rows, for all target bins that overlap the same number of source bins at once. Defaults:
16 stimuli x 200,704 units (r3d_18's stem: 64 channels x 56 x 56) x 25 steps, float16, onto 25 bins of 40 ms::

    python perf/time_bins.py
    python perf/time_bins.py --stimuli 64 --steps 16 --targets 1    # onto one benchmark window
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def per_bin(values: np.ndarray, source_bins, target_bins) -> np.ndarray:
    """The reference's computation: per target bin, the weighted sum of the whole array's overlapped bins over the
    weights' sum, back in the input's dtype."""
    from brainscore.models.time_bins import time_bin_weights

    weights = time_bin_weights(source_bins, target_bins)
    averaged = []
    for row in weights:
        overlapping = row > 0
        averaged.append(((values[..., overlapping] * row[overlapping]).sum(-1) / row[overlapping].sum())
                        .astype(values.dtype))
    return np.stack(averaged, -1)


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
    for name, function in (("reference", per_bin), ("blocks", average_time_bins)):
        start = time.perf_counter()
        result = function(values, source, target)
        timings[name] = (time.perf_counter() - start, result)
    (before, old), (after, new) = timings["reference"], timings["blocks"]
    same = np.array_equal(old, new, equal_nan=True)
    print(f"{args.stimuli} x {args.units:,} x {args.steps} float16 onto {len(target)} bins")
    print("| the reference's per-bin sums (s) | average_time_bins (s) | speed-up | bit for bit |")
    print("|---:|---:|---:|---|")
    print(f"| {before:.2f} | {after:.2f} | {before / after:.1f}x | {same} |")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
