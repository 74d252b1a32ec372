"""Twenty users submit at once over HTTP to a live server on 127.0.0.1: every submission is accepted once,
none is lost or queued twice, and the queue is drained in the order the submissions were accepted, on
SQLite and on PostgreSQL."""
from __future__ import annotations

import sys
import threading
import time

import httpx
import pytest
from sqlalchemy.orm import Session

from brainscore.web import accounts, create_app
from brainscore.web.queue import Limits, SubmissionTask
from host_helpers import free_port
from web_helpers import plugin_zip

BENCHMARK = "Cowley2026.210325.V4-pls"
SUBMITTERS = 20


@pytest.fixture
def dask_client():
    """One single-threaded worker: the queue runs one pair at a time, so the order it drains is observable."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address="127.0.0.1:0") as cluster, \
            Client(cluster) as client:
        yield client


@pytest.fixture
def server(db_url, tmp_path, dask_client, monkeypatch):
    """The website with its dispatcher on a free port; each pair's child appends ``model`` to ``ran.txt``."""
    import uvicorn

    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    app = create_app(db_url=db_url, root=tmp_path / "submissions", dask_client=dask_client)
    ran = tmp_path / "ran.txt"

    def command(model, benchmark, submission_id):  # the pair's model server: no model is run, its order is written
        return [sys.executable, "-c", f"open({str(ran)!r}, 'a').write({model!r} + '\\n')"]

    def scorer(model, benchmark, submission_id):  # the pair's trusted scorer: reports a score
        outcome = {"model": model, "benchmark": benchmark, "status": "done", "score": 0.5, "benchmark_version": 1}
        return [sys.executable, "-c", f"import json; print(json.dumps({{'event': 'done', 'kind': 'done', "
                                      f"'outcome': {outcome!r}}}))"]

    app.state.worker.command = command
    app.state.worker.scorer = scorer
    app.state.worker.limits = Limits(memory=1024**3, wall=60, isolate=False)  # the children write ran.txt
    port = free_port()
    live = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=live.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not live.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield app, f"http://127.0.0.1:{port}", ran
    finally:
        live.should_exit = True
        thread.join(timeout=60)


@pytest.mark.slow  # about 50 s per backend: twenty uploads checked and unpacked, twenty children run one by one
def test_twenty_concurrent_submitters_nothing_lost_or_doubled_drained_in_order(server):
    app, base, ran = server
    tokens = [accounts.create_token(app.state.engine, accounts.register(app.state.engine, f"user{k:02d}",
                                                                        "a long enough password"))
              for k in range(SUBMITTERS)]
    start = threading.Barrier(SUBMITTERS)
    answers: dict[str, httpx.Response] = {}

    def submit(k: int) -> None:
        identifier = f"crowd-net-{k:02d}"
        data = plugin_zip(identifier=identifier, package=f"crowd_net_{k:02d}")
        with httpx.Client(base_url=base, timeout=120) as client:
            start.wait()  # all twenty POSTs leave together
            answers[identifier] = client.post("/api/submissions", files={"file": ("plugin.zip", data)},
                                              data={"benchmarks": BENCHMARK},
                                              headers={"Authorization": f"Bearer {tokens[k]}"})

    threads = [threading.Thread(target=submit, args=(k,)) for k in range(SUBMITTERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert {i: a.status_code for i, a in answers.items()} == {f"crowd-net-{k:02d}": 201 for k in range(SUBMITTERS)}, \
        {i: a.text[:300] for i, a in answers.items() if a.status_code != 201}
    accepted = {a.json()["id"]: identifier for identifier, a in answers.items()}  # by the task's public key
    assert len(accepted) == SUBMITTERS  # twenty distinct keys

    deadline = time.monotonic() + 240
    while True:
        with Session(app.state.engine) as session:
            tasks = session.query(SubmissionTask).order_by(SubmissionTask.id).all()
            states = [(t.key, t.models, t.status) for t in tasks]  # in the order they were accepted (their ids)
        if all(status in ("done", "failed") for _, _, status in states) or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    assert sorted(key for key, _, _ in states) == sorted(accepted)  # none lost, none doubled
    assert all(models == [accepted[key]] for key, models, _ in states)
    assert {status for _, _, status in states} == {"done"}
    # drained in the order the submissions were accepted (task id), each pair run exactly once
    assert ran.read_text().splitlines() == [accepted[key] for key, _, _ in states]
    # each recorded score is on the leaderboard once
    assert sorted(r["model"] for r in httpx.get(f"{base}/api/leaderboard").json()) == sorted(accepted.values())


class _Recording:
    """A stand-in Dask client of one worker thread that records what it is handed (no task runs)."""

    def __init__(self):
        self.handed: list[int] = []

    def scheduler_info(self):
        return {"workers": {"w": {"nthreads": 1}}}

    def submit(self, function, db_url, task_id, *args, **kwargs):
        self.handed.append(task_id)
        return type("Future", (), {"status": "pending"})()


def test_a_submission_still_being_unpacked_is_not_overtaken(tmp_path):
    import datetime as dt

    from brainscore.results import Database
    from brainscore.web.queue import PREPARING_S, Dispatcher

    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    store = Database(url)
    with Session(store.engine) as session:
        older = SubmissionTask(owner="a", models=["older-net"], benchmarks=[BENCHMARK], status="preparing")
        newer = SubmissionTask(owner="b", models=["newer-net"], benchmarks=[BENCHMARK], status="queued")
        session.add_all([older, newer])
        session.commit()
        older_id, newer_id = older.id, newer.id
    client = _Recording()
    dispatcher = Dispatcher(store.engine, store, url, tmp_path, client=client)
    dispatcher._dispatch()
    assert client.handed == []  # the newer one, unpacked first, waits for the older one
    with Session(store.engine) as session:
        session.get(SubmissionTask, older_id).status = "queued"
        session.commit()
    dispatcher._dispatch()
    assert client.handed == [older_id]  # one worker thread: the older first
    # a submission left preparing by a server that died while unpacking holds nothing back for long
    client, dispatcher = _Recording(), Dispatcher(store.engine, store, url, tmp_path, client=_Recording())
    dispatcher.client = client
    with Session(store.engine) as session:
        stuck = session.get(SubmissionTask, older_id)
        stuck.status = "preparing"
        stuck.created = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None) - dt.timedelta(seconds=PREPARING_S + 1)
        session.commit()
    dispatcher._dispatch()
    assert client.handed == [newer_id]
