"""The Alembic migrations make every table of the ORM (results and website), on SQLite and PostgreSQL, and a
database whose website tables the old ``create_all`` code made still opens, with its rows."""
from __future__ import annotations

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.orm import Session

from brainscore.results import Database
from brainscore.results.database import MIGRATIONS
from brainscore.results.schema import ApiToken, Base, SubmissionTask, LoginAttempt, User, WebSession

WEB_TABLES = [User.__table__, ApiToken.__table__, LoginAttempt.__table__, SubmissionTask.__table__, WebSession.__table__]


def differences(engine) -> list:
    """What alembic's autogenerate finds between the database and the ORM's metadata (empty: none)."""
    with engine.connect() as connection:
        return compare_metadata(MigrationContext.configure(connection), Base.metadata)


def upgrade(engine, revision: str) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def test_the_migrations_make_exactly_the_orm_tables(db_url):
    db = Database(db_url)
    assert {"web_users", "web_tokens", "web_login_attempts", "web_jobs", "web_sessions"} <= set(inspect(db.engine).get_table_names())
    assert differences(db.engine) == []


def test_a_database_made_by_the_old_create_all_opens_and_keeps_its_rows(db_url):
    engine = create_engine(db_url)
    upgrade(engine, "0001")  # what Database() made before revision 0002 ...
    Base.metadata.create_all(engine, tables=WEB_TABLES)  # ... and what the website then made with create_all
    with Session(engine) as session:
        session.add(User(username="alice", password_hash="argon2-hash"))
        session.add(SubmissionTask(owner="alice", models=["m"], benchmarks=["b"], status="done"))
        session.commit()
    engine.dispose()
    db = Database(db_url)
    with db.engine.connect() as connection:
        assert connection.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0010"
        assert connection.execute(text("SELECT username FROM web_users")).scalars().all() == ["alice"]
        assert connection.execute(text("SELECT status FROM web_jobs")).scalars().all() == ["done"]
    assert differences(db.engine) == []


def test_downgrade_removes_the_web_tables_only(db_url):
    db = Database(db_url)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with db.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0001")
    tables = set(inspect(db.engine).get_table_names())
    assert not tables & {"web_users", "web_tokens", "web_login_attempts", "web_jobs", "web_sessions"}
    assert {"scores", "models", "submissions"} <= tables


def test_failure_messages_are_renamed_failure_and_kept(db_url):
    """Revisions 0003 and 0004: ``scores.comment`` and ``web_jobs.error`` (and each failed pair's ``"error"`` in
    ``web_jobs.results``) become ``failure``, with the messages of existing rows kept."""
    engine = create_engine(db_url)
    upgrade(engine, "0002")
    with engine.begin() as connection:
        connection.execute(text("INSERT INTO models (id, identifier, public, domain) VALUES (1, 'm', true, 'vision')"))
        connection.execute(text("INSERT INTO benchmark_types (identifier, \"order\", visible, engineering, domain) "
                                "VALUES ('b', 0, true, false, 'vision')"))
        connection.execute(text("INSERT INTO benchmark_instances (id, benchmark_type_id, version) VALUES (1, 'b', 1)"))
        connection.execute(text("INSERT INTO scores (benchmark_instance_id, model_id, status, comment) "
                                "VALUES (1, 1, 'failed', 'ValueError: boom')"))
    with Session(engine) as session:
        session.execute(text("INSERT INTO web_jobs (owner, package, filename, models, benchmarks, requirements, public,"
                             " status, current, results, error, log, folder, created) VALUES ('alice', '', '', '[]',"
                             " '[]', '[]', true, 'failed', 1, :results, 'one or more benchmarks failed', '', '', "
                             ":created)"),
                        {"results": '{"m|b": {"status": "failed", "error": "exited with code 1"}, '
                                    '"m|c": {"status": "done", "score": 0.5}}',
                         "created": "2026-11-25 10:00:00"})
        session.commit()
    engine.dispose()
    db = Database(db_url)
    failed, = db.scores(include_failed=True)
    assert failed.failure == "ValueError: boom"
    with Session(db.engine) as session:
        task = session.query(SubmissionTask).one()
        assert task.failure == "one or more benchmarks failed"
        assert task.results == {"m|b": {"status": "failed", "failure": "exited with code 1"},
                                "m|c": {"status": "done", "score": 0.5}}
    assert differences(db.engine) == []


def test_existing_submission_tasks_get_distinct_random_keys(db_url):
    """Revision 0007: tasks were addressed by their row number (1, 2, 3 ... anyone could count through them); each
    existing task gets a random 22-character key, and the log-in sessions table is made."""
    engine = create_engine(db_url)
    upgrade(engine, "0006")
    with engine.begin() as connection:
        for owner in ("alice", "bob", "carol"):
            connection.execute(text("INSERT INTO web_jobs (owner, package, filename, models, benchmarks, requirements,"
                                    " public, status, current, results, failure, log, folder, created) VALUES "
                                    "(:owner, '', '', '[]', '[]', '[]', true, 'done', 1, '{}', '', '', '', "
                                    "'2026-11-25 10:00:00')"), {"owner": owner})
    engine.dispose()
    db = Database(db_url)
    with db.engine.connect() as connection:
        keys = connection.execute(text("SELECT key FROM web_jobs ORDER BY id")).scalars().all()
    assert len(keys) == len(set(keys)) == 3
    assert all(len(key) == 22 and key.replace("-", "").replace("_", "").isalnum() for key in keys)
    assert "web_sessions" in inspect(db.engine).get_table_names()
    assert differences(db.engine) == []
