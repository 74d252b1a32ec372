"""Regression kernels: cross-validated predictions of PLS, ridge, ridge with leave-one-out alpha, least
squares and single-unit mappings, for all folds at once.

Pure array functions on numpy arrays or torch tensors (CPU or CUDA), written once against the Array
API namespace of :mod:`.backend`, vectorised over neuroids (and, for kernel PLS, over folds). No labels:
rows are stimuli, columns features (``X``, the model) or neuroids (``Y``, the data); folds are
``(train, test)`` row-index pairs.

This module chooses a method by name (:data:`METHODS`, :func:`cross_validated_predictions`,
:func:`fit_predict`) and scores predictions (:func:`fold_pearsonr`). Each solver family has its own
module, as in himalaya: :mod:`.pls`, :mod:`.ridge` (``ridge``, ``ridgecv``), :mod:`.least_squares`
(``linear``), :mod:`.single_unit` (``neuron_to_neuron``), sharing :mod:`.design` (input checks and
the one Gram or covariance matrix of all folds).

Every method fits an intercept, as scikit-learn does; the algorithm (kernel or covariance form) is
chosen by shape and the precision of the one big product by ``gram_dtype`` (see :mod:`.design`).

Methods and their scikit-learn equivalents (same predictions up to rounding):

``pls``
    ``PLSRegression(n_components, scale=False)`` (Wold 1966; de Jong 1993), *converged*: the weight
    of each component is the dominant singular vector of the deflated cross-covariance ``XₖᵀYₖ``,
    found with a dense eigensolver instead of NIPALS power iterations (scikit-learn's NIPALS stops at
    ``tol=1e-6`` before converging on real-size data, moving scores by up to ~1e-3). Wide data use
    the kernel algorithm (Lindgren, Geladi & Wold 1993; Rännar et al. 1994): scores ``t = Kₖ Yₖ c``
    with ``c`` the dominant eigenvector of ``YₖᵀKₖYₖ``, run for all folds in lock-step so that each
    component needs one pass over ``G``.
``ridge``
    ``Ridge(alpha)`` (Hoerl & Kennard 1970): ``(K + αI)⁻¹`` (kernel) or ``(XᵀX + αI)⁻¹`` by Cholesky.
``ridgecv``
    ``RidgeCV(alphas)`` with its default efficient leave-one-out (Golub, Heath & Wahba 1979; Rifkin &
    Lippert 2007): one float64 eigendecomposition per fold serves every alpha; the alpha with the
    lowest mean squared leave-one-out error over all samples and targets is shared by all targets
    (the first in ``alphas`` on ties).
``linear``
    ``LinearRegression()``: the minimum-norm least-squares solution (pseudo-inverse); eigenvalues
    below ``max(n, p) · eps · λ_max`` count as zero.
``neuron_to_neuron``
    For each target neuroid the single source unit with the highest Pearson r on the training
    stimuli (ignoring NaN r of constant units; the first on ties); the prediction is that unit's raw
    activation (Arend et al. 2018).
"""
from __future__ import annotations

import numpy as np

from brainscore.metrics.kernels.backend import device, namespace
from brainscore.metrics.kernels.correlation import pearsonr_columns
from brainscore.metrics.kernels.design import Array, FitInfo, Folds, float64_zeros, index_array
from brainscore.metrics.kernels.least_squares import linear
from brainscore.metrics.kernels.pls import pls
from brainscore.metrics.kernels.ridge import ALPHA_LIST, ridge, ridgecv
from brainscore.metrics.kernels.single_unit import neuron_to_neuron

__all__ = ["ALPHA_LIST", "Folds", "cross_validated_predictions", "fit_predict", "fold_pearsonr",
           "pls", "ridge", "ridgecv", "linear", "neuron_to_neuron", "METHODS"]

METHODS = {"pls": pls, "ridge": ridge, "ridgecv": ridgecv, "linear": linear, "neuron_to_neuron": neuron_to_neuron}


def cross_validated_predictions(method: str, X: Array, Y: Array, folds: Folds, **kwargs) -> tuple[list[Array], FitInfo]:
    """Predictions of ``method`` (a key of :data:`METHODS`) for every fold; ``kwargs`` go to it.

    Raises
    ------
    ValueError
        If ``method`` is unknown.
    """
    if method not in METHODS:
        raise ValueError(f"unknown regression {method!r}; choose one of {sorted(METHODS)}")
    return METHODS[method](X, Y, folds, **kwargs)


def fit_predict(method: str, X_train: Array, Y_train: Array, X_test: Array, **kwargs) -> tuple[Array, FitInfo]:
    """Fit ``method`` on one training set and predict one test set.

    Parameters
    ----------
    method : str
        A key of :data:`METHODS`.
    X_train : array of shape (n_train, n_features)
    Y_train : array of shape (n_train, n_neuroids)
    X_test : array of shape (n_test, n_features)

    Returns
    -------
    prediction : array of shape (n_test, n_neuroids), float64
    info : FitInfo
    """
    xp, dev = namespace(X_train, Y_train, X_test), device(X_train, Y_train, X_test)
    X_train, X_test = xp.asarray(X_train, device=dev), xp.asarray(X_test, device=dev)
    Y_train = xp.asarray(Y_train, device=dev)
    if X_train.ndim != 2 or X_test.ndim != 2 or X_train.shape[1] != X_test.shape[1]:
        raise ValueError(f"X_train and X_test must be 2-D with the same number of features; got "
                         f"{tuple(X_train.shape)} and {tuple(X_test.shape)}")
    n_tr, n_te = X_train.shape[0], X_test.shape[0]
    dtype = X_train.dtype if X_train.dtype == X_test.dtype else xp.float64
    X = xp.concat([xp.astype(X_train, dtype, copy=False), xp.astype(X_test, dtype, copy=False)], axis=0)
    Y_test_dummy = float64_zeros(xp, dev, (n_te, Y_train.shape[1]))
    Y = xp.concat([xp.astype(Y_train, xp.float64, copy=False), Y_test_dummy], axis=0)
    folds = [(np.arange(n_tr), np.arange(n_tr, n_tr + n_te))]
    predictions, info = cross_validated_predictions(method, X, Y, folds, **kwargs)
    return predictions[0], info


def fold_pearsonr(predictions: list[Array], Y: Array, folds: Folds) -> Array:
    """Pearson r per fold and neuroid between predictions and ``Y`` on each fold's test rows.

    Returns
    -------
    r : array of shape (n_folds, n_neuroids), float64 (same array library as ``Y``)
    """
    xp, dev = namespace(Y, *predictions), device(Y, *predictions)
    Y = xp.asarray(Y, device=dev)
    out = float64_zeros(xp, dev, (len(folds), Y.shape[1]))
    for f, ((_, test), prediction) in enumerate(zip(folds, predictions)):
        out[f] = pearsonr_columns(prediction, Y[index_array(xp, dev, test)])
    return out
