"""The website under load at the reference's scale: 704 models x 23 benchmarks, 200 visitors, 20 submitters.

    python perf/web_load.py [--models 704] [--visitors 200] [--submitters 20] [--duration 60]
                            [--web-workers 2] [--postgres] [--locust /path/to/locust]
                            [--no-drain | --drain-after]

1. Fills a results database (a fresh SQLite file, or with ``--postgres`` a throw-away PostgreSQL
   server from ``tests/postgres_server.py``) with one score of every model on every benchmark the
   plugins register for the leaderboard plus the selection-only ones (704 x 23 = 16,192 rows with
   the defaults; brain-score.org shows about 700 models), each with a provenance of the size real
   ones have, and 20 accounts with API tokens.
2. Measures one visitor alone: ``GET /`` (time, bytes sent with and without gzip).
3. Starts ``brainscore serve --web-workers N --no-scoring`` on 127.0.0.1 (pages and queue only: the
   submissions are queued, not scored) and drives it with Locust (``pip install locust``; give its
   executable with ``--locust`` when it lives in another environment), headless, bounded by
   ``--duration``: ``--visitors`` users, 1-3 s apart, four in five of them browsers reading the
   leaderboard (first and second page, sorted, filtered), model and benchmark pages (revalidating
   what they hold with its ETag, as browsers do), one in five scripts reading the JSON API; and
   ``--submitters`` users uploading a plugin every 5-15 s.
4. Prints p50/p95/p99, the share of 304 answers and errors per request type, the load average
   before and after (the machine is shared), and checks that every accepted submission is in the
   queue exactly once.
5. Drains the queue (unless ``--no-drain``) while the visitors read (``--drain-after``: after they
   left): the submission dispatcher on a one-thread Dask cluster, each pair's child a stand-in that
   writes its model and reports a score (no model is run), so every few hundred milliseconds a new
   score changes the results the pages are built from; checks the pairs ran one by one in the order
   the submissions were accepted (their ids).

Nothing leaves 127.0.0.1; the server and Locust are stopped at the end (or on Ctrl-C).
"""
from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


START = datetime.datetime(2026, 11, 25, 12, 0, tzinfo=datetime.timezone.utc)


def run_times(k: int) -> tuple[datetime.datetime, datetime.datetime]:
    """When model ``k``'s runs started and ended (one minute each, a model an hour after the one before)."""
    start = START + datetime.timedelta(hours=k)
    return start, start + datetime.timedelta(minutes=1)


def realistic(rng, no_ceiling: bool) -> dict:
    """A score as a real run records it: ``raw / ceiling = score`` (raw, ceiling 1, for a benchmark without one),
    its 95% interval around it and inside [0, 1] (issue 36: scores outside their own interval, intervals past 1)."""
    ceiling = 1.0 if no_ceiling else 0.8
    value = rng.uniform(0.02, 0.98)
    half = rng.uniform(0.005, 0.02)
    return {"score_ceiled": value, "score_raw": value * ceiling, "ceiling": ceiling, "error": half / 1.96,
            "ci95_low": max(0.0, value - half), "ci95_high": min(1.0, value + half)}


def provenance(model: str, benchmark: str, k: int, ceiling: float = 0.8) -> dict:
    """A provenance of the size and shape ``brainscore.score`` records (about 1.5 kB of JSON)."""
    start, end = run_times(k)
    return {"start": start.isoformat(), "end": end.isoformat(),
            "model": {"identifier": model, "weights_sha256": f"{k:064x}", "architecture_sha256": f"{k + 1:064x}",
                      "preprocessing": {"image_size": 224, "normalisation": "imagenet"}, "visual_degrees": 8},
            "benchmark": {"identifier": benchmark, "version": 1,
                          "data_files": {f"packaged/assy_{benchmark}_{i}.nc": f"{i:064x}" for i in range(3)}},
            "metric": {"name": "pls", "splits": 10, "seed": 0, "components": 25},
            "ceiling": {"method": "internal consistency", "value": ceiling, "error": 0.01},
            "versions": {"brainscore": "1.0", "torch": "2.5", "numpy": "2.1", "xarray": "2025.1"},
            "layers": {"IT": "layer4.1"}}


def fill(url: str, n_models: int, n_users: int, home: Path) -> dict:
    """The results database at ``url`` with ``n_models`` x every benchmark, each score as a real run records it
    (:func:`realistic`: inside its own interval, the interval inside [0, 1], start and end times); returns the load
    test's configuration."""
    from sqlalchemy import insert
    from sqlalchemy.orm import Session

    from brainscore.leaderboard import tree
    from brainscore.metrics.score import Score
    from brainscore.scoring.outcome import Outcome
    from brainscore.results import Database
    from brainscore.results.records import record
    from brainscore.results.schema import BenchmarkInstance, Model, ScoreRow
    from brainscore.web import accounts
    from brainscore.web.values import no_ceiling

    db = Database(url)
    benchmarks = sorted(tree.benchmark_parents(include_selection=True))
    models = [f"model-{k:04d}" for k in range(n_models)]
    rng = random.Random(0)
    started = time.perf_counter()
    without = {benchmark: no_ceiling(benchmark) for benchmark in benchmarks}
    for benchmark in benchmarks:  # the first model through the recording API: benchmark instances as in real use
        made = realistic(rng, without[benchmark])
        score = Score.of(made["score_ceiled"], model_identifier=models[0], benchmark_identifier=benchmark,
                         raw=Score.of(made["score_raw"]), ceiling=Score.of(made["ceiling"]), benchmark_version=1,
                         error=made["error"], ci95=(made["ci95_low"], made["ci95_high"]))
        score.attrs["provenance"] = provenance(models[0], benchmark, 0, made["ceiling"])
        record(Outcome.from_score(score), db)
    with Session(db.engine) as session:
        instances = {i.benchmark_type_id: i.id for i in session.query(BenchmarkInstance)}
        session.execute(insert(Model), [{"identifier": m, "public": True} for m in models[1:]])
        model_ids = {m.identifier: m.id for m in session.query(Model)}
        rows = []
        for k, model in enumerate(models[1:], start=1):
            start, end = run_times(k)
            for benchmark in benchmarks:
                made = realistic(rng, without[benchmark])
                ceiling = made.pop("ceiling")
                rows.append({"benchmark_instance_id": instances[benchmark], "model_id": model_ids[model],
                             "status": "done", **made, "layers": {"IT": "layer4.1"},
                             "start_timestamp": start, "end_timestamp": end,
                             "provenance": provenance(model, benchmark, k, ceiling),
                             "provenance_key": f"{k:032x}{k:032x}"})
        session.execute(insert(ScoreRow), rows)
        session.commit()
    filled = time.perf_counter() - started
    engine = accounts.engine_for(url)
    tokens = []
    for i in range(n_users):
        user = accounts.register(engine, f"submitter{i:02d}", "a long enough password")
        tokens.append(accounts.create_token(engine, user))
    from brainscore.leaderboard.aggregate import registered_tree

    columns = registered_tree().order()
    plugin = {p.name: p.read_text() for p in (ROOT / "docs/examples/my_tiny_net").iterdir() if p.is_file()}
    plugin["__init__.py"] = plugin["__init__.py"].replace("my-tiny-net", "load-net-placeholder")
    (home / "plugin.json").write_text(json.dumps(plugin))
    return {"models": models, "benchmarks": benchmarks, "columns": columns, "tokens": tokens,
            "submit_benchmark": sorted(tree.benchmark_parents())[0],  # a leaderboard one (not selection-only)
            "plugin_files": str(home / "plugin.json"), "accepted": str(home / "accepted.txt"),
            "statuses": str(home / "statuses.json"),
            "rows": len(models) * len(benchmarks), "fill_s": filled}


@contextmanager
def server(url: str, home: Path, web_workers: int):
    port = free_port()
    env = {**os.environ, "BRAINSCORE_HOME": str(home), "PYTHONPATH": str(ROOT / "src")}
    command = [sys.executable, "-m", "brainscore", "serve", "--host", "127.0.0.1", "--port", str(port), "--db", url,
               "--web-workers", str(web_workers), "--no-scoring"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=open(home / "server.log", "w"),
                               start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        import httpx

        deadline = time.time() + 120
        while True:
            try:
                if httpx.get(f"{base}/api/benchmarks", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.time() > deadline:
                raise SystemExit(f"the server did not start: {(home / 'server.log').read_text()[-2000:]}")
            time.sleep(0.5)
        yield base, process.pid
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def one_visitor(base: str) -> dict:
    """``GET /`` alone: seconds (median of 5), bytes sent without and with gzip."""
    import httpx

    times = []
    with httpx.Client(timeout=120) as client:
        for _ in range(5):
            started = time.perf_counter()
            plain = client.get(f"{base}/", headers={"Accept-Encoding": "identity"})
            times.append(time.perf_counter() - started)
        gzipped = client.get(f"{base}/", headers={"Accept-Encoding": "gzip"})
        raw_size = int(gzipped.headers.get("content-length") or len(gzipped.content))
        api = client.get(f"{base}/api/leaderboard", headers={"Accept-Encoding": "gzip"})
    return {"seconds": sorted(times)[2], "bytes": len(plain.content), "gzip_bytes": raw_size,
            "gzip": gzipped.headers.get("content-encoding") == "gzip", "api_bytes": len(api.content),
            "api_gzip_bytes": int(api.headers.get("content-length") or len(api.content))}


def run_locust(locust: str, base: str, config: Path, visitors: int, submitters: int, duration: int,
               out: Path) -> list[dict]:
    env = {**os.environ, "WEB_LOAD_CONFIG": str(config), "WEB_LOAD_SUBMITTERS": str(submitters)}
    users = visitors + submitters
    command = [locust, "-f", str(Path(__file__).with_name("web_load_locustfile.py")), "--headless", "--host", base,
               "-u", str(users), "-r", str(max(1, users // 10)), "-t", f"{duration}s", "--stop-timeout", "30",
               "--csv", str(out / "locust"), "--only-summary", "--loglevel", "WARNING"]
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, env=env, check=False, timeout=duration + 180, stdout=subprocess.DEVNULL,
                   stderr=open(out / "locust.log", "w"))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    (out / "locust_cpu.txt").write_text(str(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime))
    with open(out / "locust_stats.csv") as f:
        return list(csv.DictReader(f))


def check_queue(url: str, accepted_file: Path) -> str:
    """Every accepted submission (201 received) is queued exactly once; none queued twice."""
    from sqlalchemy import create_engine, text

    accepted = [line.split() for line in accepted_file.read_text().splitlines()] if accepted_file.exists() else []
    engine = create_engine(url)
    with engine.connect() as connection:  # a submission is known by its random key (its id is not shown)
        rows = connection.execute(text("SELECT key, models FROM web_jobs ORDER BY id")).all()
    engine.dispose()
    queued = {str(r[0]): (json.loads(r[1]) if isinstance(r[1], str) else r[1]) for r in rows}
    lost = [key for key, m in accepted if key not in queued or queued[key] != [m]]
    identifiers = [m for models in queued.values() for m in models]
    duplicated = len(identifiers) - len(set(identifiers))
    late = len(queued) - len(accepted)
    return (f"submissions: {len(accepted)} accepted (201 received), {len(lost)} of them lost, {duplicated} queued "
            f"twice; {len(queued)} queued in all ({late} answered after Locust stopped)")


def drain(url: str, home: Path, timeout: float, load_over: threading.Event | None = None,
          ready: threading.Event | None = None) -> str:
    """Run the queue dry: the dispatcher on a one-thread Dask cluster, each pair's child a stand-in that appends
    its model to a file and reports a score; returns whether the pairs ran in the order of the submission ids.

    With ``load_over``, it runs while the visitors read (started before them): every score it records
    changes the results version the web workers serve pages at, and it stops once ``load_over`` is set
    and the queue is empty."""
    from distributed import Client, LocalCluster
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    from brainscore.results import Database
    from brainscore.web.queue import Dispatcher, Limits, SubmissionTask

    store = Database(url)
    ran = home / "ran.txt"

    def command(model, benchmark, submission_id):
        outcome = {"model": model, "benchmark": benchmark, "status": "done", "score": 0.5, "benchmark_version": 1}
        return [sys.executable, "-c", f"import json; open({str(ran)!r}, 'a').write({model!r} + '\\n'); "
                                      f"print(json.dumps({{'event': 'done', 'outcome': {outcome!r}}}))"]

    started = time.perf_counter()
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address="127.0.0.1:0") as cluster, \
            Client(cluster) as client:
        dispatcher = Dispatcher(store.engine, store, url, home / "submissions", client=client)
        dispatcher.limits = Limits(memory=1024**3, wall=60, isolate=False)  # the stand-in writes the file
        dispatcher.command = command
        dispatcher.start()
        if ready is not None:
            ready.set()  # the cluster is up (its start is not part of the load, as on a running server)
        try:
            while time.perf_counter() - started < timeout:
                with Session(store.engine) as session:
                    tasks = session.execute(select(SubmissionTask.id, SubmissionTask.models, SubmissionTask.status)
                                            .order_by(SubmissionTask.id)).all()
                if (load_over is None or load_over.is_set()) and all(status in ("done", "failed")
                                                                     for _, _, status in tasks):
                    break
                time.sleep(0.5)
        finally:
            dispatcher.stop()
    expected = [m for _, models, _ in tasks for m in models]
    seen = ran.read_text().splitlines() if ran.exists() else []
    done = sum(status == "done" for _, _, status in tasks)
    when = "while the visitors read, then " if load_over is not None else ""
    return (f"queue drained {when}in {time.perf_counter() - started:.0f} s: {done} of {len(tasks)} submissions done, "
            f"{len(seen)} pairs run, in submission order: {seen == expected}, each once: {len(set(seen)) == len(seen)}")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` and its children alive now (the server's workers)."""
    import psutil

    try:
        root = psutil.Process(pid)
        total = 0.0
        for process in [root, *root.children(recursive=True)]:
            try:
                times = process.cpu_times()
                total += times.user + times.system
            except psutil.NoSuchProcess:
                pass
        return total
    except psutil.NoSuchProcess:
        return 0.0


def _results_version(url: str) -> int:
    from brainscore.results import Database

    return Database(url).results_version()


def load_average() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=704)
    parser.add_argument("--visitors", type=int, default=200)
    parser.add_argument("--submitters", type=int, default=20)
    parser.add_argument("--duration", type=int, default=60, help="seconds of load (at most 600)")
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--postgres", action="store_true", help="a throw-away PostgreSQL server instead of SQLite")
    parser.add_argument("--locust", default=shutil.which("locust") or "locust")
    parser.add_argument("--no-drain", action="store_true", help="leave the queue as the submitters filled it")
    parser.add_argument("--drain-after", action="store_true",
                        help="drain the queue after the visitors left (default: while they read, so every "
                             "recorded score changes the pages they are served)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (database, Locust CSV)")
    args = parser.parse_args()
    args.duration = min(args.duration, 600)
    home = Path(tempfile.mkdtemp(prefix="brainscore-web-load-"))
    os.environ["BRAINSCORE_HOME"] = str(home)
    try:
        with (_postgres(home) if args.postgres else _sqlite(home)) as url:
            config = fill(url, args.models, args.submitters, home)
            print(f"database: {config['rows']:,} scores ({args.models} models x {len(config['benchmarks'])} "
                  f"benchmarks), filled in {config['fill_s']:.1f} s; {url.split('@')[-1]}")
            (home / "config.json").write_text(json.dumps(config))
            with server(url, home, args.web_workers) as (base, server_pid):
                alone = one_visitor(base)
                print(f"one visitor: GET / {alone['seconds'] * 1000:.0f} ms, {alone['bytes']:,} bytes "
                      f"({alone['gzip_bytes']:,} gzipped: {alone['gzip']}); /api/leaderboard {alone['api_bytes']:,} "
                      f"bytes ({alone['api_gzip_bytes']:,} on the wire)")
                before = load_average()
                cpu_before = _cpu_seconds(server_pid)
                wall_started = time.perf_counter()
                load_over, drained = threading.Event(), {}
                during = not args.no_drain and not args.drain_after
                if during:
                    ready = threading.Event()
                    worker = threading.Thread(target=lambda: drained.setdefault("report", drain(
                        url, home, args.duration + 600, load_over, ready)), daemon=True)
                    version_before = _results_version(url)
                    worker.start()
                    ready.wait(120)
                    time.sleep(2)  # its start-up's CPU spent
                    before = load_average()
                    cpu_before = _cpu_seconds(server_pid)
                    wall_started = time.perf_counter()
                stats = run_locust(args.locust, base, home / "config.json", args.visitors, args.submitters,
                                   args.duration, home)
                after = load_average()
                server_cpu, wall = _cpu_seconds(server_pid) - cpu_before, time.perf_counter() - wall_started
                load_over.set()
                if during:
                    versions = _results_version(url) - version_before
                    worker.join()
            statuses: dict[str, dict] = {}
            if Path(config["statuses"]).exists():
                for name, status, count in json.loads(Path(config["statuses"]).read_text()):
                    statuses.setdefault(name, {})[str(status)] = count
            print(f"{args.visitors} visitors + {args.submitters} submitters for {args.duration} s, "
                  f"{args.web_workers} web worker processes; load average (1/5/15 min) {before} before, "
                  f"{after} after")
            served = sum(int(row["Request Count"]) for row in stats if row["Name"] == "Aggregated")
            print(f"server processes (the web workers and the serving process): {server_cpu:.0f} CPU-seconds in "
                  f"{wall:.0f} s of load ({server_cpu / wall:.2f} of the machine's {os.cpu_count()} cores), "
                  f"{1000 * server_cpu / max(served, 1):.1f} ms of CPU per request; Locust "
                  f"{float((home / 'locust_cpu.txt').read_text()):.0f} CPU-seconds")
            print(f"{'request':28s} {'count':>7s} {'errors':>6s} {'304':>5s} {'req/s':>7s} {'p50 ms':>7s} "
                  f"{'p95 ms':>7s} {'p99 ms':>7s}")
            for row in stats:
                shares = statuses.get(row["Name"], {})
                total = sum(shares.values())
                not_modified = f"{100 * shares.get('304', 0) / total:.0f}%" if total else "-"
                print(f"{row['Name']:28s} {row['Request Count']:>7s} {row['Failure Count']:>6s} {not_modified:>5s} "
                      f"{float(row['Requests/s']):7.1f} {row['50%']:>7s} {row['95%']:>7s} {row['99%']:>7s}")
            print(check_queue(url, Path(config["accepted"])))
            if during:
                print(f"{versions} new results versions while the visitors read (each recorded score makes one)")
                print(drained.get("report", "the queue was not drained (the drain thread failed: see above)"))
            elif not args.no_drain:
                print(drain(url, home, timeout=600))
    finally:
        if args.keep:
            print(f"kept {home}")
        else:
            shutil.rmtree(home, ignore_errors=True)


@contextmanager
def _sqlite(home: Path):
    yield f"sqlite:///{home / 'results.sqlite'}"


@contextmanager
def _postgres(home: Path):
    from postgres_server import PostgresServer

    pg = PostgresServer().start()
    try:
        yield pg.url
    finally:
        pg.stop()


if __name__ == "__main__":
    main()
