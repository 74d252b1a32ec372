"""What one accepted plugin upload (``POST /api/submissions`` with an API token) costs in-process.

    python perf/upload_cost.py [--uploads 40] [--profile] [--concurrent N]

Builds the web application as the tests do (a fresh SQLite results database in a temporary folder,
no scoring worker), one account with an API token, and uploads ``--uploads`` times the zip that
``perf/web_load.py``'s submitters send (the README's tiny plugin under a new identifier each time)
through FastAPI's TestClient. Prints the ms per accepted upload (median, mean, max) and the time
spent in each step of the accept path (by cProfile's cumulative time, per upload); ``--profile``
prints cProfile's top 120 functions too. ``--concurrent N``: instead, two processes (as two web
workers) on one SQLite database and submissions folder, each with four threads uploading N times
50 ms apart, and prints p50/p95/p99 per upload: what SQLite's one writer at a time costs. Nothing
leaves the machine.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import tempfile
import threading
import time
import uuid
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

#: steps of the accept path: (label, cProfile function-name suffix "file:function")
STEPS = (
    ("reading the multipart body", "formparsers.py:parse"),
    ("API token -> user", "accounts.py:user_by_token"),
    ("benchmark checks", "submissions.py:benchmark_problem"),
    ("zip checks (checks.check_zip)", "checks.py:check_zip"),
    ("requirements' environment", "environments.py:prepare"),
    ("unpacking (checks.extract)", "checks.py:extract"),
    ("model identifiers' owners (site.owner_of)", "site.py:owner_of"),
    ("results database: submission row", "database.py:create_submission"),
    ("results database: model rows", "database.py:add_model"),
    ("queue notify", "queue.py:notify"),
    ("database commits (every session's)", "method 'commit' of 'sqlite3.Connection' objects>"),
    ("fsync of the unpacked files", "posix.fsync>"),
    ("the answer's JSON (site.view)", "site.py:view"),
)


def plugin_zip(identifier: str) -> bytes:
    """The zip ``perf/web_load_locustfile.py``'s submitter sends: docs/examples/my_tiny_net as ``identifier``."""
    files = {p.name: p.read_text() for p in (ROOT / "docs/examples/my_tiny_net").iterdir() if p.is_file()}
    files["__init__.py"] = files["__init__.py"].replace("my-tiny-net", identifier)
    package = identifier.replace("-", "_")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(f"{package}/{name}", text)
    return buffer.getvalue()


def _uploader(db: Path, root: Path, token: str, uploads: int, threads: int, results) -> None:
    """One web worker's app on ``db``: ``threads`` threads each uploading ``uploads`` times; puts the ms of each."""
    from fastapi.testclient import TestClient

    from brainscore.leaderboard import tree
    from brainscore.web.app import create_app

    app = create_app(db_url=f"sqlite:///{db}", root=root, start_worker=False)
    benchmark = sorted(tree.benchmark_parents())[0]
    times, failures = [], []

    def run(k: int) -> None:
        client = TestClient(app)
        for i in range(uploads):
            started = time.perf_counter()
            response = client.post("/api/submissions", headers={"Authorization": f"Bearer {token}"},
                                   data={"benchmarks": benchmark},
                                   files={"file": ("plugin.zip", plugin_zip(f"c-{uuid.uuid4().hex[:12]}"),
                                                   "application/zip")})
            if response.status_code != 201:
                failures.append(f"HTTP {response.status_code}: {response.text[:300]}")
                return
            times.append((time.perf_counter() - started) * 1e3)
            time.sleep(0.05)

    TestClient(app).get("/api/benchmarks")  # warm
    workers = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    results.put((times, failures))


def concurrent(uploads: int, threads: int = 4, processes: int = 2) -> None:
    """Print p50/p95/p99 of ``processes`` x ``threads`` uploaders on one SQLite database, ``uploads`` each."""
    import multiprocessing

    from brainscore.web import accounts
    from brainscore.web.app import create_app

    with tempfile.TemporaryDirectory() as tmp:
        db, root = Path(tmp) / "results.sqlite", Path(tmp) / "submissions"
        app = create_app(db_url=f"sqlite:///{db}", root=root, start_worker=False)
        token = accounts.create_token(app.state.engine,
                                      accounts.register(app.state.engine, "submitter", "a long enough password"))
        results = multiprocessing.get_context("spawn").Queue()
        workers = [multiprocessing.get_context("spawn").Process(target=_uploader,
                                                                args=(db, root, token, uploads, threads, results))
                   for _ in range(processes)]
        for worker in workers:
            worker.start()
        times, failures = [], []
        for _ in workers:
            got, failed = results.get()
            times += got
            failures += failed
        for worker in workers:
            worker.join()
    if failures:
        raise SystemExit(f"{len(failures)} uploads failed, the first: {failures[0]}")
    times.sort()

    def pick(share: float) -> float:
        return times[min(len(times) - 1, int(len(times) * share))]

    print(f"{len(times)} uploads by {processes} processes x {threads} threads on one SQLite database: "
          f"p50 {pick(0.5):.0f} ms, p95 {pick(0.95):.0f} ms, p99 {pick(0.99):.0f} ms, max {times[-1]:.0f} ms")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--uploads", type=int, default=40)
    parser.add_argument("--profile", action="store_true", help="print cProfile's top 120 functions too")
    parser.add_argument("--concurrent", type=int, metavar="N", default=0,
                        help="2 processes x 4 threads uploading N times each (instead of the profile)")
    args = parser.parse_args(argv)
    if args.uploads < 1 or args.concurrent < 0:
        parser.error("--uploads must be at least 1 and --concurrent at least 0")
    if args.concurrent:
        concurrent(args.concurrent)
        return
    from fastapi.testclient import TestClient

    from brainscore.leaderboard import tree
    from brainscore.web import accounts
    from brainscore.web.app import create_app

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        app = create_app(db_url=f"sqlite:///{tmp / 'results.sqlite'}", root=tmp / "submissions", start_worker=False)
        user = accounts.register(app.state.engine, "submitter", "a long enough password")
        token = accounts.create_token(app.state.engine, user)
        benchmark = sorted(tree.benchmark_parents())[0]
        client = TestClient(app)
        headers = {"Authorization": f"Bearer {token}"}

        def upload():
            identifier = f"load-{uuid.uuid4().hex[:12]}"
            response = client.post("/api/submissions", headers=headers, data={"benchmarks": benchmark},
                                   files={"file": ("plugin.zip", plugin_zip(identifier), "application/zip")})
            if response.status_code != 201:
                raise SystemExit(f"upload rejected: HTTP {response.status_code}: {response.text[:300]}")

        upload()  # warm: imports, the first query of each kind
        times = []
        for _ in range(args.uploads):  # timed without the profiler
            started = time.perf_counter()
            upload()
            times.append((time.perf_counter() - started) * 1e3)
        profiles = []  # one per thread: the test client serves each request from a new thread (its event loop),
        # which hands synchronous work to worker threads of its own; cProfile sees only the thread it runs in

        def start_profile(frame, event, arg):
            profile = cProfile.Profile()
            profiles.append(profile)
            profile.enable()  # replaces this hook in the new thread

        threading.setprofile(start_profile)
        try:
            for _ in range(args.uploads):
                upload()
        finally:
            threading.setprofile(None)
    print(f"{args.uploads} accepted uploads (SQLite, TestClient): median {statistics.median(times):.1f} ms, "
          f"mean {statistics.mean(times):.1f} ms, max {max(times):.1f} ms per upload")
    for profile in profiles:
        profile.create_stats()
    stats = pstats.Stats(*profiles)
    print("where an upload's time goes (cumulative, ms per upload; steps may nest):")
    for label, suffix in STEPS:
        total = sum(ct for (file, line, name), (cc, nc, tt, ct, callers) in stats.stats.items()
                    if f"{Path(file).name}:{name}".endswith(suffix) or name.endswith(suffix))
        calls = sum(nc for (file, line, name), (cc, nc, tt, ct, callers) in stats.stats.items()
                    if f"{Path(file).name}:{name}".endswith(suffix) or name.endswith(suffix))
        print(f"  {label:<40} {total * 1e3 / args.uploads:7.2f} ms  ({calls / args.uploads:.1f} calls)")
    if args.profile:
        stats.sort_stats("cumulative").print_stats(120)


if __name__ == "__main__":
    main()
