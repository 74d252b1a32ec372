"""The results version: the database bumps it on every change that may change what the leaderboard shows
(migration 0006's triggers), whoever writes, and leaves it for a new public model without scores."""
from __future__ import annotations

from sqlalchemy import create_engine, text

from brainscore.metrics.score import Score
from brainscore.results import Database
from brainscore.results.records import record
from brainscore.scoring.outcome import Outcome

BENCHMARK = "Cowley2026.210325.V4-pls"
TRIGGERS = {"results_version_score_insert", "results_version_score_update", "results_version_score_delete",
            "results_version_model_update", "results_version_model_delete", "results_version_private_model"}


def _record(db: Database, model: str, value: float) -> None:
    record(Outcome.from_score(Score.of(value, raw=value, ceiling=1.0, model_identifier=model,
                                       benchmark_identifier=BENCHMARK, benchmark_version=1)), db)


def _sql(url: str, statement: str) -> None:
    """A change made outside brainscore's code (another tool, a console), in its own connection."""
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text(statement))
    engine.dispose()


def test_every_change_a_visitor_could_see_bumps_the_version(db_url):
    db = Database(db_url)
    seen = [db.results_version()]

    def changed() -> bool:
        seen.append(db.results_version())
        return seen[-1] != seen[-2]

    _record(db, "a-net", 0.5)
    assert changed()
    _record(Database(db_url), "b-net", 0.7)  # another process
    assert changed()
    record(Outcome.from_failure("a-net", BENCHMARK, "boom", provenance={"benchmark": {"version": 1}}), db)
    assert changed()
    db.add_model("new-public-net", owner="carol", public=True)  # a submission: no score, no page changes
    assert not changed()
    db.add_model("new-private-net", owner="carol", public=False)
    assert changed()
    db.add_model("a-net", public=False)  # made private
    assert changed()
    _sql(db_url, "UPDATE scores SET score_ceiled = 0.1 WHERE id = (SELECT MIN(id) FROM scores)")
    assert changed()
    # the newest score deleted by hand: its largest id (the old version) would go back to an earlier value
    _sql(db_url, "DELETE FROM scores WHERE id = (SELECT MAX(id) FROM scores)")
    assert changed()
    _sql(db_url, "DELETE FROM scores WHERE model_id = (SELECT id FROM models WHERE identifier = 'b-net')")
    assert changed()
    _sql(db_url, "DELETE FROM models WHERE identifier = 'b-net'")
    assert changed()
    assert len(set(seen)) == len(seen) - 1  # one repeat: the public model's
    assert db.results_version() == seen[-1]  # reading changes nothing


def test_the_head_schema_has_the_triggers(db_url):
    """A later migration that rebuilds scores or models on SQLite drops their triggers: this fails then."""
    db = Database(db_url)
    with db.engine.connect() as connection:
        if db.engine.dialect.name == "postgresql":
            names = {r[0] for r in connection.execute(text("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal"))}
        else:
            names = {r[0] for r in connection.execute(text("SELECT name FROM sqlite_master WHERE type = 'trigger'"))}
    assert TRIGGERS <= names
