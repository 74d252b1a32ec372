"""Rendering cost of the leaderboard's score cells and page (issue 23: colour classes instead of inline styles).

Usage::

    PYTHONPATH=src python perf/score_cells.py              # this checkout
    PYTHONPATH=../main/src python perf/score_cells.py      # another one, for a before/after on the same machine

Times :func:`brainscore.web.site.score_cells` on 100 rows x every leaderboard column (20 % of the scores
missing, four columns folded; best of 30) and ``GET /`` through the TestClient over a temporary database of
300 models x 12 benchmarks, each request with another sort, page and query so that the page cache does not
answer it (median and min of 20). Prints milliseconds and the load average (a loaded machine inflates medians).
"""
from __future__ import annotations

import os
import random
import statistics
import tempfile
import time
from pathlib import Path


def main() -> None:
    from fastapi.testclient import TestClient

    from brainscore.leaderboard import tree
    from brainscore.metrics.score import Score
    from brainscore.results.records import record
    from brainscore.scoring.outcome import Outcome
    from brainscore.web import create_app, views
    from brainscore.web.site import score_cells

    rng = random.Random(0)
    cols = views.columns()
    for c in cols[5:9]:
        c["hidden"], c["hidden_by"] = True, 1
    rows = [{"model": f"m{i}", "scores": {c["node"]: None if rng.random() < .2 else rng.random() for c in cols},
             "missing": {}, "rule": {}} for i in range(100)]
    cells = []
    for _ in range(30):
        start = time.perf_counter()
        for row in rows:
            score_cells(row, cols)
        cells.append(time.perf_counter() - start)
    print(f"score_cells, 100 rows x {len(cols)} columns: best {min(cells) * 1e3:.1f} ms of 30")

    folder = Path(tempfile.mkdtemp())
    os.environ.setdefault("BRAINSCORE_HOME", str(folder / "home"))
    app = create_app(db_url=f"sqlite:///{folder / 'results.sqlite'}", root=folder / "sub", start_worker=False)
    benchmarks = list(tree.benchmark_parents())[:12]
    for i in range(300):
        for benchmark in benchmarks:
            value = rng.random()
            record(Outcome.from_score(Score.of(value, raw=value * .8, ceiling=.8, model_identifier=f"model-{i:03d}",
                                               benchmark_identifier=benchmark)), app.state.store)
    client = TestClient(app)
    client.get("/")
    pages = []
    for k in range(20):
        start = time.perf_counter()
        response = client.get(f"/?sort={benchmarks[k % len(benchmarks)]}&page={1 + k % 3}&x={k}")
        pages.append(time.perf_counter() - start)
        assert response.status_code == 200, response.text[:300]
    print(f"GET / (300 models x 12 benchmarks, uncached): median {statistics.median(pages) * 1e3:.1f} ms, "
          f"min {min(pages) * 1e3:.1f} ms; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
