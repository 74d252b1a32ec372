"""Opening the results database (issue 32): processes creating one SQLite file at once all succeed; a file that is
not a database of ours is never advised to be moved, nor written; a folder named by --db is never made."""
from __future__ import annotations

import hashlib
import multiprocessing
import sqlite3

import pytest

from brainscore import config
from brainscore.cli import main
from brainscore.results import Database, DatabaseError, DatabaseUnavailable


def _open(url: str, barrier, answers) -> None:
    barrier.wait()
    try:
        Database(url).close()
        answers.put("ok")
    except Exception as error:  # noqa: BLE001 - reported to the test
        answers.put(f"{type(error).__name__}: {error}")


def test_processes_creating_one_database_at_once_all_open_it(tmp_path):
    """Three `brainscore score` of one pair started at once: one exited 2 with 'the SQLite file ... cannot be used
    (table "references" already exists)'. Four processes, released together, create one file; five files."""
    context = multiprocessing.get_context("fork")
    for attempt in range(5):
        url = f"sqlite:///{tmp_path / f'results-{attempt}.sqlite'}"
        barrier, answers = context.Barrier(4), context.Queue()
        processes = [context.Process(target=_open, args=(url, barrier, answers)) for _ in range(4)]
        for process in processes:
            process.start()
        for process in processes:
            process.join(timeout=120)
        assert [answers.get(timeout=10) for _ in processes] == ["ok"] * 4
        assert Database(url).scores() == []


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_file_that_is_not_a_database_is_left_alone_and_never_advised_to_be_moved(tmp_path, capsys):
    """`brainscore records --db sqlite:////etc/passwd` advised `mv /etc/passwd /etc/passwd.broken`."""
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n")
    before = _digest(passwd)
    assert main(["records", "--db", f"sqlite:///{passwd}"]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: {passwd} is not a SQLite database; it was left as it is. Point --db / BRAINSCORE_DB_URL "
                   f"at the results database (e.g. sqlite:///{config.home() / 'results.sqlite'}) or at a new file\n")
    assert "mv " not in err and _digest(passwd) == before


def test_another_applications_sqlite_database_is_refused_untouched(tmp_path):
    other = tmp_path / "app.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    before = _digest(other)
    with pytest.raises(DatabaseError, match=r"app.db is a SQLite database of something else \(its tables: users\)"):
        Database(f"sqlite:///{other}")
    assert _digest(other) == before  # not even converted to WAL mode


def test_a_damaged_database_of_ours_still_gets_the_advice_to_move_it_aside(tmp_path):
    damaged = tmp_path / "results.sqlite"
    damaged.write_bytes(b"SQLite format 3\x00" + b"\x07" * 4000)
    with pytest.raises(DatabaseUnavailable) as error:
        Database(f"sqlite:///{damaged}")
    assert f"is a damaged SQLite file. Move it aside (mv {damaged} {damaged}.broken)" in str(error.value)


def test_a_folder_named_by_db_must_exist_the_default_one_is_made(tmp_path, monkeypatch, capsys):
    """`--db` on a missing folder created the folder and an empty database instead of saying it does not exist."""
    missing = tmp_path / "no-such-folder" / "sub"
    assert main(["records", "--db", f"sqlite:///{missing / 'results.sqlite'}"]) == 2
    assert capsys.readouterr().err == (
        f"error: the folder {missing} of the results database {missing / 'results.sqlite'} does not exist; create it "
        f"(mkdir -p {missing}) or point --db / BRAINSCORE_DB_URL at an existing folder\n")
    assert not (tmp_path / "no-such-folder").exists()
    monkeypatch.setenv("BRAINSCORE_DB_URL", f"sqlite:///{missing / 'results.sqlite'}")
    with pytest.raises(DatabaseUnavailable, match="does not exist; create it"):
        Database()
    monkeypatch.delenv("BRAINSCORE_DB_URL")
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "new-home"))
    assert Database().scores() == [] and (tmp_path / "new-home" / "results.sqlite").is_file()
