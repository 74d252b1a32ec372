"""Construction of the Hermann2020 benchmarks (settings in ``__init__``)."""
from __future__ import annotations

from brainscore.registry import load_metric, load_stimulus_set
from brainscore.benchmarks.behavioral import ShapeBiasBenchmark

from . import BIBTEX

VERSION = 1


def hermann2020(metric: str) -> ShapeBiasBenchmark:
    """``Hermann2020cueconflict-<metric>`` for ``metric`` in shape_bias, shape_match, texture_match."""
    return ShapeBiasBenchmark(identifier=f"Hermann2020cueconflict-{metric}", version=VERSION,
                              stimulus_set=lambda: load_stimulus_set("Geirhos2019.cue-conflict"), metric=load_metric(metric),
                              visual_degrees=None, number_of_trials=1, parent="behavior_vision", bibtex=BIBTEX)
