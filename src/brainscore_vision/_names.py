"""Metric and ceiling names of the reference's guides, mapped to brainscore's registries (whose metric plugins use
the reference's identifiers: :func:`native_metric_name` maps the few spellings that differ and refuses reference
metrics not implemented here). The metrics and ceilings returned are brainscore's, which take the reference's call
styles and factory arguments (``crossvalidation_kwargs``, ``regression_kwargs``, ...).
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
    """The ``brainscore`` metric identifier of the reference's ``identifier`` (unknown names unchanged);
    UnknownIdentifierError for a reference metric not implemented here (:data:`NOT_IMPLEMENTED`)."""
    if identifier in NOT_IMPLEMENTED:
        raise UnknownIdentifierError(f"metric {identifier!r}: {NOT_IMPLEMENTED[identifier]}. Metrics available: "
                                     f"{', '.join(registry.metrics.list())}")
    return METRIC_ALIASES.get(identifier, identifier)


def native_ceiling_name(identifier: str) -> str:
    """The ``brainscore`` ceiling identifier of the reference's ``identifier`` (unknown names unchanged)."""
    return CEILING_ALIASES.get(identifier, identifier)


def load_metric(identifier: str, *args: Any, **kwargs: Any) -> Any:
    """:func:`brainscore.registry.load_metric` of :func:`native_metric_name` (``args``/``kwargs`` to its factory)."""
    return registry.load_metric(native_metric_name(identifier), *args, **kwargs)


def load_ceiling(identifier: str, *args: Any, **kwargs: Any) -> Any:
    """:func:`brainscore.registry.load_ceiling` of :func:`native_ceiling_name`."""
    return registry.load_ceiling(native_ceiling_name(identifier), *args, **kwargs)
