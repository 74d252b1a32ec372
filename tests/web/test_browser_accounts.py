"""Accounts in headless Chromium (Playwright, Debian's ``chromium``) against a server that sends its mail to a real
SMTP server (aiosmtpd on 127.0.0.1): register with an address, follow the mailed link, make one's model private,
delete it after confirming, and reset a forgotten password through the mailed link.

Screenshots go to ``$BRAINSCORE_SCREENSHOTS`` (``docs/`` when refreshing the documentation), else to the
test's folder.
"""
from __future__ import annotations

import re

import httpx
import pytest

from brainscore.metrics.score import Score
from brainscore.results import Database, record
from brainscore.scoring.outcome import Outcome
from browser_helpers import chromium_page, page_server, register_in_browser
from test_browser import V4
from host_helpers import free_port
from test_mail import running_inbox


@pytest.fixture(scope="module")
def inbox():
    with running_inbox() as handler:
        yield handler


@pytest.fixture(scope="module")
def server(tmp_path_factory, inbox):
    folder = tmp_path_factory.mktemp("accounts")
    url = f"sqlite:///{folder / 'results.sqlite'}"
    db = Database(url)
    for model, owner, value in (("alice-net", "alice", 0.35), ("bob-net", "bob", 0.30)):
        db.add_model(model, owner=owner, public=True)
        record(Outcome.from_score(Score.of(value, raw=value * 0.9, ceiling=0.9, error=0.02, model_identifier=model,
                                           benchmark_identifier=V4, layers={"V4": "6"})), db)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    mail = {"BRAINSCORE_HOME": str(folder / "home"), "BRAINSCORE_MAIL_HOST": "127.0.0.1",
            "BRAINSCORE_MAIL_PORT": str(inbox.port), "BRAINSCORE_MAIL_SECURITY": "none",
            "BRAINSCORE_MAIL_FROM": "brainscore@example.org", "BRAINSCORE_SITE_URL": base}
    with page_server(folder, url, port=port, env=mail) as served:
        yield served


@pytest.fixture(scope="module")
def page(server):
    with chromium_page(1200, 800) as page:
        yield page


def mailed_link(message, server: str, path: str) -> str:
    found = re.search(re.escape(server + path) + r"\?token=[A-Za-z0-9_.\-]+", message.get_content())
    assert found, message.get_content()
    return found.group(0)


def test_register_and_verify_the_address_by_the_mailed_link(server, page, inbox, shots):
    register_in_browser(page, server, "alice")
    # issue 29: the page a new account lands on says the address must be verified (it was learnt from a refusal)
    notice = page.locator("#verify-first")
    assert notice.is_visible() and "alice@example.org" in notice.text_content()
    assert "follow the link we sent" in notice.text_content()
    page.goto(server + "/account")
    assert " ".join(page.locator("#email-state").text_content().split()) == "alice@example.org · not verified"
    assert page.locator("#submit-problem").text_content().startswith("verify your e-mail address first")
    page.screenshot(path=str(shots / "account_unverified.png"), full_page=True)
    (mail,) = inbox.wait(1)
    assert mail["To"] == "alice@example.org"
    page.goto(mailed_link(mail, server, "/verify"))
    assert page.locator("h1").text_content() == "Address verified"
    page.goto(server + "/account")
    assert " ".join(page.locator("#email-state").text_content().split()) == "alice@example.org · verified"
    assert page.locator("#submit-problem").count() == 0
    page.goto(server + "/submit")
    assert page.locator("#verify-first").count() == 0
    page.screenshot(path=str(shots / "account_verified.png"), full_page=True)


def test_the_owner_makes_the_model_private_then_deletes_it(server, page, shots):
    page.goto(server + "/models/alice-net")
    page.click("#toggle-visibility")
    page.wait_for_url(server + "/models/alice-net")
    assert "private (visible to you only)" in page.locator("main p.muted").first.text_content()
    assert page.locator("#toggle-visibility").text_content() == "make public"
    page.screenshot(path=str(shots / "model_owner.png"), full_page=True)
    assert httpx.get(server + "/models/alice-net").status_code == 404  # others: as if it did not exist
    page.click("#delete-model")
    page.wait_for_url(server + "/models/alice-net/delete")
    page.fill("input[name=confirm]", "alice-net")
    page.screenshot(path=str(shots / "model_delete.png"), full_page=True)
    page.click("button.danger")
    assert page.locator("h1").text_content() == "Model deleted"
    page.goto(server + "/")
    models = page.locator("tr[data-model]").evaluate_all("rows => rows.map(r => r.dataset.model)")
    assert models == ["bob-net"]


def test_a_forgotten_password_is_reset_by_the_mailed_link(server, page, inbox, shots):
    page.click("button:text('log out')")
    page.goto(server + "/login")
    page.click("a:text('Reset it')")
    page.wait_for_url(server + "/forgot")
    page.fill("input[name=email]", "alice@example.org")
    page.click("button:text('send the link')")
    assert page.locator("h1").text_content() == "Check your mail"
    mail = inbox.wait(2)[1]
    assert mail["Subject"] == "brainscore: reset your password"
    page.goto(mailed_link(mail, server, "/reset"))
    assert page.locator("h1").text_content() == "New password for @alice"
    page.fill("input[name=password]", "a brand new password")
    page.screenshot(path=str(shots / "password_reset.png"), full_page=True)
    page.click("button:text('set the password')")
    assert page.locator("h1").text_content() == "Password changed"
    page.goto(server + "/login")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "a brand new password")
    page.click("button:text('log in')")
    page.wait_for_url(server + "/submissions")
    assert page.locator("header nav a[href='/account']").text_content() == "@alice"
