"""The server's storage failing under a request (issue 36): a full disk answered a bare 500 to an upload and a log-in,
and a read-only database showed the submitter raw SQL and was never tried again. Each is now a 507 or 503 in the
visitor's words (the detail in the server's log), a transient database error is tried again a bounded number of
times, and an upload that fails on a full disk leaves no task ``preparing``."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event, text
from sqlalchemy.exc import OperationalError

from brainscore.web import accounts, create_app, storage
from web_helpers import BENCHMARK, PASSWORD, csrf, plugin_zip, register

TESTS = Path(__file__).resolve().parents[1]


@pytest.fixture
def app(tmp_path):
    return create_app(db_url=f"sqlite:///{tmp_path / 'results.sqlite'}", root=tmp_path / "submissions",
                      start_worker=False)


def read_only(engine) -> None:
    """Every new connection of ``engine`` refuses writes as a read-only SQLite database does (``query_only``)."""
    @event.listens_for(engine, "connect")
    def _query_only(connection, record):
        connection.execute("PRAGMA query_only = ON")

    engine.dispose()


def test_a_read_only_database_is_a_503_in_words_never_sql(app, monkeypatch):
    monkeypatch.setattr(storage, "PAUSE_S", 0.01)
    alice = register(app, "alice")
    token = csrf(alice, "/submit")
    read_only(app.state.engine)
    alice = TestClient(app, raise_server_exceptions=False, cookies=alice.cookies)
    upload = alice.post("/api/submissions", files={"file": ("p.zip", plugin_zip())}, data={"benchmarks": BENCHMARK},
                        headers={"X-CSRF-Token": token})
    assert upload.status_code == 503 and upload.json() == {"detail": storage.UNAVAILABLE}
    assert upload.headers["retry-after"] == "300"
    visitor = TestClient(app, raise_server_exceptions=False)
    login = visitor.post("/login", data={"username": "alice", "password": PASSWORD, "csrf_token": csrf(visitor)})
    assert login.status_code == 503 and storage.UNAVAILABLE.replace("'", "&#39;") in login.text
    for leaked in ("INSERT", "sqlite3", "OperationalError", "web_login_attempts"):
        assert leaked not in login.text and leaked not in upload.text


def test_a_transient_read_only_moment_is_tried_again(app, monkeypatch):
    """The first attempt of the log-in meets a read-only database (a real SQLite error); the second succeeds."""
    monkeypatch.setattr(storage, "PAUSE_S", 0.01)
    register(app, "alice")
    from sqlalchemy import create_engine

    own = create_engine(app.state.engine.url)  # its own pool: the site's connections stay writable
    with own.connect() as connection:
        connection.exec_driver_sql("PRAGMA query_only = ON")
        with pytest.raises(OperationalError) as caught:
            connection.execute(text("CREATE TABLE t (x INTEGER)"))
    own.dispose()
    assert "readonly database" in str(caught.value)
    real, calls = accounts.authenticate, []

    def once_read_only(*args):
        calls.append(args[1])
        if len(calls) == 1:
            raise caught.value
        return real(*args)

    monkeypatch.setattr(accounts, "authenticate", once_read_only)
    visitor = TestClient(app)
    login = visitor.post("/login", data={"username": "alice", "password": PASSWORD, "csrf_token": csrf(visitor)},
                         follow_redirects=False)
    assert login.status_code == 303 and calls == ["alice", "alice"]
    calls.clear()  # a lasting one: three attempts, then a 503
    monkeypatch.setattr(accounts, "authenticate", lambda *args: (calls.append(1), (_ for _ in ()).throw(caught.value)))
    visitor = TestClient(app, raise_server_exceptions=False)
    login = visitor.post("/login", data={"username": "alice", "password": PASSWORD, "csrf_token": csrf(visitor)})
    assert login.status_code == 503 and len(calls) == storage.RETRIES


FULL_DISK = r"""
import io, json, os, random, sys, zipfile
from pathlib import Path
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session
from brainscore.web import create_app
from brainscore.web.queue import SubmissionTask
from web_helpers import BENCHMARK, PASSWORD, csrf, plugin_zip, register

disk = Path(sys.argv[1])
app = create_app(db_url=f"sqlite:///{disk / 'results.sqlite'}", root=disk / "submissions", start_worker=False)
alice = register(app, "alice")
token = csrf(alice, "/submit")
weights = random.Random(0).randbytes(400_000)  # incompressible: more than the space left
filler = open(disk / "filler", "wb")
free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
filler.write(b"\0" * max(0, free - 160_000)); filler.flush(); os.fsync(filler.fileno())
alice = TestClient(app, raise_server_exceptions=False, cookies=alice.cookies)
upload = alice.post("/api/submissions", files={"file": ("p.zip", plugin_zip(extra={"my_tiny_net/weights.bin": weights}))},
                    data={"benchmarks": BENCHMARK}, headers={"X-CSRF-Token": token})
with Session(app.state.engine) as session:
    tasks = [(t.status, t.failure) for t in session.query(SubmissionTask)]
try:
    while True:
        filler.write(b"\0" * 4096); filler.flush()
except OSError:
    pass
visitor = TestClient(app, raise_server_exceptions=False)
login = visitor.post("/login", data={"username": "alice", "password": PASSWORD, "csrf_token": csrf(visitor)})
print(json.dumps({"upload": [upload.status_code, upload.text], "tasks": tasks, "login": [login.status_code, login.text],
                  "left": sorted(p.name for p in (disk / "submissions").iterdir() if p.is_dir())}))
"""


def test_a_real_full_disk_is_a_507_to_upload_and_log_in(tmp_path):
    """A 4 MiB tmpfs (mounted in a mount namespace of its own) holds the database and the submissions: the upload
    meets the full disk while unpacking (its task is failed, its files gone), the log-in while writing its session."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare to mount a small tmpfs")
    disk = tmp_path / "disk"
    disk.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS.parent / "src"), str(TESTS)]),
           "BRAINSCORE_HOME": str(tmp_path / "home")}
    probe = subprocess.run(["unshare", "--mount", "--map-root-user", "sh", "-c",
                            f"mount -t tmpfs -o size=4m tmpfs {disk} && echo mounted"], capture_output=True, text=True)
    if "mounted" not in probe.stdout:
        pytest.skip(f"cannot mount a tmpfs here: {probe.stderr.strip()}")
    done = subprocess.run(["unshare", "--mount", "--map-root-user", "sh", "-c",
                           f'mount -t tmpfs -o size=4m tmpfs "$1" && exec "$2" -c "$3" "$1"', "sh", str(disk),
                           sys.executable, FULL_DISK], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["upload"][0] == 507 and json.loads(found["upload"][1]) == {"detail": storage.FULL}, found
    (status, failure), = found["tasks"]
    assert status == "failed" and "disk" in failure and found["left"] == []
    assert found["login"][0] == 507 and storage.FULL.replace("'", "&#39;") in found["login"][1]
    assert "Traceback" not in found["login"][1] and "sqlite3" not in found["login"][1]
