"""What touching fresh memory costs on this machine, and why layer selection keeps its rows' memory (issue 39).

A virtual machine whose balloon driver reports freed pages to its host (KVM's virtio-balloon free page
reporting) gives each page back a few seconds after a process frees it; touching it again faults to the
host. Prints the speed of filling a fresh ``--gib`` GiB array: first, at once again, and after a pause
(``--pauses``, seconds), beside filling an array already touched. On bare metal every line is fast.

Usage::

    python perf/fresh_memory.py            # 2 GiB, pauses 5 and 30 s
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def fill_seconds(nbytes: int) -> tuple[float, float]:
    """(seconds to fill a fresh float32 array of ``nbytes``, seconds to fill it again once touched)."""
    start = time.perf_counter()
    rows = np.empty(nbytes // 4, dtype=np.float32)
    rows[:] = 1.0
    fresh = time.perf_counter() - start
    start = time.perf_counter()
    rows[:] = 2.0
    return fresh, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=2.0)
    parser.add_argument("--pauses", default="5,30", help="seconds between fills, comma-separated")
    args = parser.parse_args(argv)
    nbytes = int(args.gib * (1 << 30))
    print(f"| fill of a fresh {args.gib:g} GiB array | s | GiB/s | the same array again, GiB/s |")
    print("|---|---:|---:|---:|")
    for label, pause in [("first", 0.0), ("at once again", 0.0)] + [
            (f"after {float(p):g} s", float(p)) for p in args.pauses.split(",") if p]:
        time.sleep(pause)
        fresh, touched = fill_seconds(nbytes)
        print(f"| {label} | {fresh:.2f} | {args.gib / fresh:.2f} | {args.gib / touched:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
