"""``brainscore serve``: the website (leaderboard, model and benchmark pages, submissions)."""
from __future__ import annotations

import errno
import socket

from brainscore.errors import BrainScoreError


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
    sock = bind(args.host, args.port)  # before the URL is printed: a busy port fails here, clearly
    import uvicorn

    from brainscore.web import create_app

    app = create_app(db_url=args.db, weights_dirs=tuple(args.weights_dir),
                     memory_limit=int(args.memory_limit_gb * 1024**3), wall_limit=args.time_limit_s,
                     workers=args.workers, scheduler=args.scheduler)
    port = sock.getsockname()[1]
    print(f"brainscore website on http://{args.host}:{port}/", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
    return 0
