"""The journal of outcomes the results database could not take: nothing computed is lost.

When recording an outcome fails (a corrupt SQLite file, a file locked by another process, a full
disk, a server that is down), :func:`keep` writes it to
``$BRAINSCORE_HOME/journal/<time>-<pid>-<random>.json``: one JSON file per outcome, written
atomically (a temporary file and a rename, so a crash leaves the old state or the whole entry,
never half of one), with the database it was meant for. The next time that database opens,
:func:`replay` records every entry meant for it and deletes the entry, under a per-entry file lock
so that two processes opening the database at once never record one entry twice.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import uuid
import warnings
from pathlib import Path
from typing import Any, Callable

from brainscore import config

__all__ = ["folder", "keep", "pending", "replay"]

SUFFIX = ".json"


def folder() -> Path:
    """``$BRAINSCORE_HOME/journal``: where the outcomes not yet recorded wait."""
    return config.home() / "journal"


def keep(outcome: dict[str, Any], database: str, reason: str, submission_id: int | None = None) -> Path:
    """Write ``outcome`` (:meth:`~brainscore.scoring.outcome.Outcome.to_json`) to the journal; its path.

    Parameters
    ----------
    outcome : dict
        The outcome as plain JSON data.
    database : str
        The database it is meant for (:attr:`brainscore.results.Database.identity`).
    reason : str
        Why it could not be recorded (kept for whoever reads the file).
    submission_id : int, optional

    Raises
    ------
    OSError
        If the journal cannot be written either (``$BRAINSCORE_HOME`` read-only or full); the caller
        then prints the outcome, the only copy left.
    """
    from brainscore.caching.atomic import atomic_write_text

    now = dt.datetime.now(dt.timezone.utc)
    path = folder() / f"{now:%Y%m%dT%H%M%S%f}-{os.getpid()}-{uuid.uuid4().hex[:8]}{SUFFIX}"
    entry = {"database": database, "submission_id": submission_id, "reason": reason, "kept": now.isoformat(),
             "outcome": outcome}
    atomic_write_text(path, json.dumps(entry, indent=1, default=str) + "\n")
    return path


def pending(database: str | None = None) -> list[Path]:
    """The journal's entries (oldest first), those meant for ``database`` only when it is given."""
    try:
        paths = sorted(folder().glob(f"*{SUFFIX}"))
    except OSError:
        return []
    if database is None:
        return paths
    return [path for path in paths if _read(path).get("database") == database]


def _read(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def replay(database: str, record: Callable[[dict[str, Any], int | None], Any]) -> int:
    """Record every journal entry meant for ``database`` with ``record(outcome, submission_id)``; how many.

    An entry is deleted once recorded. An entry that fails again stays (with a warning naming it),
    to be replayed the next time. An entry that is no recordable outcome (a score that is not finite or lies
    outside its benchmark's range, :func:`brainscore.results.validity.check_outcome`; an unreadable outcome) is
    never recorded: it is renamed ``<entry>.refused`` with a warning that says why, and not replayed again.
    """
    from filelock import FileLock, Timeout

    from brainscore.results.validity import InvalidScore, check_outcome
    from brainscore.scoring.outcome import Outcome

    done = 0
    for path in pending(database):
        lock_path = Path(str(path) + ".lock")
        try:
            with FileLock(str(lock_path), timeout=0):
                if not path.exists():  # another process replayed it meanwhile
                    continue
                entry = _read(path)
                try:
                    check_outcome(Outcome.from_json(entry.get("outcome") or {}))
                except (InvalidScore, TypeError, ValueError) as refused:
                    path.rename(path.with_name(path.name + ".refused"))
                    warnings.warn(f"the journal entry {path} is not recorded in {database}: {refused}; it is kept as "
                                  f"{path.name}.refused and not replayed again", stacklevel=2)
                    continue
                try:
                    record(entry["outcome"], entry.get("submission_id"))
                except Exception as error:  # noqa: BLE001 - the entry stays for the next time
                    warnings.warn(f"the journal entry {path} could not be recorded in {database} ({error}); it is "
                                  f"kept and replayed the next time the database opens", stacklevel=2)
                    continue
                path.unlink()
                done += 1
        except Timeout:
            continue  # another process is replaying it now
        lock_path.unlink(missing_ok=True)  # ours, released; a late comer finds the entry gone
    return done
