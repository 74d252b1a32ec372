"""A model's visibility changed and a model deleted, on SQLite and PostgreSQL: its score rows go, a
``deleted_models`` row records it, and the results version changes (the leaderboard cache recomputes).
Revision 0005 keeps the accounts made before it (without an address)."""
from __future__ import annotations

import pytest
from sqlalchemy import create_engine, select, text
from sqlalchemy.orm import Session

from brainscore.errors import BrainScoreError
from brainscore.leaderboard.cache import ResultsCache
from brainscore.metrics.score import Score
from brainscore.results import Database, record
from brainscore.results.schema import DeletedModel, User
from brainscore.scoring.outcome import Outcome
from test_migrations import differences, upgrade

BENCHMARK = "Cowley2026.210325.V4-pls"


def _score(db, model, value):
    record(Outcome.from_score(Score.of(value, error=0.01, raw=value, ceiling=1.0, model_identifier=model,
                                       benchmark_identifier=BENCHMARK)), db)


def test_deleting_a_model_removes_its_scores_and_changes_the_results_version(db_url):
    db = Database(db_url)
    db.add_model("a-net", owner="alice", public=True)
    _score(db, "a-net", 0.2)
    _score(db, "b-net", 0.3)
    _score(db, "a-net", 0.25)  # the newest row: deleting it lowers the largest score id
    cache = ResultsCache(db)
    assert [r["model"] for r in cache.records()] == ["b-net", "a-net"]
    before = db.results_version()
    assert db.delete_model("a-net") == 2
    assert db.model("a-net") is None and db.scores("a-net", include_failed=True) == []
    assert [s.model for s in db.scores()] == ["b-net"]
    assert db.results_version() != before
    assert [r["model"] for r in cache.records()] == ["b-net"]
    with Session(db.engine) as session:
        (row,) = session.scalars(select(DeletedModel)).all()
        assert (row.identifier, row.owner, row.scores) == ("a-net", "alice", 2)
    with pytest.raises(BrainScoreError, match="no model 'a-net'"):
        db.delete_model("a-net")
    _score(db, "a-net", 0.4)  # submitted again: scored anew, nothing of the old rows comes back
    assert [s.score for s in db.scores("a-net")] == [pytest.approx(0.4)]


def test_visibility_is_changed_after_submission(db_url):
    db = Database(db_url)
    db.add_model("a-net", owner="alice", public=True)
    db.set_public("a-net", False)
    assert db.model("a-net").public is False and db.private_models() == {"a-net": "alice"}
    db.set_public("a-net", True)
    assert db.private_models() == {}
    with pytest.raises(BrainScoreError, match="no model 'x-net'"):
        db.set_public("x-net", True)


def test_revision_0005_keeps_existing_accounts_without_an_address(db_url):
    engine = create_engine(db_url)
    upgrade(engine, "0004")
    with engine.begin() as connection:
        connection.execute(text("INSERT INTO web_users (username, password_hash, created) "
                                "VALUES ('alice', 'argon2-hash', '2026-11-25 10:00:00')"))
    engine.dispose()
    db = Database(db_url)
    with Session(db.engine) as session:
        (user,) = session.scalars(select(User)).all()
        assert (user.username, user.email, user.email_verified) == ("alice", None, None)
        session.add(User(username="bob", password_hash="h", email="bob@example.org"))
        session.commit()
        session.add(User(username="bob2", password_hash="h", email="bob@example.org"))
        with pytest.raises(Exception, match="(?i)unique"):
            session.commit()
    assert differences(db.engine) == []
