"""The reference's ``metric_helpers.xarray_utils``: ``XarrayRegression``, ``XarrayCorrelation``, ``KernelRegression``:
:mod:`brainscore.metrics.neural.assembly_regression` under the reference's names (its predictions and
correlations are the reference's ``NeuroidAssembly``/``DataAssembly`` of
:mod:`brainscore_core.supported_data_standards.brainio.assemblies`)."""
from __future__ import annotations

from brainscore.metrics.neural.assembly_regression import AssemblyCorrelation, AssemblyRegression, KernelRegression
from brainscore.metrics.neural.assembly_regression import aligned_order as order_of
from brainscore.metrics.neural.assembly_regression import coords_along
from brainscore_core.supported_data_standards.brainio.assemblies import DataAssembly, NeuroidAssembly

__all__ = ["XarrayRegression", "XarrayCorrelation", "KernelRegression", "coords_along", "order_of"]


class XarrayRegression(AssemblyRegression):
    """The reference's ``XarrayRegression``: :class:`brainscore.metrics.neural.assembly_regression.AssemblyRegression`
    (predictions are the reference's ``NeuroidAssembly``)."""

    prediction_class = NeuroidAssembly


class XarrayCorrelation(AssemblyCorrelation):
    """The reference's ``XarrayCorrelation``: :class:`brainscore.metrics.neural.assembly_regression.AssemblyCorrelation`
    (results are the reference's ``DataAssembly``)."""

    result_class = DataAssembly
