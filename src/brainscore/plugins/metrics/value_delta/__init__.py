"""``value_delta``: ``exp(-scale * |source - target|)`` of a model's summary value and the human one
(Ferguson et al. 2024 benchmarks). See :mod:`brainscore.metrics.behavior.value_delta`."""
from brainscore.registry import lazy, register_metric

register_metric("value_delta", lazy("brainscore.metrics.behavior.value_delta:ValueDelta"))
