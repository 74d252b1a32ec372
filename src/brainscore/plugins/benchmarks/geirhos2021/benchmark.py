"""Construction of the Geirhos2021 benchmarks (settings in ``__init__``)."""
from __future__ import annotations

from brainscore.registry import load_ceiling, load_dataset, load_metric, load_stimulus_set
from brainscore.benchmarks.behavioral import AccuracyBenchmark, ErrorConsistencyBenchmark

from . import BIBTEX

VERSION = 1
VISUAL_DEGREES = 3.0
DATASETS = ("cue-conflict", "edge", "silhouette")


def _check(dataset: str) -> str:
    if dataset not in DATASETS:
        raise ValueError(f"unknown Geirhos2021 dataset {dataset!r}; expected one of {DATASETS}")
    return dataset.replace("-", "")


def error_consistency(dataset: str) -> ErrorConsistencyBenchmark:
    """``Geirhos2021<dataset>-error_consistency``: 3 degrees, 1 trial, ceiling over human subject pairs."""
    name = _check(dataset)
    return ErrorConsistencyBenchmark(identifier=f"Geirhos2021{name}-error_consistency", version=VERSION,
                                     assembly=lambda: load_dataset(f"Geirhos2019.{dataset}"),
                                     visual_degrees=VISUAL_DEGREES, metric=load_metric("error_consistency"),
                                     ceiling=load_ceiling("error_consistency"), number_of_trials=1, parent="Geirhos2021",
                                     bibtex=BIBTEX)


def top1(dataset: str) -> AccuracyBenchmark:
    """``Geirhos2021<dataset>-top1``: 3 degrees, 10 trials, ceiling 1."""
    name = _check(dataset)
    return AccuracyBenchmark(identifier=f"Geirhos2021{name}-top1", version=VERSION,
                             stimulus_set=lambda: load_stimulus_set(f"Geirhos2019.{dataset}"),
                             visual_degrees=VISUAL_DEGREES, metric=load_metric("accuracy"), number_of_trials=10,
                             parent="Geirhos2021-top1",
                             bibtex=BIBTEX)
