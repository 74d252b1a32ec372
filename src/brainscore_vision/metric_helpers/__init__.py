"""The reference's metric helpers, over ``brainscore``'s metrics layer.

Submodules: :mod:`.xarray_utils` (``XarrayRegression``, ``XarrayCorrelation``: a regression or a
correlation applied to assemblies, aligned by ``stimulus_id`` and ``neuroid_id``),
:mod:`.transformations` (``CrossValidation``, ``CrossValidationSingle``, ``TestOnlyCrossValidation``,
``CartesianProduct``, ``apply_aggregate``) and :mod:`.temporal` (``PerTime``, ``SpanTime``,
``PerTimeRegression``, ``SpanTimeRegression``). Splits are drawn by
:func:`brainscore.metrics.splits.split_indices` (the reference's shuffle splits, seed 1) and
correlations by :func:`brainscore.metrics.kernels.correlation.pearsonr_columns`.
"""
from __future__ import annotations

__all__ = ["Defaults"]


class Defaults:
    """The coordinate names the helpers assume unless told otherwise (the field's terms)."""

    expected_dims = ("presentation", "neuroid")
    stimulus_coord = "stimulus_id"
    neuroid_dim = "neuroid"
    neuroid_coord = "neuroid_id"
