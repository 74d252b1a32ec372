"""The reference's ``metric_helpers.temporal``: :mod:`brainscore.metrics.temporal` under the reference's names."""
from __future__ import annotations

from brainscore.metrics.temporal import TIME_BIN, PerTimeBin, PerTimeBinRegression, SpanTimeBins, SpanTimeBinsRegression  # noqa: F401

__all__ = ["PerTime", "SpanTime", "PerTimeRegression", "SpanTimeRegression"]


class PerTime(PerTimeBin):
    """The reference's ``PerTime``: :class:`brainscore.metrics.temporal.PerTimeBin`."""


class SpanTime(SpanTimeBins):
    """The reference's ``SpanTime``: :class:`brainscore.metrics.temporal.SpanTimeBins`."""


class PerTimeRegression(PerTimeBinRegression):
    """The reference's ``PerTimeRegression``: :class:`brainscore.metrics.temporal.PerTimeBinRegression`."""


class SpanTimeRegression(SpanTimeBinsRegression):
    """The reference's ``SpanTimeRegression``: :class:`brainscore.metrics.temporal.SpanTimeBinsRegression`."""
