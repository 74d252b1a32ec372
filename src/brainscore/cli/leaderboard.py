"""``brainscore leaderboard``: recorded scores aggregated through the leaderboard tree."""
from __future__ import annotations

import json
import math


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "leaderboard", help="the leaderboard of the recorded scores",
        description="Models as rows (sorted by average_vision), the leaderboard tree as columns: every parent is the "
                    "unweighted mean of its children, a missing, NaN or failed child counting 0; '(k)' after an "
                    "aggregate is the number of its benchmarks without a score. A table too wide for the terminal "
                    "shows the tree as rows and the models as columns. Scores come from the results database "
                    "(`brainscore score` records them).")
    parser.add_argument("--benchmarks", default=None, metavar="PATTERN",
                        help="only benchmarks matching this shell-style pattern (e.g. 'Geirhos*')")
    parser.add_argument("--format", choices=("table", "csv", "json", "markdown"), default="table",
                        help="table (terminal; the aggregates, benchmarks too with --all or --benchmarks), csv, json "
                             "(one object per model: scores and missing-benchmark counts of every node) or markdown")
    parser.add_argument("--all", action="store_true", help="table: show every benchmark too")
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


def run(args) -> int:
    from brainscore.leaderboard.aggregate import leaderboard, leaderboard_records, registered_tree
    from brainscore.results import Database

    db = Database(args.db)
    if args.format == "json":
        print(json.dumps(leaderboard_records(db, args.benchmarks), indent=1))
        return 0
    if args.format == "csv":
        print(leaderboard(db, args.benchmarks).to_csv(), end="")
        return 0
    tree = registered_tree(args.benchmarks)
    records = leaderboard_records(db, args.benchmarks, tree=tree)
    nodes = tree.order()
    if args.format == "table" and not (args.all or args.benchmarks):
        nodes = [n for n in nodes if n not in tree.leaves]   # the aggregates fit a terminal; --all adds benchmarks
    rows = [[r["model"]] + [_cell(r["scores"][n], None if n in tree.leaves else r["missing"][n]) for n in nodes]
            for r in records]
    if args.format == "markdown":
        print("| model | " + " | ".join(nodes) + " |")
        print("|---|" + "---:|" * len(nodes))
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console()
    caption = f"{_where(db)}; (k): benchmarks without a score, counted as 0"
    table = Table(caption=caption, caption_justify="left")
    widths = [max(len(node), 12) + 3 for node in nodes]
    longest = max((len(r["model"]) for r in records), default=5)
    if not console.is_terminal:  # piped or redirected: as wide as the table, never cut
        console = Console(width=max(console.width, longest + sum(widths) + 4))
    if longest + sum(widths) + 4 <= console.width:
        table.add_column("model", no_wrap=True, min_width=longest)
        for node in nodes:
            table.add_column(node, justify="right")
        for row in rows:
            table.add_row(*row)
    else:  # too wide for the terminal: the tree as rows (indented by depth), one column per model
        table.add_column("node", no_wrap=True)
        for record in records:
            table.add_column(record["model"], justify="right", overflow="fold")  # a long name wraps, never cut
        for position, node in enumerate(nodes):
            depth, parent = 0, tree.parents.get(node)
            while parent is not None:
                depth, parent = depth + 1, tree.parents.get(parent)
            table.add_row("  " * depth + node, *[row[position + 1] for row in rows])
    console.print(table)
    if not records:
        print("no scores recorded yet: `brainscore score --model M --benchmark B` records one")
    return 0
