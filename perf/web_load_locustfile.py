"""Locust users of ``perf/web_load.py`` (run by it; not imported by brainscore).

``Visitor``: a browser reading the leaderboard (the first page, the next page, sorted by a random column,
a filter), model and benchmark pages, 1-3 s apart; like a browser it keeps each page's ``ETag`` and
asks again with ``If-None-Match`` (the site sends ``Cache-Control: no-cache``), so a page it saw before
and that did not change comes back as ``304 Not Modified``. ``ApiReader``: a script reading the JSON
API (leaderboard, a model, a benchmark) 1-3 s apart, without a cache. ``Submitter``: uploads the
README's tiny plugin under a new identifier through ``POST /api/submissions`` with its API token, every
5-15 s, and appends each accepted submission id to a file (to check none was lost or duplicated).
``$WEB_LOAD_CONFIG`` names a JSON file with ``models``, ``benchmarks``, ``columns``, ``tokens``,
``plugin_files`` (path), ``accepted`` (path) and ``statuses`` (path: the count of each status per
request name is written there when the test stops).
"""
from __future__ import annotations

import collections
import io
import itertools
import json
import os
import random
import threading
import uuid
import zipfile

from locust import FastHttpUser, between, events, task

CONFIG = json.loads(open(os.environ["WEB_LOAD_CONFIG"]).read())
PLUGIN = json.loads(open(CONFIG["plugin_files"]).read())  # file name -> text, "load-net-placeholder" as identifier
_TOKENS = itertools.cycle(CONFIG["tokens"])
_LOCK = threading.Lock()
STATUSES: collections.Counter = collections.Counter()  # (request name, HTTP status) -> count


@events.request.add_listener
def _count(request_type, name, response_length, response=None, exception=None, **kwargs):
    STATUSES[(name, getattr(response, "status_code", None) if exception is None else "error")] += 1


@events.test_stop.add_listener
def _write_statuses(**kwargs):
    with open(CONFIG["statuses"], "w") as f:
        json.dump([[name, status, count] for (name, status), count in sorted(STATUSES.items(), key=str)], f)


class Visitor(FastHttpUser):
    """Someone reading the website in a browser (which revalidates what it holds)."""

    wait_time = between(1, 3)
    weight = 8

    def on_start(self):
        self.etags: dict[str, str] = {}  # the browser's cache: URL -> ETag of the copy it holds

    def page(self, path: str, name: str) -> None:
        headers = {"If-None-Match": self.etags[path]} if path in self.etags else {}
        with self.client.get(path, name=name, headers=headers, catch_response=True) as response:
            if response.status_code == 304:
                response.success()
            elif response.status_code == 200:
                if response.headers.get("etag"):
                    self.etags[path] = response.headers["etag"]
            else:
                response.failure(f"HTTP {response.status_code}")

    @task(4)
    def leaderboard(self):
        self.page("/", "GET /")

    @task(1)
    def leaderboard_next(self):
        self.page("/?page=2", "GET /?page=2")

    @task(1)
    def leaderboard_sorted(self):
        self.page(f"/?sort={random.choice(CONFIG['columns'])}&desc={random.randint(0, 1)}", "GET /?sort")

    @task(1)
    def leaderboard_filtered(self):
        model = random.choice(CONFIG["models"])
        start = random.randrange(len(model) - 3)
        self.page(f"/?q={model[start:start + 3]}", "GET /?q")  # part of a name, as people type it

    @task(3)
    def model_page(self):
        self.page(f"/models/{random.choice(CONFIG['models'])}", "GET /models/{m}")

    @task(3)
    def benchmark_page(self):
        self.page(f"/benchmarks/{random.choice(CONFIG['benchmarks'])}", "GET /benchmarks/{b}")


class ApiReader(FastHttpUser):
    """A script reading the JSON API (no cache: every answer is sent whole)."""

    wait_time = between(1, 3)
    weight = 2

    @task(2)
    def api_leaderboard(self):
        self.client.get("/api/leaderboard", name="GET /api/leaderboard")

    @task(1)
    def api_model(self):
        self.client.get(f"/api/models/{random.choice(CONFIG['models'])}", name="GET /api/models/{m}")

    @task(1)
    def api_benchmark(self):
        self.client.get(f"/api/benchmarks/{random.choice(CONFIG['benchmarks'])}", name="GET /api/benchmarks/{b}")


class Submitter(FastHttpUser):
    """A user submitting a model plugin with an API token."""

    wait_time = between(5, 15)
    fixed_count = int(os.environ.get("WEB_LOAD_SUBMITTERS", "20"))

    def on_start(self):
        with _LOCK:
            self.token = next(_TOKENS)

    @task
    def submit(self):
        identifier = f"load-{uuid.uuid4().hex[:12]}"
        boundary = uuid.uuid4().hex
        package = identifier.replace("-", "_")
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, text in PLUGIN.items():
                archive.writestr(f"{package}/{name}", text.replace("load-net-placeholder", identifier))
        plugin = buffer.getvalue()
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"benchmarks\"\r\n\r\n"
                f"{CONFIG['submit_benchmark']}\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
                f"filename=\"plugin.zip\"\r\nContent-Type: application/zip\r\n\r\n").encode() + plugin + \
               f"\r\n--{boundary}--\r\n".encode()
        with self.client.post("/api/submissions", data=body, name="POST /api/submissions", catch_response=True,
                              headers={"Authorization": f"Bearer {self.token}",
                                       "Content-Type": f"multipart/form-data; boundary={boundary}"}) as response:
            if response.status_code != 201:
                response.failure(f"HTTP {response.status_code}: {response.text[:200]}")
                return
            with _LOCK, open(CONFIG["accepted"], "a") as f:
                f.write(f"{response.json()['id']} {identifier}\n")
