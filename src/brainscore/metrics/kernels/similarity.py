"""Representational similarity kernels: correlation RDMs, Spearman over RDMs, linear CKA.

Pure array functions, written once against the Array API namespace of :mod:`._namespace`. Each
accepts numpy arrays or torch tensors (CPU or GPU) and returns the same numbers on both, as arrays of
the input's library and device; no labels, no splits.

Representational similarity analysis (Kriegeskorte, Mur & Bandettini 2008)
    The representational dissimilarity matrix (RDM) of ``n`` stimuli is ``1 - r`` where ``r`` is
    the Pearson correlation between the response patterns of two stimuli across neuroids. Two RDMs
    are compared by the Spearman rank correlation of their strict upper triangles.

Centred kernel alignment (Kornblith, Norouzi, Lee & Hinton 2019)
    With linear kernels ``K = X Xᵀ`` and ``L = Y Yᵀ`` (one Gram matrix per representation),
    ``CKA = HSIC(K, L) / sqrt(HSIC(K, K) HSIC(L, L))``. The *biased* estimator centres the kernels,
    ``HSIC = tr(HKH HLH)`` with ``H = I - 11ᵀ/n``. The *unbiased* estimator (Song, Smola, Gretton,
    Bedo & Borgwardt 2012, Theorem 2) zeroes the diagonals (``K̃``, ``L̃``) and takes::

        HSIC = [tr(K̃L̃) + 1ᵀK̃1 · 1ᵀL̃1 / ((n-1)(n-2)) - 2/(n-2) · 1ᵀK̃L̃1] / (n(n-3))

Speed
    Everything is computed from one ``n x n`` product per representation. numpy runs the half-cost
    symmetric product (BLAS SYRK) only for ``A @ A.T`` on the *same* array object, which is how the
    products below are written (``X.astype(f) @ X.astype(f).T`` does the full product: 3.3 s instead
    of 1.3 s for 3200 stimuli x 20,000 features on two cores). The centring of ``H K H`` is an O(n²)
    correction of ``K``, never an O(n³) product with ``H``; cross-validation subsets index the Gram
    matrix instead of recomputing it. (``np.einsum`` without ``optimize=True`` does not use BLAS:
    rsatoolbox's correlation RDM built that way takes 72.6 s for two 3200-stimulus RDMs.)
"""
from __future__ import annotations

from typing import Any

import numpy as np

from brainscore.metrics.kernels import _namespace as ns
from brainscore.metrics.kernels._namespace import device, dtype_of, namespace

__all__ = ["correlation_matrix", "correlation_rdm", "upper_triangle", "rankdata_average", "spearman", "pearson", "rdm_spearman", "SubsetRanks", "subset_spearman",
           "gram", "centre_gram", "hsic_biased", "hsic_unbiased", "cka_from_grams", "linear_cka",
           "linear_cka_biased", "linear_cka_unbiased"]

Array = Any  # numpy.ndarray or torch.Tensor


# ---- input helpers ------------------------------------------------------------------------------
def _check_2d(name: str, a: Array) -> None:
    if a.ndim != 2:
        raise ValueError(f"{name} must be 2-D of shape (n_stimuli, n_features), got shape {tuple(a.shape)}")


def _as_float(a: Array, dtype: Any | None, copy: bool) -> Array:
    """``a`` as a floating array of ``dtype`` (default: keep float32/float64, else float64), row-major on numpy."""
    xp = namespace(a)
    dtype = dtype_of(xp, dtype)
    if dtype is None:
        dtype = a.dtype if a.dtype in (xp.float32, xp.float64) else xp.float64
    return ns.as_row_major(xp, a, dtype=dtype, copy=True if copy else None)


def _to_float64(a: Array) -> Array:
    xp = namespace(a)
    return xp.astype(a, xp.float64, copy=False)


# ---- RDMs ---------------------------------------------------------------------------------------
def correlation_matrix(X: Array, dtype: Any | None = None) -> Array:
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
    _check_2d("X", X)
    if X.shape[1] < 2:
        raise ValueError(f"a correlation needs at least 2 neuroids per stimulus, got {X.shape[1]}")
    xp = namespace(X)
    Z = _as_float(X, dtype, copy=True)
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
    :func:`correlation_matrix` for parameters and errors. For ranking (Spearman), ``-r`` orders the
    pairs as ``1 - r`` does and keeps more precision in float32 (the spacing of float32 numbers
    near 1 is 6e-8, near 0 far finer), which is what the RDM metrics rank.

    Returns
    -------
    ndarray or torch.Tensor of shape (n_stimuli, n_stimuli)
        Symmetric, in [0, 2], with a zero diagonal (NaN rows and columns for constant stimuli).
    """
    C = correlation_matrix(X, dtype)
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


# ---- CKA ----------------------------------------------------------------------------------------
def gram(X: Array, dtype: Any | None = None) -> Array:
    """Linear-kernel Gram matrix ``X Xᵀ`` (symmetric product), returned in float64.

    Parameters
    ----------
    X : ndarray or torch.Tensor of shape (n_stimuli, n_features)
    dtype : dtype, optional
        Precision of the product (default: that of ``X`` if floating, else float64).

    Returns
    -------
    ndarray or torch.Tensor of shape (n_stimuli, n_stimuli), float64
    """
    _check_2d("X", X)
    A = _as_float(X, dtype, copy=False)
    return _to_float64(A @ A.T)  # same object on both sides: SYRK


def centre_gram(K: Array) -> Array:
    """Double-centred Gram matrix ``H K H`` with ``H = I - 11ᵀ/n``, as an O(n²) correction.

    Parameters
    ----------
    K : ndarray or torch.Tensor of shape (n, n), symmetric

    Returns
    -------
    ndarray or torch.Tensor of shape (n, n)
    """
    xp = namespace(K)
    rows = xp.mean(K, axis=1)
    total = xp.mean(rows)
    return K - rows[:, None] - rows[None, :] + total


def _inner(A: Array, B: Array) -> float:
    """``sum(A * B)`` without a temporary array: the dot product of the flattened (row-major) arrays."""
    xp = namespace(A, B)
    return float(xp.reshape(A, (-1,)) @ xp.reshape(B, (-1,)))


def hsic_biased(K: Array, L: Array) -> float:
    """Biased HSIC ``tr(HKH HLH)`` of two linear Gram matrices (Gretton et al. 2005; no 1/(n-1)² factor).

    ``tr(HKH HLH) = sum(K * HLH)`` because ``H`` is idempotent, so only ``L`` is centred.

    Parameters
    ----------
    K, L : ndarray or torch.Tensor of shape (n, n), symmetric

    Returns
    -------
    float
    """
    return _inner(K, centre_gram(L))


def hsic_unbiased(K: Array, L: Array) -> float:
    """Unbiased HSIC estimator of Song et al. (2012) on Gram matrices with zeroed diagonals.

    ``[tr(K̃L̃) + 1ᵀK̃1·1ᵀL̃1/((n-1)(n-2)) - 2·1ᵀK̃L̃1/(n-2)] / (n(n-3))``, computed in O(n²)
    from ``K`` and ``L`` without copying them (``1ᵀK̃L̃1 = (K̃1)ᵀ(L̃1)`` since both are symmetric).

    Parameters
    ----------
    K, L : ndarray or torch.Tensor of shape (n, n), symmetric, n >= 4

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``n < 4`` (the estimator divides by ``n - 3``).
    """
    n = K.shape[0]
    if n < 4:
        raise ValueError(f"the unbiased HSIC estimator needs at least 4 stimuli, got {n}")
    xp = namespace(K, L)
    dk, dl = xp.linalg.diagonal(K), xp.linalg.diagonal(L)
    trace_kl = _inner(K, L) - float(dk @ dl)
    k1 = xp.sum(K, axis=1) - dk  # K̃ 1
    l1 = xp.sum(L, axis=1) - dl  # L̃ 1
    sum_k, sum_l = float(xp.sum(k1)), float(xp.sum(l1))
    kl1 = float(xp.sum(k1 * l1))
    return (trace_kl + sum_k * sum_l / ((n - 1) * (n - 2)) - 2 * kl1 / (n - 2)) / (n * (n - 3))


def cka_from_grams(K: Array, L: Array, unbiased: bool = True) -> float:
    """Linear CKA from two Gram matrices over the same stimuli (same order).

    Parameters
    ----------
    K, L : ndarray or torch.Tensor of shape (n, n)
        ``X Xᵀ`` and ``Y Yᵀ`` (see :func:`gram`); float64 recommended.
    unbiased : bool
        True: unbiased HSIC (Song et al. 2012) with ``CKA = hsic_xy / (sqrt(hsic_xx hsic_yy) + 1e-12)``,
        and 0 when ``hsic_xx hsic_yy <= 0`` (Brain-Score's ``cka``). False: biased, centred
        HSIC (Kornblith et al. 2019) with ``CKA = hsic_xy / sqrt(hsic_xx hsic_yy)`` (NaN for a
        constant representation).

    Returns
    -------
    float
    """
    if K.shape != L.shape or K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"Gram matrices must be square and of equal shape, got {tuple(K.shape)} and {tuple(L.shape)}")
    if unbiased:
        return _cka_from_hsics(hsic_unbiased(K, L), hsic_unbiased(K, K), hsic_unbiased(L, L), unbiased=True)
    Lc, Kc = centre_gram(L), centre_gram(K)
    return _cka_from_hsics(_inner(K, Lc), _inner(K, Kc), _inner(L, Lc), unbiased=False)


def _feature_hsics(X: Array, Y: Array, unbiased: bool) -> tuple[float, float, float]:
    """(hsic_xy, hsic_xx, hsic_yy) from feature-space products, without any n x n matrix.

    With ``K = X Xᵀ``: ``tr(KL) = ||XᵀY||²_F``, ``diag(K) = row norms²``, ``K1 = X (Xᵀ1)``, so both
    estimators need only the ``p x p`` products ``XᵀY``, ``XᵀX`` and ``YᵀY``: cheaper than the Gram
    matrices when the representations have fewer features than stimuli.
    """
    n = X.shape[0]
    xp = namespace(X, Y)
    if not unbiased:  # centre the features: then HSIC = ||XcᵀYc||²
        X = X - xp.mean(X, axis=0)
        Y = Y - xp.mean(Y, axis=0)
    XtY, XtX, YtY = _to_float64(X.T @ Y), _to_float64(X.T @ X), _to_float64(Y.T @ Y)
    frob = [_inner(M, M) for M in (XtY, XtX, YtY)]
    if not unbiased:
        return frob[0], frob[1], frob[2]
    if n < 4:
        raise ValueError(f"the unbiased HSIC estimator needs at least 4 stimuli, got {n}")
    X64, Y64 = _to_float64(X), _to_float64(Y)
    d, e = xp.sum(X64 * X64, axis=1), xp.sum(Y64 * Y64, axis=1)  # diagonals of K and L
    k1 = X64 @ xp.sum(X64, axis=0) - d  # K̃ 1
    l1 = Y64 @ xp.sum(Y64, axis=0) - e  # L̃ 1

    def hsic(frobenius, dk, dl, a1, b1):
        trace = frobenius - float(xp.sum(dk * dl))
        sa, sb = float(xp.sum(a1)), float(xp.sum(b1))
        return (trace + sa * sb / ((n - 1) * (n - 2)) - 2 * float(xp.sum(a1 * b1)) / (n - 2)) / (n * (n - 3))

    return hsic(frob[0], d, e, k1, l1), hsic(frob[1], d, d, k1, k1), hsic(frob[2], e, e, l1, l1)


def _cka_from_hsics(xy: float, xx: float, yy: float, unbiased: bool) -> float:
    if unbiased:
        product = xx * yy
        if not product > 0:
            return 0.0
        return xy / (np.sqrt(product) + 1e-12)
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(np.float64(xy) / (np.sqrt(np.float64(xx)) * np.sqrt(np.float64(yy))))


def linear_cka(X: Array, Y: Array, unbiased: bool = True, dtype: Any | None = None, method: str = "auto") -> float:
    """Linear CKA between two representations of the same stimuli.

    Parameters
    ----------
    X : ndarray or torch.Tensor of shape (n_stimuli, n_features_x)
    Y : ndarray or torch.Tensor of shape (n_stimuli, n_features_y)
        Rows are the same stimuli in the same order.
    unbiased : bool
        Unbiased (Song et al. 2012; default, Brain-Score's ``cka``) or biased (Kornblith et al.
        2019; ``cka_biased``) estimator; see :func:`cka_from_grams`.
    dtype : dtype, optional
        Precision of the products.
    method : {"auto", "gram", "features"}
        How to compute the same number: from the ``n x n`` Gram matrices (cost ~ n²(p_x + p_y)/2)
        or from the feature-space products ``XᵀY``, ``XᵀX``, ``YᵀY`` (cost ~ n(p_x p_y + (p_x² +
        p_y²)/2)); "auto" takes the cheaper.

    Returns
    -------
    float
        In [-1, 1] (the unbiased estimator can be slightly negative).

    Raises
    ------
    ValueError
        If the stimulus counts differ, or ``unbiased`` and fewer than 4 stimuli.
    """
    _check_2d("X", X)
    _check_2d("Y", Y)
    if X.shape[0] != Y.shape[0]:
        raise ValueError(f"X and Y must hold the same stimuli: {X.shape[0]} rows vs {Y.shape[0]}")
    n, px, py = X.shape[0], X.shape[1], Y.shape[1]
    if method == "auto":
        method = "features" if px * py + (px * px + py * py) / 2 < n * (px + py) / 2 else "gram"
    if method == "gram":
        return cka_from_grams(gram(X, dtype), gram(Y, dtype), unbiased=unbiased)
    if method != "features":
        raise ValueError(f"method must be 'auto', 'gram' or 'features', got {method!r}")
    X, Y = _as_float(X, dtype, copy=False), _as_float(Y, dtype, copy=False)
    return _cka_from_hsics(*_feature_hsics(X, Y, unbiased), unbiased=unbiased)


def linear_cka_unbiased(X: Array, Y: Array, dtype: Any | None = None) -> float:
    """Unbiased linear CKA (Song et al. 2012 HSIC); see :func:`linear_cka`."""
    return linear_cka(X, Y, unbiased=True, dtype=dtype)


def linear_cka_biased(X: Array, Y: Array, dtype: Any | None = None) -> float:
    """Biased, centred linear CKA (Kornblith et al. 2019); see :func:`linear_cka`."""
    return linear_cka(X, Y, unbiased=False, dtype=dtype)
