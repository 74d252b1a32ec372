"""``Benchmark``, ``BenchmarkBase`` and ``ceil_score``: the reference's benchmark base, on ``brainscore``'s.

``BenchmarkBase(identifier=..., version=..., ceiling_func=..., parent=..., bibtex=...)`` is
:class:`brainscore_core.benchmarks.CeilingFunctionBenchmarkBase` under the reference's name (vision builds on core,
as in the reference): :class:`brainscore.benchmarks.base.BenchmarkBase` taking the reference's keywords (``version``
1, ``parent`` and ``bibtex`` empty when left out); subclasses implement ``__call__(candidate) -> Score``.
``ceiling_func`` takes no argument (the reference's convention) and may return a plain number (``lambda: 1``), which
becomes a :class:`~brainscore.metrics.score.Score`. The ceiling is computed once and cached on disk by content
(identifier, version, the ceiling function's code), as ``brainscore``'s benchmarks are.

``ceil_score(score, ceiling)`` is :func:`brainscore.metrics.normalisation.ceil_score`
(``score / ceiling``, with ``raw``, ``ceiling`` and a propagated ``error`` in ``attrs``);
``bound_score(score)`` is :func:`brainscore.metrics.normalisation.bound_score` (clipped to [0, 1];
unlike the reference, a new Score is returned and the input is left unchanged).
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

