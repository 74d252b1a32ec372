"""Distribution similarity of neuronal properties (Marques et al. 2021): :mod:`brainscore.metrics.neural.distribution_similarity`.

- ``BootstrapDistributionSimilarity(property_name, ns=1000)``: ``brainscore``'s ``ks_similarity``
  (:class:`~brainscore.metrics.neural.distribution_similarity.KSSimilarity`, bootstrapped KS similarity).
- ``NeuronalPropertyCeiling(similarity_metric)``: the data compared with themselves by that metric.
"""
from __future__ import annotations

from typing import Any, Callable

from brainscore.metrics.base import Ceiling
from brainscore.metrics.neural.distribution_similarity import KSSimilarity
from brainscore.metrics.neural.distribution_similarity import ks_similarity as _ks_similarity
from brainscore.metrics.score import Score

__all__ = ["BootstrapDistributionSimilarity", "NeuronalPropertyCeiling", "ks_similarity"]

ks_similarity = _ks_similarity


class BootstrapDistributionSimilarity(KSSimilarity):
    """:class:`KSSimilarity` with the reference's signature ``(property_name, similarity_func=ks_similarity, ns=1000)``.

    Raises
    ------
    NotImplementedError
        For a ``similarity_func`` other than the KS similarity.
    """

    def __init__(self, property_name: str, similarity_func: Callable | None = None, ns: int = 1000, **kwargs: Any):
        if similarity_func not in (None, ks_similarity):
            raise NotImplementedError(f"BootstrapDistributionSimilarity: only the KS similarity is implemented here, "
                                      f"not {getattr(similarity_func, '__name__', similarity_func)!r}")
        super().__init__(property_name, n_samples=ns, **kwargs)


class NeuronalPropertyCeiling(Ceiling):
    """Ceiling of a property benchmark: ``similarity_metric(assembly, assembly)`` (the data against themselves).

    Parameters
    ----------
    similarity_metric : Metric
        E.g. ``load_metric('ks_similarity', property_name='circular_variance')``.
    """

    def __init__(self, similarity_metric: Any):
        self.similarity_metric = similarity_metric

    def __call__(self, assembly: Any) -> Score:
        return self.similarity_metric(assembly, assembly)
