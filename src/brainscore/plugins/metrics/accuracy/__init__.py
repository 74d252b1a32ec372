"""Accuracy: fraction of answers equal to the target label, error = std of the 0/1 matches; ceiling 1."""
from brainscore.registry import register_metric


@register_metric("accuracy")
def _accuracy(**kwargs):
    from brainscore.metrics.behavior.accuracy import Accuracy

    return Accuracy(**kwargs)
