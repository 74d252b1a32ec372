"""``brainscore_core.benchmarks``: the reference core's ``Benchmark``, ``BenchmarkBase`` and ``ceil_score``.

``BenchmarkBase(identifier, ceiling, version, parent, bibtex=None)`` takes the ceiling itself (a Score or a
number), where ``brainscore_vision.benchmarks.BenchmarkBase`` takes a function computing it; it is that class
with ``ceiling_func=lambda: ceiling``, so a benchmark written against either scores through the same code.
"""
from __future__ import annotations

from typing import Any

from brainscore_vision.benchmarks import Benchmark, ceil_score
from brainscore_vision.benchmarks import BenchmarkBase as _VisionBenchmarkBase

__all__ = ["Benchmark", "BenchmarkBase", "ceil_score"]


class BenchmarkBase(_VisionBenchmarkBase):
    """The reference core's ``BenchmarkBase``: a fixed ``ceiling`` (Score or number) instead of a ceiling function.

    Parameters
    ----------
    identifier : str
    ceiling : Score or number
        E.g. ``Score(1)`` for a benchmark whose scores are not normalised.
    version : int
    parent : str
        Leaderboard node.
    bibtex : str, optional
    """

    def __init__(self, identifier: str, ceiling: Any, version: Any, parent: str, bibtex: str | None = None,
                 **kwargs: Any):
        super().__init__(identifier=identifier, ceiling_func=lambda: ceiling, version=version, parent=parent,
                         bibtex=bibtex or "", **kwargs)
