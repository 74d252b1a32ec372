"""``AccuracyDistance``: :class:`brainscore.metrics.behavior.accuracy_distance.AccuracyDistance`."""
from brainscore.metrics.behavior.accuracy_distance import AccuracyDistance

__all__ = ["AccuracyDistance"]
