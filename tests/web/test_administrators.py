"""Administrators are made on the server's command line and stored in the results database (issue 36): registering
the name ``admin`` through the website gains nothing, ``brainscore admin add/list/remove`` manage them, and
``brainscore serve --admin`` (which trusted a user name) is refused with the way to do it now."""
from __future__ import annotations

import io

import pytest

from brainscore.cli import main
from brainscore.web import accounts
from web_helpers import PASSWORD, approving_app, csrf, plugin_zip, register
from test_approval import BENCHMARK, BENCHMARK_PLUGIN, OWN, status_of


@pytest.fixture
def app(tmp_path):
    yield from approving_app(tmp_path)


def held_submission(app) -> str:
    """A submission of alice's that holds a benchmark plugin (awaiting approval); its key."""
    alice = register(app, "alice")
    data = plugin_zip("alice-net", "alice_net", extra={"alice_net/__init__.py": BENCHMARK_PLUGIN})
    response = alice.post("/api/submissions", files={"file": ("alice.zip", data)},
                          data={"benchmarks": f"{OWN},{BENCHMARK}"}, headers={"X-CSRF-Token": csrf(alice, "/submit")})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def approve(client, key: str):
    return client.post(f"/submissions/{key}/approve", data={"csrf_token": csrf(client, "/register")},
                       follow_redirects=False)


def admin_cli(app, monkeypatch, *argv: str, stdin: str = "") -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    return main(["admin", *argv, "--db", app.state.store.url])


def test_registering_the_name_admin_through_the_website_gains_nothing(app):
    key = held_submission(app)
    visitor = register(app, "admin")  # the name `brainscore serve --admin admin` trusted
    assert approve(visitor, key).status_code == 403
    assert status_of(app, key).status == "awaiting approval"
    assert visitor.get(f"/submissions/{key}").status_code == 404  # not anyone's submission page either


def test_brainscore_admin_add_creates_the_account_on_the_server_list_and_remove(app, monkeypatch, capsys):
    key = held_submission(app)
    assert admin_cli(app, monkeypatch, "add", "root", "--email", "root@example.org", "--password-stdin",
                     stdin="a long password\n") == 0
    assert "root is an administrator (a new account)" in capsys.readouterr().out
    from fastapi.testclient import TestClient

    root = TestClient(app)
    assert root.post("/login", data={"username": "root", "password": "a long password",
                                     "csrf_token": csrf(root)}, follow_redirects=False).status_code == 303
    assert "/approve" in root.get(f"/submissions/{key}").text
    assert admin_cli(app, monkeypatch, "list") == 0
    listed = capsys.readouterr().out
    assert listed.startswith("root\troot@example.org\tsince ") and "by command line" in listed
    assert admin_cli(app, monkeypatch, "remove", "root") == 0
    assert "root is no longer an administrator" in capsys.readouterr().out
    assert approve(root, key).status_code == 403  # at the running site's next request
    assert admin_cli(app, monkeypatch, "list") == 0
    assert "no administrators" in capsys.readouterr().out
    assert admin_cli(app, monkeypatch, "remove", "root") == 2
    assert "'root' is not an administrator" in capsys.readouterr().err


def test_an_existing_account_is_named_only_once_its_address_is_verified(app, monkeypatch, capsys):
    key = held_submission(app)
    ada = register(app, "ada")
    assert admin_cli(app, monkeypatch, "add", "ada") == 2
    error = capsys.readouterr().err
    assert "has not verified its e-mail address" in error and "anyone can register a name" in error
    assert approve(ada, key).status_code == 403
    assert admin_cli(app, monkeypatch, "add", "ada", "--password-stdin", stdin=PASSWORD + "\n") == 2
    assert "exists already" in capsys.readouterr().err  # no password reset of someone's account by this route
    user = accounts.user_by_email(app.state.engine, "ada@example.org")
    assert ada.get(f"/verify?token={accounts.verification_token(app.state.site.secret_key, user)}").status_code == 200
    assert admin_cli(app, monkeypatch, "add", "ada") == 0
    assert "ada is an administrator (the account of ada@example.org)" in capsys.readouterr().out
    assert approve(ada, key).status_code == 303 and status_of(app, key).status == "queued"
    assert admin_cli(app, monkeypatch, "add", "ada") == 2
    assert "an administrator already" in capsys.readouterr().err


def test_a_new_account_needs_a_password_of_the_usual_length(app, monkeypatch, capsys):
    assert admin_cli(app, monkeypatch, "add", "root", "--password-stdin", stdin="short\n") == 2
    assert "at least 8 characters" in capsys.readouterr().err
    assert admin_cli(app, monkeypatch, "add", "root", "--password-stdin", stdin="") == 2
    assert "standard input held no password" in capsys.readouterr().err
    assert admin_cli(app, monkeypatch, "list") == 0 and "no administrators" in capsys.readouterr().out


def test_serve_admin_is_refused_with_the_command_that_replaces_it(capsys):
    assert main(["serve", "--admin", "admin", "--port", "0", "--no-scoring"]) == 2
    error = capsys.readouterr().err
    assert "--admin is no longer accepted" in error and "brainscore admin add NAME" in error
