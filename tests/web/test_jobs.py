"""The submission worker: children run with limits and without network; every failure is recorded with its log."""
from __future__ import annotations

import socket
import sys

import pytest
from sqlalchemy.orm import Session

from brainscore.web import accounts
from brainscore.results import Database
from brainscore.web.jobs import NETWORK_ISOLATION, Job, Worker, place_in_queue

BENCHMARK = "Cowley2026.210325.V4-pls"


@pytest.fixture
def worker(tmp_path):
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    store = Database(url)
    return Worker(accounts.engine_for(url), store, url, tmp_path, memory_limit=1024**3, wall_limit=60)


def add_job(worker, tmp_path, benchmarks=(BENCHMARK,)) -> int:
    with Session(worker.engine) as session:
        job = Job(owner="alice", models=["fake-net"], benchmarks=list(benchmarks), folder=str(tmp_path / "job"))
        session.add(job)
        session.commit()
        return job.id


def run_with(worker, tmp_path, code: str, monkeypatch) -> Job:
    monkeypatch.setattr(worker, "command", lambda model, benchmark, submission_id: NETWORK_ISOLATION + [sys.executable, "-c", code])
    job_id = add_job(worker, tmp_path)
    worker.run(job_id)
    with Session(worker.engine, expire_on_commit=False) as session:
        return session.get(Job, job_id)


def test_a_failing_child_is_recorded_with_its_log(worker, tmp_path, monkeypatch):
    job = run_with(worker, tmp_path, "print('loading the model'); raise SystemExit('weights missing')", monkeypatch)
    assert job.status == "failed" and job.current == 1
    assert job.results[f"fake-net|{BENCHMARK}"] == {"status": "failed", "error": "exited with code 1: weights missing"}
    assert "loading the model\nweights missing\n" in job.log
    (failure,) = worker.store.scores("fake-net", include_failed=True)
    assert failure.status == "failed" and failure.comment == "exited with code 1: weights missing"


def test_a_done_event_is_a_success(worker, tmp_path, monkeypatch):
    job = run_with(worker, tmp_path, "import json; print(json.dumps({'event': 'done', 'score': 0.42}))", monkeypatch)
    assert job.status == "done" and job.results[f"fake-net|{BENCHMARK}"] == {"status": "done", "score": 0.42}


def test_memory_limit_applies_to_the_child(worker, tmp_path, monkeypatch):
    job = run_with(worker, tmp_path, "x = bytearray(3 * 1024**3)", monkeypatch)
    assert job.status == "failed" and "MemoryError" in job.log


def test_wall_clock_limit_kills_the_child(worker, tmp_path, monkeypatch):
    worker.wall_limit = 1
    job = run_with(worker, tmp_path, "import time; time.sleep(30)", monkeypatch)
    assert job.status == "failed" and job.results[f"fake-net|{BENCHMARK}"]["error"].startswith("killed")


@pytest.mark.skipif(not NETWORK_ISOLATION, reason="network namespaces need root and unshare (children then run offline only)")
def test_children_have_no_network(worker, tmp_path, monkeypatch):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)"
    job = run_with(worker, tmp_path, code, monkeypatch)
    server.close()
    assert job.status == "failed" and ("ConnectionRefusedError" in job.log or "Network is unreachable" in job.log)


def test_place_in_queue(worker, tmp_path):
    first, second = add_job(worker, tmp_path), add_job(worker, tmp_path)
    with Session(worker.engine) as session:
        assert place_in_queue(worker.engine, session.get(Job, first)) == 1
        assert place_in_queue(worker.engine, session.get(Job, second)) == 2
