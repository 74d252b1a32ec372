"""SIGKILL inside the ``.nc`` write and inside the results-database write (issue 23 item 8).

The random kills of ``test_fault_kill.py`` almost never land in these writes (they take milliseconds
of a run's seconds), so here the process kills itself at named points inside them
(``fault_writes_target.py`` lists them). After each kill: every cache entry verifies or is absent,
and the database passes SQLite's ``integrity_check`` and holds no score at all (never a partial
one); the next run completes with the values of an unkilled run, exactly one score recorded. A last
test kills a process that records scores back to back at random moments (so the kill lands inside
the recording nearly every time) and checks that every score whose commit returned is there,
complete, and nothing else but at most the one in flight.
"""
from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import brainscore
from brainscore.caching.cache import CHECKSUM_SUFFIX, LOCK_SUFFIX, verify_file
from brainscore.results import Database

TARGET = Path(__file__).with_name("fault_writes_target.py")
SRC = Path(brainscore.__file__).resolve().parent.parent
NC_POINTS = ["nc-created", "nc-data", "nc-closing", "nc-checksum"]
DB_POINTS = ["db-insert", "db-commit"]


def _start(mode: str, home: Path, point: str | None = None) -> subprocess.Popen:
    env = {**os.environ, "BRAINSCORE_HOME": str(home), "PYTHONPATH": str(SRC),
           "FAULT_DB_URL": f"sqlite:///{home / 'results.sqlite'}", "FAULT_KILL_POINT": point or ""}
    return subprocess.Popen([sys.executable, str(TARGET), mode], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _run(mode: str, home: Path, point: str | None = None) -> tuple[int, list[str], str]:
    process = _start(mode, home, point)
    out, err = process.communicate(timeout=300)
    return process.returncode, out.split(), err


def _cache_entries(home: Path) -> list[Path]:
    """Every cache entry, each checked against its checksum (an entry that does not verify fails the test)."""
    entries = []
    for path in (home / "cache").rglob("*") if (home / "cache").exists() else []:
        if path.is_file() and not path.name.startswith(".") and not path.name.endswith((CHECKSUM_SUFFIX, LOCK_SUFFIX)):
            assert verify_file(path) is None, f"{path}: {verify_file(path)}"
            entries.append(path)
    return entries


@pytest.fixture(scope="module")
def reference_nc(tmp_path_factory) -> str:
    """sha256 of the assembly's values from a run that is never killed."""
    code, out, err = _run("nc", tmp_path_factory.mktemp("fresh"))
    assert code == 0, err
    return out[-1]


@pytest.mark.parametrize("point", NC_POINTS)
def test_kill_inside_the_nc_write_leaves_no_entry_and_the_rerun_is_identical(tmp_path, reference_nc, point):
    home = tmp_path / "home"
    code, out, err = _run("nc", home, point)
    assert code == -9, f"not killed at {point}: {code} {out} {err}"
    assert out == ["ready"]
    assert _cache_entries(home) == []  # a half-written file is never an entry
    assert list(home.rglob("*.part")), "the kill point was not inside the write (no partial file)"
    code, out, err = _run("nc", home)
    assert code == 0, err
    assert out[-1] == reference_nc  # the value read back equals an unkilled run's, bit for bit
    assert len(_cache_entries(home)) == 1
    assert not list(home.rglob("*.part"))  # the killed write's leftovers were swept


def _integrity(db_file: Path) -> str:
    with sqlite3.connect(db_file) as connection:  # opening rolls back a hot journal, as every reader does
        return connection.execute("PRAGMA integrity_check").fetchone()[0]


@pytest.mark.parametrize("point", DB_POINTS)
def test_kill_inside_the_database_write_records_nothing_partial(tmp_path, point):
    home = tmp_path / "home"
    home.mkdir()
    code, out, err = _run("db", home, point)
    assert code == -9, f"not killed at {point}: {code} {out} {err}"
    assert out == ["ready"]
    db_file = home / "results.sqlite"
    # killed inside a transaction: its log is left (SQLite in WAL mode since the uploads' rework, a rollback
    # journal before)
    assert (home / "results.sqlite-wal").is_file() or (home / "results.sqlite-journal").is_file()
    assert _integrity(db_file) == "ok"
    with Database(f"sqlite:///{db_file}") as db:
        assert db.scores(include_failed=True) == []
    code, out, err = _run("db", home)
    assert code == 0, err
    with Database(f"sqlite:///{db_file}") as db:
        scores = db.scores()
    assert [(s.id, s.score, s.raw, s.ceiling) for s in scores] == [(int(out[-1]), 0.5, 0.4, 0.8)]


def test_random_kills_while_recording_scores_lose_only_the_one_in_flight(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    db_file = home / "results.sqlite"
    rng = random.Random(23)
    committed: list[int] = []
    before: set[int] = set()
    for _ in range(4):
        process = _start("db", home, "db-loop")
        assert process.stdout.readline().strip() == "ready"
        first = process.stdout.readline()
        assert first.startswith("recorded ")  # recording is under way
        time.sleep(rng.uniform(0.05, 0.5))
        process.kill()
        out, _ = process.communicate(timeout=60)
        this_run = [int(line.split()[1]) for line in [first, *out.splitlines()]
                    if line.startswith("recorded ") and len(line.split()) == 2 and line.split()[1].isdigit()]
        committed += this_run
        assert _integrity(db_file) == "ok"
        with Database(f"sqlite:///{db_file}") as db:
            scores = db.scores()
        ids = {s.id for s in scores}
        assert set(committed) <= ids  # every commit that returned is kept
        assert len(ids - before) - len(this_run) <= 1  # and at most the one whose commit finished just before the kill
        assert all(s.score is not None and s.raw is not None and s.ceiling == 0.8 and
                   s.model == "fault-net" for s in scores)  # no partial row
        before = ids
    assert len(committed) >= 4
