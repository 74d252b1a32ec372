"""What a benchmark is: an experiment on a model, a metric, and the data's ceiling."""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Callable

from brainscore.caching import Cache, content_key
from brainscore.metrics.score import Score
from brainscore.models.interface import BrainModel
from brainscore.progress import stage


class Benchmark(ABC):
    """An experiment run on a :class:`~brainscore.models.BrainModel` that returns a :class:`Score`.

    Attributes
    ----------
    identifier : str
        ``AuthorYear[.session].region-metric``, e.g. ``"Cowley2026.210325.V4-pls"``.
    version : int
        Bumped whenever the score a model gets could change.
    ceiling : Score
        How well the data agree with themselves; the best score a model could expect.
    parent : str
        Node of the leaderboard tree this benchmark sits under (``V1``, ``V2``, ``V4``, ``IT``,
        ``behavior``, ``engineering``, or a family node).
    bibtex : str
        Reference to the data's paper.
    """

    identifier: str
    version: int
    parent: str
    bibtex: str

    @property
    @abstractmethod
    def ceiling(self) -> Score:
        """The ceiling of this benchmark's data."""

    @abstractmethod
    def __call__(self, candidate: BrainModel) -> Score:
        """Run the experiment on ``candidate`` and return its (ceiled) score."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.identifier} v{self.version}>"


class BenchmarkBase(Benchmark):
    """Common state of benchmarks: identifier, version, parent, bibtex, and a cached ceiling.

    Parameters
    ----------
    identifier : str
    version : int
    ceiling_func : callable () -> Score, or None
        Computes the ceiling; None means the benchmark has none (ceiling 1, e.g. engineering).
    parent : str
    bibtex : str
    ceiling_key : callable () -> dict, optional
        Content the ceiling depends on (e.g. the data's values), added to its cache key so a cached
        ceiling is never served for other data under the same name.
    ceiling_identity : str, optional
        Names the ceiling computation in the cache key (default: ``ceiling_func``'s module, qualified
        name and line), so two ceilings of the same data never share a cached value.
    """

    def __init__(self, identifier: str, version: int, ceiling_func: Callable[[], Score] | None,
                 parent: str, bibtex: str, ceiling_key: Callable[[], dict[str, Any]] | None = None,
                 ceiling_identity: str | None = None):
        self.identifier = identifier
        self.version = version
        self.parent = parent
        self.bibtex = bibtex
        self._ceiling_func = ceiling_func
        self._ceiling_key = ceiling_key
        self._ceiling_identity = ceiling_identity or (callable_identity(ceiling_func) if ceiling_func else None)
        self._ceiling: Score | None = None

    @property
    def ceiling(self) -> Score:
        """The ceiling, computed once and cached on disk by content (identifier, version, data)."""
        if self._ceiling is None:
            if self._ceiling_func is None:
                self._ceiling = Score.of(1.0, error=0.0, note="no ceiling: scores are not normalised")
            else:
                extra = self._ceiling_key() if self._ceiling_key else {}
                key = content_key(kind="ceiling", benchmark=self.identifier, version=self.version,
                                  ceiling=self._ceiling_identity, **extra)
                with stage(f"ceiling of {self.identifier}"):  # silent when cached
                    self._ceiling = Cache("ceilings").get_or_compute(key, self._ceiling_func)
        return self._ceiling


def callable_identity(fn: Callable[..., Any]) -> str:
    """Module, qualified name and first line of ``fn`` (or its repr for callable objects)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return f"{type(fn).__module__}.{type(fn).__qualname__}:{fn!r}"
    return f"{fn.__module__}.{fn.__qualname__}:{code.co_firstlineno}"
