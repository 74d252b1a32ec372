"""Recording a score's outcome: the one way a result enters the results database.

:func:`record` writes an :class:`~brainscore.scoring.outcome.Outcome` (a score or a failure) to the
results database; ``brainscore score``, ``brainscore run`` and the website's scoring child all
record through it. When the database cannot take it (a corrupt SQLite file, a file locked by another
process, a full disk, a server that is down), the outcome is not lost: it is kept in the journal
(:mod:`brainscore.results.journal`, under ``$BRAINSCORE_HOME/journal``) and recorded the next time
that database opens, and :class:`NotRecorded` says where it is kept and what to fix.

A run (:mod:`brainscore.runner`) keeps its results in a *store* with two methods, ``find`` (the
latest successful outcome of a pair with a given run key) and ``record``:
:class:`DatabaseOutcomeStore` (the results database, the run key in each row's provenance) or
:class:`JsonLinesOutcomeStore` (``$BRAINSCORE_HOME/runs/results.jsonl``, one JSON object per outcome);
:func:`open_outcome_store` picks one.
"""
from __future__ import annotations

import json
import os
import time
import warnings
from pathlib import Path
from typing import Any

from brainscore import config
from brainscore.errors import SEED_HINT, WeightsChangedWarning
from brainscore.results.database import Database, DatabaseError, DatabaseUnavailable, identity_of
from brainscore.progress import stage
from brainscore.results import journal
from brainscore.results.validity import InvalidScore, check_outcome
from brainscore.scoring.outcome import Outcome

__all__ = ["record", "NotRecorded", "InvalidScore", "JsonLinesOutcomeStore", "DatabaseOutcomeStore",
           "open_outcome_store", "stored_outcome"]


class NotRecorded(DatabaseError):
    """The results database could not take an outcome; it is kept in the journal (or, failing that, nowhere).

    Attributes
    ----------
    outcome : Outcome
        What was to be recorded (print it: it may be the only copy).
    kept : Path or None
        The journal entry holding it; None when the journal could not be written either.
    """

    def __init__(self, message: str, outcome: Outcome, kept: Path | None):
        super().__init__(message)
        self.outcome, self.kept = outcome, kept


def record(outcome: Outcome, database: Database | str | None = None, submission_id: int | None = None) -> int:
    """Record ``outcome`` in the results database; returns the new row's id.

    Parameters
    ----------
    outcome : Outcome
        A done or failed outcome (:meth:`Outcome.from_score`, :meth:`Outcome.from_failure`).
    database : Database or str, optional
        An open database (or anything with its ``record`` and ``identity``) or its URL (default
        ``$BRAINSCORE_DB_URL``, else ``sqlite:///$BRAINSCORE_HOME/results.sqlite``). A database opened
        here is closed here.
    submission_id : int, optional
        The website submission the outcome belongs to.

    Raises
    ------
    NotRecorded
        If the database cannot be opened or written; the outcome is then kept in the journal and
        recorded when that database next opens. The message names the database, what is wrong with
        it and the fix, and the journal file.
    InvalidScore
        If ``outcome`` is a score that cannot be one (not finite, outside its benchmark's range, a raw score or
        ceiling that is not finite: :func:`brainscore.results.validity.check_outcome`); nothing is written or kept.
    DatabaseError
        If the outcome itself cannot be recorded (its benchmark's version is unknown) or the URL is
        malformed; nothing is kept then, since no later attempt would succeed.
    """
    check_outcome(outcome)  # before the journal too: a score refused now would be refused at every replay
    opened = None
    what = f"{'score' if outcome.status == 'done' else 'failure'} of {outcome.model} on {outcome.benchmark}"
    try:
        with stage(f"recording the {what}"):
            db = (opened := Database(database)) if database is None or isinstance(database, str) else database
            _check_weights(db, outcome)
            return db.record(outcome, submission_id=submission_id)
    except DatabaseUnavailable as error:
        where = identity_of(database) if database is None or isinstance(database, str) else database.identity
        what = f"the {'score' if outcome.status == 'done' else 'failure'} of {outcome.model} on {outcome.benchmark}"
        try:
            kept = journal.keep(outcome.to_json(), where, str(error), submission_id)
        except OSError as journal_error:
            raise NotRecorded(f"{error}. {what[0].upper()}{what[1:]} was not recorded and could not be kept in the "
                              f"journal either ({journal.folder()}: {journal_error.strerror or journal_error})",
                              outcome, None) from None
        raise NotRecorded(f"{error}. {what[0].upper()}{what[1:]} is kept in {kept} and will be recorded the next time "
                          f"the database opens", outcome, kept) from None
    finally:
        if opened is not None:
            opened.close()


def _check_weights(db: Database, outcome: Outcome) -> None:
    """Warn when ``outcome``'s model weights differ from those its latest earlier record was computed with.

    Warns
    -----
    WeightsChangedWarning
        Naming the record and both weights sha256, and how to seed the network (an unseeded random initialisation
        scores another network in every process: issue 29, 0.1481 against 0.1584).
    """
    weights = ((outcome.provenance or {}).get("model") or {}).get("weights_sha256")
    if outcome.status != "done" or not weights or not hasattr(db, "scores"):
        return
    try:
        earlier = db.scores(outcome.model)
    except DatabaseError:
        return  # the write that follows says what is wrong with the database
    for stored in reversed(earlier):
        before = ((stored.provenance or {}).get("model") or {}).get("weights_sha256")
        if before:
            if before != weights:
                warnings.warn(f"model {outcome.model!r}: its weights (sha256 {weights[:12]}…) differ from those of "
                              f"its record #{stored.id} on {stored.benchmark} ({before[:12]}…), so its scores are of "
                              f"different networks. If it is initialised at random (weights=None), {SEED_HINT}",
                              WeightsChangedWarning, stacklevel=3)
            return


def stored_outcome(stored, model: str | None = None, benchmark: str | None = None) -> Outcome:
    """The outcome of a score read back from the database (what a reused, skipped pair reports): the numbers
    of the row, and from its provenance the formula, the layer's commitment, the bootstrap's unit, the
    ceiling's error and the duration."""
    provenance = stored.provenance or {}
    layers = stored.layers or None
    commitment = (provenance.get("model") or {}).get("commitment") or None
    layer = (commitment or {}).get("layer") or (next(iter(layers.values())) if layers and len(layers) == 1 else None)
    duration = provenance.get("duration_s")
    return Outcome(model=model or stored.model, benchmark=benchmark or stored.benchmark, status="done",
                   score=stored.score, raw=stored.raw, ceiling=stored.ceiling, error=stored.error, ci95=stored.ci95,
                   ceiling_error=(provenance.get("ceiling") or {}).get("error"), formula=provenance.get("formula"),
                   layer=layer, layers=layers, method=(commitment or {}).get("method"), commitment=commitment,
                   region=(commitment or {}).get("region"),
                   duration_s=float(duration) if duration is not None else None,
                   bootstrap_unit=(provenance.get("bootstrap") or {}).get("unit"),
                   benchmark_version=stored.benchmark_version, provenance=provenance,
                   provenance_key=stored.provenance_key)


class JsonLinesOutcomeStore:
    """Outcomes appended to a JSON-lines file (one summary per line, with its run key, flushed per outcome).

    Parameters
    ----------
    path : path, optional
        Default ``$BRAINSCORE_HOME/runs/results.jsonl``.
    """

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path) if path is not None else config.home() / "runs" / "results.jsonl"

    def _lines(self) -> list[dict[str, Any]]:
        if not self.path.is_file():
            return []
        stat = self.path.stat()
        if getattr(self, "_read", (None,))[0] == (stat.st_size, stat.st_mtime_ns):
            return self._read[1]  # unchanged since the last read (a grid looks up every pair)
        lines = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a line cut short by a killed run
        self._read = ((stat.st_size, stat.st_mtime_ns), lines)
        return lines

    def find(self, model: str, benchmark: str, key: str) -> Outcome | None:
        """The latest successful outcome of (model, benchmark) with run key ``key``, or None."""
        for line in reversed(self._lines()):
            if (line.get("model") == model and line.get("benchmark") == benchmark
                    and line.get("status") == "done" and line.get("run_key") == key):
                return Outcome.from_json(line)
        return None

    def record(self, outcome: Outcome, key: str) -> None:
        """Append ``outcome``'s summary (a score or a failure) with its run key and the time."""
        line = {**outcome.summary(), "run_key": key, "recorded": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line, default=str) + "\n")
            f.flush()
            os.fsync(f.fileno())


class DatabaseOutcomeStore:
    """Outcomes in the results database (:class:`brainscore.results.Database`), through :func:`record`.

    The run key is stored in each row's provenance (``provenance["run_key"]``).
    """

    def __init__(self, database: Database):
        self.database = database

    def find(self, model: str, benchmark: str, key: str) -> Outcome | None:
        """The latest successful outcome of (model, benchmark) whose provenance carries run key ``key``, or None."""
        stored = self.find_record(model, benchmark, key)
        return None if stored is None else stored_outcome(stored, model, benchmark)

    def find_record(self, model: str, benchmark: str, key: str):
        """The latest successful :class:`~brainscore.results.StoredScore` of (model, benchmark) with run key
        ``key`` (its id and end time included), or None."""
        for stored in reversed(self.database.scores(model, benchmark)):
            if (stored.provenance or {}).get("run_key") == key:
                return stored
        return None

    def record(self, outcome: Outcome, key: str) -> None:
        """Record ``outcome`` (a score or a failure) with the run key added to its provenance."""
        record(outcome.with_provenance(run_key=key), self.database)


def open_outcome_store(path: str | os.PathLike | None = None):
    """The store a run writes to: the results database, or the JSON-lines file at ``path`` when given."""
    if path is None:
        return DatabaseOutcomeStore(Database())
    return JsonLinesOutcomeStore(path)
