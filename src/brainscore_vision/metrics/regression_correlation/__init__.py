"""The reference's ``regression_correlation`` metric module: regressions and cross-validated correlations
(see :mod:`.metric`)."""
from brainscore_vision.metrics.regression_correlation.metric import (
    ALPHA_LIST, CrossRegressedCorrelation, DualRidgeCVRegression, TrainTestSplitCorrelation, dual_ridge_cv_regression,
    linear_regression, pearsonr_correlation, pls_regression, ridge_cv_regression, ridge_regression)

__all__ = ["ALPHA_LIST", "CrossRegressedCorrelation", "TrainTestSplitCorrelation", "DualRidgeCVRegression",
           "pls_regression", "linear_regression", "ridge_regression", "ridge_cv_regression",
           "dual_ridge_cv_regression", "pearsonr_correlation"]
