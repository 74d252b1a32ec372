"""The website at scale: pages and JSON computed once per change of the results, paginated and gzipped.

The load itself is measured by ``perf/web_load.py``; these tests check what makes it scale without
changing what anyone sees: a recorded score shows at the next request (in every process: the cache
follows the database's results version), private models stay hidden from cached pages, the
leaderboard is split into pages of :data:`~brainscore.web.app.PAGE_SIZE` rows, and responses are
gzipped for clients that accept it with the same content.
"""
from __future__ import annotations

import gzip
import re

import httpx
import pytest
from fastapi.testclient import TestClient

from brainscore.metrics.score import Score
from brainscore.results import Database
from brainscore.results.records import record
from brainscore.scoring.outcome import Outcome
from brainscore.web import create_app
from brainscore.web.routes.pages import PAGE_SIZE

BENCHMARK = "Cowley2026.210325.V4-pls"


def _record(db: Database, model: str, value: float) -> None:
    record(Outcome.from_score(Score.of(value, raw=value * 0.8, ceiling=0.8, model_identifier=model,
                                       benchmark_identifier=BENCHMARK)), db)


@pytest.fixture
def url(tmp_path):
    return f"sqlite:///{tmp_path / 'results.sqlite'}"


@pytest.fixture
def app(tmp_path, url, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    return create_app(db_url=url, root=tmp_path / "submissions", start_worker=False)


def _models(page: str) -> list[str]:
    return re.findall(r'<tr data-model="([^"]+)">', page)


def test_a_score_recorded_by_another_process_shows_at_the_next_request(app, url):
    client = TestClient(app)
    other = Database(url)  # a scoring child, `brainscore score`, another web worker
    _record(other, "first-net", 0.5)
    assert _models(client.get("/").text) == ["first-net"]
    assert [r["model"] for r in client.get("/api/leaderboard").json()] == ["first-net"]
    paths = ("/", "/api/leaderboard", "/models/first-net", f"/benchmarks/{BENCHMARK}", "/api/models/first-net",
             f"/api/benchmarks/{BENCHMARK}")
    for path in paths:
        client.get(path)
    computed = app.state.results.computed
    for path in paths * 3:
        assert client.get(path).status_code == 200
    assert app.state.results.computed == computed  # nothing computed again while no score is recorded
    _record(other, "second-net", 0.9)
    assert _models(client.get("/").text) == ["second-net", "first-net"]
    assert [r["model"] for r in client.get("/api/leaderboard").json()] == ["second-net", "first-net"]
    assert [r["model"] for r in client.get(f"/api/benchmarks/{BENCHMARK}").json()["ranking"]] == \
        ["second-net", "first-net"]
    assert client.get("/api/models/second-net").json()["aggregates"]["scores"][BENCHMARK] == pytest.approx(0.9)


def test_private_models_stay_out_of_shared_pages(app, url):
    store = app.state.store
    _record(store, "pub-net", 0.25)
    store.add_model("secret-net", owner="alice", public=False)
    _record(store, "secret-net", 0.75)
    anonymous = TestClient(app)
    for _ in range(2):  # the second answer comes from the cache
        assert _models(anonymous.get("/").text) == ["pub-net"]
        assert "secret-net" not in anonymous.get(f"/benchmarks/{BENCHMARK}").text
        assert [r["model"] for r in anonymous.get("/api/leaderboard").json()] == ["pub-net"]
        assert anonymous.get("/models/secret-net").status_code == 404
    store.add_model("secret-net", owner="alice", public=True)  # made public: no new score, shown at once
    assert _models(anonymous.get("/").text) == ["secret-net", "pub-net"]


def test_the_leaderboard_is_paginated(app):
    store = app.state.store
    n = PAGE_SIZE + 5
    for k in range(n):
        _record(store, f"net-{k:03d}", k / n)
    client = TestClient(app)
    first = client.get("/").text
    assert _models(first) == [f"net-{k:03d}" for k in range(n - 1, n - 1 - PAGE_SIZE, -1)]
    assert f"{n} models, 1–{PAGE_SIZE} shown" in first and 'href="/?sort=average_vision&amp;desc=1&page=2"' in first
    second = client.get("/", params={"page": 2}).text
    assert _models(second) == [f"net-{k:03d}" for k in range(4, -1, -1)]
    assert f'<td class="rank">{PAGE_SIZE + 1}</td>' in second
    assert _models(client.get("/", params={"page": 99}).text) == _models(second)  # past the end: the last page
    ascending = client.get("/", params={"page": 2, "desc": 0}).text
    assert _models(ascending) == [f"net-{k:03d}" for k in range(PAGE_SIZE, n)]


def test_responses_are_gzipped_for_clients_that_accept_it(app):
    _record(app.state.store, "pub-net", 0.25)
    transport = httpx.ASGITransport(app=app)

    async def fetch(path, encoding):
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            async with client.stream("GET", path, headers={"Accept-Encoding": encoding}) as response:
                raw = b"".join([chunk async for chunk in response.aiter_raw()])  # as sent, not decoded
                return response.headers.get("content-encoding"), raw

    import asyncio

    for path in ("/", "/api/leaderboard", "/models/pub-net", f"/benchmarks/{BENCHMARK}", "/api/benchmarks"):
        encoding, body = asyncio.run(fetch(path, "gzip"))
        plain_encoding, plain = asyncio.run(fetch(path, "identity"))
        assert plain_encoding is None
        if len(plain) > 1024:
            assert encoding == "gzip" and len(body) < len(plain), path
        assert (gzip.decompress(body) if encoding == "gzip" else body) == plain, path


def test_serve_with_several_web_workers(tmp_path, url):
    """``brainscore serve --web-workers 2``: two processes answer on one port; a score recorded meanwhile shows."""
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time
    from pathlib import Path

    import brainscore

    _record(Database(url), "first-net", 0.5)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "BRAINSCORE_HOME": str(tmp_path / "home"),
           "PYTHONPATH": str(Path(brainscore.__file__).resolve().parent.parent)}
    server = subprocess.Popen([sys.executable, "-m", "brainscore", "serve", "--port", str(port), "--db", url,
                               "--web-workers", "2", "--no-scoring"], env=env, start_new_session=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 90
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/leaderboard", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                assert server.poll() is None and time.time() < deadline, server.communicate()[1][-2000:]
                time.sleep(0.5)
        seen = [r["model"] for r in httpx.get(f"http://127.0.0.1:{port}/api/leaderboard").json()]
        assert seen == ["first-net"]
        _record(Database(url), "second-net", 0.9)
        for _ in range(6):  # whichever worker answers
            page = httpx.get(f"http://127.0.0.1:{port}/", headers={"Accept-Encoding": "gzip"})
            assert page.headers["content-encoding"] == "gzip"
            assert _models(page.text) == ["second-net", "first-net"]
        children = subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True, text=True).stdout.split()
        assert len(children) >= 2  # the worker processes (uvicorn may add a resource tracker)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.communicate(timeout=60)
