"""Bytes of the leaderboard's HTML per 100 rows, uncompressed: the size a phone downloads before gzip and parses after.

A site filled by :func:`web_load.fill` (``--models`` models x every benchmark, ``--users`` owners; realistic records)
is served in-process and its first page (100 rows) fetched with ``Accept-Encoding: identity``. Issue 36 measured
834-907 kB per 100 rows before each score cell stopped repeating its column's ancestors and a long title.

    python perf/leaderboard_html.py --models 120
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import web_load  # noqa: E402  (this folder's load fixture)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=120, help="models on the board (default 120)")
    parser.add_argument("--users", type=int, default=3, help="accounts owning the models (default 3)")
    args = parser.parse_args(argv)
    from fastapi.testclient import TestClient

    from brainscore.web import create_app

    folder = Path(tempfile.mkdtemp(prefix="leaderboard-html-"))
    url = f"sqlite:///{folder / 'results.sqlite'}"
    (folder / "home").mkdir()
    web_load.fill(url, args.models, args.users, folder / "home")
    page = TestClient(create_app(db_url=url, root=folder / "submissions", start_worker=False)).get(
        "/", headers={"Accept-Encoding": "identity"})
    rows = page.text.count("<tr data-model=")
    print(f"{len(page.content)} bytes for {rows} rows: {len(page.content) * 100 / rows / 1000:.0f} kB per 100 rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
