"""``brainscore serve``: the website (leaderboard, model and benchmark pages, submissions)."""
from __future__ import annotations


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
    parser.add_argument("--memory-limit-gb", type=float, default=8.0, help="memory limit of each scoring process")
    parser.add_argument("--time-limit-s", type=int, default=3600, help="wall-clock limit of each scoring process")
    parser.add_argument("--workers", type=int, default=None,
                        help="Dask worker processes started for the submissions (default: one per core, at most "
                             "one per 4 GiB of memory)")
    parser.add_argument("--scheduler", default=None,
                        help="use an existing Dask scheduler (tcp://host:8786) instead of starting workers; its "
                             "workers must see the database and BRAINSCORE_HOME/submissions")
    parser.set_defaults(func=run)


def run(args) -> int:
    import uvicorn

    from brainscore.web import create_app

    app = create_app(db_url=args.db, weights_dirs=tuple(args.weights_dir),
                     memory_limit=int(args.memory_limit_gb * 1024**3), wall_limit=args.time_limit_s,
                     workers=args.workers, scheduler=args.scheduler)
    print(f"brainscore website on http://{args.host}:{args.port}/", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
