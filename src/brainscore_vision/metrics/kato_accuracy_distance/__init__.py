"""``KatoAccuracyDistance``: the reference's ``kato_accuracy_distance`` metric module (see :mod:`.metric`)."""
from brainscore_vision.metrics.kato_accuracy_distance.metric import KatoAccuracyDistance

__all__ = ["KatoAccuracyDistance"]
