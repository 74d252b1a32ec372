"""Accuracy distance: ``1 - |a_model - a_subject| / max(a_subject, 1 - a_subject)`` per subject, averaged.

``accuracy_distance`` (BMD 2024 benchmarks) and ``kato_accuracy_distance`` (Kato 2026: trials without a
valid response in either assembly are dropped first). See :mod:`brainscore.metrics.behavior.accuracy_distance`.
"""
from brainscore.registry import lazy, register_metric

register_metric("accuracy_distance", lazy("brainscore.metrics.behavior.accuracy_distance:AccuracyDistance"))
register_metric("kato_accuracy_distance",
                lazy("brainscore.metrics.behavior.accuracy_distance:AccuracyDistance", valid_only=True))
