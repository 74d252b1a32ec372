"""``brainscore leaderboard``: recorded scores aggregated through the leaderboard tree.

The standings are the website's (:class:`~brainscore.leaderboard.aggregate.Standings`), kept on disk between
commands and brought up to date with the rows recorded since (:mod:`brainscore.leaderboard.snapshot`).

Two shapes of table (``--format table``), whatever the output is:

- a few models (their columns fit the width: the terminal's, or :data:`PIPE_WIDTH` characters when the
  output is a file or a pipe): the tree as rows, indented by depth, one column per model, best first;
- more models: one row per model, ranked (``#``), the tree's nodes as columns; on a terminal the first
  ``--top`` rows (default 25, 0: all) and the columns that fit, everything in a file or pipe.

Below it: :data:`CAPTION` and the database the scores come from.
"""
from __future__ import annotations

import json
import math

#: The width the table is laid out for when the output is no terminal (a file, a pipe).
PIPE_WIDTH = 120
#: Rows a terminal shows by default when models are rows.
TOP = 25
CAPTION = "(k): benchmarks without a score, counted as 0"


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "leaderboard", help="the leaderboard of the recorded scores",
        description="The recorded scores aggregated through the leaderboard tree: every parent is the unweighted "
                    "mean of its children, a missing, NaN or failed child counting 0; '(k)' after an aggregate is "
                    "the number of its benchmarks without a score. A few models: the tree as rows and one column "
                    "per model; more: one ranked row per model (a terminal shows the first --top). Scores come from "
                    "the results database (`brainscore score` and `brainscore run` record them).")
    parser.add_argument("--benchmarks", default=None, metavar="PATTERN",
                        help="only benchmarks matching this shell-style pattern (e.g. 'Geirhos*')")
    parser.add_argument("--format", choices=("table", "csv", "json", "markdown"), default="table",
                        help="table (the aggregates, benchmarks too with --all or --benchmarks), csv (every node, "
                             "and the missing count of every aggregate), json (one object per model: scores and "
                             "missing-benchmark counts of every node) or markdown")
    parser.add_argument("--all", action="store_true", help="table: show every benchmark too")
    parser.add_argument("--top", type=int, default=None, metavar="N",
                        help=f"table with one row per model, on a terminal: the first N (default {TOP}; 0: all)")
    parser.add_argument("--db", default=None, metavar="URL",
                        help="results database (default $BRAINSCORE_DB_URL, else sqlite:///$BRAINSCORE_HOME/results.sqlite)")
    parser.set_defaults(func=run)


def _cell(value, missing: int | None = None) -> str:
    text = "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.4f}"
    return f"{text} ({missing})" if missing else text


def _where(db) -> str:
    """The results database as its URL, a password hidden (``postgresql://user:***@host/db``)."""
    from sqlalchemy.engine import make_url

    url = getattr(db, "url", None)
    return make_url(str(url)).render_as_string(hide_password=True) if url else "results database"


def _csv(records: list[dict], tree) -> str:
    """One row per model: every node's value (empty where missing), then every aggregate's missing count."""
    import csv
    import io

    from brainscore.leaderboard.csv_cells import safe_row

    order = tree.order()
    inner = [node for node in order if node not in tree.leaves]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(safe_row(["model", *order, *(f"{node} missing" for node in inner)]))
    for entry in records:  # no cell a spreadsheet would run as a formula (issue 36); numbers stay numbers
        writer.writerow(safe_row([entry["model"], *("" if entry["scores"][n] is None else repr(float(entry["scores"][n]))
                                                    for n in order), *(entry["missing"][n] for n in inner)]))
    return out.getvalue()


def run(args) -> int:
    from brainscore.leaderboard.aggregate import registered_tree
    from brainscore.leaderboard.snapshot import standings
    from brainscore.results import Database

    db = Database(args.db)
    tree = registered_tree(args.benchmarks)
    records = standings(db, args.benchmarks, tree=tree).records
    if args.format == "json":
        print(json.dumps(records, indent=1))
        return 0
    if args.format == "csv":
        print(_csv(records, tree), end="")
        return 0
    nodes = tree.order()
    if not (args.all or args.benchmarks):
        nodes = [n for n in nodes if n not in tree.leaves]   # the aggregates fit a terminal; --all adds benchmarks
    rows = [[r["model"]] + [_cell(r["scores"][n], None if n in tree.leaves else r["missing"][n]) for n in nodes]
            for r in records]
    if args.format == "markdown":
        print("| model | " + " | ".join(nodes) + " |")
        print("|---|" + "---:|" * len(nodes))
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return 0
    if not records:
        print(f"no scores recorded yet in {_where(db)}: `brainscore score --model M --benchmark B` records one")
        return 0
    print_table(tree, nodes, records, rows, args.top)
    print(f"scores from {_where(db)}")
    return 0


def print_table(tree, nodes: list[str], records: list[dict], rows: list[list[str]], top: int | None) -> None:
    """The table on stdout, in the shape the module docstring describes (drawn as rich draws its tables, with its
    heavy header box; :func:`brainscore.cli.tables.box_table` draws it, since rich took seconds to lay out 704 rows)."""
    import shutil
    import sys

    from brainscore.cli.tables import box_table, cell_width as _width

    terminal = sys.stdout.isatty()
    width = shutil.get_terminal_size((PIPE_WIDTH, 24)).columns if terminal else PIPE_WIDTH
    depth = {}
    for node in nodes:
        level, parent = 0, tree.parents.get(node)
        while parent is not None:
            level, parent = level + 1, tree.parents.get(parent)
        depth[node] = level
    transposed = [["  " * depth[node] + node, *(row[position + 1] for row in rows)]
                  for position, node in enumerate(nodes)]
    few = box_table(["node", *(r["model"] for r in records)], transposed, right=range(1, len(records) + 1))
    if max(map(_width, few)) <= width:  # a few models: the tree as rows
        print("\n".join(few + [CAPTION]))
        return
    shown = len(rows) if not terminal or top == 0 else min(len(rows), TOP if top is None else max(top, 0))
    ranked = [[str(rank), *row] for rank, row in enumerate(rows[:shown], start=1)]
    header = ["#", "model", *nodes]
    kept = len(header)
    lines = box_table(header, ranked, right=[0, *range(2, kept)])
    while terminal and kept > 3 and max(map(_width, lines)) > width:  # a terminal shows the columns that fit
        kept -= 1
        lines = box_table(header[:kept], [row[:kept] for row in ranked], right=[0, *range(2, kept)])
    notes = [CAPTION]
    if shown < len(records) or kept < len(header):
        hidden = len(header) - kept
        notes.append(f"{shown} of {len(records)} models" + (f", {hidden} more columns ({', '.join(header[kept:][:3])}"
                                                            f"{', ...' if hidden > 3 else ''})" if hidden else "")
                     + "; --top 0 shows every model, --format csv|json|markdown writes everything")
    print("\n".join(lines + notes))
