"""The reference's benchmark helpers, on ``brainscore``'s benchmarks.

Submodules: :mod:`.neural_common` (``NeuralBenchmark``, ``TrainTestNeuralBenchmark``,
``average_repetition``, ``explained_variance``), :mod:`.properties_common` (``PropertiesBenchmark``),
:mod:`.screen` (``place_on_screen``). Here: ``PrecomputedFeatures(features, visual_degrees)``, a
model that answers from stored features (:class:`brainscore.models.precomputed.PrecomputedFeatures`),
with which benchmark tests reproduce a score without running a network.
"""
from __future__ import annotations

__all__ = ["PrecomputedFeatures"]


def __getattr__(name: str):
    """``PrecomputedFeatures``, imported on first use (PEP 562)."""
    if name == "PrecomputedFeatures":
        from brainscore.models.precomputed import PrecomputedFeatures

        return PrecomputedFeatures
    raise AttributeError(f"module 'brainscore_vision.benchmark_helpers' has no attribute {name!r}")
