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
    """``brainscore serve --web-workers 2``: two processes answer on one port; a score recorded meanwhile shows
    (within twice the page max-age)."""
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
        time.sleep(2.1)  # a new score reaches the shared pages within twice --page-max-age-s (default 1 s)
        for _ in range(6):  # whichever worker answers
            page = httpx.get(f"http://127.0.0.1:{port}/", headers={"Accept-Encoding": "gzip"})
            assert page.headers["content-encoding"] == "gzip"
            assert _models(page.text) == ["second-net", "first-net"]
        children = subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True, text=True).stdout.split()
        assert len(children) >= 2  # the worker processes (uvicorn may add a resource tracker)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.communicate(timeout=60)


def _log_in(app, name: str) -> tuple[TestClient, str]:
    """A client with ``name``'s session (the account made directly, then logged in through the form), and an
    API token of ``name``."""
    from brainscore.web import accounts

    user = accounts.register(app.state.engine, name, "a long enough password")
    client = TestClient(app)
    token = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/login").text).group(1)
    answer = client.post("/login", data={"username": name, "password": "a long enough password", "csrf_token": token},
                         follow_redirects=False)
    assert answer.status_code in (200, 303), answer.text[:300]
    return client, accounts.create_token(app.state.engine, user)


def test_a_browser_revalidates_with_its_etag_and_sees_a_new_score_at_once(app, url):
    _record(app.state.store, "first-net", 0.5)
    client = TestClient(app)
    paths = ("/", "/?sort=average_vision&desc=0", "/?q=net", "/api/leaderboard", "/models/first-net",
             f"/benchmarks/{BENCHMARK}", "/api/models/first-net", f"/api/benchmarks/{BENCHMARK}")
    tags = {}
    for path in paths:
        first = client.get(path)
        assert first.status_code == 200 and first.headers["cache-control"] == "public, no-cache", path
        assert first.headers["etag"].startswith('W/"') and "Cookie" in first.headers["vary"], path
        tags[path] = first.headers["etag"]
    computed = app.state.results.computed
    for path in paths:  # what the browser holds is current: 304, no body, nothing computed
        again = client.get(path, headers={"If-None-Match": tags[path]})
        assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == tags[path], path
        assert client.get(path, headers={"If-None-Match": f'"other", {tags[path][2:]}'}).status_code == 304
    assert app.state.results.computed == computed
    _record(Database(url), "second-net", 0.9)  # another process records a score
    for path in paths:
        fresh = client.get(path.replace("first", "second") if "models/" in path else path,
                           headers={"If-None-Match": tags[path]})
        assert fresh.status_code == 200 and fresh.headers["etag"] != tags[path], path
    assert _models(client.get("/", headers={"If-None-Match": tags["/"]}).text) == ["second-net", "first-net"]


def test_every_query_parameter_is_part_of_the_key(app):
    for k in range(3):
        _record(app.state.store, f"net-{k}", k / 3)
    client = TestClient(app)
    assert _models(client.get("/?q=net-1").text) == ["net-1"]
    assert _models(client.get("/?q=net-2").text) == ["net-2"]
    assert _models(client.get("/?desc=0").text) == ["net-0", "net-1", "net-2"]
    assert _models(client.get("/?q=net-1").text) == ["net-1"]

    def average(**params):
        return {r["model"]: r["scores"]["average_vision"] for r in client.get("/api/leaderboard", params=params).json()}

    equal, v4_doubled = average(), average(**{"w.V4": "2"})  # the explore weights are read by prefix (w.<node>)
    assert v4_doubled["net-2"] > equal["net-2"] > 0
    computed = app.state.results.computed
    assert average(**{"w.V4": "2"}) == v4_doubled and average() == equal
    assert app.state.results.computed == computed  # both from the cache


def test_cached_pages_never_show_a_private_model_to_whoever_may_not_see_it(app, url):
    store = app.state.store
    _record(store, "pub-net", 0.25)
    store.add_model("secret-net", owner="alice", public=False)
    _record(store, "secret-net", 0.75)
    (alice, alice_token), (bob, bob_token), anonymous = _log_in(app, "alice"), _log_in(app, "bob"), TestClient(app)
    for _ in range(2):  # the second answers come from the caches
        assert _models(alice.get("/").text) == ["secret-net", "pub-net"]
        assert _models(bob.get("/").text) == ["pub-net"] == _models(anonymous.get("/").text)
        assert "secret-net" not in bob.get(f"/benchmarks/{BENCHMARK}").text
        assert "secret-net" in alice.get(f"/benchmarks/{BENCHMARK}").text
        for token, seen in ((alice_token, ["secret-net", "pub-net"]), (bob_token, ["pub-net"]), (None, ["pub-net"])):
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            answer = anonymous.get("/api/leaderboard", headers=headers)
            assert [r["model"] for r in answer.json()] == seen
            assert answer.headers["cache-control"] == ("private, no-cache" if token else "public, no-cache")
        assert bob.get("/models/secret-net").status_code == 404
    # an anonymous tag never validates a reader who sees more, and the other way round
    public_tag = anonymous.get("/api/leaderboard").headers["etag"]
    assert anonymous.get("/api/leaderboard", headers={"If-None-Match": public_tag,
                                                      "Authorization": f"Bearer {alice_token}"}).status_code == 200
    store.add_model("pub-net", owner="carol", public=False)  # made private: gone at once, no score recorded
    assert _models(anonymous.get("/").text) == [] == [r["model"] for r in anonymous.get("/api/leaderboard").json()]
    assert anonymous.get("/api/leaderboard", headers={"If-None-Match": public_tag}).status_code == 200


def test_a_deleted_score_disappears_at_once(app, url):
    from sqlalchemy import create_engine, text

    _record(app.state.store, "net-1", 2 / 3)
    _record(app.state.store, "net-0", 1 / 3)
    client = TestClient(app)
    assert _models(client.get("/").text) == ["net-1", "net-0"]
    engine = create_engine(url)  # an older score deleted by hand (as deleting a model does): the largest id stays
    with engine.begin() as connection:
        connection.execute(text("DELETE FROM scores WHERE model_id = (SELECT id FROM models WHERE identifier = 'net-1')"))
    engine.dispose()
    assert _models(client.get("/").text) == ["net-0"]
    assert [r["model"] for r in client.get("/api/leaderboard").json()] == ["net-0"]


def test_the_load_fixture_fills_a_site_that_tells_the_truth(tmp_path, url, monkeypatch):
    """Issue 36: ``perf/web_load.py fill()`` wrote top-1 scores outside their own interval, intervals past 1 and
    no end times. Every filled score now lies inside its interval, the interval inside [0, 1], raw / ceiling is the
    score, every record has start and end times, and the filled site shows every model "as of" the fill's days."""
    import importlib.util
    from pathlib import Path

    from brainscore.web.values import no_ceiling, shown_value

    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    spec = importlib.util.spec_from_file_location("web_load", Path(__file__).parents[2] / "perf" / "web_load.py")
    web_load = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(web_load)
    (tmp_path / "home").mkdir()
    config = web_load.fill(url, 4, 0, tmp_path / "home")
    stored = Database(url).scores()
    assert len(stored) == config["rows"] == 4 * len(config["benchmarks"])
    for r in stored:
        low, high = r.ci95
        shown = shown_value(r.benchmark, r.score, r.raw)
        assert 0.0 <= low <= r.score <= high <= 1.0 and low <= shown <= high, (r.model, r.benchmark)
        assert r.raw == pytest.approx(r.score * r.ceiling) and (r.ceiling == 1.0) == no_ceiling(r.benchmark)
        assert r.start is not None and r.end is not None and r.start < r.end
    client = TestClient(create_app(db_url=url, root=tmp_path / "submissions", start_worker=False))
    assert len(client.get("/api/leaderboard", params={"at": "2026-11-25"}).json()) == 4


def test_a_benchmark_page_ranks_its_models_in_pages(app):
    """Issue 36: a benchmark page listed all 705 models in one table; now PAGE_SIZE rows a page, as the
    leaderboard, each model keeping its rank on the whole benchmark."""
    store = app.state.store
    n = PAGE_SIZE + 5
    for k in range(n):
        _record(store, f"net-{k:03d}", k / n)
    client = TestClient(app)
    first = client.get(f"/benchmarks/{BENCHMARK}").text
    assert _models(first) == [f"net-{k:03d}" for k in range(n - 1, n - 1 - PAGE_SIZE, -1)]
    assert f"{n} models scored" in first and f"1–{PAGE_SIZE} of {n} shown" in first
    assert '<nav class="pages" aria-label="ranking pages">' in first
    assert f'<a href="/benchmarks/{BENCHMARK}?page=2">2</a>' in first and '<b aria-current="page">1</b>' in first
    second = client.get(f"/benchmarks/{BENCHMARK}", params={"page": 2}).text
    assert _models(second) == [f"net-{k:03d}" for k in range(4, -1, -1)]
    assert re.search(r'<tr data-model="net-004"><td>(\d+)</td>', second).group(1) == str(PAGE_SIZE + 1)
    assert f"{PAGE_SIZE + 1}–{n} of {n} shown" in second
    assert _models(client.get(f"/benchmarks/{BENCHMARK}", params={"page": 99}).text) == _models(second)
    assert _models(client.get(f"/benchmarks/{BENCHMARK}", params={"page": -3}).text) == _models(first)
    assert client.get(f"/benchmarks/{BENCHMARK}", params={"page": "x"}).status_code == 422
