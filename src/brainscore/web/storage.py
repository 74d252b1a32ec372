"""The server's own storage failing under a request: a full disk, a read-only or locked database.

Neither is the visitor's fault nor theirs to fix, and neither may answer a bare 500 or show them SQL:
:func:`answer` turns one into a status and a sentence in the visitor's terms (507 for a full disk, 503 for a database
that cannot take changes now), the app's exception handlers (:mod:`brainscore.web.app`) answer with it and log the
detail for the administrators. :func:`retrying` runs a database step again, a bounded number of times, when SQLite
reports a lock or a read-only database that may be transient (another writer, a file being replaced or remounted).
"""
from __future__ import annotations

import errno
import logging
import time
from typing import Callable, TypeVar

from sqlalchemy.exc import DBAPIError

logger = logging.getLogger(__name__)
T = TypeVar("T")

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
RETRIES = 3
"""Attempts of a database step that meets a transient lock or read-only error (:func:`retrying`)."""
PAUSE_S = 0.25
"""Seconds before the first retry; doubled before each next one."""
FULL = ("the server's disk is full, so nothing of this request was saved; please try again later (the site's "
        "administrators are told)")
UNAVAILABLE = ("the server's database cannot take changes right now, so nothing of this request was saved; please try "
               "again in a few minutes (the site's administrators are told)")
_TRANSIENT = ("database is locked", "database is busy", "database table is locked", "readonly database",
              "read-only database")
_UNAVAILABLE = (*_TRANSIENT, "disk i/o error", "unable to open database file")


def _database_text(error: BaseException) -> str:
    return str(getattr(error, "orig", None) or error).lower()


def transient(error: BaseException) -> bool:
    """Whether ``error`` is a database lock or read-only error worth trying again."""
    return isinstance(error, DBAPIError) and any(t in _database_text(error) for t in _TRANSIENT)


def answer(error: BaseException) -> tuple[int, str] | None:
    """``(status, message)`` for a storage failure of the server (507: a full disk; 503: a database that cannot take
    changes), None for any other error."""
    if isinstance(error, OSError) and error.errno in FULL_ERRNOS:
        return 507, FULL
    if isinstance(error, DBAPIError):
        text = _database_text(error)
        if "database or disk is full" in text:
            return 507, FULL
        if any(t in text for t in _UNAVAILABLE):
            return 503, UNAVAILABLE
    return None


def retrying(step: Callable[[], T], attempts: int = RETRIES, pause_s: float = PAUSE_S) -> T:
    """``step()``, run again up to ``attempts`` times in all while it fails with a :func:`transient` database error
    (waiting ``pause_s``, then twice as long, ...); ``step`` must be safe to repeat (it opens its own session or
    rolls back). The last error is raised."""
    for attempt in range(1, attempts + 1):
        try:
            return step()
        except DBAPIError as error:
            if attempt == attempts or not transient(error):
                raise
            logger.warning("database step failed (attempt %d of %d), trying again: %s", attempt, attempts,
                           _database_text(error)[:300])
            time.sleep(pause_s * 2 ** (attempt - 1))
    raise AssertionError("unreachable")
