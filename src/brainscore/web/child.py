"""The scoring child process of a submission: ``python -m brainscore.web.child``.

Run by :mod:`brainscore.web.queue` in its own process (own working directory, memory and CPU-time
limits, no network), never inside the web server. It scores one model on one benchmark, records
the score in the results database and prints one JSON line (``{"event": "done", ...}``); anything
else it prints, warnings and tracebacks included, is the submission's log. A failure exits non-zero
with the traceback in the log; the server records it.
"""
from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    """Score, record, print the JSON summary; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m brainscore.web.child")
    parser.add_argument("--model", required=True)
    parser.add_argument("--benchmark", required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--submission", type=int, default=None)
    args = parser.parse_args(argv)

    from brainscore import api
    from brainscore.results import record
    from brainscore.scoring.outcome import Outcome

    print(json.dumps({"event": "running", "model": args.model, "benchmark": args.benchmark}), flush=True)
    outcome = Outcome.from_score(api.score(args.model, args.benchmark), args.model, args.benchmark)
    record(outcome, args.db, submission_id=args.submission)
    print(json.dumps({"event": "done", **outcome.summary()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
