"""The reference's ``regression_correlation`` metric module: regressions on assemblies
(:mod:`brainscore.metrics.neural.assembly_regression` over the kernels of
:mod:`brainscore.metrics.kernels.regression`, ``regression_kwargs`` over
:data:`brainscore.metrics.neural.regression.REGRESSION_DEFAULTS`) and the metrics of
:mod:`brainscore.metrics.neural.regression` built from them (docs/coming_from_brain_score.md, "The mapping, name
by name")."""
from __future__ import annotations

from typing import Any

import scipy.stats

from brainscore.metrics.kernels.ridge import ALPHA_LIST
from brainscore.metrics.neural import regression as _regression
from brainscore.metrics.neural.assembly_regression import RidgeCVRegression
from brainscore.metrics.neural.regression import REGRESSION_DEFAULTS
from brainscore_vision.metric_helpers.xarray_utils import KernelRegression, XarrayCorrelation, XarrayRegression

__all__ = ["ALPHA_LIST", "pls_regression", "linear_regression", "ridge_regression", "ridge_cv_regression",
           "dual_ridge_cv_regression", "DualRidgeCVRegression", "pearsonr_correlation", "pearsonr",
           "CrossRegressedCorrelation", "TrainTestSplitCorrelation"]


def _xarray(method: str, regression_kwargs: dict | None, xarray_kwargs: dict | None) -> XarrayRegression:
    kwargs = {**REGRESSION_DEFAULTS[method], **(regression_kwargs or {})}
    return XarrayRegression(KernelRegression(method, **kwargs), **(xarray_kwargs or {}))


def pls_regression(regression_kwargs: dict | None = None, xarray_kwargs: dict | None = None) -> XarrayRegression:
    """Partial least squares (25 components; Yamins et al. 2014) on assemblies."""
    return _xarray("pls", regression_kwargs, xarray_kwargs)


def linear_regression(xarray_kwargs: dict | None = None) -> XarrayRegression:
    """Ordinary least squares (with intercept) on assemblies."""
    return _xarray("linear", None, xarray_kwargs)


def ridge_regression(regression_kwargs: dict | None = None, xarray_kwargs: dict | None = None) -> XarrayRegression:
    """Ridge regression (alpha 1; Hoerl & Kennard 1970) on assemblies."""
    return _xarray("ridge", regression_kwargs, xarray_kwargs)


def ridge_cv_regression(regression_kwargs: dict | None = None, xarray_kwargs: dict | None = None,
                        alphas: Any = ALPHA_LIST) -> XarrayRegression:
    """Ridge with alpha chosen by efficient leave-one-out among ``alphas`` (scikit-learn's ``RidgeCV``)."""
    return _xarray("ridgecv", {"alphas": alphas, **(regression_kwargs or {})}, xarray_kwargs)


dual_ridge_cv_regression = ridge_cv_regression


class DualRidgeCVRegression(RidgeCVRegression):
    """The reference's ``DualRidgeCVRegression``: ``alphas`` default :data:`ALPHA_LIST`, else
    :class:`brainscore.metrics.neural.assembly_regression.RidgeCVRegression`."""

    def __init__(self, alphas: Any = ALPHA_LIST, **kwargs: Any):
        super().__init__(alphas, **kwargs)


def pearsonr(x: Any, y: Any) -> tuple[float, float]:
    """:func:`scipy.stats.pearsonr` (r, p) of two vectors."""
    result = scipy.stats.pearsonr(x, y)
    return float(result[0]), float(result[1])


def pearsonr_correlation(xarray_kwargs: dict | None = None) -> XarrayCorrelation:
    """Pearson r per neuroid over presentations (the neural predictivity correlation)."""
    return XarrayCorrelation(scipy.stats.pearsonr, **(xarray_kwargs or {}))


def _method(regression: Any) -> tuple[str, dict]:
    """(kernel name, settings) of a regression built by the factories above (or a kernel name)."""
    if isinstance(regression, str):
        return regression, {}
    inner = regression.regression if isinstance(regression, XarrayRegression) else regression
    if isinstance(inner, RidgeCVRegression):  # alpha chosen per training set, as the ridgecv kernel does
        return "ridgecv", {"alphas": inner.alphas, **inner.kwargs}
    if isinstance(inner, KernelRegression):
        return inner.method, dict(inner.kwargs)
    raise NotImplementedError(f"{type(inner).__name__} is not one of brainscore's regressions; build the metric with "
                              f"pls_regression(), ridge_regression(), ridge_cv_regression() or linear_regression(), "
                              f"or use an XarrayRegression of it yourself")


def _check_correlation(correlation: Any) -> None:
    if correlation is None or (isinstance(correlation, XarrayCorrelation)
                               and correlation.correlation is scipy.stats.pearsonr):
        return
    raise NotImplementedError("brainscore's regression metrics correlate with Pearson r: use pearsonr_correlation()")


class CrossRegressedCorrelation(_regression.CrossRegressedCorrelation):
    """:class:`brainscore.metrics.neural.regression.CrossRegressedCorrelation` built the reference's way:
    ``regression`` one of the factories above (or a kernel name), ``correlation`` ``pearsonr_correlation()`` or None.

    Raises
    ------
    NotImplementedError
        For a regression or correlation that is not ``brainscore``'s.
    """

    def __init__(self, regression: Any = "pls", correlation: Any = None, crossvalidation_kwargs: dict | None = None,
                 **kwargs: Any):
        _check_correlation(correlation)
        method, settings = _method(regression)
        super().__init__(method, regression_kwargs={**settings, **kwargs.pop("regression_kwargs", {})},
                         crossvalidation_kwargs=crossvalidation_kwargs, **kwargs)


class TrainTestSplitCorrelation(_regression.TrainTestSplitCorrelation):
    """:class:`brainscore.metrics.neural.regression.TrainTestSplitCorrelation` built the reference's way
    (``regression``, ``correlation`` as :class:`CrossRegressedCorrelation`)."""

    def __init__(self, regression: Any = "pls", correlation: Any = None, **kwargs: Any):
        _check_correlation(correlation)
        kwargs.pop("crossvalidation_kwargs", None)  # accepted, as the reference does, and unused
        method, settings = _method(regression)
        super().__init__(method, regression_kwargs={**settings, **kwargs.pop("regression_kwargs", {})}, **kwargs)
