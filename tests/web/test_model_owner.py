"""A model's owner makes it public or private after submitting, and deletes it (confirmed, CSRF-protected);
everyone else gets 404 for both, and a deleted model's scores leave the leaderboard (its cached pages too)."""
from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from brainscore.results import record
from brainscore.scoring.outcome import Outcome
from brainscore.web import create_app
from brainscore.web.mail import Mailer, MailSettings
from web_helpers import BENCHMARK, add_scored_model, csrf
from web_helpers import register as user


@pytest.fixture
def app(tmp_path):
    app = create_app(db_url=f"sqlite:///{tmp_path / 'results.sqlite'}", root=tmp_path / "submissions",
                     start_worker=False, mailer=Mailer(MailSettings()))
    add_scored_model(app.state.store, "alice-net", 0.25, owner="alice")
    add_scored_model(app.state.store, "other-net", 0.5, owner="bob")
    record(Outcome.from_failure("alice-net", "Kriegeskorte2008.IT-rdm", "weights missing"), app.state.store)
    return app


def on_board(client: TestClient) -> list[str]:
    return re.findall(r'data-model="([^"]+)"', client.get("/").text)


def test_the_owner_makes_a_model_private_and_public_again(app):
    alice, bob, anonymous = user(app, "alice"), user(app, "bob"), TestClient(app)
    assert "alice-net" in on_board(anonymous)  # computed and cached for anonymous visitors
    page = alice.get("/models/alice-net").text
    assert 'id="toggle-visibility">make private</button>' in page and 'href="/models/alice-net/delete"' in page
    assert "toggle-visibility" not in bob.get("/models/alice-net").text
    made = alice.post("/models/alice-net/visibility", data={"visibility": "private", "csrf_token": csrf(alice, "/account")},
                      follow_redirects=False)
    assert made.status_code == 303 and made.headers["location"] == "/models/alice-net"
    assert app.state.store.model("alice-net").public is False
    assert "alice-net" not in on_board(anonymous) and "alice-net" not in on_board(bob)
    assert anonymous.get("/models/alice-net").status_code == 404 and bob.get("/api/models/alice-net").status_code == 404
    assert "alice-net" in on_board(alice) and "private (visible to you only)" in alice.get("/models/alice-net").text
    again = alice.post("/api/models/alice-net/visibility", data={"visibility": "public"},
                       headers={"X-CSRF-Token": csrf(alice, "/account")})
    assert again.json() == {"model": "alice-net", "public": True}
    assert "alice-net" in on_board(anonymous)


def test_others_get_404_and_forms_need_csrf(app):
    alice, bob, anonymous = user(app, "alice"), user(app, "bob"), TestClient(app)
    for client in (bob, anonymous):
        token = csrf(client, "/login")
        assert client.post("/models/alice-net/visibility",
                           data={"visibility": "private", "csrf_token": token}).status_code == 404
        assert client.get("/models/alice-net/delete").status_code == 404
        assert client.post("/models/alice-net/delete", data={"confirm": "alice-net", "csrf_token": token}).status_code == 404
    assert bob.post("/models/no-such-net/visibility", data={"visibility": "private",
                                                            "csrf_token": csrf(bob, "/account")}).status_code == 404
    assert alice.post("/models/alice-net/visibility", data={"visibility": "private"}).status_code == 403
    assert alice.post("/models/alice-net/delete", data={"confirm": "alice-net", "csrf_token": "forged"}).status_code == 403
    assert alice.delete("/api/models/alice-net", params={"confirm": "alice-net"}).status_code == 403  # no X-CSRF-Token
    assert alice.post("/models/alice-net/visibility", data={"visibility": "hidden",
                                                            "csrf_token": csrf(alice, "/account")}).status_code == 400
    assert app.state.store.model("alice-net").public is True


def test_deleting_asks_first_then_the_scores_leave_the_leaderboard(app):
    alice, anonymous = user(app, "alice"), TestClient(app)
    assert on_board(anonymous) == ["other-net", "alice-net"]
    board = anonymous.get("/api/leaderboard").json()
    assert [r["model"] for r in board] == ["other-net", "alice-net"]
    confirm = alice.get("/models/alice-net/delete")
    assert confirm.status_code == 200 and "its 2 score record(s), failures included" in confirm.text
    wrong = alice.post("/models/alice-net/delete", data={"confirm": "alice", "csrf_token": csrf(alice, "/account")})
    assert wrong.status_code == 400 and "type alice-net exactly" in wrong.text
    assert app.state.store.model("alice-net") is not None
    gone = alice.post("/models/alice-net/delete", data={"confirm": "alice-net", "csrf_token": csrf(alice, "/account")})
    assert gone.status_code == 200 and "alice-net and its 2 score record(s) are deleted" in gone.text
    assert app.state.store.model("alice-net") is None
    assert app.state.store.scores("alice-net", include_failed=True) == []
    assert on_board(anonymous) == ["other-net"]  # the cached anonymous page is computed again
    assert [r["model"] for r in anonymous.get("/api/leaderboard").json()] == ["other-net"]
    assert anonymous.get("/models/alice-net").status_code == 404
    assert alice.get("/models/alice-net/delete").status_code == 404  # nothing left to delete


def test_deleting_by_api_token(app):
    alice = user(app, "alice")
    alice.post("/account/tokens", data={"csrf_token": csrf(alice, "/account")})
    token = re.search(r'<code id="token">([^<]+)</code>', alice.post(
        "/account/tokens", data={"csrf_token": csrf(alice, "/account")}).text).group(1)
    api = TestClient(app, headers={"Authorization": f"Bearer {token}"})
    assert api.delete("/api/models/alice-net", params={"confirm": "wrong"}).status_code == 400
    assert api.delete("/api/models/other-net", params={"confirm": "other-net"}).status_code == 404  # bob's
    assert api.delete("/api/models/alice-net", params={"confirm": "alice-net"}).json() == {
        "model": "alice-net", "deleted_scores": 2}
    assert app.state.store.model("other-net") is not None


def test_a_model_is_not_deleted_while_its_submission_runs(app):
    from sqlalchemy.orm import Session

    from brainscore.web.queue import SubmissionTask

    alice = user(app, "alice")
    with Session(app.state.engine) as session:
        task = SubmissionTask(owner="alice", models=["alice-net"], benchmarks=[BENCHMARK], status="running")
        session.add(task)
        session.commit()
        task_id, key = task.id, task.key
    busy = alice.post("/models/alice-net/delete", data={"confirm": "alice-net", "csrf_token": csrf(alice, "/account")})
    # the submission's key (its page's address, what the user's submissions list shows), never its row number
    assert busy.status_code == 409 and f"your submission {key} of alice-net is still running" in busy.text
    assert f"/submissions/{key}" in busy.text
    assert app.state.store.model("alice-net") is not None
    with Session(app.state.engine) as session:
        session.get(SubmissionTask, task_id).status = "done"
        session.commit()
    assert alice.post("/models/alice-net/delete", data={"confirm": "alice-net",
                                                        "csrf_token": csrf(alice, "/account")}).status_code == 200


def test_a_model_no_account_owns_belongs_to_the_site_and_no_upload_takes_it_over(app):
    """Issue 36: a model scored from the command line by the site's operator has no owner; a verified user who
    uploaded a plugin with its identifier became its owner at once, made it private and deleted it with its
    scores. Its identifier is the site's: the upload is refused, naming it and why, and nothing of the model
    changes."""
    from web_helpers import plugin_zip

    add_scored_model(app.state.store, "operator-net", 0.6, owner=None)  # `brainscore score` on the server
    mallory, anonymous = user(app, "mallory"), TestClient(app)
    assert "operator-net" in on_board(anonymous)
    refused = mallory.post("/api/submissions", files={"file": ("p.zip", plugin_zip("operator-net", "operator_net"))},
                           data={"benchmarks": BENCHMARK}, headers={"X-CSRF-Token": csrf(mallory, "/submit")})
    assert refused.status_code == 400
    assert refused.json()["problems"] == [
        "the identifier 'operator-net' is a model of this site (its scores were recorded by the site's operator, not "
        "by an account), so no submission may add to or take it over; choose another"]
    form = mallory.post("/submit", files={"file": ("p.zip", plugin_zip("operator-net", "operator_net"))},
                        data={"csrf_token": csrf(mallory, "/submit"), "benchmarks": BENCHMARK, "visibility": "private"})
    assert form.status_code == 400 and "is a model of this site" in form.text
    model = app.state.store.model("operator-net")
    assert model.owner is None and model.public is True
    token = csrf(mallory, "/account")
    assert mallory.post("/models/operator-net/visibility", data={"visibility": "private",
                                                                 "csrf_token": token}).status_code == 404
    assert mallory.post("/models/operator-net/delete", data={"confirm": "operator-net",
                                                             "csrf_token": token}).status_code == 404
    assert len(app.state.store.scores("operator-net")) == 1 and "operator-net" in on_board(anonymous)
