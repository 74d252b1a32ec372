"""A process killed (SIGKILL) inside a write: of a cached ``.nc`` assembly, or of a score in the results database.

Run as a script by ``test_fault_kill_writes.py``: ``python fault_writes_target.py nc|db``. The kill
point is chosen by ``$FAULT_KILL_POINT``; the process sends itself SIGKILL there, so the kill lands
exactly inside the write (random kills of a whole scoring run almost never do: the writes take
milliseconds of a run's seconds). Without ``$FAULT_KILL_POINT`` the write completes and the script
prints its result on the last line:

- ``nc``: an assembly (2,000 presentations x 300 neuroids, seeded) is stored through the cache as
  ``cached_assembly`` does in a scoring run and read back; prints the sha256 of its values.
- ``db``: one score, as ``brainscore.score`` returns it, is recorded in ``$FAULT_DB_URL`` (what
  ``brainscore score`` and the runner do); prints the new row's id.

Kill points (``$FAULT_KILL_POINT``):

- ``nc-created``: the netCDF file was created, no data written yet;
- ``nc-data``: the data variable was written (its bytes in the HDF5 file, its metadata not flushed);
- ``nc-closing``: every variable written, the file not yet closed;
- ``nc-checksum``: the file is complete and its checksum written, the rename into place not done;
- ``db-insert``: the score row was inserted, the transaction not committed;
- ``db-commit``: inside the commit (SQLAlchemy's ``before_commit``: the rows flushed, ``COMMIT`` not
  yet acknowledged);
- ``db-loop``: no self-kill; scores are recorded one after the other until the parent kills the
  process (each ``recorded <id>`` line is printed after its commit returned).
"""
from __future__ import annotations

import hashlib
import os
import signal
import sys


def die() -> None:
    """SIGKILL this process now: no cleanup, no ``finally``, no ``atexit``."""
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def install_nc_kill_point(point: str) -> None:
    import h5py

    from brainscore.caching import cache

    if point == "nc-created":
        original_create = h5py.Group.create_dataset

        def create_dataset(self, *args, **kwargs):
            die()  # the file exists; not one variable in it yet
            return original_create(self, *args, **kwargs)

        h5py.Group.create_dataset = create_dataset
    elif point == "nc-data":
        original_setitem = h5py.Dataset.__setitem__

        def setitem(self, key, value):
            original_setitem(self, key, value)
            if self.name.lstrip("/") == "data":
                die()  # the values written, the HDF5 metadata not flushed: a real mid-write state

        h5py.Dataset.__setitem__ = setitem
    elif point == "nc-closing":
        original_close = h5py.File.close

        def close(self):
            if self.id.valid and self.mode == "r+":
                die()
            return original_close(self)

        h5py.File.close = close
    elif point == "nc-checksum":
        original_write_checksum = cache.write_checksum

        def write_checksum(path, sha256, size):
            original_write_checksum(path, sha256, size)
            die()

        cache.write_checksum = write_checksum
    else:
        raise SystemExit(f"unknown nc kill point {point!r}")


def run_nc(point: str | None) -> None:
    import numpy as np

    from brainscore.caching import Cache, content_key
    from brainscore.data import NeuroidAssembly
    from brainscore.data.io import cached_assembly

    if point:
        install_nc_kill_point(point)
    rng = np.random.default_rng(23)
    n, q = 2000, 300

    def build():
        return NeuroidAssembly(rng.normal(size=(n, q)), dims=("presentation", "neuroid"), coords={
            "stimulus_id": ("presentation", [f"s{i:04d}" for i in range(n)]),
            "neuroid_id": ("neuroid", [f"n{j:03d}" for j in range(q)])})

    print("ready", flush=True)
    assembly = cached_assembly(Cache("fault-writes"), content_key(test="fault-writes-nc", n=n, q=q), NeuroidAssembly,
                               build)
    print(hashlib.sha256(np.ascontiguousarray(assembly.values).tobytes()).hexdigest(), flush=True)


def a_score(k: int = 0):
    """A scalar Score with the attrs ``brainscore.score`` sets (model, benchmark, version, raw, ceiling, error)."""
    from brainscore.metrics.score import Score

    score = Score(0.5 + k * 1e-3)
    score.attrs.update(model_identifier="fault-net", benchmark_identifier="Fault.bench", benchmark_version=1,
                       raw=Score(0.4 + k * 1e-3), ceiling=Score(0.8), error=0.01, ci95=(0.45, 0.55),
                       provenance={"start": "2026-11-25T12:00:00+00:00", "end": "2026-11-25T12:00:01+00:00",
                                   "model": {"weights_sha256": "ab" * 32}, "run": k})
    return score


def run_db(point: str | None) -> None:
    from sqlalchemy import event

    from brainscore.results import Database, record
    from brainscore.scoring.outcome import Outcome

    db = Database(os.environ["FAULT_DB_URL"])
    if point == "db-insert":
        @event.listens_for(db.engine, "after_cursor_execute")
        def after(conn, cursor, statement, parameters, context, executemany):
            if statement.lstrip().upper().startswith("INSERT INTO SCORE"):
                die()
    elif point == "db-commit":
        from sqlalchemy.orm import Session

        @event.listens_for(Session, "before_commit")
        def before_commit(session):
            session.flush()
            die()
    elif point not in (None, "db-loop"):
        raise SystemExit(f"unknown db kill point {point!r}")
    print("ready", flush=True)
    if point == "db-loop":
        for k in range(1_000_000):
            print(f"recorded {record(Outcome.from_score(a_score(k)), db)}", flush=True)
    print(record(Outcome.from_score(a_score()), db), flush=True)


if __name__ == "__main__":
    mode, point = sys.argv[1], os.environ.get("FAULT_KILL_POINT") or None
    run_nc(point) if mode == "nc" else run_db(point)
