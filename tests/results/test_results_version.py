"""The results version: the database bumps it on every change that may change what the leaderboard shows
(migration 0006's triggers), whoever writes, and leaves it for a new public model without scores."""
from __future__ import annotations

import pytest
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


def _cache(db_url):
    from brainscore.leaderboard.aggregate import build_tree
    from brainscore.leaderboard.cache import ResultsCache

    tree = build_tree({BENCHMARK: "V4", "Kiani2007.IT-rdm": "IT"},
                      {"neural_vision": "average_vision", "V4": "neural_vision", "IT": "neural_vision"})
    return ResultsCache(Database(db_url), tree=tree), tree


def test_new_scores_update_the_cached_leaderboard_without_reading_every_score(db_url):
    """Migration 0008: a new score is read alone and aggregates only its model; the result equals the
    leaderboard computed from every score."""
    from brainscore.leaderboard.aggregate import leaderboard_records

    db = Database(db_url)
    for k in range(5):
        _record(db, f"net-{k}", 0.1 * k)
    cache, tree = _cache(db_url)
    assert [e["model"] for e in cache.records()] == [f"net-{k}" for k in (4, 3, 2, 1, 0)]
    _record(Database(db_url), "net-9", 0.95)  # another process
    _record(Database(db_url), "net-0", 0.85)  # a later score of a model replaces its earlier one
    record(Outcome.from_failure("net-4", BENCHMARK, "boom", provenance={"benchmark": {"version": 1}}), db)
    updated = cache.records()
    assert cache.full_reads == 1  # brought up to date from the three new rows
    assert updated == leaderboard_records(db, tree=tree)
    # a later failure never hides a done score (issue 36): net-4 keeps its 0.4, with the failure beside it
    assert [e["model"] for e in updated][:3] == ["net-9", "net-0", "net-4"]
    assert cache.aggregates_of("net-4")["scores"][BENCHMARK] == pytest.approx(0.4)
    assert "boom" in next(e for e in updated if e["model"] == "net-4")["failed"][BENCHMARK]
    assert len(cache.scores()) == 8


@pytest.mark.parametrize("change", ["UPDATE scores SET score_ceiled = 0.99 WHERE id = (SELECT MIN(id) FROM scores)",
                                    "DELETE FROM scores WHERE id = (SELECT MAX(id) FROM scores)",
                                    "UPDATE models SET identifier = 'renamed-net' WHERE identifier = 'net-1'",
                                    "UPDATE benchmark_instances SET ceiling = 0.5"])
def test_any_other_change_makes_the_cache_read_every_score_again(db_url, change):
    """A score changed or deleted, a model renamed, an instance changed, by a console: the rows added since
    would not show it, so the ``rewrites`` counter sends the cache back to the whole table."""
    from brainscore.leaderboard.aggregate import leaderboard_records

    db = Database(db_url)
    for k in range(3):
        _record(db, f"net-{k}", 0.2 + 0.1 * k)
    cache, tree = _cache(db_url)
    before = cache.records()
    _sql(db_url, change)
    after = cache.records()
    assert cache.full_reads == 2
    assert after == leaderboard_records(db, tree=tree)
    assert (after != before) == ("benchmark_instances" not in change)  # a ceiling changes no score
    assert cache.scores() == db.scores(include_failed=True)


def test_a_row_committed_late_with_a_smaller_id_is_not_missed(db_url):
    """PostgreSQL hands out ids before commit, so a row can appear below the largest id already read: the
    row count no longer adds up and the cache reads everything."""
    from brainscore.leaderboard.aggregate import leaderboard_records

    db = Database(db_url)
    _record(db, "net-0", 0.3)
    _record(db, "net-1", 0.4)
    cache, tree = _cache(db_url)
    cache.records()
    first, last = (s.id for s in db.scores())
    _sql(db_url, f"INSERT INTO scores (id, benchmark_instance_id, model_id, status, score_ceiled, score_raw) "
                 f"SELECT {last + 10}, benchmark_instance_id, model_id, 'done', 0.2, 0.2 FROM scores WHERE id = {first}")
    assert cache.records() == leaderboard_records(db, tree=tree) and cache.full_reads == 1
    _sql(db_url, f"INSERT INTO scores (id, benchmark_instance_id, model_id, status, score_ceiled, score_raw) "
                 f"SELECT {last + 5}, benchmark_instance_id, model_id, 'done', 0.9, 0.9 FROM scores WHERE id = {last}")
    assert cache.records() == leaderboard_records(db, tree=tree)
    assert cache.full_reads == 2
    assert cache.aggregates_of("net-1")["scores"][BENCHMARK] == pytest.approx(0.9)
