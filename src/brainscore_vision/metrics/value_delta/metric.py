"""``ValueDelta``: :class:`brainscore.metrics.behavior.value_delta.ValueDelta`, ``exp(-scale * |a - b|)``."""
from brainscore.metrics.behavior.value_delta import ValueDelta

__all__ = ["ValueDelta"]
