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
                 max_values: int = 256, max_bytes: int = 64 * 2**20):
        self.db, self.benchmarks, self.tree = db, benchmarks, tree
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

    def version(self) -> int:
        """The results database's current :meth:`~brainscore.results.Database.results_version` (or the one
        :meth:`pinned` in this context)."""
        pinned = self._pinned.get()
        return self.db.results_version() if pinned is None else pinned

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
            with self._guard:
                self._values[name] = (version, value)
                self._values.move_to_end(name)
                self.bytes += (size(value) if size else 0) - self._sizes.pop(name, 0)
                if size:
                    self._sizes[name] = size(value)
                while len(self._values) > 1 and (len(self._values) > self.max_values or self.bytes > self.max_bytes):
                    dropped, _ = self._values.popitem(last=False)
                    self._locks.pop(dropped, None)
                    self.bytes -= self._sizes.pop(dropped, 0)
            self.computed += 1
            return value

    def _touch(self, name: Any) -> None:
        with self._guard:
            if name in self._values:
                self._values.move_to_end(name)

    def scores(self, version: int | None = None) -> list[StoredScore]:
        """Every recorded score and failure (``db.scores(include_failed=True)``, oldest first), read once (a
        shared list: do not change it)."""
        return self.get("scores", lambda: self._current().scores, version)

    def _current(self) -> "_State":
        """The scores and standings brought up to date: the rows added since the last state read and their
        models aggregated again, or everything read anew when anything else changed."""
        with self._state_lock:
            state = self._state
            if state is not None:
                read = self.db.scores_after(state.last_id)
                if read is not None and read.rewrites == state.rewrites and read.count == len(state.scores) + len(read.scores):
                    if not read.scores:
                        return state
                    standings = state.standings.copy()
                    if standings.add(read.scores):
                        self._state = _State(state.scores + read.scores, read.rewrites, standings)
                        return self._state
            read = self.db.scores_after(0)
            if read is None:  # writers kept committing while everything was read: read as before, tagged stale
                scores, rewrites = self.db.scores(include_failed=True), -1
            else:
                scores, rewrites = read.scores, read.rewrites
            tree = self.tree or registered_tree(self.benchmarks)
            self._state = _State(scores, rewrites, Standings(tree, latest_versions(self.db, tree), scores))
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

        def group() -> dict[str, list[StoredScore]]:
            grouped: dict[str, list[StoredScore]] = {}
            for record in self.scores(version):
                grouped.setdefault(getattr(record, field), []).append(record)
            return grouped

        found = self.get(f"scores by {field}", group, version).get(key, [])
        return found if include_failed else [r for r in found if r.status == "done"]

    def records(self, version: int | None = None) -> list[dict]:
        """:func:`~brainscore.leaderboard.aggregate.leaderboard_records`, cached (a shared list: copy to sort)."""
        version = self.version() if version is None else version
        return self.get("leaderboard", lambda: self._current().standings.records, version)

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
    """Every score read (oldest first), the ``rewrites`` counter they were read at, and their standings."""

    def __init__(self, scores: list[StoredScore], rewrites: int, standings: Standings):
        self.scores, self.rewrites, self.standings = scores, rewrites, standings
        self.last_id = max((s.id for s in scores), default=0)
