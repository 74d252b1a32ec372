"""``kato_accuracy_distance`` (metric and ceiling, Kato 2026): accuracy distance leaving out trials where either
observer gave no answer (``''``/``'NaN'``); :mod:`brainscore.metrics.behavior.accuracy_distance` with ``valid_only``.

A plugin of its own, named as the reference's ``metrics/kato_accuracy_distance`` folder, so that folder on the plugin
path is recognised as the reference's copy of this one (:mod:`brainscore.registry`).
"""
from brainscore.registry import lazy, register_ceiling, register_metric

register_metric("kato_accuracy_distance",
                lazy("brainscore.metrics.behavior.accuracy_distance:AccuracyDistance", valid_only=True))
register_ceiling("kato_accuracy_distance",
                 lazy("brainscore.metrics.behavior.accuracy_distance:AccuracyDistanceCeiling", valid_only=True))
