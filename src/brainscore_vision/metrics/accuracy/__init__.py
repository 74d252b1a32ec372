"""``Accuracy``: the reference's ``accuracy`` metric module, :class:`brainscore.metrics.behavior.accuracy.Accuracy`."""
from brainscore_vision.metrics.accuracy.metric import Accuracy

__all__ = ["Accuracy"]
