"""A computed score is never lost when the results database fails, and an unusable BRAINSCORE_HOME gives one
clear message (issue 23, items 3 and 4)."""
from __future__ import annotations

import json
import sqlite3

import pytest

from brainscore.cli import main
from brainscore.results import Database, journal
from brainscore.results import connection as connection_module
from brainscore.results import database as database_module

BENCHMARK = "Kiani2007.IT-rdm"
PIXELS = 0.14356558533368408  # pixels on Kiani2007.IT-rdm, as `brainscore score` computes it with a working database


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A home of its own, so that the journal holds only this test's entries."""
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def damaged(path):
    """``path`` as a SQLite file damaged past reading: SQLite's header, then garbage (what the advice to move it
    aside is for; a file without the header is not a database of ours and is never advised to be moved)."""
    path.write_bytes(b"SQLite format 3\x00" + b"this is not a database, just some bytes " * 200)
    return path


def _score_json(url: str, capsys) -> tuple[int, dict, str]:
    code = main(["score", "--model", "pixels", "--benchmark", BENCHMARK, "--bootstrap", "0", "--json", "--db", url])
    out = capsys.readouterr()
    return code, json.loads(out.out), out.err


def _replayed_score(url: str) -> float:
    db = Database(url)
    assert db.replayed == 1
    return db.find_score("pixels", BENCHMARK).score


def test_a_corrupt_database_keeps_the_score_in_the_journal_and_replays_it(home, tmp_path, capsys):
    corrupt = damaged(tmp_path / "results.sqlite")
    url = f"sqlite:///{corrupt}"
    code, printed, err = _score_json(url, capsys)
    assert code == 2 and printed["score"] == pytest.approx(PIXELS, abs=1e-12) and printed["record"] is None
    kept, = journal.pending()
    assert printed["journal"] == str(kept) and str(kept) in err
    assert f"the SQLite file {corrupt} is not a usable results database" in err and "mv " in err
    corrupt.unlink()  # what the message says to do (moving it aside)
    assert _replayed_score(url) == printed["score"]
    assert journal.pending() == []
    assert Database(url).replayed == 0  # replayed once, never twice


def test_a_locked_database_says_so_and_keeps_the_score(home, tmp_path, capsys, monkeypatch):
    path = tmp_path / "results.sqlite"
    url = f"sqlite:///{path}"
    Database(url).close()
    holder = sqlite3.connect(path)
    holder.execute("BEGIN EXCLUSIVE")  # another process writing
    monkeypatch.setattr(connection_module, "BUSY_TIMEOUT_MS", 200)
    try:
        code, printed, err = _score_json(url, capsys)
    finally:
        holder.rollback()
        holder.close()
    assert code == 2 and printed["score"] == pytest.approx(PIXELS, abs=1e-12)
    assert f"the SQLite file {path} is locked by another process" in err and "fuser" in err
    assert "server is running" not in err
    assert _replayed_score(url) == printed["score"]


def test_a_full_disk_is_named_and_the_score_kept(home, tmp_path, capsys, monkeypatch):
    path = tmp_path / "results.sqlite"
    url = f"sqlite:///{path}"
    Database(url).close()
    pages = sqlite3.connect(path).execute("PRAGMA page_count").fetchone()[0]
    pragmas = database_module._sqlite_pragmas

    def full(connection, record):  # SQLite's own "database or disk is full" (SQLITE_FULL) on the first write
        pragmas(connection, record)
        connection.execute(f"PRAGMA max_page_count={pages}")

    monkeypatch.setattr(database_module, "_sqlite_pragmas", full)
    code, printed, err = _score_json(url, capsys)
    assert code == 2 and printed["score"] == pytest.approx(PIXELS, abs=1e-12)
    assert "is full" in err and "Traceback" not in err and str(printed["journal"]) in err
    monkeypatch.setattr(database_module, "_sqlite_pragmas", pragmas)
    assert _replayed_score(url) == printed["score"]


def test_the_text_output_shows_the_score_and_where_it_is_kept(home, tmp_path, capsys):
    corrupt = tmp_path / "results.sqlite"
    damaged(corrupt)
    code = main(["score", "--model", "pixels", "--benchmark", BENCHMARK, "--bootstrap", "0", "--db", f"sqlite:///{corrupt}"])
    out = capsys.readouterr()
    kept, = journal.pending()
    assert code == 2 and out.out.startswith(f"score {PIXELS:.4f}") and f"NOT recorded: kept in {kept}" in out.out
    assert "error: the score was computed but not recorded: the SQLite file" in out.err


@pytest.mark.parametrize("kind", ["file", "below a file"])
def test_an_unusable_home_gives_one_clear_message(tmp_path, capsys, monkeypatch, kind):
    blocker = tmp_path / "home-file"
    blocker.write_text("not a folder")
    home = blocker if kind == "file" else blocker / "home"
    monkeypatch.setenv("BRAINSCORE_HOME", str(home))
    code = main(["score", "--model", "pixels", "--benchmark", BENCHMARK, "--bootstrap", "0"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith(f"error: BRAINSCORE_HOME={home} is ")
    assert "set BRAINSCORE_HOME to a writable folder" in err


def test_a_database_whose_folder_cannot_be_made_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(database_module.DatabaseUnavailable, match="the folder of the results database .* is a file"):
        Database(f"sqlite:///{blocker / 'results.sqlite'}")


class _BrokenDatabase:
    """A database that fails on every write, as one whose disk filled during a run."""

    identity = "sqlite:////nowhere/full.sqlite"

    def record(self, outcome, submission_id=None):
        raise database_module.DatabaseUnavailable("the disk holding the SQLite file /nowhere/full.sqlite is full")

    def scores(self, model=None, benchmark=None, include_failed=False):
        return []


def test_a_run_whose_database_breaks_keeps_every_score_and_goes_on(home, capsys):
    from brainscore import runner
    from brainscore.results.records import DatabaseOutcomeStore

    pairs = runner.pairs("pixels", f"{BENCHMARK},Kriegeskorte2008.IT-rdm")
    summaries = runner.run_sequential(pairs, store=DatabaseOutcomeStore(_BrokenDatabase()))
    assert [s["status"] for s in summaries] == ["done", "done"] and summaries[0]["score"] == PIXELS
    kept = journal.pending("sqlite:////nowhere/full.sqlite")
    assert len(kept) == 2 and capsys.readouterr().err.count("is full") == 2
    entry = json.loads(kept[0].read_text())
    assert entry["outcome"]["score"] == PIXELS and entry["outcome"]["provenance"]["run_key"]


def test_a_grid_on_a_corrupt_database_stops_before_any_work_with_the_fix(home, tmp_path, capsys):
    corrupt = tmp_path / "results.sqlite"
    damaged(corrupt)
    code = main(["score", "--model", "pixels", "--benchmark", f"{BENCHMARK},Mur2013-rdm", "--db", f"sqlite:///{corrupt}"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"error: the SQLite file {corrupt} is not a usable results database")
    assert "Traceback" not in err and journal.pending() == []
