"""Issue 36: fairness between users and per-user quotas.

An audit through the real website saw one user's slow model (two pairs killed at 300 s) keep another user's
9-second job waiting 609 s, and a user could queue any number of submissions. The queue now takes turns between
users as workers free (one user's pairs never hold another's back for longer than one pair), and an upload past
one of its user's quotas is refused with 429 (or 400 for a submission too large by itself) naming the quota.
"""
from __future__ import annotations

import sys
import time

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from brainscore.leaderboard import tree
from brainscore.results import Database
from brainscore.web import accounts, create_app
from brainscore.web.queue import Dispatcher, Limits, SubmissionTask
from web_helpers import csrf, plugin_zip, register

BENCHMARKS = sorted(tree.benchmark_parents())


@pytest.fixture
def client():
    """A Dask cluster of one single-threaded worker: one pair at a time, so the order is observable."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address="127.0.0.1:0") as cluster, \
            Client(cluster) as client:
        yield client


def add_task(url, owner: str, model: str, benchmarks) -> int:
    with Session(accounts.engine_for(url)) as session:
        task = SubmissionTask(owner=owner, models=[model], benchmarks=list(benchmarks), status="queued", results={},
                              folder=f"/tmp/never-{owner}-{model}")
        session.add(task)
        session.commit()
        return task.id


def test_a_second_users_short_job_is_not_held_behind_the_first_users_many_slow_pairs(tmp_path, client):
    """User A queues two submissions of three slow pairs each, then user B one short pair. With one worker, B's
    pair runs as soon as A's first pair ends, not after all six of A's (on main: A, A, A, A, A, A, B)."""
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    order = tmp_path / "order.txt"
    first = add_task(url, "alice", "slow-net", BENCHMARKS[:3])
    second = add_task(url, "alice", "slower-net", BENCHMARKS[3:6])
    short = add_task(url, "bob", "quick-net", BENCHMARKS[:1])
    store = Database(url)
    dispatcher = Dispatcher(store.engine, store, url, tmp_path, client=client)
    dispatcher.limits = Limits(memory=1024**3, wall=60, isolate=False)  # the children write the order file

    def command(model, benchmark, submission_id):  # A's pairs take a second each, B's none
        pause = 1.0 if model != "quick-net" else 0.0
        return [sys.executable, "-c", f"import time; open({str(order)!r}, 'a').write('{model}\\n'); time.sleep({pause})"]

    def scorer(model, benchmark, submission_id):
        outcome = {"model": model, "benchmark": benchmark, "status": "done", "score": 0.5, "benchmark_version": 1}
        return [sys.executable, "-c", f"import json; print(json.dumps({{'event': 'done', 'kind': 'done', "
                                      f"'outcome': {outcome!r}}}))"]
    dispatcher.command, dispatcher.scorer = command, scorer
    dispatcher.start()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with Session(store.engine) as session:
                states = {t.id: t.status for t in session.query(SubmissionTask)}
            if all(s in ("done", "failed") for s in states.values()):
                break
            time.sleep(0.2)
    finally:
        dispatcher.stop()
    assert states == {first: "done", second: "done", short: "done"}
    ran = order.read_text().splitlines()
    assert ran == ["slow-net", "quick-net", "slow-net", "slow-net", "slower-net", "slower-net", "slower-net"], ran


class _Recording:
    """A stand-in Dask client of ``threads`` worker threads that records what it is handed (no task runs)."""

    def __init__(self, threads: int):
        self.threads, self.handed = threads, []

    def scheduler_info(self):
        return {"workers": {"w": {"nthreads": self.threads}}}

    def submit(self, function, db_url, task_id, *args, **kwargs):
        self.handed.append(task_id)
        return type("Future", (), {"status": "pending"})()


def test_users_take_turns_for_the_free_workers(tmp_path):
    """Three workers, user A with five waiting submissions, B and C with one each: A gets one place, B and C one
    each (not A three), and when A's ends its next submission goes only after nobody else waits."""
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    store = Database(url)
    mine = [add_task(url, "alice", f"a{k}-net", BENCHMARKS[:1]) for k in range(5)]
    bob, carol = add_task(url, "bob", "b-net", BENCHMARKS[:1]), add_task(url, "carol", "c-net", BENCHMARKS[:1])
    recording = _Recording(threads=3)
    dispatcher = Dispatcher(store.engine, store, url, tmp_path, client=recording)
    dispatcher._dispatch()
    assert recording.handed == [mine[0], bob, carol]
    del dispatcher._active[bob]  # bob's pair ended (and with it his submission): nobody else waits but alice
    with Session(store.engine) as session:
        session.get(SubmissionTask, bob).status = "done"
        session.commit()
    dispatcher._dispatch()
    assert recording.handed == [mine[0], bob, carol, mine[1]]


@pytest.fixture
def app(tmp_path):
    return create_app(db_url=f"sqlite:///{tmp_path / 'results.sqlite'}", root=tmp_path / "submissions",
                      start_worker=False, quotas={"submissions": 2, "pairs_per_submission": 3, "pairs_per_user": 4})


def test_an_upload_past_a_users_quota_is_refused_naming_it(app):
    alice = register(app, "alice")
    token = {"X-CSRF-Token": csrf(alice, "/submit")}

    def upload(k: int, benchmarks) -> object:
        files = {"file": ("p.zip", plugin_zip(identifier=f"quota-net-{k}", package=f"quota_net_{k}"))}
        return alice.post("/api/submissions", files=files, data={"benchmarks": ",".join(benchmarks)}, headers=token)

    too_large = upload(0, BENCHMARKS[:4])  # 1 model x 4 benchmarks > 3 pairs per submission
    assert too_large.status_code == 400
    assert too_large.json()["problems"] == [
        "this submission has 4 (model, benchmark) pairs, more than the quota of 3 pairs per submission; submit fewer "
        "models or choose fewer benchmarks (split it into several submissions)"]
    assert upload(1, BENCHMARKS[:3]).status_code == 201
    over_pairs = upload(2, BENCHMARKS[:2])  # 3 waiting + 2 > 4 pairs per user
    assert over_pairs.status_code == 429
    assert over_pairs.json()["problems"] == [
        "your unfinished submissions hold 3 (model, benchmark) pairs still to score; this one's 2 would exceed the "
        "quota of 4 pairs per user; submit again when some have been scored, or submit fewer pairs"]
    assert upload(3, BENCHMARKS[:1]).status_code == 201
    over_count = upload(4, BENCHMARKS[:1])
    assert over_count.status_code == 429
    assert over_count.json()["problems"] == [
        "you have 2 submissions waiting or running, the quota of 2 unfinished submissions per user; submit again "
        "when one of them has finished"]
    with Session(app.state.engine) as session:  # nothing of the refused uploads was queued or unpacked
        assert sorted(t.models[0] for t in session.query(SubmissionTask)) == ["quota-net-1", "quota-net-3"]
    # the form says the same, with 429
    page = alice.post("/submit", files={"file": ("p.zip", plugin_zip(identifier="quota-net-5", package="quota_net_5"))},
                      data={"csrf_token": csrf(alice, "/submit"), "benchmarks": BENCHMARKS[0]})
    assert page.status_code == 429 and "the quota of 2 unfinished submissions per user" in page.text
    # another user is not held by alice's quota; when alice's submissions finish she may submit again
    bob = register(app, "bob")
    assert bob.post("/api/submissions", files={"file": ("p.zip", plugin_zip(identifier="bob-net", package="bob_net"))},
                    data={"benchmarks": BENCHMARKS[0]}, headers={"X-CSRF-Token": csrf(bob, "/submit")}).status_code == 201
    with Session(app.state.engine) as session:
        for task in session.query(SubmissionTask):
            task.status = "done"
        session.commit()
    assert upload(6, BENCHMARKS[:3]).status_code == 201


def test_serve_has_the_quota_settings():
    from brainscore.cli import build_parser
    from brainscore.cli.serve import _app_arguments

    assert _app_arguments(build_parser().parse_args(["serve"]))["quotas"] == {
        "submissions": 3, "pairs_per_submission": 100, "pairs_per_user": 200}
    assert _app_arguments(build_parser().parse_args(
        ["serve", "--max-submissions-per-user", "1", "--max-pairs-per-submission", "24", "--max-pairs-per-user",
         "48"]))["quotas"] == {"submissions": 1, "pairs_per_submission": 24, "pairs_per_user": 48}
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--max-submissions-per-user", "0"])


def test_a_rerun_counts_against_the_quota_too(app):
    """A re-run of a failed benchmark is a new submission: it cannot bypass the quota of unfinished submissions."""
    alice = register(app, "alice")
    with Session(app.state.engine) as session:
        failed = SubmissionTask(owner="alice", models=["quota-net"], benchmarks=[BENCHMARKS[0]], status="failed",
                                results={f"quota-net|{BENCHMARKS[0]}": {"status": "failed", "failure": "no layer"}})
        waiting = [SubmissionTask(owner="alice", models=[f"w{k}-net"], benchmarks=[BENCHMARKS[0]], status="queued")
                   for k in range(2)]
        session.add_all([failed, *waiting])
        session.commit()
        key = failed.key
    answer = alice.post(f"/api/submissions/{key}/rerun", data={"benchmark": BENCHMARKS[0]},
                        headers={"X-CSRF-Token": csrf(alice, "/submit")})
    assert answer.status_code == 429
    assert "the quota of 2 unfinished submissions per user" in answer.json()["detail"]
