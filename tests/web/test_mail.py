"""The website's mail, end to end: a real SMTP server (aiosmtpd) on 127.0.0.1 receives what the site sends.

Register -> the verification mail arrives -> its link verifies the address (and only then may the account
submit); forgotten password -> the reset mail arrives -> its link sets a new password once and ends the
account's other sessions; a finished and a failed submission are mailed to their owner by the queue's
completion path. Without a mail server the links go to the log; a mail server that is down loses no score.
"""
from __future__ import annotations

import contextlib
import email
import email.policy
import logging
import os
import re
import threading
import time
from collections.abc import Iterator
from datetime import timedelta

import pytest
from aiosmtpd.controller import Controller
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from brainscore import config
from brainscore.errors import ValidationError
from brainscore.web import accounts, create_app
from brainscore.web.mail import Mailer, MailSettings
from brainscore.boundary.process import BASE_ENVIRONMENT, server_settings
from brainscore.web.queue import SubmissionTask
from host_helpers import free_port
from web_helpers import csrf, plugin_zip, register

BENCHMARK = "Cowley2026.210325.V4-pls"
SITE = "https://brainscore.test"


class Inbox:
    """An aiosmtpd handler that keeps every message it is sent."""

    def __init__(self):
        self.messages: list[email.message.EmailMessage] = []
        self.envelopes: list = []
        self.arrived = threading.Condition()

    async def handle_DATA(self, server, session, envelope):
        with self.arrived:
            self.envelopes.append(envelope)
            self.messages.append(email.message_from_bytes(envelope.content, policy=email.policy.default))
            self.arrived.notify_all()
        return "250 Message accepted for delivery"

    def wait(self, count: int, timeout: float = 10) -> list:
        """The first ``count`` messages, waiting for them to arrive."""
        with self.arrived:
            assert self.arrived.wait_for(lambda: len(self.messages) >= count, timeout), \
                f"{count} mail(s) expected, {len(self.messages)} arrived: {[m['Subject'] for m in self.messages]}"
        return self.messages[:count]


@contextlib.contextmanager
def running_inbox() -> Iterator[Inbox]:
    """An :class:`Inbox` behind a real SMTP server (aiosmtpd) on a free port of 127.0.0.1, stopped afterwards."""
    handler = Inbox()
    controller = Controller(handler, hostname="127.0.0.1", port=free_port())
    controller.start()
    handler.port = controller.port
    try:
        yield handler
    finally:
        controller.stop()


@pytest.fixture
def inbox():
    with running_inbox() as handler:
        yield handler


def mailer_for(inbox) -> Mailer:
    return Mailer(MailSettings(host="127.0.0.1", port=inbox.port, security="none", sender="brainscore@brainscore.test",
                               site_url=SITE))


@pytest.fixture
def app(tmp_path, inbox):
    return create_app(db_url=f"sqlite:///{tmp_path / 'results.sqlite'}", root=tmp_path / "submissions",
                      start_worker=False, mailer=mailer_for(inbox))


def link_in(message, path: str) -> str:
    """The link to ``path`` in a mail's body, relative to the site (as a test client requests it)."""
    body = message.get_content()
    found = re.search(re.escape(SITE + path) + r"\?token=[A-Za-z0-9_.\-]+", body)
    assert found, body
    return found.group(0)[len(SITE):]


def submit(client: TestClient, identifier: str):
    return client.post("/api/submissions", files={"file": ("p.zip", plugin_zip(identifier=identifier))},
                       data={"benchmarks": BENCHMARK}, headers={"X-CSRF-Token": csrf(client, "/account")})


def test_registration_mails_a_link_that_verifies_the_address_and_then_submitting_works(app, inbox):
    alice = register(app, "alice", email="Alice@Example.ORG")
    (mail,) = inbox.wait(1)
    assert inbox.envelopes[0].rcpt_tos == ["alice@example.org"] and mail["To"] == "alice@example.org"
    assert mail["From"] == "brainscore@brainscore.test" and mail["Subject"] == "brainscore: verify your e-mail address"
    assert "Hello alice," in mail.get_content()
    page = alice.get("/account").text
    assert "not verified" in page and "verify your e-mail address first" in page
    refused = submit(alice, "alice-net")  # not verified yet, on a site that sends mail
    assert refused.status_code == 400
    assert refused.json()["problems"] == ["verify your e-mail address first: follow the link we sent to "
                                          "alice@example.org (your account page sends a new one)"]
    link = link_in(mail, "/verify")
    forged = TestClient(app).get(link[:-3] + ("AAA" if not link.endswith("AAA") else "BBB"))
    assert forged.status_code == 400 and "not valid" in forged.text
    verified = TestClient(app).get(link)  # from any browser: the link alone verifies
    assert verified.status_code == 200 and "alice@example.org is verified" in verified.text
    assert TestClient(app).get(link).status_code == 200  # following it again does no harm
    assert 'class="ok">verified' in alice.get("/account").text
    accepted = submit(alice, "alice-net")
    assert accepted.status_code == 201, accepted.text


def test_a_verification_link_expires_and_a_new_one_can_be_sent(app, inbox, monkeypatch):
    alice = register(app, "alice", email="alice@example.org")
    old = link_in(inbox.wait(1)[0], "/verify")
    monkeypatch.setattr(accounts, "VERIFY_MAX_AGE", timedelta(seconds=-1))
    expired = TestClient(app).get(old)
    assert expired.status_code == 400 and "has expired" in expired.text
    monkeypatch.undo()
    again = alice.post("/account/email", data={"email": "alice@example.org", "csrf_token": csrf(alice, "/account")})
    assert again.status_code == 200 and "We sent a verification link to alice@example.org" in again.text
    assert TestClient(app).get(link_in(inbox.wait(2)[1], "/verify")).status_code == 200


def test_a_link_for_an_address_the_account_no_longer_has_does_not_verify(app, inbox):
    alice = register(app, "alice", email="alice@example.org")
    first = link_in(inbox.wait(1)[0], "/verify")
    changed = alice.post("/account/email", data={"email": "alice@lab.example.org", "csrf_token": csrf(alice, "/account")})
    assert changed.status_code == 200
    second = inbox.wait(2)[1]
    assert second["To"] == "alice@lab.example.org"
    stale = TestClient(app).get(first)
    assert stale.status_code == 400 and "no longer has" in stale.text
    assert TestClient(app).get(link_in(second, "/verify")).status_code == 200


def test_password_reset_by_mail_works_once_and_ends_the_other_sessions(app, inbox):
    alice = register(app, "alice", email="alice@example.org")
    inbox.wait(1)  # the verification mail
    assert alice.get("/account").status_code == 200
    visitor = TestClient(app)
    answers = [visitor.post("/forgot", data={"email": address, "csrf_token": csrf(visitor, "/forgot")})
               for address in ("ALICE@example.org", "nobody@example.org", "not an address")]
    assert {a.status_code for a in answers} == {200}
    texts = [re.sub(r'name="csrf_token" value="[^"]+"', "", a.text) for a in answers]
    assert texts[0] == texts[1] == texts[2]  # the answer does not tell whether an account has the address
    assert "If an account has this address" in texts[0]
    time.sleep(0.5)
    (_, reset_mail) = inbox.wait(2)
    assert len(inbox.messages) == 2 and reset_mail["To"] == "alice@example.org"
    assert reset_mail["Subject"] == "brainscore: reset your password"
    link = link_in(reset_mail, "/reset")
    form = visitor.get(link)
    assert form.status_code == 200 and "New password for @alice" in form.text
    token = link.split("token=")[1]
    short = visitor.post("/reset", data={"token": token, "password": "short", "csrf_token": csrf(visitor, link)})
    assert short.status_code == 400 and "at least 8 characters" in short.text
    done = visitor.post("/reset", data={"token": token, "password": "a new long password",
                                        "csrf_token": csrf(visitor, link)})
    assert done.status_code == 200 and "every session of the account has ended" in done.text
    assert alice.get("/account", follow_redirects=False).status_code == 303  # the old session is logged out
    used = visitor.get(link)
    assert used.status_code == 400 and "used already" in used.text
    again = visitor.post("/reset", data={"token": token, "password": "another long password",
                                         "csrf_token": csrf(visitor, "/forgot")})
    assert again.status_code == 400 and "used already" in again.text
    login = TestClient(app)
    old = login.post("/login", data={"username": "alice", "password": "correct horse", "csrf_token": csrf(login)})
    assert old.status_code == 400
    new = login.post("/login", data={"username": "alice", "password": "a new long password",
                                     "csrf_token": csrf(login)}, follow_redirects=False)
    assert new.status_code == 303 and login.get("/account").status_code == 200


def _verified_user(app, name: str, address: str):
    user = accounts.register(app.state.engine, name, "correct horse", address)
    return accounts.verify_email(app.state.engine, app.state.site.secret_key,
                                 accounts.verification_token(app.state.site.secret_key, user))


def _finished_task(app, owner: str, results: dict, models=("alice-net",), benchmarks=(BENCHMARK,)) -> int:
    with Session(app.state.engine) as session:
        task = SubmissionTask(owner=owner, package="alice_net", filename="alice_net.zip", models=list(models),
                              benchmarks=list(benchmarks), status="running", results=results, folder="/nonexistent")
        session.add(task)
        session.commit()
        return task.id


def _complete(app, task_id: int) -> SubmissionTask:
    """The queue's completion path: the dispatcher finds every pair of the task answered and closes it."""
    dispatcher = app.state.worker
    dispatcher._dispatch()
    for thread in dispatcher.mails:
        thread.join(timeout=30)
    with Session(app.state.engine) as session:
        return session.get(SubmissionTask, task_id)


def test_a_finished_and_a_failed_submission_are_mailed_to_their_owner(app, inbox):
    _verified_user(app, "alice", "alice@example.org")
    done = _finished_task(app, "alice", {f"alice-net|{BENCHMARK}": {"status": "done", "score": 0.4213}})
    done = _complete(app, done)  # the site and its mails name a submission by its random key
    assert done.status == "done"
    (mail,) = inbox.wait(1)
    assert mail["To"] == "alice@example.org"
    assert mail["Subject"].strip() == f"brainscore: submission {done.key} finished (1 scored, 0 failed)"  # (folded)
    body = mail.get_content()
    assert f"alice-net on {BENCHMARK}: score 0.4213" in body
    assert f"{SITE}/submissions/{done.key}" in body
    failed = _finished_task(app, "alice", {
        f"alice-net|{BENCHMARK}": {"status": "done", "score": 0.5},
        "alice-net|Kriegeskorte2008.IT-rdm": {"status": "failed", "failure": "exited with code 1: weights missing"}},
        benchmarks=(BENCHMARK, "Kriegeskorte2008.IT-rdm"))
    failed = _complete(app, failed)
    assert failed.status == "failed"
    mail = inbox.wait(2)[1]
    assert mail["Subject"].strip() == f"brainscore: submission {failed.key} failed (1 scored, 1 failed)"
    body = mail.get_content()
    assert "alice-net on Kriegeskorte2008.IT-rdm: FAILED: exited with code 1: weights missing" in body
    assert f"alice-net on {BENCHMARK}: score 0.5000" in body and f"{SITE}/submissions/{failed.key}" in body


def test_results_go_only_to_verified_addresses(app, inbox):
    accounts.register(app.state.engine, "bob", "correct horse", "bob@example.org")  # not verified
    task = _finished_task(app, "bob", {f"alice-net|{BENCHMARK}": {"status": "done", "score": 0.1}})
    assert _complete(app, task).status == "done"
    time.sleep(0.5)
    assert inbox.messages == []


def test_a_mail_server_that_is_down_loses_no_score(tmp_path, caplog):
    down = Mailer(MailSettings(host="127.0.0.1", port=free_port(), security="none", site_url=SITE))
    app = create_app(db_url=f"sqlite:///{tmp_path / 'results.sqlite'}", root=tmp_path / "submissions",
                     start_worker=False, mailer=down)
    _verified_user(app, "alice", "alice@example.org")
    task = _finished_task(app, "alice", {f"alice-net|{BENCHMARK}": {"status": "done", "score": 0.42}})
    with caplog.at_level(logging.ERROR, logger="brainscore.web.mail"):
        finished = _complete(app, task)
    assert finished.status == "done" and finished.results[f"alice-net|{BENCHMARK}"]["score"] == 0.42
    assert down.sent == 0
    assert any("could not send mail to alice@example.org" in r.getMessage() and "ConnectionRefusedError" in r.getMessage()
               for r in caplog.records)


def test_without_a_mail_server_the_link_is_logged_and_accounts_may_submit(tmp_path, caplog):
    app = create_app(db_url=f"sqlite:///{tmp_path / 'results.sqlite'}", root=tmp_path / "submissions",
                     start_worker=False, mailer=Mailer(MailSettings()))
    with caplog.at_level(logging.WARNING, logger="brainscore.web.mail"):
        alice = register(app, "alice", email="alice@example.org")
    (logged,) = [r.getMessage() for r in caplog.records if r.name == "brainscore.web.mail"]
    assert "mail is not configured" in logged and "alice@example.org" in logged
    link = re.search(r"http://testserver(/verify\?token=\S+)", logged).group(1)  # the request's address, logged only
    assert "This site sends no mail" in alice.get("/account").text
    assert submit(alice, "alice-net").status_code == 201  # nobody but the administrator could verify
    assert TestClient(app).get(link).status_code == 200


def test_mail_settings_come_from_the_config_and_stay_out_of_scoring_children(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("BRAINSCORE_MAIL_HOST", "smtp.example.org")
    monkeypatch.setenv("BRAINSCORE_MAIL_PASSWORD", "hunter2-secret")
    monkeypatch.delenv("BRAINSCORE_SITE_URL", raising=False)
    with pytest.raises(ValidationError, match="mail_host is set but site_url is not"):
        MailSettings.from_config()
    monkeypatch.setenv("BRAINSCORE_SITE_URL", "https://brainscore.example.org/")
    monkeypatch.setenv("BRAINSCORE_MAIL_SECURITY", "ssl")
    settings = MailSettings.from_config()
    assert (settings.host, settings.port, settings.security, settings.sender, settings.site_url, settings.password) == (
        "smtp.example.org", 465, "ssl", "brainscore@smtp.example.org", "https://brainscore.example.org", "hunter2-secret")
    assert Mailer(settings).link("/verify?token=x", "http://evil.example") == "https://brainscore.example.org/verify?token=x"
    monkeypatch.setenv("BRAINSCORE_MAIL_SECURITY", "tls1")
    with pytest.raises(ValidationError, match="mail_security must be one of starttls, ssl, none"):
        MailSettings.from_config()
    passed = server_settings()  # what a model server's environment gets of the settings
    for key in ("mail_host", "mail_password", "mail_user", "site_url"):
        assert config.SETTINGS[key].env not in BASE_ENVIRONMENT and config.SETTINGS[key].env not in passed  # never seen
    # nor the data (issue 32): the model server is given what a model needs, the scorer has the data
    assert "hunter2-secret" not in passed.values() and "BRAINSCORE_DATA_MIRROR" not in passed
    from brainscore.cli import main

    assert main(["config", "show"]) == 0
    out = capsys.readouterr().out
    assert "hunter2" not in out and re.search(r"mail_password\s+\(set, not shown\)", out)


def test_account_mails_are_rate_limited_per_address_and_reset_requests_per_client(app, inbox):
    from brainscore.web.notices import Throttle

    app.state.site.throttle = Throttle(per_recipient="3/hour", per_client="4/hour")
    alice = register(app, "alice", email="alice@example.org")  # mail 1
    resend = {"email": "alice@example.org"}
    for _ in range(2):  # mails 2 and 3
        assert alice.post("/account/email", data={**resend, "csrf_token": csrf(alice, "/account")}).status_code == 200
    refused = alice.post("/account/email", data={**resend, "csrf_token": csrf(alice, "/account")})
    assert refused.status_code == 429 and "its share of mails this hour (3/hour)" in refused.text
    visitor = TestClient(app)
    same = [visitor.post("/forgot", data={"email": "alice@example.org", "csrf_token": csrf(visitor, "/forgot")})
            for _ in range(4)]  # alice's share is used up: no mail, and the same answer as for anyone
    assert [a.status_code for a in same] == [200] * 4 and all("If an account has this address" in a.text for a in same)
    flood = visitor.post("/forgot", data={"email": "bob@example.org", "csrf_token": csrf(visitor, "/forgot")})
    assert flood.status_code == 429 and "asked for password resets too often (4/hour)" in flood.text
    time.sleep(0.5)
    assert len(inbox.wait(3)) == 3 and len(inbox.messages) == 3
    assert [m["Subject"] for m in inbox.messages] == ["brainscore: verify your e-mail address"] * 3


def test_a_long_subject_is_one_line_and_reads_back_the_same():
    """Subjects were folded at 78 characters (a long submission key: onto a second line, which some clients show
    broken); a non-ASCII one still goes out as an encoded word."""
    from email import message_from_bytes, policy

    from brainscore.web.mail import Mailer

    subject = "brainscore: submission " + "k" * 60 + " done (12 scored, 3 failed)"
    raw = Mailer().message("a@example.org", subject, "body").as_bytes()
    (line,) = [l for l in raw.split(b"\n") if l.startswith(b"Subject:")]
    assert line == b"Subject: " + subject.encode() and raw.split(b"\n")[raw.split(b"\n").index(line) + 1][:1] != b" "
    assert message_from_bytes(raw, policy=policy.default)["Subject"] == subject
    accented = "brainscore: soumission réussie"
    raw = Mailer().message("a@example.org", accented, "body").as_bytes()
    assert b"=?utf-8?" in raw and message_from_bytes(raw, policy=policy.default)["Subject"] == accented
