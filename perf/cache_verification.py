"""Cost of verified cache reads on the quick start: a cached run before and after, side by side.

Runs ``brainscore score --model efficientnet-lite0 --benchmark Cowley2026.210325.V4-pls --json``
alternately from two source trees (``--before``: e.g. an export of main; ``--after``: this tree),
each with its own ``BRAINSCORE_HOME`` that already holds a complete cache (one warm-up run each is
done first), ``--repeats`` times, and prints the wall time of each run and the medians. Also times
the pieces of verification in-process: the sha256 of the cached activation file, the architecture
fingerprint of EfficientNet-Lite0 and the code hash of the activation namespace.

Usage::

    git archive main src | tar -x -C /tmp/before
    python perf/cache_verification.py --before /tmp/before/src --after src --repeats 5
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMAND = ["-m", "brainscore", "score", "--model", "efficientnet-lite0", "--benchmark", "Cowley2026.210325.V4-pls",
           "--json"]


def run(src: Path, home: Path) -> tuple[float, dict]:
    env = {**os.environ, "PYTHONPATH": str(src), "BRAINSCORE_HOME": str(home)}
    start = time.perf_counter()
    out = subprocess.run([sys.executable, *COMMAND], env=env, capture_output=True, text=True, check=True).stdout
    return time.perf_counter() - start, json.loads(out.strip().splitlines()[-1])


def pieces(src: Path, home: Path) -> None:
    code = f"""
import time, sys
sys.path.insert(0, {str(src)!r})
import brainscore
from brainscore.caching import file_sha256, code_hash
from pathlib import Path
files = sorted(Path({str(home)!r}, "cache", "activations").rglob("*.npy"))
t = time.perf_counter(); [file_sha256(f) for f in files]; hashing = time.perf_counter() - t
model = brainscore.load_model("efficientnet-lite0")
t = time.perf_counter(); model.architecture_fingerprint; fingerprint = time.perf_counter() - t
t = time.perf_counter(); code_hash("brainscore.models.extraction"); code = time.perf_counter() - t
size = sum(f.stat().st_size for f in files) / 1e6
print(f"sha256 of {{len(files)}} activation files ({{size:.1f}} MB): {{hashing * 1000:.1f}} ms; "
      f"architecture fingerprint: {{fingerprint * 1000:.1f}} ms; code hash (first, parsing): {{code * 1000:.1f}} ms")
"""
    env = {**os.environ, "BRAINSCORE_HOME": str(home)}
    print(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="src folder of the tree before")
    parser.add_argument("--after", type=Path, required=True, help="src folder of the tree after")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--homes", type=Path, default=Path(tempfile.gettempdir()) / "cache-verification-homes")
    args = parser.parse_args()
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    homes = {name: args.homes / name for name in trees}
    scores = {}
    for name in trees:  # warm-up: fills each home's cache
        _, summary = run(trees[name], homes[name])
        scores[name] = summary["score"]
    times: dict[str, list[float]] = {name: [] for name in trees}
    for _ in range(args.repeats):
        for name in trees:
            elapsed, summary = run(trees[name], homes[name])
            assert summary["score"] == scores[name]
            times[name].append(elapsed)
    for name in trees:
        print(f"{name:>6}: score {scores[name]!r}; cached runs {[round(t, 2) for t in times[name]]} s, "
              f"median {statistics.median(times[name]):.2f} s")
    pieces(trees["after"], homes["after"])


if __name__ == "__main__":
    main()
