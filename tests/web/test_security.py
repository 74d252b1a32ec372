"""The website's security cases (issue 23): who may see and do what on every route, identifiers nobody can
walk, CSRF on every state-changing route, session fixation, the log-in lock per account and per address,
upload limits enforced while the body streams in, and the security headers on every response.

The passive scan of a live server (what a ZAP baseline scan checks) is in ``test_scan.py``.
"""
from __future__ import annotations

import re
import socket
import time
from html.parser import HTMLParser
from pathlib import Path

import psutil
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from brainscore.results.schema import ApiToken, LoginAttempt
from brainscore.web import accounts, create_app, security
from brainscore.web.queue import SubmissionTask
from browser_helpers import page_server_process
from host_helpers import free_port
from web_helpers import BENCHMARK, PASSWORD, add_scored_model, csrf, register

SECRET = "secret-net"
"""alice's private model: its name never appears in a page or JSON answered to anyone else."""


# ------------------------------------------------------------------------------------------------ set-up
@pytest.fixture
def app(tmp_path):
    app = create_app(db_url=f"sqlite:///{tmp_path / 'results.sqlite'}", root=tmp_path / "submissions",
                     start_worker=False)
    curve = [["1", 0.21], ["3", 0.24]]
    for model, public, value in (("pub-net", True, 0.25), (SECRET, False, 0.75)):
        provenance = {"model": {"identifier": model, "layers": {"V4": "3"}},
                      "layer_selection": {"V4": {"layer": "3", "scores": curve}}}
        add_scored_model(app.state.store, model, value, public=public, provenance=provenance)
    return app


def log_in(app, name: str, address: str = "testclient") -> TestClient:
    client = TestClient(app, client=(address, 50000))
    response = client.post("/login", data={"username": name, "password": PASSWORD, "csrf_token": csrf(client)},
                           follow_redirects=False)
    assert response.status_code == 303, response.text
    return client


def failed_task(app, owner: str = "alice") -> SubmissionTask:
    """A failed submission task of ``owner`` on the private model, with a log."""
    with Session(app.state.engine, expire_on_commit=False) as session:
        task = SubmissionTask(owner=owner, package="secret_net", models=[SECRET], benchmarks=[BENCHMARK],
                              status="failed", results={f"{SECRET}|{BENCHMARK}": {"status": "failed", "failure": "boom"}},
                              log="the log\nTraceback: boom\n", folder="/nonexistent")
        session.add(task)
        session.commit()
        return task


def routes(app) -> set[tuple[str, str]]:
    """Every (method, path template) the application answers, HEAD aside; ``("MOUNT", path)`` for mounted apps.

    Read from ``app.routes``, following included routers, so a route added anywhere shows up here.
    """
    found = set()

    def walk(entries):
        for route in entries:
            if hasattr(route, "effective_route_contexts"):  # an included router (FastAPI >= 0.16x)
                walk(route.effective_route_contexts())
            elif getattr(route, "routes", None) is not None and not hasattr(route, "methods") \
                    and type(route).__name__ != "Mount":
                walk(route.routes)
            elif getattr(route, "methods", None):
                found.update((method, route.path) for method in route.methods if method != "HEAD")
            else:
                found.add(("MOUNT", route.path))

    walk(app.routes)
    return found


# ------------------------------------------------------------------------------------------------ authorisation
ROLES = ("anonymous", "other", "owner")
"""Who asks: nobody logged in; bob, logged in, who owns nothing; alice, who owns the private model ``secret-net``,
the failed submission and the API token. The site has no administrators (``brainscore admin add`` makes them, on the server): no account can see
more than its own."""

ANSWERS = {
    # (method, path template): (concrete path, form fields (None: GET), {role: status code})
    ("GET", "/openapi.json"): ("/openapi.json", None, {"anonymous": 200, "other": 200, "owner": 200}),
    ("MOUNT", "/static"): ("/static/app.js", None, {"anonymous": 200, "other": 200, "owner": 200}),
    ("GET", "/"): ("/", None, {"anonymous": 200, "other": 200, "owner": 200}),
    ("GET", "/leaderboard.csv"): ("/leaderboard.csv", None, {"anonymous": 200, "other": 200, "owner": 200}),
    ("GET", "/leaderboard.json"): ("/leaderboard.json", None, {"anonymous": 200, "other": 200, "owner": 200}),
    ("GET", "/leaderboard.bib"): ("/leaderboard.bib", None, {"anonymous": 200, "other": 200, "owner": 200}),
    # a page naming the models it cannot show (issue 36: a shared link outlives its models), without their scores
    ("GET", "/compare"): (f"/compare?models=pub-net,{SECRET}", None, {"anonymous": 200, "other": 200, "owner": 200}),
    ("GET", "/models/{identifier}"): (f"/models/{SECRET}", None, {"anonymous": 404, "other": 404, "owner": 200}),
    ("GET", "/benchmarks/{identifier}"): (f"/benchmarks/{BENCHMARK}", None,
                                          {"anonymous": 200, "other": 200, "owner": 200}),
    ("GET", "/plots/benchmarks/{identifier}.svg"): (f"/plots/benchmarks/{BENCHMARK}.svg?highlight={SECRET}", None,
                                                    {"anonymous": 200, "other": 200, "owner": 200}),
    ("GET", "/plots/models/{model}/layers/{region}.svg"): (f"/plots/models/{SECRET}/layers/V4.svg", None,
                                                           {"anonymous": 404, "other": 404, "owner": 200}),
    ("GET", "/register"): ("/register", None, {"anonymous": 200, "other": 200, "owner": 200}),
    ("POST", "/register"): ("/register", {"username": "{role}-new", "password": PASSWORD,
                                          "email": "{role}-new@example.org"},
                            {"anonymous": 303, "other": 303, "owner": 303}),
    ("GET", "/login"): ("/login", None, {"anonymous": 200, "other": 200, "owner": 200}),
    ("POST", "/login"): ("/login", {"username": "{role}-self", "password": PASSWORD},
                         {"anonymous": 303, "other": 303, "owner": 303}),
    ("POST", "/logout"): ("/logout", {}, {"anonymous": 303, "other": 303, "owner": 303}),
    ("GET", "/account"): ("/account", None, {"anonymous": 303, "other": 200, "owner": 200}),
    ("POST", "/account/tokens"): ("/account/tokens", {}, {"anonymous": 401, "other": 200, "owner": 200}),
    ("POST", "/account/tokens/{token_id}/revoke"): ("/account/tokens/{token}/revoke", {},
                                                    {"anonymous": 401, "other": 404, "owner": 303}),
    ("GET", "/submit"): ("/submit", None, {"anonymous": 303, "other": 200, "owner": 200}),
    ("POST", "/submit"): ("/submit", {"file": b"not a zip"}, {"anonymous": 401, "other": 400, "owner": 400}),
    ("GET", "/submissions"): ("/submissions", None, {"anonymous": 303, "other": 200, "owner": 200}),
    ("GET", "/submissions/{key}"): ("/submissions/{key}", None, {"anonymous": 303, "other": 404, "owner": 200}),
    ("POST", "/submissions/{key}/rerun"): ("/submissions/{key}/rerun", {"benchmark": BENCHMARK},
                                           {"anonymous": 401, "other": 404, "owner": 303}),
    # approving trusted code is an administrator's (tests/web/test_approval.py): not even the owner's
    ("POST", "/submissions/{key}/approve"): ("/submissions/{key}/approve", {},
                                             {"anonymous": 401, "other": 403, "owner": 403}),
    # so is withdrawing approved plugins (tests/web/test_approval.py)
    ("POST", "/submissions/{key}/withdraw"): ("/submissions/{key}/withdraw", {},
                                              {"anonymous": 401, "other": 403, "owner": 403}),
    ("GET", "/api/leaderboard"): ("/api/leaderboard", None, {"anonymous": 200, "other": 200, "owner": 200}),
    ("GET", "/favicon.ico"): ("/favicon.ico", None, {"anonymous": 200, "other": 200, "owner": 200}),
    ("GET", "/benchmarks"): ("/benchmarks?region=V4", None, {"anonymous": 200, "other": 200, "owner": 200}),
    ("GET", "/api/catalogue/benchmarks"): ("/api/catalogue/benchmarks", None,
                                           {"anonymous": 200, "other": 200, "owner": 200}),
    ("GET", "/models"): ("/models?mine=1", None, {"anonymous": 303, "other": 200, "owner": 200}),  # to /login
    ("GET", "/agreement"): ("/agreement", None, {"anonymous": 200, "other": 200, "owner": 200}),
    ("GET", "/api/agreement"): ("/api/agreement", None, {"anonymous": 200, "other": 200, "owner": 200}),
    ("GET", "/plots/scatter.svg"): (f"/plots/scatter.svg?a={BENCHMARK}&b={BENCHMARK}", None,
                                    {"anonymous": 200, "other": 200, "owner": 200}),
    ("GET", "/benchmarks/{identifier}/stimuli/{number}.jpg"): (f"/benchmarks/{BENCHMARK}/stimuli/99.jpg", None,
                                                              {"anonymous": 404, "other": 404, "owner": 404}),
    ("GET", "/plots/models/{model}/timeline.svg"): (f"/plots/models/{SECRET}/timeline.svg", None,
                                                    {"anonymous": 404, "other": 404, "owner": 200}),
    ("POST", "/account/name"): ("/account/name", {"display_name": "A. Person"},
                                {"anonymous": 401, "other": 303, "owner": 303}),
    ("GET", "/api/compare"): (f"/api/compare?models=pub-net,{SECRET}", None,
                              {"anonymous": 404, "other": 404, "owner": 200}),
    ("GET", "/api/models/{identifier}"): (f"/api/models/{SECRET}", None, {"anonymous": 404, "other": 404, "owner": 200}),
    ("GET", "/api/benchmarks"): ("/api/benchmarks", None, {"anonymous": 200, "other": 200, "owner": 200}),
    ("GET", "/api/benchmarks/{identifier}"): (f"/api/benchmarks/{BENCHMARK}", None,
                                              {"anonymous": 200, "other": 200, "owner": 200}),
    ("POST", "/api/submissions"): ("/api/submissions", {"file": b"not a zip"},
                                   {"anonymous": 401, "other": 400, "owner": 400}),
    ("GET", "/api/submissions/{key}"): ("/api/submissions/{key}", None, {"anonymous": 401, "other": 404, "owner": 200}),
    ("GET", "/api/benchmarks/{identifier}/progress"): (f"/api/benchmarks/{BENCHMARK}/progress", None,
                                                       {"anonymous": 200, "other": 200, "owner": 200}),
    ("GET", "/scores/{score_id}"): ("/scores/{score}", None, {"anonymous": 404, "other": 404, "owner": 200}),
    ("GET", "/api/scores/{score_id}"): ("/api/scores/{score}", None, {"anonymous": 404, "other": 404, "owner": 200}),
    ("GET", "/verify"): ("/verify?token=forged", None, {"anonymous": 400, "other": 400, "owner": 400}),
    ("POST", "/account/email"): ("/account/email", {"email": "{role}-changed@example.org"},
                                 {"anonymous": 401, "other": 200, "owner": 200}),
    ("GET", "/forgot"): ("/forgot", None, {"anonymous": 200, "other": 200, "owner": 200}),
    ("POST", "/forgot"): ("/forgot", {"email": "nobody@example.org"}, {"anonymous": 200, "other": 200, "owner": 200}),
    ("GET", "/reset"): ("/reset?token=forged", None, {"anonymous": 400, "other": 400, "owner": 400}),
    ("POST", "/reset"): ("/reset", {"token": "forged", "password": "a new password"},
                         {"anonymous": 400, "other": 400, "owner": 400}),
    ("POST", "/models/{identifier}/visibility"): (f"/models/{SECRET}/visibility", {"visibility": "private"},
                                                  {"anonymous": 404, "other": 404, "owner": 303}),
    ("GET", "/models/{identifier}/delete"): (f"/models/{SECRET}/delete", None,
                                             {"anonymous": 404, "other": 404, "owner": 200}),
    ("POST", "/models/{identifier}/delete"): (f"/models/{SECRET}/delete", {"confirm": "not its name"},
                                              {"anonymous": 404, "other": 404, "owner": 400}),
    ("POST", "/api/models/{identifier}/visibility"): (f"/api/models/{SECRET}/visibility", {"visibility": "private"},
                                                      {"anonymous": 401, "other": 404, "owner": 200}),
    ("DELETE", "/api/models/{identifier}"): (f"/api/models/{SECRET}?confirm=not-its-name", {},
                                             {"anonymous": 401, "other": 404, "owner": 400}),
    ("POST", "/api/submissions/{key}/rerun"): ("/api/submissions/{key}/rerun", {"benchmark": BENCHMARK},
                                               {"anonymous": 401, "other": 404, "owner": 201}),
}
"""Every route and what each role gets from it. A route missing here fails
:func:`test_every_route_has_an_entry_in_the_authorisation_table`."""


def test_every_route_has_an_entry_in_the_authorisation_table(app):
    assert routes(app) == set(ANSWERS), ("a route was added or removed: say in ANSWERS who may see and use it "
                                         "(anonymous, another user, its owner)")


SESSION_CHANGING = {"/login", "/register", "/logout"}
"""Routes asked with a client of their own (they change whose session it is)."""


def test_a_new_route_without_an_entry_is_caught(app):
    """The table's check sees routes added directly and through an included router, as the areas add theirs."""
    from fastapi import APIRouter

    area = APIRouter()
    area.add_api_route("/new-area/{thing}", lambda thing: {}, methods=["POST"])
    app.include_router(area)
    app.add_api_route("/new-page", lambda: {}, methods=["GET"])
    assert routes(app) - set(ANSWERS) == {("POST", "/new-area/{thing}"), ("GET", "/new-page")}


def _client(app, role: str) -> TestClient:
    if role == "anonymous":
        client = TestClient(app)
        client.get("/login")  # a session with a CSRF token, as a browser that showed the form has
        return client
    return log_in(app, {"other": "bob", "owner": "alice"}[role])


def _ask(client: TestClient, method: str, path: str, data: dict | None, role: str):
    if method == "GET":
        return client.get(path, follow_redirects=False, headers={"accept": "text/html"})
    token = csrf(client)
    if method == "DELETE":
        return client.delete(path, headers={"X-CSRF-Token": token}, follow_redirects=False)
    data = {k: v.format(role=role) if isinstance(v, str) else v for k, v in data.items()}
    files = {k: ("upload.zip", v) for k, v in data.items() if isinstance(v, bytes)}
    fields = {k: v for k, v in data.items() if not isinstance(v, bytes)}
    if path.startswith("/api/"):
        return client.post(path, data=fields, files=files or None, headers={"X-CSRF-Token": token},
                           follow_redirects=False)
    return client.post(path, data={**fields, "csrf_token": token}, files=files or None, follow_redirects=False)


def test_each_role_gets_what_the_authorisation_table_says_and_nothing_private(app):
    """Each route asked by each role, with a valid CSRF token where one is needed: the status code of the table;
    and no answer to anyone but alice holds her private model's name, her submission's key or its log."""
    for name in ("alice", "bob"):
        register(app, name)
    for role in ("anonymous", "other", "owner"):  # the accounts the log-in and registration rows use
        register(app, f"{role}-self")
    alice = log_in(app, "alice")
    alice.post("/account/tokens", data={"csrf_token": csrf(alice, "/account")})
    with Session(app.state.engine) as session:
        token_ids = session.scalars(select(ApiToken.id)).all()
    task = failed_task(app)
    private = (SECRET, task.key, "Traceback: boom")
    clients = {role: _client(app, role) for role in ROLES}
    wrong = []
    for (method, template), (path, data, expected) in sorted(ANSWERS.items()):
        for role in ROLES:
            task = failed_task(app)  # a new one per ask: a re-run or a revoked token must not change the next
            alice_token = token_ids[-1] if role != "owner" else _new_token_id(app, alice)
            concrete = path.format(key=task.key, token=alice_token, score=_score_id(app))
            client = _client(app, role) if template in SESSION_CHANGING else clients[role]
            response = _ask(client, "GET" if method == "MOUNT" else method, concrete, data, role)
            if response.status_code != expected[role]:
                wrong.append(f"{method} {concrete} as {role}: {response.status_code}, expected {expected[role]}: "
                             f"{response.text[:200]}")
            if role != "owner":  # (a name the asker typed may be echoed: "no model 'secret-net'", as for any name)
                leaked = [p for p in private + (task.key,) if p in response.text and p not in concrete]
                if leaked:
                    wrong.append(f"{method} {concrete} as {role} shows {leaked}")
    assert wrong == []


def test_head_answers_every_page_like_get_without_a_body(app):
    """HEAD answered 405 on every page (FastAPI routes answer the methods they declare); now the same status and
    headers as GET, Content-Length included, and no body, for every GET route of the table and each role."""
    register(app, "alice")
    register(app, "bob")
    clients = {role: _client(app, role) for role in ROLES}
    task = failed_task(app)
    wrong = []
    for (method, _template), (path, _data, _expected) in sorted(ANSWERS.items()):
        if method not in ("GET", "MOUNT"):
            continue
        concrete = path.format(key=task.key, score=_score_id(app))
        for role, client in clients.items():
            got = client.get(concrete, follow_redirects=False, headers={"accept": "text/html"})
            head = client.head(concrete, follow_redirects=False, headers={"accept": "text/html"})
            same = {name: (got.headers.get(name), head.headers.get(name))
                    for name in ("content-type", "content-length", "location", "content-security-policy")}
            if head.status_code != got.status_code or head.content or any(a != b for a, b in same.values()):
                wrong.append(f"HEAD {concrete} as {role}: {head.status_code} ({len(head.content)} bytes of body), "
                             f"GET {got.status_code}; headers {same}")
    assert wrong == []


def _score_id(app) -> int:
    """The row number of the private model's score."""
    (score,) = app.state.store.scores(SECRET)
    return score.id


def _new_token_id(app, client: TestClient) -> int:
    client.post("/account/tokens", data={"csrf_token": csrf(client, "/account")})
    with Session(app.state.engine) as session:
        return session.scalars(select(ApiToken.id).order_by(ApiToken.id.desc())).first()


# ------------------------------------------------------------------------------------------------ identifiers
def test_walking_submission_numbers_reveals_nothing(app):
    """Submissions were addressed by row number (``/submissions/1``, ``/submissions/2`` ...); now by a random
    128-bit key, and every other identifier answers the same 404 whether or not it exists."""
    register(app, "alice")
    bob = register(app, "bob")
    tasks = [failed_task(app) for _ in range(5)]
    assert len({t.key for t in tasks}) == 5 and all(re.fullmatch(r"[\w-]{22}", t.key) for t in tasks)
    answers = set()
    for n in range(0, 12):
        for path in (f"/submissions/{n}", f"/api/submissions/{n}"):
            response = bob.get(path)
            answers.add((response.status_code, response.text if path.startswith("/api") else ""))
    assert answers == {(404, ""), (404, '{"detail":"no such submission of yours"}')}
    for task in tasks:  # bob knowing the real key is no better: the same words as for a key that does not exist
        assert bob.get(f"/api/submissions/{task.key}").json() == {"detail": "no such submission of yours"}
    alice = log_in(app, "alice")
    assert alice.get(f"/api/submissions/{tasks[0].key}").json()["id"] == tasks[0].key
    assert alice.get(f"/api/submissions/{tasks[0].id}").status_code == 404  # the row number is no way in


def test_walking_score_numbers_shows_public_scores_only(app):
    """Score records keep their row numbers (``brainscore reproduce N`` takes them): walking them shows the
    public model's score, while the private one answers exactly as a number that was never recorded."""
    bob = register(app, "bob")
    shown = {}
    for n in range(1, 6):
        for path in (f"/scores/{n}", f"/api/scores/{n}"):
            response = bob.get(path)
            assert SECRET not in response.text
            shown[path] = response.status_code
    assert sorted(shown.values()) == [200, 200] + [404] * 8
    secret = _score_id(app)
    hidden, never = bob.get(f"/api/scores/{secret}"), bob.get("/api/scores/5")
    assert hidden.status_code == never.status_code == 404
    assert hidden.json()["detail"].replace(str(secret), "N") == never.json()["detail"].replace("5", "N")


def test_a_private_models_pages_answer_404_like_a_model_that_does_not_exist(app):
    bob = register(app, "bob")
    for client in (TestClient(app), bob):
        for path in ("/models/{}", "/api/models/{}", "/plots/models/{}/layers/V4.svg"):
            secret, missing = client.get(path.format(SECRET)), client.get(path.format("no-such-net"))
            assert secret.status_code == missing.status_code == 404
            assert secret.text.replace(SECRET, "X") == missing.text.replace("no-such-net", "X")


def test_revoking_someone_elses_token_looks_like_revoking_one_that_does_not_exist(app):
    alice = register(app, "alice")
    token_id = _new_token_id(app, alice)
    bob = register(app, "bob")
    theirs = bob.post(f"/account/tokens/{token_id}/revoke", data={"csrf_token": csrf(bob, "/account")})
    missing = bob.post(f"/account/tokens/{token_id + 100}/revoke", data={"csrf_token": csrf(bob, "/account")})
    assert theirs.status_code == missing.status_code == 404
    # the same page (HTML since issue 29) but for the number asked
    assert theirs.text.replace(f"{token_id}<", "N<").replace(f" {token_id} ", " N ") == \
        missing.text.replace(f"{token_id + 100}<", "N<").replace(f" {token_id + 100} ", " N ")
    assert "detail" in theirs.text


# ------------------------------------------------------------------------------------------------ CSRF
def test_every_state_changing_route_refuses_a_request_without_the_csrf_token(app):
    """Every POST/PUT/PATCH/DELETE of the application, asked by a logged-in browser session without the token
    and with a forged one: 403, and nothing changed (the account's tokens, the queue)."""
    alice = register(app, "alice")
    task = failed_task(app)
    token_id = _new_token_id(app, alice)
    changing = sorted((m, p) for m, p in routes(app) if m in security.STATE_CHANGING)
    assert {("POST", "/login"), ("POST", "/logout"), ("POST", "/api/submissions")} <= set(changing)
    before = _state(app)
    for method, template in changing:
        path, data, _ = ANSWERS[(method, template)]
        path = path.format(key=task.key, token=token_id, score=_score_id(app))
        fields = {k: (v.format(role="x") if isinstance(v, str) else v) for k, v in data.items()}
        files = {k: ("upload.zip", v) for k, v in fields.items() if isinstance(v, bytes)} or None
        fields = {k: v for k, v in fields.items() if not isinstance(v, bytes)}
        for extra, headers in (({}, {}), ({"csrf_token": "forged"}, {"X-CSRF-Token": "forged"})):
            response = alice.request(method, path, data={**fields, **extra}, files=files, headers=headers,
                                     follow_redirects=False)
            assert response.status_code == 403, (method, path, response.status_code, response.text)
            assert "CSRF token missing or wrong" in response.text
    assert _state(app) == before
    assert alice.get("/account", follow_redirects=False).status_code == 200  # still logged in: logout refused too


def _state(app):
    with Session(app.state.engine) as session:
        return (session.scalars(select(ApiToken.id)).all(),
                session.scalars(select(SubmissionTask.key).order_by(SubmissionTask.id)).all(),
                sorted(u.username for u in session.scalars(select(accounts.User))))


def test_an_api_token_needs_no_csrf_token(app):
    alice = register(app, "alice")
    page = alice.post("/account/tokens", data={"csrf_token": csrf(alice, "/account")}).text
    token = re.search(r'id="token">([^<]+)<', page).group(1)
    task = failed_task(app)
    response = TestClient(app).post(f"/api/submissions/{task.key}/rerun", data={"benchmark": BENCHMARK},
                                    headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 201 and response.json()["rerun_of"] == task.key


# ------------------------------------------------------------------------------------------------ sessions
def test_a_session_from_before_the_log_in_is_worthless_after_it(app):
    """Session fixation: an attacker who planted a session cookie (and knows its CSRF token) in the victim's
    browser gains nothing when the victim logs in: the log-in makes a new session id and a new CSRF token."""
    register(app, "alice").post("/logout", data={"csrf_token": "x"})
    victim = TestClient(app)
    planted_token = csrf(victim)
    planted_cookie = victim.cookies["brainscore_session"]
    response = victim.post("/login", data={"username": "alice", "password": PASSWORD, "csrf_token": planted_token},
                           follow_redirects=False)
    assert response.status_code == 303
    assert victim.cookies["brainscore_session"] != planted_cookie
    assert victim.get("/account", follow_redirects=False).status_code == 200
    attacker = TestClient(app, cookies={"brainscore_session": planted_cookie})
    assert attacker.get("/account", follow_redirects=False).status_code == 303  # not logged in
    assert csrf(victim, "/account") != planted_token
    assert victim.post("/account/tokens", data={"csrf_token": planted_token}).status_code == 403


def test_logging_out_ends_the_session_on_the_server_so_a_copied_cookie_stops_working(app):
    """The signed cookie alone used to be the log-in: a copy taken before log-out still worked for 14 days."""
    alice = register(app, "alice")
    copied = alice.cookies["brainscore_session"]
    thief = TestClient(app, cookies={"brainscore_session": copied})
    assert thief.get("/account", follow_redirects=False).status_code == 200
    assert alice.post("/logout", data={"csrf_token": csrf(alice, "/account")}, follow_redirects=False).status_code == 303
    assert alice.cookies.get("brainscore_session") != copied
    assert thief.get("/account", follow_redirects=False).status_code == 303
    assert thief.get("/api/submissions/x").status_code == 401


def test_ending_every_session_of_a_user_logs_out_every_browser(app):
    """For a password change or reset: :func:`brainscore.web.accounts.end_sessions`."""
    first, second = register(app, "alice"), log_in(app, "alice")
    with Session(app.state.engine) as session:
        alice = session.scalar(select(accounts.User).where(accounts.User.username == "alice"))
    assert accounts.end_sessions(app.state.engine, alice) == 2
    for client in (first, second):
        assert client.get("/account", follow_redirects=False).status_code == 303


def test_session_cookie_flags(app, tmp_path, monkeypatch):
    client = TestClient(app)
    cookie = client.get("/login").headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie and "path=/" in cookie and "secure" not in cookie
    monkeypatch.setenv("BRAINSCORE_WEB_HTTPS", "1")
    https = create_app(db_url=f"sqlite:///{tmp_path / 'other.sqlite'}", root=tmp_path / "s2", start_worker=False)
    response = TestClient(https, base_url="https://testserver").get("/login")
    cookie = response.headers["set-cookie"].lower()
    assert "secure" in cookie and "httponly" in cookie and "samesite=lax" in cookie
    assert response.headers["strict-transport-security"] == "max-age=31536000; includeSubDomains"


# ------------------------------------------------------------------------------------------------ the log-in lock
def _fail(app, name: str, address: str, times: int = 1) -> list[int]:
    client = TestClient(app, client=(address, 40000))
    return [client.post("/login", data={"username": name, "password": "wrong password",
                                        "csrf_token": csrf(client)}).status_code for _ in range(times)]


def _try(app, name: str, address: str) -> int:
    client = TestClient(app, client=(address, 40000))
    return client.post("/login", data={"username": name, "password": PASSWORD, "csrf_token": csrf(client)},
                       follow_redirects=False).status_code


def test_one_account_sprayed_from_many_addresses_is_locked_per_account(app):
    register(app, "alice")
    assert _try(app, "alice", "10.0.0.1") == 303  # alice logs in from home: a known address
    for n in range(accounts.MAX_FAILURES):
        assert _fail(app, "alice", f"203.0.113.{n}") == [400]  # one guess per address
    assert _fail(app, "alice", "203.0.113.200") == [429]  # the account is locked for new addresses ...
    assert _try(app, "alice", "198.51.100.7") == 429  # ... even with the right password from one
    assert _try(app, "alice", "10.0.0.1") == 303  # her own address still works: no lock-out by strangers


def test_the_right_password_works_from_an_attackers_address_for_another_account(app):
    """bob behind the same address (a lab's NAT) as an attacker guessing across many accounts still logs in,
    once he has logged in from there before; a first log-in from that address waits for the window."""
    register(app, "alice"), register(app, "bob"), register(app, "carol")
    assert _try(app, "bob", "192.0.2.1") == 303
    _fail(app, "victim0", "192.0.2.1")
    with Session(app.state.engine) as session:  # the other guesses, written as the route writes them (faster)
        session.add_all([LoginAttempt(username=f"victim{n}", address="192.0.2.1", success=False)
                         for n in range(1, accounts.MAX_ADDRESS_FAILURES)])
        session.commit()
    assert _fail(app, "alice", "192.0.2.1") == [429]  # the address is locked for accounts new to it
    assert _try(app, "bob", "192.0.2.1") == 303
    assert _try(app, "carol", "192.0.2.1") == 429
    assert _try(app, "carol", "192.0.2.2") == 303  # elsewhere, carol is not locked


def test_failures_of_one_account_from_one_address_lock_that_pair_even_when_known(app):
    register(app, "alice")
    assert _try(app, "alice", "10.0.0.1") == 303
    assert _fail(app, "alice", "10.0.0.1", accounts.MAX_FAILURES) == [400] * accounts.MAX_FAILURES
    assert _try(app, "alice", "10.0.0.1") == 429


# ------------------------------------------------------------------------------------------------ headers
def test_every_route_answers_with_the_security_headers(app):
    alice = register(app, "alice")
    task = failed_task(app)
    for (method, _), (path, data, _) in sorted(ANSWERS.items()):
        if method not in ("GET", "MOUNT"):
            continue
        for client in (TestClient(app), alice):
            response = client.get(path.format(key=task.key, token=1, score=_score_id(app)), follow_redirects=False)
            for name, value in security.HEADERS.items():
                if name == "content-security-policy" and response.headers.get("content-type") == "image/svg+xml":
                    value = security.SVG_POLICY  # a plot opened on its own: inline style, nothing else
                assert response.headers.get(name) == value, (path, name)
            assert "server" not in response.headers
    csp = security.CONTENT_SECURITY_POLICY
    assert "frame-ancestors 'none'" in csp and "script-src 'self';" in csp and "unsafe-eval" not in csp
    assert "style-src 'self';" in csp and "unsafe-inline" not in csp
    # the error pages too: 404, 405, 403, 413
    for response in (alice.get("/no/such/page"), alice.put("/login"), alice.post("/account/tokens"),
                     alice.post("/login", content=b"x" * (security.FORM_BYTES + 1))):
        assert response.headers["x-frame-options"] == "DENY" and response.headers["content-security-policy"] == csp


def test_answers_to_a_logged_in_user_are_never_cached(app):
    """Pages with the account's own data are never stored; the pages readers share (leaderboard, model,
    benchmark) are ``no-store`` or keep their ``private, no-cache`` and ETag (revalidated each time, no shared
    cache keeps them), never ``public``."""
    alice = register(app, "alice")
    task = failed_task(app)
    for path in ("/account", "/submissions", "/submit", f"/submissions/{task.key}", f"/api/submissions/{task.key}"):
        response = alice.get(path)
        assert response.status_code == 200 and response.headers["cache-control"] == "no-store, private", path
        assert "cookie" in response.headers["vary"].lower()
    for path in ("/", f"/models/{SECRET}", "/api/leaderboard"):
        response = alice.get(path)
        assert response.status_code == 200, path
        assert response.headers["cache-control"] in ("private, no-cache", "no-store, private"), path
    first = TestClient(app).get("/login")  # an anonymous page that sets the session cookie is not shared either
    assert "set-cookie" in first.headers and first.headers["cache-control"] == "no-store, private"
    assert TestClient(app).get("/api/leaderboard").headers["cache-control"] == "public, no-cache"


def test_no_page_has_an_inline_script(app):
    """The Content-Security-Policy allows scripts only from this site's files: an inline script would not run."""
    alice = register(app, "alice")
    task = failed_task(app)
    for path in ("/", "/login", "/register", "/account", "/submit", "/submissions", f"/submissions/{task.key}",
                 f"/models/{SECRET}", f"/benchmarks/{BENCHMARK}", f"/compare?models=pub-net,{SECRET}"):
        page = alice.get(path).text
        scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", page, flags=re.S)
        assert scripts and all('src="/static/' in attributes and not body.strip() for attributes, body in scripts)
        assert not re.search(r"\son[a-z]+\s*=", page, flags=re.I), path  # no onclick= and the like
        assert "javascript:" not in page.lower()
    assert f'data-submission="{task.key}"' in alice.get(f"/submissions/{task.key}").text


class _InlineStyles(HTMLParser):
    """The ``style`` attributes and ``<style>`` elements of an HTML page."""

    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.found += [f"<{tag} style={value!r}>" for name, value in attrs if name == "style"]
        self.found += ["<style>"] if tag == "style" else []


def test_no_page_has_an_inline_style(app):
    """``style-src 'self'``: an inline style would not apply. Every HTML page of the authorisation table as its
    owner sees it, a folded leaderboard (hidden columns) and a score page."""
    alice = register(app, "alice")
    task = failed_task(app)
    pages = [path.format(key=task.key, token=1, score=_score_id(app)) for (method, _), (path, _, _) in ANSWERS.items()
             if method == "GET"] + ["/?fold=neural_vision,behavior_vision", "/?sort=V4&desc=0"]
    checked = 0
    for path in pages:
        response = alice.get(path, follow_redirects=False)
        if "text/html" not in response.headers.get("content-type", ""):
            continue
        assert "unsafe-inline" not in response.headers["content-security-policy"], path
        parser = _InlineStyles()
        parser.feed(response.text)
        assert parser.found == [], (path, parser.found[:3])
        checked += response.status_code == 200
    assert checked >= 14  # leaderboard, model, benchmark, score, compare, account, submissions, log-in, ...
    folded = alice.get("/?fold=neural_vision").text
    for value in ("0.25", "0.75"):  # pub-net and secret-net on V4: coloured by class, hidden by the attribute
        klass = "c" + value[2:]
        assert re.search(f'<td class="score {klass}" data-node="V4" [^>]*data-score="{value}0000" hidden '
                         'data-hidden-by="1"', folded), value
    assert re.search(r'<th class="col depth2" data-node="V4" [^>]*hidden data-hidden-by="1">', folded)


# ------------------------------------------------------------------------------------------------ upload limits
@pytest.fixture
def live(tmp_path):
    """A live server (uvicorn on 127.0.0.1, no queue) in its own process, its temporary folder ``tmp``."""
    port, temporary = free_port(), tmp_path / "tmp"
    temporary.mkdir()
    with page_server_process(tmp_path, f"sqlite:///{tmp_path / 'r.sqlite'}", port=port, inherit=False,
                             env={"TMPDIR": str(temporary)}) as (_, process):
        yield {"port": port, "process": psutil.Process(process.pid), "tmp": temporary}


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _stream(port: int, head: bytes, chunks, watch=lambda: None) -> tuple[int, bytes]:
    """Send ``head`` then ``chunks`` on a raw socket until the server stops reading; (bytes sent, its answer)."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(20)
    sock.sendall(head)
    sent = 0
    try:
        for chunk in chunks:
            sock.sendall(chunk)
            sent += len(chunk)
            watch()
    except OSError:  # the server closed the connection: it stopped reading
        pass
    answer = b""
    try:
        while part := sock.recv(65536):
            answer += part
    except OSError:
        pass
    sock.close()
    return sent, answer


def test_an_upload_past_the_limit_is_cut_off_while_it_streams(live):
    """A chunked upload (no Content-Length) of 6x the limit: answered 413 once the limit passes, the server stops
    reading (the sender cannot send the rest), its memory and its temporary folder stay below the limit, and
    nothing of the upload is left on disk."""
    limit = security.upload_limit()
    mib = 1 << 20
    part = (b'--zz\r\nContent-Disposition: form-data; name="file"; filename="p.zip"\r\n'
            b"Content-Type: application/zip\r\n\r\n")

    def chunks():
        yield b"%x\r\n%s\r\n" % (len(part), part)
        for _ in range(6 * limit // mib):
            yield b"%x\r\n%s\r\n" % (mib, b"\0" * mib)
        yield b"0\r\n\r\n"

    head = (b"POST /api/submissions HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
            b"Content-Type: multipart/form-data; boundary=zz\r\n\r\n")
    server, peak = live["process"], {"rss": 0, "disk": 0}
    before = server.memory_info().rss

    def watch():
        peak["rss"] = max(peak["rss"], server.memory_info().rss - before)
        peak["disk"] = max(peak["disk"], _folder_bytes(live["tmp"]))

    sent, answer = _stream(live["port"], head, chunks(), watch)
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:300]
    assert b"a plugin zip may have 50 MB" in answer and b"content-security-policy" in answer.lower()
    assert sent < 2 * limit, f"the server read {sent / mib:.0f} MiB of a {6 * limit / mib:.0f} MiB upload"
    assert peak["rss"] < limit and peak["disk"] <= limit, peak
    time.sleep(0.5)
    assert _folder_bytes(live["tmp"]) == 0


def test_a_declared_length_past_the_limit_is_refused_before_the_body_is_read(live):
    head = (b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            b"Content-Length: 1000000000\r\n\r\n")
    sent, answer = _stream(live["port"], head, (b"a" * (1 << 20) for _ in range(1000)))
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:300]
    assert b"larger than /login takes (0.25 MB" in answer and b"connection: close" in answer.lower()
    assert sent < 64 << 20  # what the sockets' buffers took before the server closed the connection


def test_the_live_server_names_no_server_software(live):
    with socket.create_connection(("127.0.0.1", live["port"])) as sock:
        sock.sendall(b"GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        answer = b""
        while part := sock.recv(65536):
            answer += part
    head = answer.split(b"\r\n\r\n", 1)[0].lower()
    assert head.startswith(b"http/1.1 200") and b"\r\nserver:" not in head and b"uvicorn" not in head
