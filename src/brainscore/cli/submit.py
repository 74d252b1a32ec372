"""``brainscore submit PLUGIN_OR_ZIP --server URL``: upload a model plugin to a brainscore website."""
from __future__ import annotations

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
                                               "`brainscore serve`, print its status and, with --wait, follow it.")
    parser.add_argument("path", help="the plugin folder (with __init__.py) or a zip of it")
    parser.add_argument("--server", required=True, help="the website, e.g. http://127.0.0.1:8000")
    parser.add_argument("--token", default=os.environ.get("BRAINSCORE_TOKEN"),
                        help="API token from your account page (default $BRAINSCORE_TOKEN)")
    parser.add_argument("--benchmarks", default="", help="comma-separated benchmarks (default: all leaderboard benchmarks, as the website's "
                             "GET /api/benchmarks lists them; a typo is refused with the closest names)")
    parser.add_argument("--private", action="store_true", help="only you see the model and its scores")
    parser.add_argument("--wait", action="store_true", help="follow the status until done or failed")
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
        print(f"submission {body['id']}: {body['status']} ({server}/submissions/{body['id']})")
        while args.wait and body["status"] in ("queued", "running", "preparing"):
            time.sleep(2)
            body = client.get(f"{server}/api/submissions/{body['id']}", headers=headers).json()
        if args.wait:
            print(json.dumps({k: body.get(k) for k in ("id", "status", "results", "failure")}, indent=2))
            return 0 if body["status"] == "done" else 1
    return 0
