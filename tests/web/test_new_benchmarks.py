"""A new benchmark, every model (issue 25): registering a new benchmark queues it once for every public model (the
reference's "score new plugins" flow), never for a private one, never twice, and its page shows the progress."""
from __future__ import annotations

import types

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from brainscore import registry
from brainscore.metrics.score import Score
from brainscore.results import record
from brainscore.scoring.outcome import Outcome
from brainscore.web import create_app
from brainscore.web.new_benchmarks import marker, new_benchmark_versions, progress, queue_for_public_models, \
    queue_new_benchmarks
from brainscore.web.queue import SubmissionTask

NEW = "Explore2026.V4-newdata"
OLD = "Cowley2026.210325.V4-pls"


@pytest.fixture
def new_benchmark(monkeypatch):
    """A benchmark registered by a (test) plugin at version 2, under V4; unregistered afterwards."""
    monkeypatch.setitem(registry.benchmarks._factories, NEW, lambda: types.SimpleNamespace(version=2, region="V4"))
    monkeypatch.setitem(registry.benchmarks._metadata, NEW, {"parent": "V4"})
    return NEW


@pytest.fixture
def app(tmp_path):
    app = create_app(db_url=f"sqlite:///{tmp_path / 'results.sqlite'}", root=tmp_path / "submissions",
                     start_worker=False)
    store = app.state.store
    for model, owner, public in (("pub-a", "alice", True), ("pub-b", None, True), ("priv-c", "carol", False)):
        store.add_model(model, owner=owner, public=public)
        record(Outcome.from_score(Score.of(0.3, raw=0.3, ceiling=1.0, model_identifier=model,
                                           benchmark_identifier=OLD)), store)
    folder = tmp_path / "submissions" / "alice-plugin"
    (folder / "site" / "pub_a").mkdir(parents=True)
    with Session(app.state.engine) as session:  # pub-a came in a submission: its plugin folder is reused
        session.add(SubmissionTask(owner="alice", package="pub_a", models=["pub-a"], benchmarks=[OLD], status="done",
                                   requirements=["timm"], folder=str(folder)))
        session.commit()
    return app


def new_tasks(app):
    with Session(app.state.engine) as session:
        return [t for t in session.scalars(select(SubmissionTask).order_by(SubmissionTask.id))
                if t.filename.startswith("new benchmark ")]


def test_a_new_benchmark_is_queued_once_for_every_public_model(app, new_benchmark):
    site = app.state.site
    found = new_benchmark_versions(site)
    assert (NEW, 2) in found and not [b for b, _ in found if b == OLD]  # OLD's registered version is recorded
    assert sorted(queue_new_benchmarks(site, [NEW, OLD])) == [NEW]
    tasks = new_tasks(app)
    assert sorted(t.models[0] for t in tasks) == ["pub-a", "pub-b"]  # one per public model, none for priv-c
    assert all(t.benchmarks == [NEW] and t.status == "queued" and t.filename == marker(NEW, 2) for t in tasks)
    by_model = {t.models[0]: t for t in tasks}
    assert by_model["pub-a"].folder.endswith("alice-plugin") and by_model["pub-a"].requirements == ["timm"]
    assert by_model["pub-a"].owner == "alice"
    assert (site.root / str(by_model["pub-b"].id) / "site").is_dir()  # a built-in model: an empty plugin folder
    assert site.store.submission(by_model["pub-b"].submission_id).meta == {
        "web_job": by_model["pub-b"].id, "new_benchmark": NEW, "version": 2}
    # run twice: nothing more
    assert queue_new_benchmarks(site, [NEW]) == {} and queue_for_public_models(site, NEW) == []
    assert (NEW, 2) not in new_benchmark_versions(site)
    assert len(new_tasks(app)) == 2


def test_models_already_scored_or_waiting_are_not_queued_again(app, new_benchmark):
    site = app.state.site
    record(Outcome.from_score(Score.of(0.5, raw=0.5, ceiling=1.0, model_identifier="pub-a",
                                       benchmark_identifier=NEW, benchmark_version=2)), site.store)
    with Session(app.state.engine) as session:  # pub-b's owner already submitted it on the new benchmark
        session.add(SubmissionTask(owner="bob", models=["pub-b"], benchmarks=[NEW], status="queued", folder="/x"))
        session.commit()
    assert queue_for_public_models(site, NEW) == []
    assert len(queue_for_public_models(site, NEW, version=3)) == 1  # a newer version: pub-a again (pub-b still waits)
    assert [(t.models[0], t.filename) for t in new_tasks(app)] == [("pub-a", marker(NEW, 3))]


def test_progress_on_the_benchmark_page(app, new_benchmark):
    site = app.state.site
    assert progress(site, NEW) is None
    queue_for_public_models(site, NEW)
    a, b = sorted(new_tasks(app), key=lambda t: t.models[0])
    with Session(app.state.engine) as session:  # pub-b failed; pub-a scored
        task = session.get(SubmissionTask, b.id)
        task.status, task.results = "failed", {f"pub-b|{NEW}": {"status": "failed", "failure": "boom"}}
        session.commit()
    record(Outcome.from_score(Score.of(0.5, raw=0.5, ceiling=1.0, model_identifier="pub-a",
                                       benchmark_identifier=NEW, benchmark_version=2)), site.store)
    assert progress(site, NEW) == {"version": 2, "total": 2, "scored": 1, "queued": 0, "running": 0, "failed": 1,
                                   "models": {"pub-a": "scored", "pub-b": "failed"}}
    client = TestClient(app)
    assert client.get(f"/api/benchmarks/{NEW}/progress").json()["scored"] == 1
    page = client.get(f"/benchmarks/{NEW}").text
    assert '<b id="rescoring-scored">1</b> of <b id="rescoring-total">2</b> models scored' in page
    assert '<span id="rescoring-failed" class="error">1</span> failed' in page
