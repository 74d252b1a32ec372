"""The scoring child process of a submission: ``python -m brainscore.web.child``.

Run by :mod:`brainscore.web.queue` under :mod:`brainscore.web.sandbox` (own file system and working
directory, limits, no network), never inside the web server. It scores one model on one benchmark and
prints one JSON line (``{"event": "done", ..., "outcome": {...}}``, the outcome as
:meth:`~brainscore.scoring.outcome.Outcome.to_json` writes it); it has no access to the results
database: the queue records the outcome if it is for the model and benchmark it was run for. Anything
else it prints, warnings and tracebacks included, is the submission's log. A failure exits non-zero
with the traceback in the log; the server records it.
"""
from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    """Score, print the outcome as one JSON line; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m brainscore.web.child")
    parser.add_argument("--model", required=True)
    parser.add_argument("--benchmark", required=True)
    args = parser.parse_args(argv)

    from brainscore import api
    from brainscore.scoring.outcome import Outcome

    print(json.dumps({"event": "running", "model": args.model, "benchmark": args.benchmark}), flush=True)
    outcome = Outcome.from_score(api.score(args.model, args.benchmark), args.model, args.benchmark)
    print(json.dumps({"event": "done", **outcome.summary(), "outcome": outcome.to_json()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
