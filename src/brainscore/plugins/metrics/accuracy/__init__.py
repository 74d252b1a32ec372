"""Accuracy: fraction of answers equal to the target label, error = std of the 0/1 matches; ceiling 1."""
from brainscore.registry import lazy, register_metric


register_metric("accuracy", lazy("brainscore.metrics.behavior.accuracy:Accuracy"))
