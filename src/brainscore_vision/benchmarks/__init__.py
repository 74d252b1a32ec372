"""The reference's ``brainscore_vision.benchmarks``: ``Benchmark``, ``BenchmarkBase``, ``ceil_score``, ``bound_score``,
from :mod:`brainscore_core.benchmarks` (see there and docs/coming_from_brain_score.md, "The mapping, name by name").
"""
from __future__ import annotations

from brainscore_core.benchmarks import Benchmark, CeilingFunctionBenchmarkBase, as_score, bound_score, ceil_score

__all__ = ["Benchmark", "BenchmarkBase", "ceil_score", "bound_score", "as_score"]


class BenchmarkBase(CeilingFunctionBenchmarkBase):
    """The reference's ``BenchmarkBase`` (:class:`~brainscore_core.benchmarks.CeilingFunctionBenchmarkBase`):
    identifier, version, ceiling function, parent and bibtex; see there for the parameters and the ceiling's
    caching."""

    def load_data(self) -> bool:
        """Load the stimuli and data (:meth:`brainscore.benchmarks.base.Benchmark.load_data`), the reference's way too:
        its benchmarks keep them in :class:`~brainscore_vision.utils.LazyLoad` attributes (``self._assembly =
        LazyLoad(...)``), loaded at the first score; each is loaded here."""
        from brainscore_vision.utils import LazyLoad

        loaded = super().load_data()
        for value in list(vars(self).values()):
            if type(value) is LazyLoad:  # not isinstance: a LazyLoad answers it for its content, loading it
                value.content  # noqa: B018 - loads it (and raises what loading raises)
                loaded = True
        return loaded

