"""What the boundary costs (issue 32): the same pairs scored in-process and through the boundary, side by side.

Usage::

    python perf/boundary.py                                  # the default pairs, 2 rounds each
    python perf/boundary.py --pairs pixels:Kriegeskorte2008.IT-rdm --rounds 3
    python perf/boundary.py --crossing-mb 256                # also the channel alone, on a 256 MB array

For each pair, each round runs two fresh subprocesses, in alternating order (ABBA, so a load that drifts during the
run is shared):

- ``in-process``: ``brainscore.score(model, benchmark)``, the model in the scoring process (today's path);
- ``boundary``: the same score with the model in a sandboxed model server (``brainscore.boundary.ModelServer``:
  launcher, namespaces where the machine allows them, the model's own process), every answer crossing the
  channel and its checks.

Both start from the same state: a home where the data and the ceiling are already packaged and cached (a warm-up
score, then the activation caches removed), so each computes the model's features from scratch and the metric, and
neither computes the ceiling. The time is measured inside the subprocess around the score (the model server's start,
its loading of torch and of the network included; the interpreter's start excluded). The bootstrap is off
(``--bootstrap`` sets it): it runs in the trusted process either way.

``--crossing-mb`` also times the channel alone: a float32 array sent in a sealed memfd and mapped by the receiver
(with the finite check the trusted side runs), against the same bytes copied through the socket.

Prints one row per pair: the median wall-clock seconds of each path and the boundary's overhead, and the median CPU
seconds of each path (every process of the job: the scoring process, the launcher, the model server) and their
overhead. On a loaded shared machine the wall-clock figures swing with the load (each sample is printed); the CPU
seconds, which contention inflates much less, are the steadier measure of what the boundary adds. Then the load
average. The figures of docs/security.md come from this script.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
DEFAULT_PAIRS = ("pixels:Kriegeskorte2008.IT-rdm", "native-smallnet:Cowley2026.210325.V4-pls",
                 "efficientnet-lite0:Cowley2026.210325.V4-pls")
TWINS = REPO / "tests" / "compat" / "native_twins"
ACTIVATION_CACHES = ("activations", "activations_pca", "layer_selection", "readouts")

JOB = r"""
import json, resource, sys, time
import brainscore
model, benchmark, way, bootstrap = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])


def cpu(who):
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


start, cpu_start = time.perf_counter(), cpu(resource.RUSAGE_SELF)
if way == "boundary":
    from brainscore.boundary import Limits, ModelServer
    with ModelServer(model, Limits(memory=8 * 1024**3, wall=7200, disk=4 * 1024**3)) as server:
        score = brainscore.score(model, benchmark, bootstrap=bootstrap, model=server.model)
        server_cpu = server.model._call("facts", {})["cpu_s"]  # the model server's own, asked before it goes
else:
    score, server_cpu = brainscore.score(model, benchmark, bootstrap=bootstrap), 0.0
seconds = time.perf_counter() - start
# CPU seconds of this process since the start, of the processes it reaped (the launcher) and of the model server
# (killed with its namespace once it has answered, so never reaped here: it says its own)
cpu_s = cpu(resource.RUSAGE_SELF) - cpu_start + cpu(resource.RUSAGE_CHILDREN) + server_cpu
print(json.dumps({"seconds": seconds, "cpu_s": cpu_s, "score": float(score)}))
"""


def environment(home: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "BRAINSCORE_DEV_SRC": str(SRC), "BRAINSCORE_HOME": str(home),
           "BRAINSCORE_OFFLINE": "1", "BRAINSCORE_PLUGIN_DIRS": str(TWINS)}
    env.setdefault("BRAINSCORE_DATA_MIRROR", str(REPO.parent / "shared" / "data"))
    return env


def job(model: str, benchmark: str, way: str, home: Path, bootstrap: int) -> dict:
    out = subprocess.run([sys.executable, "-c", JOB, model, benchmark, way, str(bootstrap)], env=environment(home),
                         capture_output=True, text=True, timeout=7200)
    if out.returncode != 0:
        raise SystemExit(f"{way} {model} on {benchmark} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def cold_copy(warm: Path, target: Path) -> Path:
    """``warm`` (data and ceiling cached) without its activation caches."""
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(warm, target, symlinks=True, ignore=shutil.ignore_patterns("sandbox"))
    for name in ACTIVATION_CACHES:
        shutil.rmtree(target / "cache" / name, ignore_errors=True)
    return target


def pair_row(spec: str, rounds: int, bootstrap: int, scratch: Path) -> dict:
    model, benchmark = spec.split(":", 1)
    warm = scratch / f"warm-{model}"
    job(model, benchmark, "in-process", warm, 0)  # packages the data and computes the ceiling once
    times: dict[str, list[float]] = {"in-process": [], "boundary": []}
    cpus: dict[str, list[float]] = {"in-process": [], "boundary": []}
    scores = set()
    for index in range(rounds):
        order = ("in-process", "boundary") if index % 2 == 0 else ("boundary", "in-process")
        for way in order:
            result = job(model, benchmark, way, cold_copy(warm, scratch / "home"), bootstrap)
            times[way].append(result["seconds"])
            cpus[way].append(result["cpu_s"])
            scores.add(result["score"])
    here, there = statistics.median(times["in-process"]), statistics.median(times["boundary"])
    cpu_here, cpu_there = statistics.median(cpus["in-process"]), statistics.median(cpus["boundary"])
    return {"pair": spec, "in_process_s": round(here, 2), "boundary_s": round(there, 2),
            "overhead": round(there / here - 1, 3), "in_process_cpu_s": round(cpu_here, 2),
            "boundary_cpu_s": round(cpu_there, 2), "cpu_overhead": round(cpu_there / cpu_here - 1, 3),
            "same_score": len(scores) == 1, "rounds": rounds,
            "all_s": {k: [round(v, 2) for v in vs] for k, vs in times.items()},
            "all_cpu_s": {k: [round(v, 2) for v in vs] for k, vs in cpus.items()}}


def crossing(megabytes: int) -> dict:
    """The channel alone: a float32 array through a sealed memfd (mapped, checked finite) vs copied through the
    socket (the bytes sent and received into a buffer)."""
    import numpy as np

    sys.path.insert(0, str(SRC))
    from brainscore.boundary.channel import Channel

    values = np.random.default_rng(0).standard_normal(megabytes * 1024**2 // 4).astype(np.float32)
    a, b = socket.socketpair()
    send, receive = Channel(a, max_bytes=2 * values.nbytes), Channel(b, max_bytes=2 * values.nbytes)
    runs = {"memfd": [], "socket copy": []}
    for _ in range(3):
        start = time.perf_counter()
        thread = threading.Thread(target=send.send, args=({"reply": values},))
        thread.start()
        got = receive.receive()["reply"]
        assert np.isfinite(got).all()
        thread.join()
        runs["memfd"].append(time.perf_counter() - start)
        del got
        buffer = bytearray(values.nbytes)
        start = time.perf_counter()
        thread = threading.Thread(target=a.sendall, args=(memoryview(values).cast("B"),))
        thread.start()
        view, at = memoryview(buffer), 0
        while at < len(buffer):
            at += b.recv_into(view[at:])
        copied = np.frombuffer(buffer, dtype=np.float32)
        assert np.isfinite(copied).all()
        thread.join()
        runs["socket copy"].append(time.perf_counter() - start)
    a.close()
    b.close()
    return {"megabytes": megabytes, **{k: round(min(v), 3) for k, v in runs.items()},
            "memfd_gb_per_s": round(values.nbytes / min(runs["memfd"]) / 1e9, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", nargs="+", default=list(DEFAULT_PAIRS), metavar="MODEL:BENCHMARK")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--bootstrap", type=int, default=0)
    parser.add_argument("--crossing-mb", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="brainscore-perf-boundary-"))
    rows = []
    try:
        for spec in args.pairs:
            rows.append(pair_row(spec, args.rounds, args.bootstrap, scratch))
            row = rows[-1]
            print(json.dumps(row) if args.json else
                  f"{row['pair']:<45} wall: in-process {row['in_process_s']:>7.2f} s, boundary {row['boundary_s']:>7.2f} s "
                  f"({100 * row['overhead']:+.1f}%)   CPU: in-process {row['in_process_cpu_s']:>7.2f} s, boundary "
                  f"{row['boundary_cpu_s']:>7.2f} s ({100 * row['cpu_overhead']:+.1f}%)   same score: {row['same_score']}"
                  f"   (wall samples {row['all_s']})", flush=True)
        if args.crossing_mb:
            row = crossing(args.crossing_mb)
            print(json.dumps(row) if args.json else
                  f"channel, {row['megabytes']} MB float32: memfd {row['memfd']:.3f} s ({row['memfd_gb_per_s']} GB/s, "
                  f"finite check included)   socket copy {row['socket copy']:.3f} s", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
          f"({os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
