"""Benchmark, data and metric plugins inside a submission are trusted code (issue 32): accepted, but held ``awaiting
approval`` until an administrator approves them; nothing of them runs on the server before; once approved, their
folder is one of the server's plugin folders (the web process and every trusted scorer) and the submission is
queued."""
from __future__ import annotations

import os

import pytest
from sqlalchemy.orm import Session

from brainscore import registry
from brainscore.web.queue import SubmissionTask
from web_helpers import csrf, plugin_zip, register

BENCHMARK = "Cowley2026.210325.V4-pls"
OWN = "Alice2026.210325.V4-pls"

BENCHMARK_PLUGIN = f'''"""alice-net and a benchmark of alice's: the Cowley V4 session again (registered in __init__.py,
where the registry reads a plugin's registrations)."""
import os

from brainscore.registry import register_benchmark, register_model

if os.environ.get("BOUNDARY_APPROVAL_MARKER"):  # proves when (and where) this code ran
    open(os.environ["BOUNDARY_APPROVAL_MARKER"], "a").write(f"imported in {{os.getpid()}}\\n")


@register_benchmark("{OWN}", parent="V4")
def _alice_benchmark():
    from brainscore import load_benchmark

    return load_benchmark("{BENCHMARK}")


@register_model("alice-net")
def _net(**kwargs):
    from .model import commitment

    return commitment("alice-net", **kwargs)
'''


@pytest.fixture
def app(tmp_path, monkeypatch):
    from brainscore.web import create_app

    monkeypatch.setenv("BOUNDARY_APPROVAL_MARKER", str(tmp_path / "marker.txt"))
    before = os.environ.get("BRAINSCORE_PLUGIN_DIRS")  # an approval adds its folder to it
    yield create_app(db_url=f"sqlite:///{tmp_path / 'results.sqlite'}", root=tmp_path / "submissions",
                     start_worker=False)
    if before is None:
        os.environ.pop("BRAINSCORE_PLUGIN_DIRS", None)
    else:
        os.environ["BRAINSCORE_PLUGIN_DIRS"] = before
    registry._discovery.reset()


def make_admin(app, name: str):
    """Register ``name`` through the website, verify its address by its link, then make it an administrator as
    ``brainscore admin add NAME`` does on the server; the logged-in client."""
    from brainscore.web import accounts, administrators

    client = register(app, name)
    user = accounts.user_by_email(app.state.engine, f"{name}@example.org")
    assert client.get(f"/verify?token={accounts.verification_token(app.state.site.secret_key, user)}").status_code == 200
    administrators.add(app.state.engine, name)
    return client


def status_of(app, key: str) -> SubmissionTask:
    with Session(app.state.engine, expire_on_commit=False) as session:
        return session.query(SubmissionTask).filter(SubmissionTask.key == key).one()


def test_a_benchmark_plugin_waits_for_an_administrator_and_then_becomes_the_servers(app, tmp_path):
    alice, ada = register(app, "alice"), make_admin(app, "ada")
    data = plugin_zip("alice-net", "alice_net", extra={"alice_net/__init__.py": BENCHMARK_PLUGIN})
    response = alice.post("/api/submissions", files={"file": ("alice.zip", data)}, data={"benchmarks": f"{OWN},{BENCHMARK}"},
                          headers={"X-CSRF-Token": csrf(alice, "/submit")})
    assert response.status_code in (200, 201, 202), response.text
    key = response.json()["id"]
    task = status_of(app, key)
    assert task.status == "awaiting approval" and task.benchmarks == [OWN, BENCHMARK]
    assert f"awaiting approval: it holds trusted code (benchmark {OWN} (alice_net/__init__.py line 11))" in task.log
    assert not (tmp_path / "marker.txt").exists()  # checked by reading it, never run
    assert OWN not in registry.benchmarks.list()
    page = alice.get(f"/submissions/{key}").text
    assert "runs on the server only after an administrator" in page and "/approve" not in page

    refused = alice.post(f"/submissions/{key}/approve", data={"csrf_token": csrf(alice, f"/submissions/{key}")},
                         follow_redirects=False)
    assert refused.status_code == 403 and status_of(app, key).status == "awaiting approval"
    assert "/approve" in ada.get(f"/submissions/{key}").text  # an administrator sees anyone's, with the button
    approved = ada.post(f"/submissions/{key}/approve", data={"csrf_token": csrf(ada, f"/submissions/{key}")},
                        follow_redirects=False)
    assert approved.status_code == 303, approved.text
    task = status_of(app, key)
    assert task.status == "queued" and "approved by ada at " in task.log
    assert ada.post(f"/submissions/{key}/approve", data={"csrf_token": csrf(ada, f"/submissions/{key}")},
                    follow_redirects=False).status_code == 409  # once

    from brainscore.web.approval import approved_folders
    from brainscore.web.pairs import _scorer_environment

    folder = str(tmp_path / "submissions" / str(task.id) / "site" / "alice_net")
    assert approved_folders(tmp_path / "submissions") == [folder]
    assert folder in _scorer_environment(tmp_path / "submissions")["BRAINSCORE_PLUGIN_DIRS"].split(os.pathsep)
    assert OWN in registry.benchmarks.list()  # the web process's registry, from now on


def test_a_model_only_submission_is_queued_at_once(app):
    alice = register(app, "alice")
    response = alice.post("/api/submissions", files={"file": ("p.zip", plugin_zip())}, data={"benchmarks": BENCHMARK},
                          headers={"X-CSRF-Token": csrf(alice, "/submit")})
    assert status_of(app, response.json()["id"]).status == "queued"
