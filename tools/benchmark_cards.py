"""Count each shipped benchmark's data (stimuli, neuroids, repetitions, subjects, trials, RDMs) and write the
counts into its plugin's ``card_counts.json``, which the website's benchmark cards show (issue 25).

Run from the project root with the data mirror set::

    BRAINSCORE_DATA_MIRROR=../shared/data PYTHONPATH=src python tools/benchmark_cards.py

The counts come from the loaded data (:func:`brainscore.benchmarks.card.data_counts`);
``tests/benchmarks/test_cards.py`` counts again and compares.
"""
from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

from brainscore import registry
from brainscore.benchmarks.card import data_counts
from brainscore.leaderboard import tree


def main() -> int:
    by_plugin: dict[Path, dict] = {}
    for identifier in sorted(tree.benchmark_parents(include_selection=True)):
        module = importlib.import_module(registry.benchmarks.factory(identifier).__module__)
        folder = Path(module.__file__).parent
        counts = data_counts(registry.load_benchmark(identifier))
        by_plugin.setdefault(folder, {})[identifier] = counts
        print(identifier, counts, flush=True)
    for folder, counts in by_plugin.items():
        (folder / "card_counts.json").write_text(json.dumps(counts, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
