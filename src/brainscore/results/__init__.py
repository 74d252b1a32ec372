"""The results database: scores and failures as rows with provenance (SQLAlchemy 2 + Alembic).

>>> from brainscore.results import Database, record
>>> from brainscore.scoring.outcome import Outcome
>>> record(Outcome.from_score(brainscore.score("pixels", "Kiani2007.IT-rdm")))  # doctest: +SKIP

:func:`~brainscore.results.records.record` is the one way an outcome enters the database; when the
database cannot take it, the outcome is kept in the journal (:mod:`brainscore.results.journal`) and
recorded the next time the database opens.
"""
from brainscore.results.database import (Database, DatabaseError, DatabaseUnavailable, ScoresRead, StoredModel, StoredScore,
                                         StoredSubmission, default_url)
from brainscore.results.records import NotRecorded, record
from brainscore.results.validity import InvalidScore, check_outcome

__all__ = ["Database", "DatabaseError", "DatabaseUnavailable", "InvalidScore", "NotRecorded", "record", "check_outcome", "ScoresRead", "StoredScore", "StoredModel",
           "StoredSubmission", "default_url"]
