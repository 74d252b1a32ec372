"""``ValueDelta``: the reference's ``value_delta`` metric module (see :mod:`.metric`)."""
from brainscore_vision.metrics.value_delta.metric import ValueDelta

__all__ = ["ValueDelta"]
