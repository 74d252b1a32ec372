"""The results database round-trips scores, failures, models and submissions on SQLite and PostgreSQL."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import inspect, text

from brainscore.metrics.score import Score
from brainscore.results import Database, DatabaseError, record
from brainscore.scoring.outcome import Outcome
from brainscore.scoring.provenance import provenance_key


def _score(value=0.3915, raw=0.5501, ceiling=0.7731, model="efficientnet-lite0", benchmark="Cowley2026.210325.V4-pls",
           version=1, seed=0, start="2026-11-23T10:00:00+00:00"):
    provenance = {"model": {"identifier": model, "weights_sha256": "ab" * 32}, "benchmark": {"identifier": benchmark,
                  "version": version, "data_files": {"a.npy": "cd" * 32}}, "bootstrap": {"seed": seed},
                  "start": start, "end": "2026-11-23T10:01:00+00:00", "duration_s": 60.0, "host": {"hostname": "x"}}
    return Score.of(value, error=0.01, model_identifier=model, benchmark_identifier=benchmark, benchmark_version=version,
                    raw=Score.of(raw, error=0.02), ceiling=Score.of(ceiling, error=0.005), ci95=(0.35, 0.43),
                    provenance=provenance, layers={"V4": "_blocks.11"})


def _record(db, score, **kwargs) -> int:
    return record(Outcome.from_score(score), db, **kwargs)


def test_schema_is_the_references_plus_ours(db_url):
    db = Database(db_url)
    tables = set(inspect(db.engine).get_table_names())
    assert {"references", "benchmark_types", "benchmark_instances", "models", "submissions", "scores",
            "alembic_version", "web_users", "web_tokens", "web_login_attempts", "web_jobs"} <= tables
    with db.engine.connect() as connection:
        assert connection.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0010"
    columns = {c["name"] for c in inspect(db.engine).get_columns("scores")}
    assert {"score_raw", "score_ceiled", "error", "ci95_low", "ci95_high", "provenance", "start_timestamp",
            "end_timestamp", "failure", "status"} <= columns
    assert {"parent_id", "order", "visible", "engineering"} <= {c["name"] for c in inspect(db.engine).get_columns(
        "benchmark_types")}
    Database(db_url)  # opening again (schema current) is a no-op, not an error


def test_score_round_trip(db_url):
    db = Database(db_url)
    score = _score()
    row_id = _record(db, score)
    found = db.find_score("efficientnet-lite0", "Cowley2026.210325.V4-pls")
    assert found.id == row_id and found.status == "done" and found.benchmark_version == 1
    assert (found.score, found.raw, found.ceiling, found.error, found.ci95) == (0.3915, 0.5501, 0.7731, 0.01, (0.35, 0.43))
    assert found.layers == {"V4": "_blocks.11"}
    assert found.provenance == score.attrs["provenance"]
    assert found.provenance_key == provenance_key(score.attrs["provenance"])
    assert found.start == dt.datetime(2026, 11, 23, 10, tzinfo=dt.timezone.utc)
    assert found.end - found.start == dt.timedelta(minutes=1)
    assert db.model("efficientnet-lite0").weights_hash == "ab" * 32


def test_find_score_latest_and_by_key(db_url):
    db = Database(db_url)
    first = _record(db, _score(value=0.1, seed=0))
    second = _record(db, _score(value=0.2, seed=1))
    assert db.find_score("efficientnet-lite0", "Cowley2026.210325.V4-pls").id == second
    key = provenance_key(_score(seed=0).attrs["provenance"])
    assert db.find_score("efficientnet-lite0", "Cowley2026.210325.V4-pls", provenance_key=key).id == first
    # a rerun at another time on another host shares the key
    assert provenance_key(_score(seed=0, start="2027-01-01T00:00:00+00:00").attrs["provenance"]) == key
    assert db.find_score("efficientnet-lite0", "Cowley2026.210325.V4-pls", provenance_key="0" * 64) is None
    assert db.find_score("pixels", "Cowley2026.210325.V4-pls") is None


def test_failures_are_recorded_and_filtered(db_url):
    db = Database(db_url)
    _record(db, _score())
    failed = record(Outcome.from_failure("efficientnet-lite0", "Kiani2007.IT-rdm", "DataNotFoundError: 92_modelRDMs.mat",
                                         log="Traceback ...", provenance={"benchmark": {"version": 1}}), db)
    assert [r.benchmark for r in db.scores()] == ["Cowley2026.210325.V4-pls"]
    rows = db.scores(include_failed=True)
    assert [r.status for r in rows] == ["done", "failed"]
    assert rows[1].id == failed and rows[1].score is None and rows[1].failure.startswith("DataNotFoundError")
    assert rows[1].log == "Traceback ..."
    assert db.find_score("efficientnet-lite0", "Kiani2007.IT-rdm") is None
    assert [r.model for r in db.scores(model_identifier="pixels", include_failed=True)] == []
    assert len(db.scores(benchmark_identifier="Kiani2007.IT-rdm", include_failed=True)) == 1


def test_versions_are_instances(db_url):
    db = Database(db_url)
    _record(db, _score(version=1, value=0.1))
    _record(db, _score(version=2, value=0.2))
    assert db.benchmark_versions() == {"Cowley2026.210325.V4-pls": 2}
    assert sorted(r.benchmark_version for r in db.scores()) == [1, 2]


def test_models_and_submissions(db_url):
    db = Database(db_url)
    db.add_model("mine", owner="ada", public=False, visual_degrees=8.0)
    assert db.model("mine").owner == "ada" and db.model("mine").public is False
    assert db.model("mine").visual_degrees == 8.0 and db.model("nobody") is None
    sid = db.create_submission("ada", ["mine"], ["Kiani2007.IT-rdm"])
    db.update_submission(sid, status="running", log_append="started")
    db.update_submission(sid, log_append="scored 1/1\n")
    submission = db.submission(sid)
    assert (submission.status, submission.log, submission.models) == ("running", "started\nscored 1/1\n", ["mine"])
    with pytest.raises(DatabaseError, match="no submission 999"):
        db.submission(999)
    _record(db, _score(model="mine"), submission_id=sid)
    assert db.find_score("mine", "Cowley2026.210325.V4-pls").submission_id == sid


def test_tree_is_stored(db_url):
    db = Database(db_url)
    db.sync_tree({"average_vision": None, "neural_vision": "average_vision", "V4": "neural_vision",
                  "engineering_vision": None, "x-top1": "engineering_vision"}, engineering=["engineering_vision", "x-top1"])
    with db.engine.connect() as connection:
        rows = dict(connection.execute(text("SELECT identifier, parent_id FROM benchmark_types")).all())
        engineering = {r for r, in connection.execute(text("SELECT identifier FROM benchmark_types WHERE engineering"))}
    assert rows["V4"] == "neural_vision" and rows["average_vision"] is None
    assert engineering == {"engineering_vision", "x-top1"}


def test_bad_input_says_what_is_wrong(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'r.sqlite'}")
    with pytest.raises(ValueError, match="model_identifier"):
        _record(db, Score.of(0.5))
    with pytest.raises(DatabaseError, match="version is unknown"):
        _record(db, Score.of(0.5, model_identifier="m", benchmark_identifier="not-registered"))
    with pytest.raises(DatabaseError, match="not a SQLAlchemy URL"):
        Database("no url at all")


def test_default_location(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("BRAINSCORE_DB_URL", raising=False)
    _record(None, _score())
    assert (tmp_path / "home" / "results.sqlite").is_file()
    monkeypatch.setenv("BRAINSCORE_DB_URL", f"sqlite:///{tmp_path / 'elsewhere.sqlite'}")
    assert Database().scores() == [] and (tmp_path / "elsewhere.sqlite").is_file()


def test_migration_heads_read_from_the_scripts_are_alembics():
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from brainscore.results.database import MIGRATIONS, _migration_heads

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    assert _migration_heads() == frozenset(ScriptDirectory.from_config(config).get_heads()) == {"0010"}


def test_opening_a_current_database_does_not_import_alembic(tmp_path):
    """The first open migrates (Alembic); a later process sees the current revision without Alembic."""
    import json
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    script = ("import json, sys; from brainscore.results import Database; db = Database(%r); "
              "print(json.dumps({'alembic': 'alembic' in sys.modules, 'scores': len(db.scores())}))" % url)
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert runs == [{"alembic": True, "scores": 0}, {"alembic": False, "scores": 0}]
    with Database(url).engine.connect() as connection:  # an older revision is upgraded by Alembic again
        connection.execute(text("UPDATE alembic_version SET version_num = 'older'"))
        connection.commit()
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "older" in out.stderr  # Alembic, not the quick check, handles it (and knows no 'older')


def test_a_sqlite_file_is_in_wal_mode_with_every_commit_synced(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'results.sqlite'}")
    with db.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar_one() == "wal"
        assert connection.exec_driver_sql("PRAGMA synchronous").scalar_one() == 2  # FULL
    db.add_model("a-net")
    db.engine.dispose()
    assert Database(f"sqlite:///{tmp_path / 'results.sqlite'}").model("a-net").identifier == "a-net"
