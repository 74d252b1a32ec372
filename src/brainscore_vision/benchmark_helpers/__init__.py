"""The reference's benchmark helpers, on ``brainscore``'s benchmarks.

Submodules: :mod:`.neural_common` (``NeuralBenchmark``, ``TrainTestNeuralBenchmark``,
``average_repetition``, ``explained_variance``), :mod:`.properties_common` (``PropertiesBenchmark``),
:mod:`.screen` (``place_on_screen``). Here: ``PrecomputedFeatures(features, visual_degrees)``, a
model that answers from stored features (:class:`brainscore.models.precomputed.PrecomputedFeatures`),
with which benchmark tests reproduce a score without running a network.
"""
from __future__ import annotations

__all__ = ["PrecomputedFeatures", "bound_score"]


def __getattr__(name: str):
    """``PrecomputedFeatures``, imported on first use (PEP 562)."""
    if name == "PrecomputedFeatures":
        from brainscore.models.precomputed import PrecomputedFeatures

        return PrecomputedFeatures
    raise AttributeError(f"module 'brainscore_vision.benchmark_helpers' has no attribute {name!r}")


def bound_score(score):
    """Clip ``score`` to [0, 1] **in place**, as the reference's ``bound_score`` (its benchmarks call it for that
    effect: ``bound_score(score); return score``), and return it; the unclipped value stays in
    ``attrs['unbounded']``. The numbers are :func:`brainscore.metrics.normalisation.bound_score`'s.
    """
    from brainscore.metrics.normalisation import bound_score as _bound

    bounded = _bound(score)
    score.values = bounded.values
    score.attrs["unbounded"] = bounded.attrs["unbounded"]
    return score
