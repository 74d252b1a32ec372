"""``brainscore serve``: the website (leaderboard, model and benchmark pages, submissions).

With ``--web-workers N`` (N > 1) the pages are served by N uvicorn worker processes sharing the
port, while this process runs the one submission dispatcher (its Dask cluster): two dispatchers
would hand the same queued submission out twice. The workers find queued submissions through the
database (the dispatcher polls it twice a second), so nothing else passes between the processes;
what each worker caches from the results (the leaderboard) is checked against the database's
results version on every request.
"""
from __future__ import annotations

import errno
import json
import os
import socket

from brainscore.errors import BrainScoreError

_CONFIG_VARIABLE = "BRAINSCORE_WEB_WORKER_CONFIG"


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("serve", help="run the website",
                                   description="Serve the leaderboard, model and benchmark pages and model "
                                               "submission (scoring runs on a Dask cluster, each pair in a separate, "
                                               "limited process without network).")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--db", default=None,
                        help="results database URL (default $BRAINSCORE_DB_URL or sqlite in BRAINSCORE_HOME)")
    parser.add_argument("--weights-dir", action="append", default=[],
                        help="a server folder submitted plugins may load weights from by absolute path (repeatable)")
    parser.add_argument("--allow-package", action="append", default=[], metavar="NAME",
                        help="a package a submission's requirements.txt may name, besides the default allow-list "
                             "(repeatable); one the server lacks is installed as a wheel by the queue before scoring")
    parser.add_argument("--admin", action="append", default=[], metavar="USER",
                        help="no longer accepted (anyone could register the name first): make administrators with "
                             "'brainscore admin add NAME', stored in the results database")
    parser.add_argument("--memory-limit-gb", type=float, default=8.0, help="memory limit of each scoring process")
    parser.add_argument("--time-limit-s", type=int, default=3600, help="wall-clock limit of each scoring process")
    parser.add_argument("--disk-limit-gb", type=float, default=2.0,
                        help="bytes each scoring process may write (its working directory, a tmpfs in memory where "
                             "the server may create namespaces; its caches live there)")
    parser.add_argument("--max-submissions-per-user", type=_at_least_one, default=3, metavar="N",
                        help="submissions one user may have waiting or running at once (default 3); another upload "
                             "is refused with 429 naming this quota")
    parser.add_argument("--max-pairs-per-submission", type=_at_least_one, default=100, metavar="N",
                        help="(model, benchmark) pairs one submission may hold (default 100); a larger upload is "
                             "refused with 400 naming this quota")
    parser.add_argument("--max-pairs-per-user", type=_at_least_one, default=200, metavar="N",
                        help="pairs still to score over one user's unfinished submissions (default 200); an upload "
                             "past it is refused with 429 naming this quota")
    parser.add_argument("--workers", type=int, default=None,
                        help="Dask worker processes started for the submissions (default: one per core, at most "
                             "one per 4 GiB of memory)")
    parser.add_argument("--scheduler", default=None,
                        help="use an existing Dask scheduler (tcp://host:8786) instead of starting workers; its "
                             "workers must see the database and BRAINSCORE_HOME/submissions")
    parser.add_argument("--web-workers", type=_at_least_one, default=1, metavar="N",
                        help="processes serving the pages (uvicorn workers; default 1); the submission queue runs "
                             "in this process")
    parser.add_argument("--page-max-age-s", type=_seconds, default=1.0, metavar="S",
                        help="while new scores arrive, rebuild a page many visitors share (the leaderboard) at most "
                             "every S seconds, in the background: a new score shows within 2 S seconds; deletions, "
                             "corrections and visibility changes show at once (default 1; 0: every page at the next "
                             "request)")
    parser.add_argument("--no-scoring", action="store_true",
                        help="queue submissions without scoring them (no Dask cluster): pages and queue only")
    parser.add_argument("--score-new-benchmarks", action="store_true",
                        help="at start, queue every leaderboard benchmark whose registered version is newer than any "
                             "recorded for every public model (the reference's 'score new plugins' flow)")
    parser.set_defaults(func=run)


def _at_least_one(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _seconds(text: str) -> float:
    import argparse
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds >= 0, got {text!r}")
    return value


def _app_arguments(args) -> dict:
    return {"db_url": args.db, "weights_dirs": [str(d) for d in args.weights_dir],
            "memory_limit": int(args.memory_limit_gb * 1024**3), "wall_limit": args.time_limit_s,
            "disk_limit": int(args.disk_limit_gb * 1024**3),
            "workers": args.workers, "scheduler": args.scheduler, "page_max_age": args.page_max_age_s,
            "warm_pages": True, "allowed_requirements": _allowed(args.allow_package),
            "quotas": {"submissions": getattr(args, "max_submissions_per_user", 3),
                       "pairs_per_submission": getattr(args, "max_pairs_per_submission", 100),
                       "pairs_per_user": getattr(args, "max_pairs_per_user", 200)}}


def _allowed(extra: list[str]) -> list[str]:
    """The default allow-list of requirements.txt packages with ``--allow-package`` names added."""
    from brainscore.web.checks import ALLOWED_REQUIREMENTS

    return sorted({*ALLOWED_REQUIREMENTS, *(name.strip() for name in extra if name.strip())})


def web_worker_app():
    """The application of one uvicorn worker process of ``--web-workers``: pages only, no dispatcher.

    uvicorn imports this factory in each worker; the arguments come from the serving process through
    ``$BRAINSCORE_WEB_WORKER_CONFIG`` (JSON).
    """
    from brainscore.web import create_app

    arguments = json.loads(os.environ[_CONFIG_VARIABLE])
    arguments["weights_dirs"] = tuple(arguments["weights_dirs"])
    return _warmed(create_app(**arguments, start_worker=False))


def _warmed(app):
    """``app`` with the leaderboard computed (seconds at 16,000 scores) before it takes its first request."""
    app.state.site.warm()
    return app


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port``, bound before anything is announced.

    Raises
    ------
    BrainScoreError
        If the address cannot be bound (the port is taken, or the host is not an address of this machine).
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise BrainScoreError(f"cannot resolve --host {host!r} ({error}); pass an address such as 127.0.0.1") from error
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as error:
        sock.close()
        hint = (f"another program listens on port {port}; choose another with --port"
                if error.errno == errno.EADDRINUSE else "pass an address of this machine with --host")
        raise BrainScoreError(f"cannot serve on {host}:{port}: {error.strerror}; {hint}") from error
    sock.listen(2048)
    return sock


def run(args) -> int:
    if getattr(args, "admin", None):
        raise BrainScoreError(
            f"--admin is no longer accepted: it trusted whichever account held the name {args.admin[0]!r}, and anyone "
            f"can register a name through the website. Make administrators on this server with 'brainscore admin add "
            f"NAME' (it creates the account with a password given there, or names an existing account whose e-mail "
            f"address is verified); they are stored in the results database and 'brainscore admin list' shows them")
    sock = bind(args.host, args.port)  # before the URL is printed: a busy port fails here, clearly
    import uvicorn

    from brainscore.web import create_app

    arguments = _app_arguments(args)
    app = create_app(**{**arguments, "weights_dirs": tuple(arguments["weights_dirs"])},
                     start_worker=args.web_workers == 1 and not args.no_scoring)
    if getattr(args, "score_new_benchmarks", False):
        from brainscore.web.new_benchmarks import queue_new_benchmarks

        for benchmark, queued in queue_new_benchmarks(app.state.site).items():
            print(f"new benchmark {benchmark}: queued for {len(queued)} public model(s)", flush=True)
    port = sock.getsockname()[1]
    print(f"brainscore website on http://{args.host}:{port}/"
          + (f" ({args.web_workers} worker processes)" if args.web_workers > 1 else ""), flush=True)
    if args.web_workers == 1:
        uvicorn.Server(uvicorn.Config(_warmed(app), log_level="warning", server_header=False)).run(sockets=[sock])
        return 0
    # this process: the one dispatcher (the schema was upgraded above, before the workers open the database)
    from uvicorn.supervisors import Multiprocess

    dispatcher = app.state.worker
    if not args.no_scoring:
        dispatcher.start()
    os.environ[_CONFIG_VARIABLE] = json.dumps(arguments)
    config = uvicorn.Config("brainscore.cli.serve:web_worker_app", factory=True, workers=args.web_workers,
                            log_level="warning", server_header=False)
    try:
        Multiprocess(config, sockets=[sock]).run()  # what uvicorn.run does for workers, on the socket bound above
    finally:
        dispatcher.stop()
    return 0
