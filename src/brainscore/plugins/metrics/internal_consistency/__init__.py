"""Internal consistency (split-half reliability over repetitions, Spearman-Brown corrected): the
ceiling of neural benchmarks, registered both as a ceiling and as a metric (as the reference does).

Factories accept :class:`~brainscore.metrics.ceilings.internal_consistency.InternalConsistency`'s keyword
arguments (``split_coord``, ``stimulus_coord``, ``splits``, ``train_size``, ``random_state``,
``device``). Reference: Schrimpf et al. 2018 (bioRxiv 407007); Spearman 1910; Brown 1910.
"""
from brainscore.registry import lazy, register_ceiling, register_metric


register_ceiling("internal_consistency", lazy("brainscore.metrics.ceilings.internal_consistency:InternalConsistency"))
register_metric("internal_consistency", lazy("brainscore.metrics.ceilings.internal_consistency:InternalConsistency"))
register_ceiling("internal_consistency_temporal", lazy("brainscore.metrics.ceilings.internal_consistency:TemporalInternalConsistency"))
register_metric("internal_consistency_temporal", lazy("brainscore.metrics.ceilings.internal_consistency:TemporalInternalConsistency"))
