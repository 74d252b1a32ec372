"""``brainscore_core.metrics``: ``Score``, ``Metric`` and ``Ceiling``, which are :mod:`brainscore`'s own.

- :class:`Score` is :class:`brainscore.metrics.score.Score` (a 0-d ``DataArray`` whose ``attrs``
  hold ``raw``, ``ceiling``, ``error``); ``Score(0.79)`` and ``Score(np.nan)`` work as in the reference.
- :class:`Metric` is :class:`brainscore.metrics.base.Metric`: subclass it and implement
  ``__call__(source, target) -> Score``.
- :class:`Ceiling` is :class:`brainscore.metrics.base.Ceiling`: ``__call__(assembly) -> Score``.
"""
from brainscore.metrics.base import Ceiling, Metric
from brainscore.metrics.score import Score

__all__ = ["Score", "Metric", "Ceiling"]
