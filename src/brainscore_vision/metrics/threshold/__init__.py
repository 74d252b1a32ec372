"""``Threshold``, ``ThresholdElevation``: the reference's ``threshold`` metric module (see :mod:`.metric`)."""
from brainscore_vision.metrics.threshold.metric import Threshold, ThresholdElevation

__all__ = ["Threshold", "ThresholdElevation"]
