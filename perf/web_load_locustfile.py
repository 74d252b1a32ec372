"""Locust users of ``perf/web_load.py`` (run by it; not imported by brainscore).

``Visitor``: reads the leaderboard (the first page, sorted by a random column, a filter), model
and benchmark pages and the JSON API, with 1-3 s between pages. ``Submitter``: uploads the README's
tiny plugin under a new identifier through ``POST /api/submissions`` with its API token, every 5-15 s,
and appends each accepted submission id to a file (to check none was lost or duplicated).
``$WEB_LOAD_CONFIG`` names a JSON file with ``models``, ``benchmarks``, ``columns``, ``tokens``,
``plugin_files`` (path) and ``accepted`` (path).
"""
from __future__ import annotations

import io
import itertools
import json
import os
import random
import threading
import uuid
import zipfile

from locust import FastHttpUser, between, task

CONFIG = json.loads(open(os.environ["WEB_LOAD_CONFIG"]).read())
PLUGIN = json.loads(open(CONFIG["plugin_files"]).read())  # file name -> text, "load-net-placeholder" as identifier
_TOKENS = itertools.cycle(CONFIG["tokens"])
_LOCK = threading.Lock()


class Visitor(FastHttpUser):
    """Someone reading the website."""

    wait_time = between(1, 3)
    weight = 10

    @task(4)
    def leaderboard(self):
        self.client.get("/", name="GET /")

    @task(1)
    def leaderboard_sorted(self):
        self.client.get(f"/?sort={random.choice(CONFIG['columns'])}&desc={random.randint(0, 1)}", name="GET /?sort")

    @task(1)
    def leaderboard_filtered(self):
        model = random.choice(CONFIG["models"])
        start = random.randrange(len(model) - 3)
        self.client.get(f"/?q={model[start:start + 3]}", name="GET /?q")  # part of a name, as people type it

    @task(3)
    def model_page(self):
        self.client.get(f"/models/{random.choice(CONFIG['models'])}", name="GET /models/{m}")

    @task(3)
    def benchmark_page(self):
        self.client.get(f"/benchmarks/{random.choice(CONFIG['benchmarks'])}", name="GET /benchmarks/{b}")

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
