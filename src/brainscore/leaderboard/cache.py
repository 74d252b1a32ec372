"""What is computed from the recorded scores, computed once per change of the results, not per request.

The website shows the leaderboard to every visitor; at the reference's scale (about 700 models x 23
benchmarks, 16,100 scores) aggregating it takes about a second. :class:`ResultsCache` keeps each
computed value with the :meth:`~brainscore.results.Database.results_version` it was computed at
(a counter the database bumps on every change of a score or of a model's visibility: one primary-key
lookup) and computes it again only when that changed: a score or failure recorded by any process (a
scoring child, ``brainscore score``, another web worker) invalidates it at the next request, with no
message between processes.

The scores and the leaderboard are not computed again from the whole table at a new version: the
cache reads only the rows added since (:meth:`~brainscore.results.Database.scores_after`) and
aggregates again only the models they belong to (:class:`~brainscore.leaderboard.aggregate.Standings`),
unless something other than new scores changed (the database's ``rewrites`` counter, migration
``0008``, or a row count that does not add up), when it reads everything. At 704 models x 23
benchmarks a new score costs a few milliseconds instead of about 2 s (``perf/web_load.py``).
"""
from __future__ import annotations

import contextvars
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from typing import Any, Callable, Iterable

from brainscore.leaderboard.aggregate import Standings, Tree, latest_versions, registered_tree
from brainscore.results import Database, StoredScore

__all__ = ["ResultsCache"]


class ResultsCache:
    """Values computed from a results database, each kept until a score is recorded.

    Parameters
    ----------
    db : Database
    benchmarks : str or list of str, optional
        Patterns restricting the leaderboard's leaves (see :func:`leaderboard_records`).
    tree : Tree, optional
        Default: the tree the registered plugins declare.
    max_values : int
        Most values kept (names used least recently are dropped first): rendered pages of every
        sort order, say, stay bounded.
    max_bytes : int
        Most bytes of the values given a ``size`` (rendered pages) kept, least recently used dropped
        first (default 64 MiB: a gzipped leaderboard page is about 75 kB).
    describe_failure : callable (StoredScore) -> str, optional
        The one-line reason the leaderboard shows beside a failed cell (default
        :func:`~brainscore.leaderboard.aggregate.failure_line`; the website passes a redacted one).

    Notes
    -----
    Thread-safe: concurrent requests for a value being computed wait for that one computation
    (never N copies of it at once). Values are shared between callers: do not modify them.

    Examples
    --------
    >>> cache = ResultsCache(Database("sqlite://"))
    >>> cache.records()
    []
    """

    def __init__(self, db: Database, benchmarks: str | Iterable[str] | None = None, tree: Tree | None = None,
                 max_values: int = 256, max_bytes: int = 64 * 2**20,
                 describe_failure: Callable[[StoredScore], str] | None = None):
        self.db, self.benchmarks, self.tree = db, benchmarks, tree
        self.describe_failure = describe_failure
        self.max_values, self.max_bytes = max_values, max_bytes
        self._values: OrderedDict[Any, tuple[int, Any]] = OrderedDict()  # least recently used first
        self._sizes: dict[Any, int] = {}
        self.bytes = 0  # the sizes of the values kept
        self._locks: dict[Any, threading.Lock] = {}
        self._guard = threading.Lock()
        self._pinned: contextvars.ContextVar[int | None] = contextvars.ContextVar(f"pinned-{id(self)}", default=None)
        self.computed = 0  # how many values were computed (tests and perf check that requests reuse them)
        self.full_reads = 0  # how many times every score was read (the rest were brought up to date by new rows)
        self._state: _State | None = None
        self._state_lock = threading.Lock()
        self._rebuilder = None

    def version(self) -> int:
        """The results database's current :meth:`~brainscore.results.Database.results_version` (or the one
        :meth:`pinned` in this context)."""
        pinned = self._pinned.get()
        return self.db.results_version() if pinned is None else pinned

    def state(self) -> tuple[int, int]:
        """``(version, rewrites)`` now (:meth:`~brainscore.results.Database.results_state`)."""
        return self.db.results_state()

    def recent(self, name: Any, compute: Callable[[], Any], state: tuple[int, int], max_age: float,
               size: Callable[[Any], int] | None = None) -> Any:
        """:meth:`get` at version ``state[0]``, except that a value computed less than ``max_age`` seconds
        ago at an older version with the same ``rewrites`` (only new scores recorded since) is given as it
        is; one younger than twice ``max_age`` is given too while it is built again in a background thread
        (nobody waits for the pages visitors share to be rebuilt; one older is built before the answer).

        Pages many visitors read (the leaderboard) change with every new score; while scores arrive
        several times a second, building each page once per score costs more than the server has. With
        ``max_age`` a page is built at most once per ``max_age`` seconds and a new score shows within
        twice ``max_age`` of being recorded (within ``max_age`` plus one build while visitors keep
        asking); anything else (a score changed or deleted, a model deleted or
        renamed) shows at the next request. ``max_age`` 0 is :meth:`get`.

        Parameters
        ----------
        name : hashable
            Only ever computed through this method (the value is kept with its rewrites and time).
        compute : callable
        state : (int, int)
            :meth:`state`, read in this request.
        max_age : float
            Seconds.
        size : callable, optional
            As :meth:`get`.
        """
        version, rewrites = state

        def usable(kept, horizon: float) -> bool:
            """Whether ``kept`` is of this version, or of this ``rewrites`` and younger than ``horizon``."""
            if kept is None:
                return False
            kept_version, (_, made_rewrites, made_at) = kept
            return kept_version == version or (max_age > 0 and made_rewrites == rewrites
                                               and time.monotonic() - made_at < horizon)

        kept = self._values.get(name)
        if usable(kept, max_age):
            self._touch(name)
            return kept[1][0]
        with self._guard:
            lock = self._locks.setdefault(name, threading.Lock())
        if usable(kept, 2 * max_age):  # due: built again off the request path, this one answered at once
            if lock.acquire(blocking=False):
                self._background().submit(self._rebuild, name, compute, state, size, lock)
            return kept[1][0]
        lock.acquire()
        try:
            kept = self._values.get(name)
            if usable(kept, max_age):
                return kept[1][0]
            return self._rebuild(name, compute, state, size)
        finally:
            lock.release()

    def _rebuild(self, name: Any, compute: Callable[[], Any], state: tuple[int, int],
                 size: Callable[[Any], int] | None, lock: threading.Lock | None = None) -> Any:
        """``compute()`` kept under ``name`` for :meth:`recent` (``lock`` released after, when given)."""
        try:
            value = compute()
            self._store(name, state[0], (value, state[1], time.monotonic()), size(value) if size else None)
            self.computed += 1
            return value
        except Exception:  # noqa: BLE001 - off the request path: the next request past 2 x max_age builds it itself
            if lock is None:
                raise
            import logging

            logging.getLogger(__name__).exception("rebuilding %r in the background failed", name)
        finally:
            if lock is not None:
                lock.release()

    def _background(self):
        """The one thread that rebuilds due values of :meth:`recent` (made on first use)."""
        with self._guard:
            if self._rebuilder is None:
                from concurrent.futures import ThreadPoolExecutor

                self._rebuilder = ThreadPoolExecutor(1, thread_name_prefix="brainscore-page-rebuild")
            return self._rebuilder

    @contextmanager
    def pinned(self, version: int):
        """Within the block (this thread or task only), :meth:`version` is ``version`` without a query:
        everything one page is built from is read at one version, and read once."""
        token = self._pinned.set(version)
        try:
            yield
        finally:
            self._pinned.reset(token)

    def peek(self, name: Any, version: int) -> Any:
        """The value kept under ``name`` for ``version``, or None (nothing computed)."""
        kept = self._values.get(name)
        if kept is not None and kept[0] == version:
            self._touch(name)
            return kept[1]
        return None

    def get(self, name: Any, compute: Callable[[], Any], version: int | None = None,
            size: Callable[[Any], int] | None = None) -> Any:
        """``compute()``, computed once per results version under ``name`` (any hashable).

        Parameters
        ----------
        name : hashable
            What the value is, e.g. ``("benchmark", "Kiani2007.IT-rdm")``.
        compute : callable
            Computes the value from the database.
        version : int, optional
            The version already read in this request (saves one query).
        size : callable, optional
            The value's size in bytes (counted against ``max_bytes``).
        """
        version = self.version() if version is None else version
        kept = self._values.get(name)
        if kept is not None and kept[0] == version:
            self._touch(name)
            return kept[1]
        with self._guard:
            lock = self._locks.setdefault(name, threading.Lock())
        with lock:
            kept = self._values.get(name)
            if kept is not None and kept[0] == version:
                return kept[1]  # computed by the request this one waited for
            value = compute()
            self._store(name, version, value, size(value) if size else None)
            self.computed += 1
            return value

    def _store(self, name: Any, version: int, value: Any, size: int | None) -> None:
        """Keep ``value`` under ``name`` for ``version``, dropping the least recently used beyond the limits."""
        with self._guard:
            self._values[name] = (version, value)
            self._values.move_to_end(name)
            self.bytes += (size or 0) - self._sizes.pop(name, 0)
            if size:
                self._sizes[name] = size
            while len(self._values) > 1 and (len(self._values) > self.max_values or self.bytes > self.max_bytes):
                dropped, _ = self._values.popitem(last=False)
                self._locks.pop(dropped, None)
                self.bytes -= self._sizes.pop(dropped, 0)

    def _touch(self, name: Any) -> None:
        with self._guard:
            if name in self._values:
                self._values.move_to_end(name)

    def scores(self, version: int | None = None) -> list[StoredScore]:
        """Every recorded score and failure (``db.scores(include_failed=True)``, oldest first), read once (a
        shared list: do not change it)."""
        version = self.version() if version is None else version
        return self.get("scores", lambda: self._current(version).scores, version)

    def _current(self, version: int) -> "_State":
        """The scores and standings at results version ``version`` or later: the rows added since the last
        state read and their models aggregated again, or everything read anew when anything else changed."""
        with self._state_lock:
            state = self._state
            if state is not None and state.version >= version:
                return state  # brought up to date by another value of this version
            if state is not None:
                read = self.db.scores_after(state.last_id)
                if read is not None and read.rewrites == state.rewrites and read.count == len(state.scores) + len(read.scores):
                    standings = state.standings.copy() if read.scores else state.standings
                    if standings.add(read.scores):
                        self._state = state.extended(read.scores, read.version, standings)
                        return self._state
            read = self.db.scores_after(0)
            if read is None:  # writers kept committing while everything was read: read as before, tagged stale
                scores, rewrites, read_at = self.db.scores(include_failed=True), -1, version
            else:
                scores, rewrites, read_at = read.scores, read.rewrites, read.version
            tree = self.tree or registered_tree(self.benchmarks)
            self._state = _State(scores, rewrites, read_at, Standings(tree, latest_versions(self.db, tree), scores,
                                                                           self.describe_failure))
            self.full_reads += 1
            return self._state

    def scores_of(self, model: str | None = None, benchmark: str | None = None, include_failed: bool = False,
                  version: int | None = None) -> list[StoredScore]:
        """The records of one model or one benchmark, as ``db.scores(model, benchmark, include_failed)`` returns them.

        Raises
        ------
        ValueError
            If neither or both of ``model`` and ``benchmark`` are given.
        """
        if (model is None) == (benchmark is None):
            raise ValueError("give either a model or a benchmark")
        version = self.version() if version is None else version
        field, key = ("model", model) if model is not None else ("benchmark", benchmark)
        found = self.get(f"scores by {field}", lambda: self._current(version).by[field], version).get(key, [])
        return found if include_failed else [r for r in found if r.status == "done"]

    def last_change(self, benchmark: str, version: int | None = None) -> tuple[int, int]:
        """``(rewrites, row id)``: the ``rewrites`` counter and the id of the newest score or failure of
        ``benchmark`` (0: none) at results version ``version`` or later. Equal pairs mean the same records
        of ``benchmark``: what is built from them alone (its page) need not be built again."""
        state = self._current(self.version() if version is None else version)
        rows = state.by["benchmark"].get(benchmark)
        return state.rewrites, (rows[-1].id if rows else 0)

    def records(self, version: int | None = None) -> list[dict]:
        """:func:`~brainscore.leaderboard.aggregate.leaderboard_records`, cached (a shared list: copy to sort)."""
        version = self.version() if version is None else version
        return self.get("leaderboard", lambda: self._current(version).standings.records, version)

    def aggregates_of(self, model: str, version: int | None = None) -> dict | None:
        """The leaderboard entry of ``model`` (``{"model", "scores", "missing"}``), or None if it has no score."""
        version = self.version() if version is None else version
        by_model = self.get("by_model", lambda: {e["model"]: e for e in self.records(version)}, version)
        return by_model.get(model)

    def invalidate(self) -> None:
        """Drop every value (the next request computes them again, from every score read anew)."""
        with self._state_lock:
            self._state = None
        with self._guard:
            self._values.clear()
            self._sizes.clear()
            self.bytes = 0


class _State:
    """Every score read (oldest first) and grouped by model and by benchmark, the results version and
    ``rewrites`` counter they were read at, and their standings. Never changed once made (pages being
    built read it): :meth:`extended` makes the next one."""

    def __init__(self, scores: list[StoredScore], rewrites: int, version: int, standings: Standings,
                 by: dict[str, dict[str, list[StoredScore]]] | None = None, last_id: int | None = None):
        self.scores, self.rewrites, self.version, self.standings = scores, rewrites, version, standings
        self.last_id = max((s.id for s in scores), default=0) if last_id is None else last_id
        if by is None:
            by = {"model": {}, "benchmark": {}}
            for record in scores:
                by["model"].setdefault(record.model, []).append(record)
                by["benchmark"].setdefault(record.benchmark, []).append(record)
        self.by = by

    def extended(self, added: list[StoredScore], version: int, standings: Standings) -> "_State":
        """The state with the rows ``added`` after these (oldest first), read at ``version``."""
        by = {}
        for field in ("model", "benchmark"):
            new: dict[str, list[StoredScore]] = {}
            for record in added:
                new.setdefault(getattr(record, field), []).append(record)
            by[field] = {**self.by[field], **{key: self.by[field].get(key, []) + rows for key, rows in new.items()}}
        return _State(self.scores + added, self.rewrites, version, standings, by,
                      max([self.last_id] + [record.id for record in added]))
