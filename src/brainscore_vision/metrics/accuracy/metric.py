"""``Accuracy`` (:class:`brainscore.metrics.behavior.accuracy.Accuracy`): the fraction of responses equal to the truth."""
from brainscore.metrics.behavior.accuracy import Accuracy

__all__ = ["Accuracy"]
