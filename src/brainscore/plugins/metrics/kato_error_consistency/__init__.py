"""``kato_error_consistency`` (metric and ceiling, Kato 2026): error consistency (Geirhos, Meding & Wichmann 2020)
leaving out trials where either observer gave no response (``''``/``'NaN'``);
:mod:`brainscore.metrics.behavior.error_consistency` with ``valid_only``.

A plugin of its own, named as the reference's ``metrics/kato_error_consistency`` folder, so that folder on the plugin
path is recognised as the reference's copy of this one (:mod:`brainscore.registry`).
"""
from brainscore.registry import lazy, register_ceiling, register_metric

register_metric("kato_error_consistency",
                lazy("brainscore.metrics.behavior.error_consistency:ErrorConsistency", valid_only=True))
register_ceiling("kato_error_consistency",
                 lazy("brainscore.metrics.behavior.error_consistency:ErrorConsistencyCeiling", valid_only=True))
