"""``brainscore submit PLUGIN_OR_ZIP --server URL``: upload a model plugin to a brainscore website."""
from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
import zipfile
from pathlib import Path

from brainscore.errors import BrainScoreError


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("submit", help="submit a model plugin to a brainscore website",
                                   description="Upload a model plugin (a folder, zipped on the fly, or a zip) to "
                                               "`brainscore serve`, print its status and, with --wait, follow it: its "
                                               "place in the queue and its live log on stderr, then its scores as "
                                               "a table.")
    parser.add_argument("path", help="the plugin folder (with __init__.py) or a zip of it")
    parser.add_argument("--server", required=True, help="the website, e.g. http://127.0.0.1:8000")
    parser.add_argument("--token", default=os.environ.get("BRAINSCORE_TOKEN"),
                        help="API token from your account page (default $BRAINSCORE_TOKEN)")
    parser.add_argument("--benchmarks", default="", help="comma-separated benchmarks (default: all leaderboard benchmarks, as the website's "
                             "GET /api/benchmarks lists them; a typo is refused with the closest names)")
    parser.add_argument("--private", action="store_true", help="only you see the model and its scores")
    parser.add_argument("--wait", action="store_true",
                        help="follow the submission until it is done or failed: its place in the queue and its live "
                             "log on stderr (--quiet: none), then its scores as a table (--json: one JSON object)")
    parser.add_argument("--json", action="store_true", help="with --wait: print the final state as one JSON object")
    parser.add_argument("--interval", type=float, default=2.0, metavar="S", help=argparse.SUPPRESS)
    parser.set_defaults(func=run)


def zip_folder(folder: Path) -> bytes:
    """The plugin folder as a zip whose single top-level folder is the plugin (caches left out).

    Raises
    ------
    BrainScoreError
        If a symbolic link in the folder leads out of it (``key.pem -> ~/.ssh/id_rsa``): nothing
        outside the plugin folder is ever uploaded.
    """
    from brainscore.data.links import links_out_of_folder

    folder = Path(folder)
    paths = [p for p in sorted(folder.rglob("*")) if "__pycache__" not in p.parts]
    escaping = links_out_of_folder({str(p): p for p in paths if p.is_symlink()}, folder)
    if escaping:
        shown = "; ".join(f"{path} -> {real}" for _, path, real in escaping[:5])
        raise BrainScoreError(f"the plugin folder {folder} holds symbolic links leading out of it ({shown}); nothing "
                              f"outside the folder is uploaded: copy the files in (`cp -L`) or remove the links")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in paths:
            if path.is_file():
                archive.write(path, Path(folder.name) / path.relative_to(folder))
    return buffer.getvalue()


def run(args) -> int:
    import httpx

    if not args.token:
        raise BrainScoreError("an API token is needed: create one on the website's account page and pass --token "
                              "or set BRAINSCORE_TOKEN")
    path = Path(args.path)
    if path.is_dir():
        data, name = zip_folder(path.resolve()), path.resolve().name + ".zip"
    elif path.is_file():
        data, name = path.read_bytes(), path.name
    else:
        raise BrainScoreError(f"{path} is neither a plugin folder nor a zip")
    headers = {"Authorization": f"Bearer {args.token}"}
    server = args.server.rstrip("/")
    with httpx.Client(timeout=120) as client:
        try:
            response = client.post(f"{server}/api/submissions", headers=headers, files={"file": (name, data)},
                                   data={"benchmarks": args.benchmarks, "public": str(not args.private).lower()})
        except httpx.TransportError as error:  # nothing listening, DNS, TLS, timeout
            raise BrainScoreError(f"could not reach {server} ({type(error).__name__}: {error}); is `brainscore serve` "
                                  f"running there, and is the address right?") from error
        body = response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
        if response.status_code == 400 and body.get("problems"):
            print("rejected:", file=sys.stderr)
            for problem in body["problems"]:
                print(f"  - {problem}", file=sys.stderr)
            return 1
        if response.status_code >= 400:
            raise BrainScoreError(f"the server answered {response.status_code}: {body.get('detail', response.text)}")
        print(f"submission {body['id']}: {body['status']} ({server}/submissions/{body['id']})", flush=True)
        if not args.wait:
            return 0
        body = follow(client, f"{server}/api/submissions/{body['id']}", headers, body, args.interval)
    if args.json:
        print(json.dumps({k: body.get(k) for k in ("id", "status", "results", "failure")}, indent=2))
    else:
        print(results_table(body))
    return 0 if body["status"] == "done" else 1


#: The states of a submission that is not finished.
WAITING = ("queued", "running", "preparing")


def follow(client, url: str, headers: dict, body: dict, interval: float = 2.0, stream=None) -> dict:
    """Poll the submission at ``url`` until it is no longer waiting; its final state (the API's JSON).

    While it waits, ``stream`` (default stderr; nothing with ``BRAINSCORE_PROGRESS=0``, what ``--quiet``
    sets) gets a line whenever its state or its place in the queue changes (``[14:02:11] queued: 3rd in the
    queue``, ``running: 2 of 23 pairs``) and the lines its log gained since the last poll, as they come.

    Raises
    ------
    BrainScoreError
        If the website stops answering (the message says how to look the submission up later).
    """
    import httpx

    from brainscore import progress

    stream = stream if stream is not None else sys.stderr
    shown = progress.enabled()
    last_state, log = None, ""
    while True:
        state = _state(body)
        if shown and state != last_state:
            print(f"[{time.strftime('%H:%M:%S')}] {state}", file=stream, flush=True)
        last_state = state
        new = body.get("log") or ""
        if shown and new != log:
            added = new[len(log):] if new.startswith(log) else new[-4000:]  # a log cut in the middle: its tail
            stream.write(added if added.endswith("\n") else added + "\n")
            stream.flush()
        log = new
        if body.get("status") not in WAITING:
            return body
        time.sleep(interval)
        try:
            response = client.get(url, headers=headers)
        except httpx.TransportError as error:
            raise BrainScoreError(f"lost the website while waiting ({type(error).__name__}: {error}); the submission "
                                  f"goes on there: follow it at {url.replace('/api/submissions/', '/submissions/')}"
                                  ) from None
        if response.status_code >= 400:
            raise BrainScoreError(f"the server answered {response.status_code} for {url}: {response.text[:300]}")
        body = response.json()


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _state(body: dict) -> str:
    """``queued: 3rd in the queue`` / ``running: 2 of 23 pairs`` / ``done: 23 of 23 pairs``."""
    status = body.get("status") or "?"
    if status == "queued" and body.get("place"):
        return f"queued: {_ordinal(int(body['place']))} in the queue"
    progress = body.get("progress") or {}
    if progress.get("total"):
        return f"{status}: {progress.get('current', 0)} of {progress['total']} pairs"
    return status


def results_table(body: dict) -> str:
    """The submission's scores as a table (model, benchmark, status, score or failure) and its final state."""
    from brainscore.cli.tables import box_table

    rows = []
    for key, result in sorted((body.get("results") or {}).items()):
        model, _, benchmark = key.partition("|")
        score = result.get("score")
        what = (f"{score:.4f}" if isinstance(score, (int, float)) else "") if result.get("status") == "done" else (
            (result.get("failure") or "")[:80])
        rows.append([model, benchmark, str(result.get("status")), what])
    lines = [f"submission {body.get('id')}: {_state(body)}"]
    if body.get("failure"):
        lines.append(f"failure: {body['failure']}")
    if rows:
        lines = box_table(["model", "benchmark", "status", "score"], rows) + lines
    return "\n".join(lines)
