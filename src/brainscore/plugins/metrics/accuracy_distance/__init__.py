"""Accuracy distance (Brain-Score's ``accuracy_distance``): how close a model's accuracy is to each subject's.

``accuracy_distance`` (metric): ``d = 1 - |a_model - a_subject| / max(a_subject, 1 - a_subject)`` per
subject, ``|mean|`` over subjects, error = std. ``accuracy_distance`` (ceiling): the same statistic over
all pairs of subjects (``kato_accuracy_distance``, leaving out unanswered trials, is the plugin of that name). See
:mod:`brainscore.metrics.behavior.accuracy_distance`.
"""
from brainscore.registry import lazy, register_ceiling, register_metric

register_metric("accuracy_distance", lazy("brainscore.metrics.behavior.accuracy_distance:AccuracyDistance"))
register_ceiling("accuracy_distance", lazy("brainscore.metrics.behavior.accuracy_distance:AccuracyDistanceCeiling"))
