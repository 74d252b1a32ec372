"""``brainscore reproduce RECORD_ID``: re-run a recorded score with its recorded settings and compare, bit for bit."""
from __future__ import annotations

import json
import os
import sys

from brainscore.cli import add_plugin_dir_argument


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "reproduce", help="re-run a recorded score and check that it gives the same bits",
        description="Re-run record RECORD_ID (the #N of `recorded as #N`; `brainscore records` lists them) with its "
                    "recorded model, benchmark and settings (device, bootstrap resamples and seed, the committed layer: "
                    "a layer chosen by selection or the rule is pinned as recorded), computing every step again "
                    "(the cache is bypassed unless --use-cache). Recorded data files are read again and hashed "
                    "first. Compares score, raw, ceiling, error and ci95 bit for bit and names the provenance items "
                    "that changed (data file hashes, package versions, code commit, weights hash, benchmark version, "
                    "layer, ...). Exit code 0: the same bits; 1: different (or the rerun failed); 2: bad input "
                    "(no such record, or the model, benchmark, device or data is not available here). The rerun is "
                    "not recorded unless --record.")
    parser.add_argument("record_id", type=int, metavar="RECORD_ID", help="the record's id, e.g. 12")
    parser.add_argument("--db", default=None, metavar="URL",
                        help="results database the record is read from (and --record writes to) (SQLAlchemy URL; default "
                             "$BRAINSCORE_DB_URL, else sqlite:///$BRAINSCORE_HOME/results.sqlite)")
    parser.add_argument("--server", default=None, metavar="URL",
                        help="read the record from this brainscore website (GET /api/scores/RECORD_ID) instead of "
                             "a results database, e.g. http://127.0.0.1:8000")
    parser.add_argument("--token", default=os.environ.get("BRAINSCORE_TOKEN"),
                        help="with --server: API token for a private model's score (default $BRAINSCORE_TOKEN)")
    parser.add_argument("--device", default=None,
                        help="re-run on this torch device instead of the recorded one (listed as a changed item)")
    parser.add_argument("--use-cache", action="store_true",
                        help="reuse cached activations, ceilings and layer selections (each entry verified against "
                             "its checksum on read) instead of computing them again")
    parser.add_argument("--record", action="store_true",
                        help="record the rerun as a new score (its provenance names the record it reproduces)")
    parser.add_argument("--json", action="store_true", help="print one JSON object (values with float.hex)")
    add_plugin_dir_argument(parser)
    parser.set_defaults(func=run)


def run(args) -> int:
    from brainscore.runner.reproduce import reproduce

    if args.record_id < 1:
        raise SystemExit(f"error: RECORD_ID is a record's id (1, 2, ...), got {args.record_id}; "
                         f"`brainscore records` lists them")
    result = reproduce(args.record_id, args.db, server=args.server, token=args.token, device=args.device,
                       use_cache=args.use_cache, record=args.record)
    if args.json:
        print(json.dumps(result.to_json(), default=str))
    else:
        print(result.text())
    sys.stdout.flush()
    return 0 if result.matches else 1
