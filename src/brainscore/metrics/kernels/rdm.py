"""Representational dissimilarity kernels: correlation RDMs and their rank comparison.

Pure array functions, written once against the Array API namespace of :mod:`.backend`. Each
accepts numpy arrays or torch tensors (CPU or GPU) and returns the same numbers on both, as arrays of
the input's library and device; no labels, no splits. (The RDM and CKA kernels live apart, as in
rsatoolbox; CKA is :mod:`.cka`.)

Representational similarity analysis (Kriegeskorte, Mur & Bandettini 2008)
    The representational dissimilarity matrix (RDM) of ``n`` stimuli is ``1 - r`` where ``r`` is
    the Pearson correlation between the response patterns of two stimuli across neuroids
    (:func:`stimulus_correlation_matrix`, :func:`correlation_rdm`). Two RDMs are compared by the
    Spearman rank correlation of their strict upper triangles (:func:`rdm_spearman`; ranks of
    subsets of one RDM from one sort: :class:`SubsetRanks`).

Speed
    Everything is computed from one ``n x n`` product per representation. numpy runs the half-cost
    symmetric product (BLAS SYRK) only for ``A @ A.T`` on the *same* array object, which is how the
    products below are written (``X.astype(f) @ X.astype(f).T`` does the full product: 3.3 s instead
    of 1.3 s for 3200 stimuli x 20,000 features on two cores). (``np.einsum`` without
    ``optimize=True`` does not use BLAS: rsatoolbox's correlation RDM built that way takes 72.6 s for
    two 3200-stimulus RDMs.)
"""
from __future__ import annotations

from typing import Any

import numpy as np

from brainscore.metrics.kernels import backend as ns
from brainscore.metrics.kernels.backend import as_float, check_2d, device, namespace

__all__ = ["stimulus_correlation_matrix", "correlation_rdm", "upper_triangle", "rankdata_average", "spearman",
           "pearson", "rdm_spearman", "SubsetRanks", "subset_spearman"]

Array = Any  # numpy.ndarray or torch.Tensor


# ---- RDMs ---------------------------------------------------------------------------------------
def stimulus_correlation_matrix(X: Array, dtype: Any | None = None) -> Array:
    """Pearson correlation ``r`` of every pair of stimuli across neuroids, as ``np.corrcoef(X)``.

    One symmetric product of the row-centred responses, normalised by its diagonal.

    Parameters
    ----------
    X : ndarray or torch.Tensor of shape (n_stimuli, n_neuroids)
        Responses, one row per stimulus.
    dtype : numpy or torch dtype, optional
        Precision of the product (default: that of ``X`` if floating, else float64). float32 halves
        the time; entries then differ from float64 by ~1e-7.

    Returns
    -------
    ndarray or torch.Tensor of shape (n_stimuli, n_stimuli)
        Symmetric, in [-1, 1], with a unit diagonal. A stimulus whose response is constant across
        neuroids has no correlation: its row and column are NaN (as ``np.corrcoef`` gives).

    Raises
    ------
    ValueError
        If ``X`` is not 2-D or has fewer than 2 neuroids.
    """
    check_2d("X", X)
    if X.shape[1] < 2:
        raise ValueError(f"a correlation needs at least 2 neuroids per stimulus, got {X.shape[1]}")
    xp = namespace(X)
    Z = as_float(X, dtype, copy=True)
    Z -= xp.mean(Z, axis=1, keepdims=True)
    C = Z @ Z.T  # same object on both sides: numpy uses the symmetric (SYRK) product
    del Z
    norms = xp.sqrt(xp.linalg.diagonal(C))  # sqrt(covariance times n_neuroids) of each stimulus
    with np.errstate(invalid="ignore", divide="ignore"):
        C /= norms[:, None]
        C /= norms[None, :]
    ns.clip_(xp, C, -1, 1)
    ns.fill_diagonal_(xp, C, 1)
    constant = ~(norms > 0)
    if bool(xp.any(constant)):
        C[constant, :] = float("nan")
        C[:, constant] = float("nan")
    return C


def correlation_rdm(X: Array, dtype: Any | None = None) -> Array:
    """Correlation-distance RDM: ``1 - r`` of every pair of stimuli across neuroids.

    Equal to ``1 - np.corrcoef(X)`` (Kriegeskorte et al. 2008) with an exact zero diagonal; see
    :func:`stimulus_correlation_matrix` for parameters and errors. For ranking (Spearman), ``-r`` orders the
    pairs as ``1 - r`` does and keeps more precision in float32 (the spacing of float32 numbers
    near 1 is 6e-8, near 0 far finer), which is what the RDM metrics rank.

    Returns
    -------
    ndarray or torch.Tensor of shape (n_stimuli, n_stimuli)
        Symmetric, in [0, 2], with a zero diagonal (NaN rows and columns for constant stimuli).
    """
    C = stimulus_correlation_matrix(X, dtype)
    C *= -1
    C += 1  # 1 - r in place: -r + 1 is the same IEEE operation as 1 - r
    return C


def upper_triangle(M: Array) -> Array:
    """The strict upper triangle (``k=1``) of a square matrix, row by row.

    Parameters
    ----------
    M : ndarray or torch.Tensor of shape (n, n)

    Returns
    -------
    ndarray or torch.Tensor of shape (n (n - 1) / 2,)
    """
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"expected a square matrix, got shape {tuple(M.shape)}")
    return ns.upper_triangle(namespace(M), M)


# ---- rank correlation ---------------------------------------------------------------------------
def rankdata_average(x: Array) -> Array:
    """Ranks 1..n of a 1-D array, ties given their average rank (as ``scipy.stats.rankdata``).

    Parameters
    ----------
    x : ndarray or torch.Tensor of shape (n,)
        Values without NaN.

    Returns
    -------
    ndarray or torch.Tensor of shape (n,), float64
    """
    if x.ndim != 1:
        raise ValueError(f"rankdata_average expects a 1-D array, got shape {tuple(x.shape)}")
    xp, dev = namespace(x), device(x)
    n = x.shape[0]
    ranks = xp.empty(n, dtype=xp.float64, device=dev)
    if n == 0:
        return ranks
    order, xs = ns.sort_keys(xp, x)
    new = xp.empty(n, dtype=xp.bool, device=dev)  # where a run of equal values starts, in sorted order
    new[0] = True
    new[1:] = xs[1:] != xs[:-1]
    if bool(xp.all(new)):  # no ties: ranks are positions
        ranks[order] = xp.arange(1, n + 1, dtype=xp.float64, device=dev)
        return ranks
    starts = xp.nonzero(new)[0]
    counts = xp.diff(xp.concat([starts, xp.asarray([n], dtype=starts.dtype, device=dev)]))
    average = xp.astype(starts, xp.float64) + xp.astype(counts + 1, xp.float64) / 2.0  # mean of start+1 .. start+count
    ranks[order] = xp.repeat(average, counts)
    return ranks


def _check_vectors(name: str, x: Array, y: Array) -> None:
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"{name} expects two 1-D arrays of equal length, got {tuple(x.shape)} and {tuple(y.shape)}")


def pearson(x: Array, y: Array) -> float:
    """Pearson correlation of two 1-D arrays (float64 accumulation); NaN if either is constant.

    Parameters
    ----------
    x, y : ndarray or torch.Tensor of shape (n,)

    Returns
    -------
    float
    """
    _check_vectors("pearson", x, y)
    xp, dev = namespace(x, y), device(x, y)
    x, y = xp.asarray(x, dtype=xp.float64, device=dev), xp.asarray(y, dtype=xp.float64, device=dev)
    xc, yc = x - xp.mean(x), y - xp.mean(y)
    den = xp.sqrt((xc @ xc) * (yc @ yc))  # 1-D @ 1-D: the BLAS dot product
    return float((xc @ yc) / den) if float(den) > 0 else float("nan")


def spearman(x: Array, y: Array) -> float:
    """Spearman rank correlation of two 1-D arrays, as ``scipy.stats.spearmanr(x, y)[0]``.

    Ranks are computed by one argsort each with average ranks for ties; rho is the Pearson
    correlation of the ranks.

    Parameters
    ----------
    x, y : ndarray or torch.Tensor of shape (n,)

    Returns
    -------
    float
        NaN if either array contains NaN (scipy's ``nan_policy='propagate'``) or is constant.
    """
    _check_vectors("spearman", x, y)
    xp = namespace(x, y)
    if bool(xp.any(xp.isnan(x))) or bool(xp.any(xp.isnan(y))):
        return float("nan")
    return pearson(rankdata_average(x), rankdata_average(y))


class SubsetRanks:
    """Average ranks of any subset of a fixed 1-D vector, from a single sort of the whole vector.

    The ranks of the elements of a subset follow their order in the sorted whole, so a subset's
    ranks (ties averaged, as ``scipy.stats.rankdata``) cost O(m) instead of a new O(m log m) sort.
    This makes cross-validated RSA over the sub-RDMs of one RDM cheap. numpy only.

    Parameters
    ----------
    values : ndarray of shape (m,)

    Examples
    --------
    >>> ranks = SubsetRanks(np.array([3., 1., 2., 1.]))
    >>> ranks.ranks(np.array([True, True, False, True]))
    array([3. , 1.5, 1.5])
    """

    def __init__(self, values: np.ndarray):
        values = np.asarray(values)
        if values.ndim != 1:
            raise ValueError(f"SubsetRanks expects a 1-D array, got shape {values.shape}")
        self.size = values.shape[0]
        self.nan = np.isnan(values)
        if self.size == 0:
            self.order, self.group = np.zeros(0, dtype=np.intp), None
            return
        self.order, xs = ns.sort_keys(namespace(values), values)
        new = np.empty(self.size, dtype=bool)
        new[0] = True
        np.not_equal(xs[1:], xs[:-1], out=new[1:])
        self.group = None if new.all() else np.cumsum(new)  # tie-group id of each sorted element

    def has_nan(self, select: np.ndarray | None = None) -> bool:
        """Whether the (selected) values contain NaN."""
        return bool(self.nan.any() if select is None else (self.nan & select).any())

    def ranks(self, select: np.ndarray | None = None) -> np.ndarray:
        """Average ranks (1..k, float64) of the selected elements, in their original order.

        Parameters
        ----------
        select : ndarray of bool, shape (m,), optional
            Which elements form the subset (default: all).

        Returns
        -------
        ndarray of shape (k,)
        """
        if select is None:
            select = np.ones(self.size, dtype=bool)
        elif select.shape != (self.size,) or select.dtype != bool:
            raise ValueError(f"select must be a boolean array of shape ({self.size},)")
        sorted_select = select[self.order]
        position = np.cumsum(select) - 1  # index of each selected element within the subset
        destination = position[self.order[sorted_select]]
        k = destination.shape[0]
        if self.group is None:
            average = np.arange(1, k + 1, dtype=np.float64)
        else:
            groups = self.group[sorted_select]
            new = np.empty(k, dtype=bool)
            if k:
                new[0] = True
                np.not_equal(groups[1:], groups[:-1], out=new[1:])
            starts = np.flatnonzero(new)
            counts = np.diff(np.append(starts, k))
            average = np.repeat(starts + (counts + 1) / 2.0, counts)
        ranks = np.empty(k, dtype=np.float64)
        ranks[destination] = average
        return ranks


def subset_spearman(ranks1: SubsetRanks, ranks2: SubsetRanks, select: np.ndarray | None = None) -> float:
    """Spearman correlation of the selected elements of two vectors pre-sorted by :class:`SubsetRanks`.

    Equal to ``scipy.stats.spearmanr(x[select], y[select])[0]``; NaN if a selected value is NaN.
    """
    if ranks1.has_nan(select) or ranks2.has_nan(select):
        return float("nan")
    return pearson(ranks1.ranks(select), ranks2.ranks(select))


def rdm_spearman(rdm1: Array, rdm2: Array) -> float:
    """Spearman correlation of the strict upper triangles of two RDMs (same stimulus order).

    Parameters
    ----------
    rdm1, rdm2 : ndarray or torch.Tensor of shape (n, n)

    Returns
    -------
    float
    """
    if rdm1.shape != rdm2.shape:
        raise ValueError(f"RDMs must have the same shape, got {tuple(rdm1.shape)} and {tuple(rdm2.shape)}")
    return spearman(upper_triangle(rdm1), upper_triangle(rdm2))
