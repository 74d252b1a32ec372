"""A commitment's recording of a video model (:func:`brainscore.models.time_bins.align_time_bins`: the layer's bins
averaged onto a benchmark's window) against the same average of a float64 copy of the whole layer (what it did
before), side by side: seconds, peak traced memory, and the two results compared. Defaults: 16 stimuli x
200,704 units (r3d_18's stem) x 25 steps of 40 ms, float32, onto the window 70-170 ms::

    python perf/align_time_bins.py
    python perf/align_time_bins.py --stimuli 64 --targets 5
"""
from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from brainscore.data.assemblies import NeuroidAssembly
from brainscore.models.time_bins import align_time_bins, average_time_bins


def measured(function):
    tracemalloc.start()
    started = time.perf_counter()
    result = function()
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return result, seconds, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stimuli", type=int, default=16)
    parser.add_argument("--units", type=int, default=200_704)
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--targets", type=int, default=1, help="benchmark bins of 100 ms from 70 ms")
    args = parser.parse_args()
    values = np.random.default_rng(0).standard_normal((args.stimuli, args.units, args.steps), dtype=np.float32)
    starts = np.arange(args.steps) * 40
    layer = NeuroidAssembly(values, dims=("presentation", "neuroid", "time_bin"), coords={
        "stimulus_id": ("presentation", np.arange(args.stimuli).astype(str)),
        "time_bin_start": ("time_bin", starts), "time_bin_end": ("time_bin", starts + 40)})
    window = [(70 + 100 * k, 170 + 100 * k) for k in range(args.targets)]
    source = np.stack([starts, starts + 40], axis=1)
    copied, before, before_peak = measured(
        lambda: average_time_bins(np.asarray(values, dtype=float), source, window).astype(values.dtype))
    aligned, after, after_peak = measured(lambda: align_time_bins(layer, window))
    print(f"layer {values.nbytes / 2**20:.0f} MiB float32 ({args.stimuli} x {args.units} x {args.steps}) onto "
          f"{args.targets} bin(s)")
    print("| | seconds | peak traced memory (MiB) |\n|---|---:|---:|")
    print(f"| float64 copy of the layer, then the average | {before:.2f} | {before_peak / 2**20:.0f} |")
    print(f"| align_time_bins (blocks of rows) | {after:.2f} | {after_peak / 2**20:.0f} |")
    print(f"identical: {np.array_equal(copied, aligned.values)}")  # both float32, as the reference returns


if __name__ == "__main__":
    main()
