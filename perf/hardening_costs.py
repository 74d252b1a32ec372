"""What the issue-32 hardening adds to work that runs often, side by side in one run (ratios survive load).

- Opening an existing SQLite results database (``Database(url)``, every ``brainscore score`` and every scoring
  task): with the check that the file is SQLite and brainscore's (``prepare_sqlite_file``: one read-only
  connection) against the same open without it.
- Reading a model card's ``metadata.yml`` (a model page, the leaderboard's metadata filters): the bounded
  parse (``web.plugin_metadata.parse``: PyYAML's safe loader counting aliases and nesting, then the expanded
  size) against ``yaml.safe_load`` of the same text, on the built-in plugins' files.

Medians of ``--repeats`` rounds, the two variants interleaved in ABBA order.

    python perf/hardening_costs.py [--repeats 200]
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import yaml

import brainscore.plugins.models as builtin_models
from brainscore.results import Database
from brainscore.results import database
from brainscore.web import plugin_metadata


def _time(function) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def _interleaved(first, second, repeats: int) -> tuple[float, float]:
    a, b = [], []
    first(), second()  # warm-up
    for round_ in range(repeats):  # ABBA: neither variant always runs first
        if round_ % 2:
            b.append(_time(second))
            a.append(_time(first))
        else:
            a.append(_time(first))
            b.append(_time(second))
    return statistics.median(a), statistics.median(b)


def database_open(repeats: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/results.sqlite"
        Database(url).close()
        checked = database.prepare_sqlite_file

        def with_check():
            database.prepare_sqlite_file = checked
            Database(url).close()

        def without_check():
            database.prepare_sqlite_file = lambda path, make_folder: None
            Database(url).close()

        try:
            return _interleaved(with_check, without_check, repeats)
        finally:
            database.prepare_sqlite_file = checked


def metadata_parse(repeats: int) -> tuple[float, float, int]:
    texts = [p.read_text() for root in builtin_models.__path__ for p in sorted(Path(root).glob("*/metadata.yml"))]
    if not texts:  # no built-in card: a reference-shaped one
        texts = ["models:\n  my-net:\n    architecture: DCNN\n    model_family: resnet\n"
                 "    total_parameter_count: 11689512\n    training_dataset: imagenet\n"]
    bounded = lambda: [plugin_metadata.parse(t) for t in texts]  # noqa: E731
    plain = lambda: [yaml.safe_load(t) for t in texts]  # noqa: E731
    return (*_interleaved(bounded, plain, repeats), len(texts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())} (cores: {os.cpu_count()})")
    with_check, without = database_open(args.repeats)
    print(f"Database(url) of an existing SQLite file: {with_check * 1e3:.2f} ms with the file check, "
          f"{without * 1e3:.2f} ms without: ratio {with_check / without:.3f}")
    bounded, plain, files = metadata_parse(args.repeats)
    print(f"metadata.yml ({files} file(s)): bounded parse {bounded * 1e3:.3f} ms, yaml.safe_load {plain * 1e3:.3f} ms:"
          f" ratio {bounded / plain:.3f}")


if __name__ == "__main__":
    main()
