"""The scoring child process of a submission: ``python -m brainscore.web.child``.

Run by :mod:`brainscore.web.queue` under :mod:`brainscore.web.sandbox` (own file system and working
directory, limits, no network), never inside the web server. It scores one model on one benchmark and
prints one JSON line (``{"event": "done", ..., "outcome": {...}}``, the outcome as
:meth:`~brainscore.scoring.outcome.Outcome.to_json` writes it); it has no access to the results
database: the queue records the outcome if it is for the model and benchmark it was run for. Anything
else it prints, warnings and tracebacks included, is the submission's log. A failure exits non-zero
with the traceback in the log; the server records it.

A failure brainscore raises on purpose (a plugin that does not import, a file this server does not have)
ends the log with one line, which the server quotes as the failure: it says whether the cause is the
server's installation (then not the submitter's fault) or the submission's code, and it names the
submission's files relative to its folder and the server's by nothing more than ``<server>`` (no server
paths are shown to a submitter, in that line or in the traceback above it).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import traceback
from pathlib import Path

_PATH = re.compile(r"(?<![\w.~-])/(?:[\w.@+~-]+/)*[\w.@+~-]+/?")


def redact(text: str, own: list[Path] | None = None) -> str:
    """``text`` with absolute paths shortened: a path inside one of ``own`` (the submission's folders) relative to
    it, any other as ``<server>/<file name>`` (a submitter never learns the server's layout)."""
    own = [Path(p) for p in (own or [])]

    def shorten(match: re.Match) -> str:
        path = Path(match.group(0))
        for folder in own:
            try:
                relative = path.relative_to(folder)
            except ValueError:
                continue
            return str(relative) if str(relative) != "." else "<your submission>"
        return f"<server>/{path.name}" if path.name else "<server>"

    return _PATH.sub(shorten, text)


def _submission_folders() -> list[Path]:
    """The submission's own folders: the plugin folders the queue passed (its site's first) and the site itself."""
    folders = [Path(p) for p in os.environ.get("BRAINSCORE_PLUGIN_DIRS", "").split(os.pathsep) if p]
    site = os.environ.get("PYTHONPATH", "").split(os.pathsep)[0]
    return [f for f in folders[:1] + ([Path(site)] if site else []) if str(f)]


def failure_line(error: BaseException) -> str:
    """The one line quoted as a submission's failure for an error brainscore raised on purpose."""
    from brainscore.errors import DataNotFoundError, HashMismatchError, NetworkError

    failure = getattr(error, "failure", None)  # a PluginImportError: ImportFailure says whose fault it is
    if failure is not None:
        folder = getattr(error, "folder", None)
        plugin = f"the submission's plugin {folder.parent.name}/{folder.name}" if folder is not None else "the plugin"
        if failure.environment:
            return (f"this server's installation could not import {plugin} (not a fault of the submission): "
                    f"{failure.summary}" + (f" (raised in {failure.where})" if failure.where else ""))
        return failure.message(plugin)
    if isinstance(error, (DataNotFoundError, HashMismatchError, NetworkError)):
        return f"this server does not have a file the submission needs (not a fault of its code): {error}"
    return f"{type(error).__name__}: {error}"


def main(argv: list[str] | None = None) -> int:
    """Score, print the outcome as one JSON line; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m brainscore.web.child")
    parser.add_argument("--model", required=True)
    parser.add_argument("--benchmark", required=True)
    args = parser.parse_args(argv)

    from brainscore import api
    from brainscore.errors import BrainScoreError
    from brainscore.scoring.outcome import Outcome

    print(json.dumps({"event": "running", "model": args.model, "benchmark": args.benchmark}), flush=True)
    try:
        score = api.score(args.model, args.benchmark)
    except BrainScoreError as error:
        own = _submission_folders()
        print(redact("".join(traceback.format_exception(error)), own), file=sys.stderr, flush=True)
        print(" ".join(redact(failure_line(error), own).split()), flush=True)
        return 1
    outcome = Outcome.from_score(score, args.model, args.benchmark)
    print(json.dumps({"event": "done", **outcome.summary(), "outcome": outcome.to_json()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
