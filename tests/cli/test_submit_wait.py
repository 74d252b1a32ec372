"""``brainscore submit --wait`` shows the queue position and the live log, then the scores as a table (issue 29).

Before, it printed nothing for minutes and then raw JSON. The website is stood in for by httpx's mock
transport answering the API's JSON (``GET /api/submissions/ID``) in the states a real submission goes through.
"""
from __future__ import annotations

import json
import re

import httpx
import pytest

from brainscore.cli import main

STATES = [
    {"status": "queued", "place": 2, "progress": {"current": 0, "total": 2}, "log": "", "results": {}},
    {"status": "queued", "place": 1, "progress": {"current": 0, "total": 2}, "log": "", "results": {}},
    {"status": "running", "place": None, "progress": {"current": 0, "total": 2}, "log": "installing requirements\n",
     "results": {}},
    {"status": "running", "place": None, "progress": {"current": 1, "total": 2},
     "log": "installing requirements\nscoring my-net on Mur2013-rdm\n",
     "results": {"my-net|Mur2013-rdm": {"status": "done", "score": 0.40801}}},
    {"status": "failed", "place": None, "progress": {"current": 2, "total": 2},
     "log": "installing requirements\nscoring my-net on Mur2013-rdm\nscoring my-net on Geirhos2021edge-top1\n",
     "failure": "1 of 2 pairs failed",
     "results": {"my-net|Mur2013-rdm": {"status": "done", "score": 0.40801},
                 "my-net|Geirhos2021edge-top1": {"status": "failed", "failure": "ValidationError: no logits"}}},
]


@pytest.fixture
def website(monkeypatch, tmp_path):
    """httpx.Client answering POST /api/submissions and then each of STATES in turn; returns a plugin folder."""
    states = iter(STATES)

    def answer(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            return httpx.Response(201, json={"id": "abc", **STATES[0]})
        return httpx.Response(200, json={"id": "abc", **next(states)})
    real = httpx.Client
    monkeypatch.setattr(httpx, "Client", lambda **kwargs: real(transport=httpx.MockTransport(answer), **kwargs))
    folder = tmp_path / "my_net"
    folder.mkdir()
    (folder / "__init__.py").write_text("# a plugin\n")
    return folder


def test_wait_shows_the_queue_place_and_the_live_log_then_a_table(website, capsys):
    assert main(["submit", str(website), "--server", "http://site", "--token", "t", "--wait", "--interval", "0"]) == 1
    out, err = capsys.readouterr()
    events = [re.sub(r"^\[\d\d:\d\d:\d\d\] ", "", line) for line in err.splitlines()]
    assert events == ["queued: 2nd in the queue", "queued: 1st in the queue", "running: 0 of 2 pairs",
                      "installing requirements", "running: 1 of 2 pairs", "scoring my-net on Mur2013-rdm",
                      "failed: 2 of 2 pairs", "scoring my-net on Geirhos2021edge-top1"]
    lines = out.splitlines()
    assert lines[0] == "submission abc: queued (http://site/submissions/abc)"
    table = [[cell.strip() for cell in line.split("│")[1:-1]] for line in lines if line.startswith("│")]
    assert table == [["my-net", "Geirhos2021edge-top1", "failed", "ValidationError: no logits"],
                     ["my-net", "Mur2013-rdm", "done", "0.4080"]]
    assert lines[-2:] == ["submission abc: failed: 2 of 2 pairs", "failure: 1 of 2 pairs failed"]


def test_json_keeps_the_json_and_quiet_keeps_stderr_empty(website, capsys):
    assert main(["submit", str(website), "--server", "http://site", "--token", "t", "--wait", "--interval", "0",
                 "--json", "--quiet"]) == 1
    out, err = capsys.readouterr()
    final = json.loads(out[out.index("{"):])
    assert final["status"] == "failed" and final["results"]["my-net|Mur2013-rdm"]["score"] == 0.40801
    assert err == ""
