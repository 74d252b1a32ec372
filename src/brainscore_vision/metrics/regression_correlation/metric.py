"""Regressions and regression-correlation metrics with the reference's names, on ``brainscore``'s kernels.

Regressions (each an :class:`~brainscore_vision.metric_helpers.xarray_utils.XarrayRegression` over a
:class:`~brainscore_vision.metric_helpers.xarray_utils.KernelRegression`, i.e. over
:mod:`brainscore.metrics.kernels.regression`; ``regression_kwargs`` override the defaults of
:data:`brainscore.metrics.neural.regression.REGRESSION_DEFAULTS`):
``pls_regression()`` (PLS, 25 components), ``linear_regression()``, ``ridge_regression()`` (alpha 1),
``ridge_cv_regression()`` / ``dual_ridge_cv_regression()`` (alpha chosen by efficient leave-one-out
among :data:`ALPHA_LIST`; the kernel works in the dual form whenever stimuli are fewer than features).
``DualRidgeCVRegression(alphas)`` is ridge on plain arrays (``fit(X, Y)``, ``predict(X)``, ``alpha_``) with the
reference's alpha selection: scikit-learn's ``RidgeCV`` on an ``n x n`` Gram surrogate (same alphas).

Metrics: ``CrossRegressedCorrelation(regression, correlation, crossvalidation_kwargs)`` and
``TrainTestSplitCorrelation(regression, correlation)`` are ``brainscore``'s metrics of the same names
(:mod:`brainscore.metrics.neural.regression`), built from one of the regressions above and
``pearsonr_correlation()``.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.stats
from sklearn.linear_model import RidgeCV

from brainscore.metrics.kernels.ridge import ALPHA_LIST
from brainscore.metrics.neural import regression as _regression
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


class DualRidgeCVRegression(KernelRegression):
    """``RidgeCV(alphas)`` on arrays, in the reference's design: ``fit(X, Y)``, ``predict(X)``, ``alpha_``.

    ``fit`` chooses alpha with scikit-learn's ``RidgeCV`` (efficient leave-one-out, one alpha for all targets) on an
    ``n x n`` design with the same centred Gram matrix as ``X`` when features outnumber samples (``V sqrt(L)`` from the
    eigendecomposition ``Xc Xcᵀ = V L Vᵀ``; leave-one-out errors depend on the design only through that matrix), so
    no ``features x targets`` matrix is ever formed; otherwise on ``X`` itself. ``predict`` is ``brainscore``'s ridge
    kernel at that alpha (dual form, ``n x n``, when samples are fewer than features).

    Parameters
    ----------
    alphas : sequence of float
        Candidate penalties (the reference's :data:`ALPHA_LIST`).

    Raises
    ------
    ValueError
        From ``fit``, for ``X`` and ``Y`` that are not 2-D with the same number of rows.
    """

    def __init__(self, alphas: Any = ALPHA_LIST, **kwargs: Any):
        super().__init__("ridge", **kwargs)
        self.alphas = alphas

    def fit(self, X: Any, Y: Any) -> "DualRidgeCVRegression":
        """Choose alpha on ``X`` (n, features) and ``Y`` (n, targets), keep both for ``predict``; returns ``self``."""
        super().fit(X, Y)
        X, Y = self._train
        design = X
        if X.shape[1] > X.shape[0]:
            centred = X - X.mean(axis=0)
            eigenvalues, eigenvectors = np.linalg.eigh(centred @ centred.T)
            design = eigenvectors * np.sqrt(np.clip(eigenvalues, 0.0, None))
        self._alpha = float(RidgeCV(alphas=self.alphas).fit(design, Y).alpha_)
        return self

    def predict(self, X: Any) -> np.ndarray:
        """(n_test, targets): brainscore's ridge at ``alpha_`` on ``X`` (n_test, features); before ``fit``, the
        ``AttributeError`` of ``alpha_``."""
        return KernelRegression("ridge", **self.kwargs, alpha=self.alpha_).fit(*self._train).predict(X)


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
    if isinstance(inner, DualRidgeCVRegression):  # alpha chosen per training set, as the ridgecv kernel does
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
    """:class:`brainscore.metrics.neural.regression.CrossRegressedCorrelation` built the reference's way.

    Parameters
    ----------
    regression : XarrayRegression or str
        ``pls_regression()`` etc., or a kernel name (``"pls"``).
    correlation : XarrayCorrelation, optional
        ``pearsonr_correlation()`` (the only correlation).
    crossvalidation_kwargs : dict, optional
    **kwargs
        ``brainscore``'s options (``reverse``, ``identifier``, ``device``).

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
