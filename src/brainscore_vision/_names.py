"""Metric and ceiling names of the reference's guides, mapped to ``brainscore``'s registries.

The neural-benchmark guide loads metrics and ceilings by name (``load_metric('pls')``,
``load_metric('ridgecv_split')``, ``load_ceiling('internal_consistency')``, ...). ``brainscore``
registers its metrics under the same names (its metric plugins follow the reference's identifiers),
so :func:`native_metric_name` is the identity for every name in :data:`REFERENCE_METRICS`; it maps
the few spellings that differ (:data:`METRIC_ALIASES`) and turns names of reference metrics not
implemented here into an error that says so.

What :func:`load_metric` / :func:`load_ceiling` return are ``brainscore``'s own metric and ceiling
objects, which take the reference's call styles: ``metric(source, target)``,
``metric(assembly1=..., assembly2=...)`` (RDM, CKA), ``split_metric(source_train, source_test,
target_train, target_test)``, ``ceiler(assembly)``; and the reference's factory arguments
(``crossvalidation_kwargs=dict(stratification_coord=...)``, ``regression_kwargs``,
``property_name=...``).
"""
from __future__ import annotations

from typing import Any

from brainscore import registry
from brainscore.errors import UnknownIdentifierError

__all__ = ["native_metric_name", "native_ceiling_name", "load_metric", "load_ceiling", "REFERENCE_METRICS",
           "REFERENCE_CEILINGS", "METRIC_ALIASES", "CEILING_ALIASES", "NOT_IMPLEMENTED"]

#: Metric names of the reference's neural-benchmark guide and benchmark tutorial, all loadable here.
REFERENCE_METRICS = (
    "pls", "pls_cv", "pls_split", "ridge", "ridge_cv", "ridge_split", "ridgecv", "ridgecv_split",
    "linear_predictivity", "linear_predictivity_cv", "linear_predictivity_split",
    "neuron_to_neuron", "neuron_to_neuron_cv", "neuron_to_neuron_split", "reverse_pls", "reverse_pls_cv",
    "reverse_pls_split", "rdm", "rdm_cv", "cka", "cka_cv", "spantime_pls", "spantime_ridge",
    "internal_consistency", "ks_similarity", "accuracy", "i1", "i1n", "i2", "i2n", "error_consistency",
)
#: Ceiling names of the guide (the reference also loads some through ``load_metric``).
REFERENCE_CEILINGS = ("internal_consistency", "ks_similarity", "i1n", "i2n", "error_consistency")

#: Reference spellings -> ``brainscore`` metric identifiers, where they differ.
METRIC_ALIASES: dict[str, str] = {}  # none so far: brainscore's metric plugins use the reference's names
#: Reference spellings -> ``brainscore`` ceiling identifiers, where they differ.
CEILING_ALIASES: dict[str, str] = {}  # none so far
#: Reference metric names that have no ``brainscore`` implementation, with what to use instead.
NOT_IMPLEMENTED = {
    "ost": "the object-solution-time metric of Kar et al. (2019, Nature Neuroscience) is not implemented here",
}


def native_metric_name(identifier: str) -> str:
    """The ``brainscore`` metric identifier of the reference's ``identifier`` (unknown names unchanged).

    Raises
    ------
    UnknownIdentifierError
        For a reference metric that ``brainscore`` does not implement (:data:`NOT_IMPLEMENTED`).
    """
    if identifier in NOT_IMPLEMENTED:
        raise UnknownIdentifierError(f"metric {identifier!r}: {NOT_IMPLEMENTED[identifier]}. Metrics available: "
                                     f"{', '.join(registry.metrics.list())}")
    return METRIC_ALIASES.get(identifier, identifier)


def native_ceiling_name(identifier: str) -> str:
    """The ``brainscore`` ceiling identifier of the reference's ``identifier`` (unknown names unchanged)."""
    return CEILING_ALIASES.get(identifier, identifier)


def load_metric(identifier: str, *args: Any, **kwargs: Any) -> Any:
    """``brainscore``'s metric registered under the reference's name ``identifier``, built with ``args``/``kwargs``.

    Examples
    --------
    >>> load_metric('pls', crossvalidation_kwargs=dict(stratification_coord=None))  # doctest: +SKIP

    Raises
    ------
    UnknownIdentifierError
        If no such metric is registered (the message lists the closest names).
    """
    return registry.load_metric(native_metric_name(identifier), *args, **kwargs)


def load_ceiling(identifier: str, *args: Any, **kwargs: Any) -> Any:
    """``brainscore``'s ceiling registered under the reference's name ``identifier``.

    Raises
    ------
    UnknownIdentifierError
        If no such ceiling is registered.
    """
    return registry.load_ceiling(native_ceiling_name(identifier), *args, **kwargs)
