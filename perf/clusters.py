"""The same grid on the local cluster, an existing Dask scheduler and SLURM, on the same cores: wall times and ratios.

Issue 30 measured SLURM at 1.63 times the local cluster on the same cores (its forward passes ran side
by side, with Dask's malloc trim); the goal is within 1.15 for SLURM and for an existing scheduler.
Run it on a quiet machine (``uptime``), as root where SLURM is wanted (its daemons run as root)::

    BRAINSCORE_DATA_MIRROR=../shared/data python perf/clusters.py                     # all three, 1 round
    python perf/clusters.py --rounds 2 --models efficientnet-lite0 --benchmarks 'Cowley2026.210325.V4-pls'
    python perf/clusters.py --kinds local,scheduler                                  # no SLURM here

Every run is ``brainscore run`` on the same pairs from its own empty ``BRAINSCORE_HOME`` (so each
extracts, selects layers, computes ceilings and scores), with the same workers on this machine's
usable cores (one per core and per 4 GiB, as ``clusters.worker_layout`` sizes a node):

- ``local``: ``brainscore run --workers W`` (its LocalCluster; the clock includes starting it);
- ``scheduler``: ``dask scheduler`` and ``dask worker --nworkers W --nthreads 1 --preload
  brainscore.runner.workers`` on 127.0.0.1 (docs/cluster.md's recipe), started before the clock;
  then ``brainscore run --scheduler``;
- ``slurm``: a one-node SLURM cluster on 127.0.0.1 (``tests/slurm_cluster.py``; Debian's slurm-wlm
  and munge) and ``brainscore run --cluster slurm --workers 1``: one job of this machine's cores and
  80% of its memory; the clock includes submitting and starting the job, as a user waits for it.

Rounds alternate the order (local, scheduler, slurm; then the reverse), so a drift of the machine's
load hits every kind alike. Printed: each run's wall time, its task-seconds per stage, its ratio to
the local run of the same round, the median ratios, and the load average before and after each run.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the throw-away SLURM cluster and the scheduler helpers of the tests

KINDS = ("local", "scheduler", "slurm")


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def workers_here() -> tuple[int, int, int]:
    """(cores, memory in bytes given to the SLURM job, workers) for this machine, as the local cluster sizes it."""
    import psutil

    from brainscore import config
    from brainscore.runner import clusters

    cores = config.usable_cores()
    memory = (int(psutil.virtual_memory().total * 0.8) >> 30) << 30  # whole GiB: sbatch rounds --mem up to them
    return cores, memory, len(clusters.worker_layout(0, cores, memory))


def brainscore_run(home: Path, arguments: list[str], env_extra: dict[str, str]) -> tuple[float, str, str]:
    """``brainscore run ARGUMENTS`` from the empty ``home``: (wall seconds, stage seconds line, stderr tail)."""
    env = {**os.environ, "BRAINSCORE_HOME": str(home), **env_extra,
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "brainscore", "run", *arguments], env=env, capture_output=True,
                            text=True, start_new_session=True)
    wall = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"brainscore run {' '.join(arguments)} failed ({result.returncode}):\n{result.stderr[-4000:]}")
    stages = next((line for line in result.stdout.splitlines() if line.startswith("task-seconds per stage")), "")
    return wall, stages, result.stderr[-2000:]


def run_kind(kind: str, grid: list[str], folder: Path) -> tuple[float, str]:
    """One run of ``kind`` in ``folder`` (its home, logs, configuration): (wall seconds, stage seconds)."""
    cores, memory, workers = workers_here()
    home = folder / "home"
    if kind == "local":
        wall, stages, _ = brainscore_run(home, [*grid, "--workers", str(workers)], {})
        return wall, stages
    if kind == "scheduler":
        from cluster_helpers import dask_cluster

        env = {**os.environ, "BRAINSCORE_HOME": str(home),
               "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
        with dask_cluster(env, workers=workers, preload=("brainscore.runner.workers",)) as address:
            wall, stages, _ = brainscore_run(home, [*grid, "--scheduler", address], {})
        return wall, stages
    from slurm_cluster import SlurmCluster

    (folder / "dask").mkdir()
    (folder / "dask" / "jobqueue.yaml").write_text(textwrap.dedent(f"""
        jobqueue:
          slurm:
            cores: {cores}
            memory: {memory >> 30}GiB
            walltime: "02:00:00"
            interface: lo
            local-directory: {folder}/workers
            log-directory: {folder}/logs
            scheduler-options: {{host: 127.0.0.1, dashboard_address: null}}
        """))
    cluster = SlurmCluster(memory_mb=(memory >> 20) + 64)
    try:
        cluster.start()
        wall, stages, _ = brainscore_run(home, [*grid, "--cluster", "slurm", "--workers", "1",
                                                "--wait-for-workers", "600"],
                                         {"SLURM_CONF": str(cluster.conf), "DASK_CONFIG": str(folder / "dask")})
    finally:
        cluster.stop()
    return wall, stages


def main(argv: list[str] | None = None) -> int:
    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a `timeout` still stops the SLURM daemons (finally)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="efficientnet-lite0")
    # 7 pairs (about 110 s each run here): a grid long enough that SLURM's job start (~9 s) is not the measurement
    parser.add_argument("--benchmarks", default="Cowley2026.190923.V4-pls,Cowley2026.201025.V4-pls,"
                        "Cowley2026.210224.V4-pls,Cowley2026.210325.V4-pls,Kriegeskorte2008.IT-rdm,Kiani2007.IT-rdm,"
                        "Geirhos2021edge-top1")
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated, from: " + ", ".join(KINDS))
    parser.add_argument("--rounds", type=int, default=1, help="rounds of all kinds (the order alternates)")
    args = parser.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = set(kinds) - set(KINDS)
    if unknown or "local" not in kinds:
        parser.error(f"--kinds must include local and name only {', '.join(KINDS)}")
    grid = ["--models", args.models, "--benchmarks", args.benchmarks, "--no-progress"]
    cores, memory, workers = workers_here()
    print(f"{args.models} on {args.benchmarks}; {cores} usable cores, {workers} workers; "
          f"load average (1/5/15 min) {load()}", flush=True)
    walls: dict[str, list[float]] = {k: [] for k in kinds}
    ratios: dict[str, list[float]] = {k: [] for k in kinds if k != "local"}
    for number in range(args.rounds):
        order = kinds if number % 2 == 0 else list(reversed(kinds))
        this_round = {}
        for kind in order:
            before = load()
            with tempfile.TemporaryDirectory(prefix=f"brainscore-perf-{kind}-") as folder:
                wall, stages = run_kind(kind, grid, Path(folder))
                size = sum(f.stat().st_size for f in (Path(folder) / "home").rglob("*") if f.is_file())
            this_round[kind] = wall
            walls[kind].append(wall)
            stage_text = re.sub(r"^task-seconds per stage: ", "", stages)
            print(f"round {number + 1} {kind:9s} {wall:7.1f} s   stages (task-s): {stage_text}   "
                  f"home {size / 1e6:.0f} MB   load {before} -> {load()}", flush=True)
        for kind in ratios:
            ratios[kind].append(this_round[kind] / this_round["local"])
            print(f"round {number + 1} {kind}/local = {ratios[kind][-1]:.2f}", flush=True)
    print("median wall (s): " + ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in walls.items()))
    print("median ratio to local: " + ", ".join(f"{k}/local {statistics.median(v):.2f}" for k, v in ratios.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
