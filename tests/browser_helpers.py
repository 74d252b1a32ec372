"""What the browser tests share: the page server (``tests/web/page_server.py``) on a free port of
127.0.0.1, Debian's chromium driven by Playwright, and the screenshot folder.

Each browser test module builds its own database, then ``with page_server(folder, url) as base:``
and ``with chromium(viewport) as browser:`` in its module-scoped fixtures.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
WEB_TESTS = Path(__file__).resolve().parent / "web"
SRC = Path(__file__).resolve().parents[1] / "src"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def page_server(folder: Path, url: str, *, port: int | None = None, env: dict | None = None):
    """Serve the website over database ``url`` (submissions under ``folder/sub``); yields its base URL.

    ``env`` adds to (or replaces) the environment; ``BRAINSCORE_HOME`` defaults to ``folder/home`` and
    ``MPLCONFIGDIR`` is a fresh folder (the first plot builds the font cache). Fails the test with the
    server's log when it does not answer ``/login`` within two minutes.
    """
    port = port or free_port()
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
                   "MPLCONFIGDIR": str(folder / "matplotlib"),
                   "BRAINSCORE_HOME": os.environ.get("BRAINSCORE_HOME", str(folder / "home")), **(env or {})}
    base = f"http://127.0.0.1:{port}"
    with open(folder / "server.log", "w") as log:
        process = subprocess.Popen([sys.executable, str(WEB_TESTS / "page_server.py"), url, str(port),
                                    str(folder / "sub")], env=environment, stdout=log, stderr=subprocess.STDOUT)
        try:
            for _ in range(240):
                try:
                    if httpx.get(base + "/login", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.5)
            else:
                pytest.fail(f"the page server did not start: {(folder / 'server.log').read_text()}")
            yield base
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


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


def screenshots(tmp_path_factory) -> Path:
    """Where screenshots go: ``$BRAINSCORE_SCREENSHOTS`` (e.g. ``docs/``), else a temporary folder."""
    folder = Path(os.environ.get("BRAINSCORE_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder
