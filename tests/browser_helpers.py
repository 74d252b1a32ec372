"""What the browser tests share: the page server (``tests/web/page_server.py``) on a free port of
127.0.0.1, Debian's chromium driven by Playwright, and the screenshot folder. The live-server tests without a
browser (``test_scan.py``, ``test_security.py``) use the page server too, in a bare environment.

Each browser test module builds its own database, then ``with page_server(folder, url) as base:``
and ``with chromium_page(width, height) as page:`` in its module-scoped fixtures; ``tests/web/conftest.py`` gives
them the screenshot folder as the ``shots`` fixture.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from host_helpers import free_port

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
WEB_TESTS = Path(__file__).resolve().parent / "web"
SRC = Path(__file__).resolve().parents[1] / "src"


def wait_until_serving(base: str, process: subprocess.Popen, log: Path, seconds: float = 120) -> None:
    """Return once the website at ``base`` answers ``GET /login`` with 200. When ``process`` (its server) ends
    first, or ``seconds`` pass, kill it and fail the test with the server's log ``log``."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if httpx.get(base + "/login", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"the server at {base} did not start (exit status {process.poll()}): {log.read_text()}")
        time.sleep(0.5)


@contextlib.contextmanager
def page_server_process(folder: Path, url: str, *, port: int | None = None, env: dict | None = None,
                        inherit: bool = True):
    """Serve the website over database ``url`` (submissions under ``folder/sub``, its log in
    ``folder/server.log``); yields its base URL and its process.

    With ``inherit`` the server gets this process's environment, else only ``PATH`` (``/usr/bin:/bin``) and
    ``HOME`` (``folder``), with ``BRAINSCORE_HOME`` ``folder/home``. ``env`` adds to (or replaces) either;
    ``BRAINSCORE_HOME`` defaults to ``folder/home`` and ``MPLCONFIGDIR`` is a fresh folder (the first plot builds
    the font cache). Fails the test with the server's log when it ends or does not answer ``/login`` within two
    minutes.
    """
    port = port or free_port()
    if inherit:
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
                       "BRAINSCORE_HOME": os.environ.get("BRAINSCORE_HOME", str(folder / "home"))}
    else:
        environment = {"PATH": "/usr/bin:/bin", "HOME": str(folder), "BRAINSCORE_HOME": str(folder / "home"),
                       "PYTHONPATH": os.pathsep.join([str(SRC), str(WEB_TESTS.parent)])}
    environment = {**environment, "MPLCONFIGDIR": str(folder / "matplotlib"), **(env or {})}
    base = f"http://127.0.0.1:{port}"
    with open(folder / "server.log", "w") as log:
        process = subprocess.Popen([sys.executable, str(WEB_TESTS / "page_server.py"), url, str(port),
                                    str(folder / "sub")], env=environment, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_until_serving(base, process, folder / "server.log")
            yield base, process
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


@contextlib.contextmanager
def page_server(folder: Path, url: str, *, port: int | None = None, env: dict | None = None, inherit: bool = True):
    """:func:`page_server_process`, yielding the base URL only."""
    with page_server_process(folder, url, port=port, env=env, inherit=inherit) as (base, _):
        yield base


@contextlib.contextmanager
def chromium():
    """A Playwright browser on Debian's chromium (fails, saying how to install it, when it is missing)."""
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian's chromium is missing: apt-get install -y chromium (.ci/run installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def chromium_page(width: int, height: int):
    """A new page (in a new context of :func:`chromium`) with a ``width`` x ``height`` pixel viewport."""
    with chromium() as browser:
        yield browser.new_context(viewport={"width": width, "height": height}).new_page()


BROWSER_PASSWORD = "correct horse battery"
"""The password of the accounts the browser tests register through the form."""


def register_in_browser(page, base: str, name: str) -> None:
    """Register ``name`` (address ``name@example.org``, password :data:`BROWSER_PASSWORD`) through the form of the
    site at ``base`` in the Playwright ``page``; return once it arrives, logged in, on ``/submit``."""
    page.goto(base + "/register")
    page.fill("input[name=username]", name)
    page.fill("input[name=email]", f"{name}@example.org")
    page.fill("input[name=password]", BROWSER_PASSWORD)
    page.click("button:text('register')")
    page.wait_for_url(base + "/submit")


def screenshots(tmp_path_factory) -> Path:
    """Where screenshots go: ``$BRAINSCORE_SCREENSHOTS`` (e.g. ``docs/``), else a temporary folder."""
    folder = Path(os.environ.get("BRAINSCORE_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def axe_violations(page, impacts: tuple[str, ...] = ("critical", "serious", "moderate", "minor")) -> list[dict]:
    """axe-core's violations of the WCAG 2.x A and AA rules and best practices on ``page`` (a Playwright page), of
    the ``impacts`` asked for: each ``{"id", "impact", "help", "nodes": [{"target", "failureSummary"}, ...]}``.

    axe.min.js comes from the pinned ``axe-playwright-python`` package (offline); it is evaluated through the
    DevTools protocol, which the site's Content-Security-Policy does not govern (the page itself runs no inline
    script).
    """
    from axe_playwright_python.base import AXE_SCRIPT

    page.evaluate(AXE_SCRIPT)
    results = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [{"id": v["id"], "impact": v["impact"], "help": v["help"],
             "nodes": [{"target": n["target"], "failureSummary": n.get("failureSummary")} for n in v["nodes"]]}
            for v in results["violations"] if v["impact"] in impacts]
