"""``AccuracyDistance``: the reference's ``accuracy_distance`` metric module (see :mod:`.metric`)."""
from brainscore_vision.metrics.accuracy_distance.metric import AccuracyDistance

__all__ = ["AccuracyDistance"]
