"""What a metric and a ceiling are.

A metric compares a model's responses (``source``) with the data (``target``) and returns a
:class:`~brainscore.metrics.score.Score`; a ceiling estimates how well the data agree with
themselves. Both are small callables configured in ``__init__`` (parameters and seed only), in
the manner of scikit-learn estimators.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

from brainscore.data.assemblies import DataAssembly
from brainscore.metrics.score import Score


class MetricWarning(UserWarning):
    """A metric computed a number on data too small or too degenerate for it to mean much (it says why)."""


class _Parametrised:
    """A repr made of the class name and the parameters stored in ``__init__``, stable across processes.

    Cache keys and provenance name a metric or ceiling by this repr, so it must not contain memory
    addresses: parameters are listed by name, sorted.
    """

    def __repr__(self) -> str:
        parameters = ", ".join(f"{name}={value!r}" for name, value in sorted(vars(self).items())
                               if not name.startswith("_"))
        return f"{type(self).__name__}({parameters})"


class Metric(_Parametrised, ABC):
    """Compares ``source`` (model) with ``target`` (data); higher is more similar."""

    @abstractmethod
    def __call__(self, source: DataAssembly, target: DataAssembly) -> Score:
        """Score ``source`` against ``target``."""


class Ceiling(_Parametrised, ABC):
    """Estimates the best score any model could reach on ``assembly`` (its reliability)."""

    @abstractmethod
    def __call__(self, assembly: DataAssembly) -> Score:
        """The ceiling of ``assembly``."""
