"""Clusters for the runner's tests (``dask scheduler`` and ``dask worker`` processes on 127.0.0.1), and their records.

Workers started here are plain ``dask worker`` processes (Dask's own defaults: one BLAS thread,
``MALLOC_TRIM_THRESHOLD_=65536``), as a user starts them by hand; ``preload`` adds ``--preload``
modules. :func:`records` reads every recorded field of a results database, floats as ``float.hex``,
so that two runs' records compare equal only when they are bit-identical.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from host_helpers import free_port

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
#: What differs between two runs of the same computation: when it ran and how long it took.
VOLATILE_PROVENANCE = ("start", "end", "duration_s")
#: Columns that number rows (in the order pairs finished) or say when they were recorded.
ROW_NUMBERS = ("id", "model_id", "benchmark_instance_id", "submission_id", "start_timestamp", "end_timestamp")


def environment(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a run's processes: a fresh ``home``, the worktree's code and the test plugin on the path."""
    path = os.pathsep.join([str(REPO / "src"), str(TESTS), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "BRAINSCORE_HOME": str(home), "PYTHONPATH": path, **extra}


def records(home: Path) -> list[dict]:
    """Every row of ``home``'s results database (ordered by model and benchmark), with every column.

    Floats become ``float.hex``; the database's row numbers (:data:`ROW_NUMBERS`: they follow the
    order in which pairs finished), timestamps and the provenance's :data:`VOLATILE_PROVENANCE`
    entries are left out.
    """
    from sqlalchemy import create_engine, text

    engine = create_engine(f"sqlite:///{home / 'results.sqlite'}")
    try:
        with engine.connect() as connection:
            rows = connection.execute(text(
                "SELECT m.identifier AS model, b.identifier AS benchmark, s.* FROM scores s "
                "JOIN models m ON m.id = s.model_id JOIN benchmark_instances i ON i.id = s.benchmark_instance_id "
                "JOIN benchmark_types b ON b.identifier = i.benchmark_type_id ORDER BY m.identifier, b.identifier"
            )).mappings().all()
    finally:
        engine.dispose()
    out = []
    for row in rows:
        row = {k: v for k, v in row.items() if k not in ROW_NUMBERS}
        provenance = row.get("provenance")
        provenance = json.loads(provenance) if isinstance(provenance, str) else dict(provenance or {})
        row["provenance"] = json.dumps({k: v for k, v in provenance.items() if k not in VOLATILE_PROVENANCE},
                                       sort_keys=True, default=str)
        out.append({k: float.hex(v) if isinstance(v, float) else v for k, v in row.items()})
    return out


def run_command(*arguments: str, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess:
    """``brainscore run ARGUMENTS --preload runner_helpers`` in a child process (its own session)."""
    return subprocess.run([sys.executable, "-m", "brainscore", "run", "--preload", "runner_helpers", *arguments],
                          env=env, capture_output=True, text=True, timeout=timeout, start_new_session=True)


@contextlib.contextmanager
def dask_cluster(env: dict[str, str], workers: int = 2, preload: tuple[str, ...] = (), worker_args: tuple = ()):
    """A ``dask scheduler`` and ``dask worker --nworkers WORKERS --nthreads 1`` on 127.0.0.1; yields the address.

    Both are ended (their process groups, by id) when the block ends, even on failure.
    """
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    started: list[subprocess.Popen] = []
    try:
        started.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host",
                                         "127.0.0.1", "--port", str(port), "--no-dashboard"], env=env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True))
        extra = [arg for module in preload for arg in ("--preload", module)]
        started.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nworkers",
                                         str(workers), "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard",
                                         *extra, *worker_args], env=env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True))
        from distributed import Client

        with Client(address, timeout=60) as client:
            client.wait_for_workers(workers, timeout=120)
        yield address
    finally:
        for process in reversed(started):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in reversed(started):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
