"""``brainscore records``: the recorded scores with their ids (what ``brainscore reproduce RECORD_ID`` takes)."""
from __future__ import annotations

import json


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("records", help="list recorded scores and failures with their record ids",
                                   description="One line per record of the results database, oldest first: id, "
                                               "model, benchmark and version, score (or 'failed'), when. "
                                               "`brainscore reproduce ID` re-runs one.")
    parser.add_argument("--model", default=None, help="only this model's records")
    parser.add_argument("--benchmark", default=None, help="only this benchmark's records")
    parser.add_argument("--db", default=None, metavar="URL",
                        help="results database (default $BRAINSCORE_DB_URL, else sqlite:///$BRAINSCORE_HOME/results.sqlite)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.set_defaults(func=run)


def run(args) -> int:
    from brainscore.models.weights import weights_label, weights_status
    from brainscore.results import Database

    with Database(args.db) as db:
        records = db.scores(args.model, args.benchmark, include_failed=True)
    for r in records:
        when = r.end.strftime("%Y-%m-%d %H:%M") if r.end is not None else "-"
        if args.json:
            print(json.dumps({"id": r.id, "model": r.model, "benchmark": r.benchmark,
                              "benchmark_version": r.benchmark_version, "status": r.status, "score": r.score,
                              "end": r.end.isoformat() if r.end is not None else None,
                              **({"weights": weights_status(r.provenance)} if weights_status(r.provenance) else {})}))
            continue
        value = f"{r.score:.4f}" if r.status == "done" and r.score is not None else r.status
        label = weights_label(r.provenance)
        value += f" [{label}]" if label else ""
        print(f"#{r.id}\t{r.model}\t{r.benchmark} v{r.benchmark_version}\t{value}\t{when}")
    if not records and not args.json:
        print("no records: `brainscore score --model M --benchmark B` records one")
    return 0
