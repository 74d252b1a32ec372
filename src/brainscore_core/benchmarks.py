"""``brainscore_core.benchmarks``: the reference core's ``Benchmark``, ``BenchmarkBase``, ``ceil_score`` and
``bound_score`` (:mod:`brainscore.benchmarks.base`, :mod:`brainscore.metrics.normalisation`), and
:class:`CeilingFunctionBenchmarkBase`, the reference vision's ``BenchmarkBase`` that ``brainscore_vision.benchmarks``
builds on (docs/coming_from_brain_score.md, "The mapping, name by name": a no-argument ``ceiling_func``, its
caching, and ``bound_score`` returning a new Score).
"""
from __future__ import annotations

import inspect
from numbers import Number
from typing import Any, Callable

import numpy as np

from brainscore.benchmarks import base as _base
from brainscore.benchmarks.base import Benchmark
from brainscore.caching import callable_identity
from brainscore.metrics.normalisation import bound_score, ceil_score
from brainscore.metrics.score import Score

__all__ = ["Benchmark", "BenchmarkBase", "CeilingFunctionBenchmarkBase", "NoArgumentCeiling", "ceil_score",
           "bound_score", "as_score", "required_positional"]


def as_score(value: Any) -> Score:
    """``value`` as a :class:`Score`: a Score unchanged, a number (or 0-d array) wrapped.

    Raises
    ------
    TypeError
        For anything else (a ceiling must be a number).
    """
    if isinstance(value, Score):
        return value
    if hasattr(value, "dims") and hasattr(value, "values"):  # another DataArray: keep dims, coords and attrs
        score = Score(value)
        return score
    if isinstance(value, (Number, np.number, np.ndarray)) and not isinstance(value, bool):
        return Score(np.asarray(value, dtype=float))
    raise TypeError(f"a ceiling must be a number or a Score, got {type(value).__name__}: {value!r}")


def required_positional(func: Callable[..., Any]) -> int:
    """How many positional parameters without a default ``func`` has (0 when its signature is unknown)."""
    try:
        parameters = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return 0
    return sum(1 for p in parameters if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


class NoArgumentCeiling:
    """A reference-style ceiling function ``func()`` as ``brainscore``'s ``ceiling(assembly)`` (the argument unused).

    Its repr and ``func`` attribute name the wrapped function, so ``brainscore``'s ceiling cache keys
    and code hashes follow the plugin's function, not this wrapper.
    """

    def __init__(self, func: Callable[[], Any]):
        self.func = func
        self._takes_arguments = required_positional(func) > 0

    def __call__(self, *args: Any, **kwargs: Any) -> Score:
        """``func()`` as a Score; a function that needs arguments (a plugin calling its own
        ``self._ceiling_func(assembly)``) gets those given."""
        return as_score(self.func(*args, **kwargs) if self._takes_arguments else self.func())

    def __repr__(self) -> str:
        return f"NoArgumentCeiling({callable_identity(self.func)})"


class CeilingFunctionBenchmarkBase(_base.BenchmarkBase):
    """The reference vision's ``BenchmarkBase``: :class:`brainscore.benchmarks.base.BenchmarkBase` with the reference's
    keywords (``version`` 1, ``parent`` and ``bibtex`` empty when left out); subclasses implement ``__call__``.

    ``ceiling_func`` (no argument; may return a plain number) is computed once per benchmark object and not cached
    on disk: brainscore cannot tell which data a plugin's own ceiling function reads, and a cache keyed by the
    identifier (as the reference's) could serve the ceiling of other data after a data plugin changes. None:
    ceiling 1. ``ceiling_key`` (brainscore's option, the content the ceiling depends on) caches it by content.
    """

    def __init__(self, identifier: str, ceiling_func: Callable[[], Any] | None = None, version: int = 1,
                 parent: str = "", bibtex: str = "", **kwargs: Any):
        wrapped = NoArgumentCeiling(ceiling_func) if ceiling_func is not None else None
        super().__init__(identifier=identifier, version=version, ceiling_func=wrapped, parent=parent, bibtex=bibtex,
                         ceiling_identity=callable_identity(ceiling_func) if ceiling_func is not None else None,
                         **kwargs)
        self._disk_cached_ceiling = kwargs.get("ceiling_key") is not None
        self._reference_ceiling: Score | None = None
        self._reference_ceiling_func = wrapped

    @property
    def ceiling(self) -> Score:
        """The ceiling: ``ceiling_func()`` as a Score, computed once (see the class notes); 1 without one."""
        if self._disk_cached_ceiling:
            return super().ceiling
        if self._reference_ceiling is None:
            func = self._reference_ceiling_func
            self._reference_ceiling = (Score.of(1.0, error=0.0, note="no ceiling: scores are not normalised")
                                       if func is None else func())
        return self._reference_ceiling

    def __call__(self, candidate: Any) -> Score:
        """Run the experiment on ``candidate``: subclasses implement it (as in the reference, not abstract).

        Raises
        ------
        NotImplementedError
            Always, here.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement __call__(candidate)")


class BenchmarkBase(CeilingFunctionBenchmarkBase):
    """The reference core's ``BenchmarkBase``: a fixed ``ceiling`` (Score or number, e.g. ``Score(1)``) instead of a
    ceiling function, i.e. :class:`CeilingFunctionBenchmarkBase` with ``ceiling_func=lambda: ceiling``."""

    def __init__(self, identifier: str, ceiling: Any, version: Any, parent: str, bibtex: str | None = None,
                 **kwargs: Any):
        super().__init__(identifier=identifier, ceiling_func=lambda: ceiling, version=version, parent=parent,
                         bibtex=bibtex or "", **kwargs)
