"""The results database: scores and failures as rows with provenance (SQLAlchemy 2 + Alembic).

>>> from brainscore.results import Database
>>> db = Database()          # $BRAINSCORE_DB_URL, else sqlite:///$BRAINSCORE_HOME/results.sqlite  # doctest: +SKIP
>>> db.record_score(brainscore.score("pixels", "Kiani2007.IT-rdm"))                                 # doctest: +SKIP
"""
from brainscore.results.database import (Database, DatabaseError, ModelRecord, ScoreRecord, SubmissionRecord,
                                         default_url)

__all__ = ["Database", "DatabaseError", "ScoreRecord", "ModelRecord", "SubmissionRecord", "default_url"]
