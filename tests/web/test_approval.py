"""Benchmark, data and metric plugins inside a submission are trusted code (issue 32): accepted, but held ``awaiting
approval`` until an administrator approves them; nothing of them runs on the server before; once approved, their
folder is one of the server's plugin folders (the web process and every trusted scorer) and the submission is
queued."""
from __future__ import annotations

import html
import os

import pytest
from sqlalchemy.orm import Session

from brainscore import registry
from fastapi.testclient import TestClient

from brainscore.web.queue import SubmissionTask
from web_helpers import approving_app, csrf, plugin_zip, register

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
    monkeypatch.setenv("BOUNDARY_APPROVAL_MARKER", str(tmp_path / "marker.txt"))
    yield from approving_app(tmp_path)


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


CLASHING_PLUGIN = '''"""bob-net and a benchmark that re-registers a built-in one (issue 36: approving it broke every user's pair on it
and, after a restart, the leaderboard and the benchmark pages)."""
from brainscore.registry import register_benchmark, register_model


@register_benchmark("Kriegeskorte2008.IT-rdm", parent="IT")
def _mine():
    raise RuntimeError("not the built-in")


@register_model("bob-net")
def _net(**kwargs):
    from .model import commitment

    return commitment("bob-net", **kwargs)
'''

RAISING_PLUGIN = BENCHMARK_PLUGIN.replace("\n\n@register_benchmark", "\nraise RuntimeError('this plugin raises on import')\n"
                                          "\n\n@register_benchmark", 1).replace(OWN, "Carol2026.V4-raises").replace(
    "alice-net", "carol-net")  # writes the marker, then raises


def submit_held(app, client, identifier: str, package: str, init: str, benchmarks: str = BENCHMARK) -> str:
    data = plugin_zip(identifier, package, extra={f"{package}/__init__.py": init})
    response = client.post("/api/submissions", files={"file": (f"{package}.zip", data)}, data={"benchmarks": benchmarks},
                           headers={"X-CSRF-Token": csrf(client, "/submit")})
    assert response.status_code == 201, response.text
    assert status_of(app, response.json()["id"]).status == "awaiting approval"
    return response.json()["id"]


def pages_answer(client, *benchmarks: str) -> dict:
    """Status of /, /benchmarks and each benchmark's page, as ``client`` gets them."""
    paths = ["/", "/benchmarks", *(f"/benchmarks/{b}" for b in benchmarks)]
    return {path: client.get(path).status_code for path in paths}


def restart(tmp_path):
    """The site started anew on the same database and submissions (the registry forgets what it had scanned)."""
    from brainscore.web import create_app

    registry.list_only_dirs([])
    return create_app(db_url=f"sqlite:///{tmp_path / 'results.sqlite'}", root=tmp_path / "submissions",
                      start_worker=False)


def test_approving_a_plugin_that_clashes_with_a_built_in_benchmark_is_refused_naming_it(app):
    bob, ada = register(app, "bob"), make_admin(app, "ada")
    key = submit_held(app, bob, "bob-net", "bob_net", CLASHING_PLUGIN)
    page = ada.get(f"/submissions/{key}").text
    assert "approving it would replace it for every user" in page and 'id="approval-problems"' in page
    assert f"/submissions/{key}/approve" not in page  # no button while it clashes
    refused = ada.post(f"/submissions/{key}/approve", data={"csrf_token": csrf(ada, f"/submissions/{key}")},
                       follow_redirects=False)
    assert refused.status_code == 409
    assert ("its benchmark 'Kriegeskorte2008.IT-rdm' is the site's own (a built-in plugin declares it): approving it "
            "would replace it for every user; the author must rename it") in html.unescape(refused.text)
    assert status_of(app, key).status == "awaiting approval"
    from brainscore.web.approval import approved_folders

    assert approved_folders(app.state.site.root) == []
    assert registry.benchmarks.factory("Kriegeskorte2008.IT-rdm")  # the built-in, not a conflict
    assert pages_answer(bob, "Kriegeskorte2008.IT-rdm") == {"/": 200, "/benchmarks": 200,
                                                            "/benchmarks/Kriegeskorte2008.IT-rdm": 200}


def test_no_approved_plugin_takes_the_site_down_across_a_restart(app, tmp_path):
    """A plugin that raises on import (approved: it clashes with nothing) and one that clashes with a built-in
    (approved before approvals were checked: written to the list directly) are on the approved list; after a
    restart every page answers, the built-in benchmark is the built-in's, the clashing folder is left out of the
    scorer's folders and nothing approved ran in the web process."""
    from brainscore.web import approval
    from brainscore.web.pairs import _scorer_environment

    bob, carol, ada = register(app, "bob"), register(app, "carol"), make_admin(app, "ada")
    raising = submit_held(app, carol, "carol-net", "carol_net", RAISING_PLUGIN)
    assert ada.post(f"/submissions/{raising}/approve", data={"csrf_token": csrf(ada, f"/submissions/{raising}")},
                    follow_redirects=False).status_code == 303
    clashing = submit_held(app, bob, "bob-net", "bob_net", CLASHING_PLUGIN)
    task = status_of(app, clashing)
    approval._remember(tmp_path / "submissions", {"task": task.id, "key": clashing, "by": "old",
                                                  "folder": str(approval.plugin_folder_of(task)), "at": "2026-11-01"})
    app = restart(tmp_path)
    visitor = TestClient(app)
    answers = pages_answer(visitor, "Kriegeskorte2008.IT-rdm", "Carol2026.V4-raises")
    assert answers == {"/": 200, "/benchmarks": 200, "/benchmarks/Kriegeskorte2008.IT-rdm": 200,
                       "/benchmarks/Carol2026.V4-raises": 200}, answers
    assert "Carol2026.V4-raises" in registry.benchmarks.list()  # listed from its source
    assert not (tmp_path / "marker.txt").exists()  # neither plugin ran here
    kept = [entry["folder"] for entry in approval.list_approved(tmp_path / "submissions") if not entry["problems"]]
    assert kept == approval.approved_folders(tmp_path / "submissions") and len(kept) == 1 and "carol_net" in kept[0]
    scorer = _scorer_environment(tmp_path / "submissions")["BRAINSCORE_PLUGIN_DIRS"]
    assert "carol_net" in scorer and "bob_net" not in scorer
    assert registry.benchmarks.factory("Kriegeskorte2008.IT-rdm").__module__.startswith("brainscore.plugins.")


def test_an_administrator_withdraws_an_approved_plugin(app, tmp_path, monkeypatch, capsys):
    from fastapi.testclient import TestClient

    from brainscore.cli import main
    from brainscore.web.approval import approved_folders

    alice, ada = register(app, "alice"), make_admin(app, "ada")
    key = submit_held(app, alice, "alice-net", "alice_net", BENCHMARK_PLUGIN, benchmarks=f"{OWN},{BENCHMARK}")
    ada.post(f"/submissions/{key}/approve", data={"csrf_token": csrf(ada, f"/submissions/{key}")})
    assert OWN in TestClient(app).get("/benchmarks").text
    assert "/withdraw" not in alice.get(f"/submissions/{key}").text
    refused = alice.post(f"/submissions/{key}/withdraw", data={"csrf_token": csrf(alice, f"/submissions/{key}")},
                         follow_redirects=False)
    assert refused.status_code == 403 and len(approved_folders(tmp_path / "submissions")) == 1
    assert "/withdraw" in ada.get(f"/submissions/{key}").text
    done = ada.post(f"/submissions/{key}/withdraw", data={"csrf_token": csrf(ada, f"/submissions/{key}")},
                    follow_redirects=False)
    assert done.status_code == 303
    assert approved_folders(tmp_path / "submissions") == [] and OWN not in registry.benchmarks.list()
    assert OWN not in TestClient(app).get("/benchmarks").text
    assert "plugins withdrawn by ada at " in status_of(app, key).log
    assert ada.post(f"/submissions/{key}/withdraw", data={"csrf_token": csrf(ada, f"/submissions/{key}")},
                    follow_redirects=False).status_code == 409
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO(""))
    assert main(["admin", "withdraw", key, "--db", app.state.store.url,
                 "--submissions-dir", str(tmp_path / "submissions")]) == 2
    assert f"submission {key} has no approved plugins" in capsys.readouterr().err


def test_brainscore_admin_withdraw_takes_an_approved_plugin_off_the_list(app, tmp_path, capsys):
    from brainscore.cli import main
    from brainscore.web.approval import approved_folders

    alice, ada = register(app, "alice"), make_admin(app, "ada")
    key = submit_held(app, alice, "alice-net", "alice_net", BENCHMARK_PLUGIN, benchmarks=f"{OWN},{BENCHMARK}")
    ada.post(f"/submissions/{key}/approve", data={"csrf_token": csrf(ada, f"/submissions/{key}")})
    assert len(approved_folders(tmp_path / "submissions")) == 1
    assert main(["admin", "withdraw", key, "--db", app.state.store.url,
                 "--submissions-dir", str(tmp_path / "submissions")]) == 0
    assert "withdrew " in capsys.readouterr().out and approved_folders(tmp_path / "submissions") == []
    assert "plugins withdrawn by command line at " in status_of(app, key).log
