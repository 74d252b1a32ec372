"""A score's page (issue 25, "every cell reproducible"), in headless Chromium (Playwright, Debian's ``chromium``).

A record made by `brainscore score` (pixels on Kriegeskorte2008.IT-rdm, real data) is served by a fresh website
without its queue (:mod:`page_server`). From the model page's score cell a visitor reaches the score's page, copies
its one command with the button, and that command (which reads the record from the website, ``--server``)
reproduces the score bit for bit. A private model's score page is a 404 for everyone else. Screenshot: ``$BRAINSCORE_SCREENSHOTS`` (``docs/``
when refreshing the documentation), else the test's folder.
"""
from __future__ import annotations

import os
import shlex
import socket
from pathlib import Path

import httpx
import pytest

from brainscore.cli import main
from brainscore.results import Database
from browser_helpers import chromium, page_server

MODEL, BENCHMARK = "pixels", "Kriegeskorte2008.IT-rdm"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """(base URL, database URL, the record) of a page server over one real record and one private model's score."""
    folder = tmp_path_factory.mktemp("score_page")
    url = f"sqlite:///{folder / 'results.sqlite'}"
    assert main(["score", "--model", MODEL, "--benchmark", BENCHMARK, "--bootstrap", "30", "--db", url]) == 0
    db = Database(url)
    stored, = db.scores()
    db.add_model("secret-net", owner="bob", public=False)
    from brainscore.metrics.score import Score
    from brainscore.results import record
    from brainscore.scoring.outcome import Outcome

    hidden = record(Outcome.from_score(Score.of(0.3, model_identifier="secret-net", benchmark_identifier=BENCHMARK,
                                                benchmark_version=1)), db)
    with page_server(folder, url) as base:
        yield base, url, stored, hidden


@pytest.fixture(scope="module")
def browser_context(site):
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site[0])
        yield context


def test_the_model_page_links_to_the_score_page_whose_command_reproduces_it(site, browser_context, capsys):
    from playwright.sync_api import expect

    base, url, stored, _ = site
    page = browser_context.new_page()
    page.goto(f"{base}/models/{MODEL}")
    cell = page.locator(f'tr[data-benchmark="{BENCHMARK}"] td.score a')
    assert cell.text_content() == f"{stored.score:.4f}"
    cell.click()
    page.wait_for_url(f"{base}/scores/{stored.id}")
    assert page.locator("h1").text_content() == f"Score #{stored.id}"
    assert float(page.locator("#score-facts td.score").get_attribute("data-score")) == stored.score
    command = page.locator("#reproduce-command")
    assert command.text_content() == f"brainscore reproduce {stored.id} --server {base}"
    shots = Path(os.environ.get("BRAINSCORE_SCREENSHOTS") or Path(url.removeprefix("sqlite:///")).parent)
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / "score.png"), full_page=True)
    page.click("button.copy")
    expect(page.locator("button.copy")).to_have_text("copied")  # (no wait_for_function: the CSP refuses its eval)
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == f"brainscore reproduce {stored.id} --server {base}"
    # the copied command reads the record from the website and gives the same bits
    argv = shlex.split(copied)
    assert argv[0] == "brainscore"
    capsys.readouterr()
    assert main(argv[1:]) == 0
    out = capsys.readouterr().out
    assert f"MATCHES bit for bit: score {float(stored.score).hex()}" in out
    assert "bootstrap 30 resamples, seed 0" in out and "94 of 94 recorded files read again" in out
    # on the site's host, the same id against its results database
    assert main(["reproduce", str(stored.id), "--db", url]) == 0


def test_a_private_models_score_page_is_not_found(site, capsys):
    base, _, _, hidden = site
    response = httpx.get(f"{base}/scores/{hidden}", headers={"accept": "text/html"})
    assert response.status_code == 404 and f"no score #{hidden}" in response.text
    assert httpx.get(f"{base}/api/scores/{hidden}").status_code == 404
    assert httpx.get(f"{base}/scores/999999", headers={"accept": "text/html"}).status_code == 404
    assert httpx.get(f"{base}/api/scores/{10 ** 30}").status_code == 404  # beyond SQLite's integers: no row, no 500
    capsys.readouterr()
    assert main(["reproduce", str(hidden), "--server", base]) == 2  # hidden from an anonymous reader
    assert f"{base} has no score #{hidden}" in capsys.readouterr().err


def test_reproduce_says_when_the_server_cannot_be_reached(capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    assert main(["reproduce", "1", "--server", f"http://127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err
    assert f"could not reach http://127.0.0.1:{port}" in err and "Traceback" not in err
