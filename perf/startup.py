"""Start-up time of the command line: ``--help``, ``list``, and a cached quick-start score.

Usage::

    python perf/startup.py                 # 5 repeats of each, cold processes
    python perf/startup.py --repeats 10

Each case runs in a fresh ``python -m brainscore ...`` process (what the ``brainscore`` script
runs), timed wall-clock from spawn to exit, side by side in one run with the same environment.
The quick-start score is run once first to fill the cache of a private ``BRAINSCORE_HOME`` (a
temporary folder, so a user's cache is never touched), then timed cached. For comparison the
script times the bare imports ``import torch`` (which a cached score no longer needs: the
network's identity is cached, :mod:`brainscore.models.identity`) and ``import xarray``, and
checks which heavy libraries the cached score imported (``-X importtime``).

Data: ``$BRAINSCORE_DATA_MIRROR`` (default ``../shared/data``). Prints min / median / max wall
seconds and the median CPU seconds (user + system, which a loaded machine inflates far less than
wall time), with the load average.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUICK_START = ["score", "--model", "efficientnet-lite0", "--benchmark", "Cowley2026.210325.V4-pls"]


def _time(command: list[str], env: dict) -> tuple[float, float]:
    """Wall-clock and CPU (user + system) seconds of one cold process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


HEAVY = ("torch", "alembic", "dask", "sklearn", "matplotlib")


def _imported(command: list[str], env: dict) -> dict[str, bool]:
    """Which of :data:`HEAVY` the command imports (from ``python -X importtime``)."""
    out = subprocess.run([command[0], "-X", "importtime", *command[1:]], env=env, check=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True).stderr
    names = {line.rsplit("|", 1)[-1].strip() for line in out.splitlines() if line.startswith("import time:")}
    return {module: module in names for module in HEAVY}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parents[1]
    mirror = os.environ.get("BRAINSCORE_DATA_MIRROR", str(root.parent / "shared" / "data"))
    with tempfile.TemporaryDirectory(prefix="brainscore-perf-startup-") as home:
        env = {**os.environ, "BRAINSCORE_HOME": home, "BRAINSCORE_DATA_MIRROR": mirror,
               "XDG_CONFIG_HOME": str(Path(home) / "config"),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(root / "src"), os.environ.get("PYTHONPATH")]))}
        cli = [sys.executable, "-m", "brainscore"]
        print(f"filling the cache: brainscore {' '.join(QUICK_START)} ...", file=sys.stderr)
        first, _ = _time(cli + QUICK_START, env)
        cases = {
            "brainscore --help": cli + ["--help"],
            "brainscore --version": cli + ["--version"],
            "brainscore list benchmarks": cli + ["list", "benchmarks"],
            "brainscore list models": cli + ["list", "models"],
            "brainscore score (cached quick start)": cli + QUICK_START,
            "python -c 'import torch' (reference)": [sys.executable, "-c", "import torch"],
            "python -c 'import xarray' (reference)": [sys.executable, "-c", "import xarray"],
        }
        times = {name: [] for name in cases}
        load_before = os.getloadavg()[0]
        for _ in range(args.repeats):  # interleaved, so a load spike hits every case alike
            for name, command in cases.items():
                times[name].append(_time(command, env))
        imported = _imported(cli + QUICK_START, env)
    print(f"{'case':<40} {'wall min':>8} {'median':>7} {'max':>6} {'CPU median':>11}  "
          f"(s, {args.repeats} cold processes each; load average {load_before:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores)")
    print(f"{'brainscore score (first run, fills cache)':<40} {first:>8.2f}")
    for name, values in times.items():
        wall = [w for w, _ in values]
        cpu = statistics.median(c for _, c in values)
        print(f"{name:<40} {min(wall):>8.2f} {statistics.median(wall):>7.2f} {max(wall):>6.2f} {cpu:>11.2f}")
    print("the cached score imported: " + ", ".join(f"{m} {'yes' if yes else 'no'}" for m, yes in imported.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
