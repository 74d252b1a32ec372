"""Partial least squares (PLS) regression kernel: cross-validated predictions for all folds at once.

``PLSRegression(n_components, scale=False)`` (Wold 1966; de Jong 1993), *converged*: the weight of
each component is the dominant singular vector of the deflated cross-covariance ``XₖᵀYₖ``, found
with a dense eigensolver instead of NIPALS power iterations (scikit-learn's NIPALS stops at
``tol=1e-6`` before converging on real-size data, moving scores by up to ~1e-3). Wide data use the
kernel algorithm (Lindgren, Geladi & Wold 1993; Rännar et al. 1994): scores ``t = Kₖ Yₖ c`` with
``c`` the dominant eigenvector of ``YₖᵀKₖYₖ``, run for all folds in lock-step so that each component
needs one pass over ``G``. Shapes, intercept and precision: see :mod:`.design`.

On torch (:func:`.backend.lock_step`) the kernel form runs as batched float64 matrix work: every
fold's quantities are stacked, embedded in the ``n`` stimuli with zeros outside the fold's training
rows, each component takes one batched ``eigh`` for all folds, and folds whose training rank runs out
are masked on the device instead of being tested on the host. No value leaves the device inside the
component loop (issue 24: the per-fold ``eigh`` and its host synchronisation were 80% of PLS's GPU
time). numpy keeps the per-fold loops and early exits.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from brainscore.metrics.kernels.backend import (device, lock_step, namespace, single_threaded, take_block, to_numpy,
                                               top_eigenpairs, top_eigenvector)
from brainscore.metrics.kernels.design import (Array, Design, FitInfo, Folds, check_inputs, float64_zeros, fold_indices,
                                              use_kernel_form)

__all__ = ["pls"]


def pls(X: Array, Y: Array, folds: Folds, n_components: int = 25, gram_dtype: Any = None) -> tuple[list[Array], FitInfo]:
    """Cross-validated PLS regression predictions (``PLSRegression(n_components, scale=False)``, converged).

    Parameters
    ----------
    X : array of shape (n_stimuli, n_features)
        Source (model activations). float32 input gives a float32 Gram matrix (see module docstring).
    Y : array of shape (n_stimuli, n_neuroids)
        Target (recorded responses).
    folds : sequence of (train, test) integer index arrays
    n_components : int
        Number of PLS components (the reference's 25). Must not exceed ``n_features``.
    gram_dtype : dtype, optional
        Precision of the one big product (default: float32 for float32 ``X``, else float64).

    Returns
    -------
    predictions : list of arrays of shape (n_test, n_neuroids), float64
        One per fold, rows in the order of that fold's test indices.
    info : FitInfo
        ``n_components`` actually extracted per fold (fewer if the training data's rank runs out).

    Raises
    ------
    ValueError
        For bad shapes or ``n_components`` outside ``[1, n_features]``.
    """
    check_inputs(X, Y, folds)
    n, p = X.shape
    if not 1 <= n_components <= p:
        raise ValueError(f"n_components must be in [1, n_features={p}], got {n_components}")
    xp, dev = namespace(X, Y), device(X, Y)
    kernel = use_kernel_form(n, p, folds)
    design = Design(xp, dev, X, Y, kernel=kernel, gram_dtype=gram_dtype)
    folds = fold_indices(xp, dev, folds)
    with single_threaded(xp, dev):                         # many small products: threads only contend
        if kernel and lock_step(xp):
            return _pls_kernel_batched(design, folds, n_components)
        if kernel:
            return _pls_kernel(design, folds, n_components)
        return _pls_covariance(design, folds, n_components)


def _pls_covariance(design: Design, folds, n_components: int) -> tuple[list[Array], FitInfo]:
    """PLS from each fold's covariance ``S = XᵀX`` and cross-covariance ``M = XᵀY`` (p <= n).

    With ``P`` (x-loadings), ``Q`` (y-loadings) and ``tᵀt`` of the first ``k`` components, the
    deflated matrices are ``Sₖ = S - P diag(tᵀt) Pᵀ`` and ``Mₖ = M - P diag(tᵀt) Qᵀ``; they are never
    formed. The weight ``w`` of the next component is the dominant left singular vector of ``Mₖ``,
    from the smaller of ``MₖᵀMₖ`` (q x q) and ``MₖMₖᵀ`` (p x p), each kept up to date by a rank-two
    update. Then ``tᵀt = wᵀSₖw``, ``p = Sₖw / tᵀt``, ``q = Mₖᵀw / tᵀt``; prediction
    ``X_te W (PᵀW)⁻¹ Qᵀ + ȳ`` (Wold's NIPALS at convergence; de Jong 1993). A fold's ``S_c w`` is
    ``S w - X_teᵀ(X_te w) - n_tr (m·w) m`` from the all-stimulus ``S``. All folds advance in
    lock-step as stacked arrays, so each component reads ``S`` once for every fold.
    """
    xp, dev = design.xp, design.dev
    F = len(folds)
    parts = [design.cross_covariance_fold(train, test) for train, test in folds]
    p, q = parts[0][1].shape
    K = n_components
    n_te_max = max(int(test.shape[0]) for _, test in folds)
    Xte_raw = float64_zeros(xp, dev, (F, n_te_max, p))   # test rows (all-stimulus centred), zero-padded
    mx = float64_zeros(xp, dev, (F, p))
    n_tr = np.zeros(F)
    M = float64_zeros(xp, dev, (F, p, q))
    for f, (train, test) in enumerate(folds):
        _, M_f, Xte_c, _, n_tr_f = parts[f]
        m_f = -xp.sum(design.Xc[test], axis=0) / n_tr_f
        Xte_raw[f, :test.shape[0]] = Xte_c + m_f           # Xte_c = X_te - m
        mx[f], n_tr[f], M[f] = m_f, n_tr_f, M_f
    n_tr_x = xp.asarray(n_tr, dtype=xp.float64, device=dev)
    S = design.S
    host = not lock_step(xp)                               # numpy: per-fold loops; torch: device masks only
    if host:
        scale = float(np.sqrt(max(float(xp.sum(S * S)), 1e-300)))
    else:
        scale = xp.sqrt(xp.clip(xp.sum(S * S), min=1e-300))
        keep = xp.ones((F,), dtype=xp.float64, device=dev)
    y_side = q < p                                         # eigen-solve on the smaller side
    B = xp.matrix_transpose(M) @ M if y_side else M @ xp.matrix_transpose(M)    # (F, q, q) or (F, p, p)
    B = (B + xp.matrix_transpose(B)) / 2
    W, P, Q = float64_zeros(xp, dev, (F, p, K)), float64_zeros(xp, dev, (F, p, K)), float64_zeros(xp, dev, (F, q, K))
    tts = float64_zeros(xp, dev, (F, K))
    active = np.ones(F, dtype=bool)
    counts = np.zeros(F, dtype=int)
    for k in range(K):
        if host and not active.any():
            break
        if host:
            top = float64_zeros(xp, dev, (F, B.shape[1]))
            for f in np.flatnonzero(active):
                top[f] = top_eigenvector(xp, B[f])[1]
        else:                                              # one batched eigh; stopped folds masked below
            top = top_eigenpairs(xp, B)[1] * keep[:, None]
        Pk, Qk, ttk = P[:, :, :k], Q[:, :, :k], tts[:, :k]
        if y_side:                                         # w ∝ Mₖ c
            w = _bmv(M, top) - _bmv(Pk, ttk * _bmv(xp.matrix_transpose(Qk), top))
            norm = xp.sqrt(xp.sum(w * w, axis=1))
            w = w / xp.where(norm > 0, norm, 1.0)[:, None]
        else:
            w = top
        Ptw = _bmv(xp.matrix_transpose(Pk), w)             # (F, k)
        Xw = _bmv(Xte_raw, w)                              # (F, n_te)
        Sw = (w @ S) - _bmv(xp.matrix_transpose(Xte_raw), Xw) - (n_tr_x * xp.sum(mx * w, axis=1))[:, None] * mx \
            - _bmv(Pk, ttk * Ptw)                           # Sₖ w per fold (S symmetric: w S = (S w)ᵀ)
        tt = xp.sum(w * Sw, axis=1)                        # ‖t‖², t = Xₖ w
        if host:
            tt_np = to_numpy(tt)
            active &= tt_np > 1e-13 * scale
            if not active.any():
                break
            keep = xp.asarray(active.astype(np.float64), dtype=xp.float64, device=dev)
        else:
            keep = keep * xp.astype(tt > 1e-13 * scale, xp.float64)
        safe_tt = xp.where(keep > 0, tt, 1.0)
        loading = Sw / safe_tt[:, None] * keep[:, None]
        # Mᵀw and Mᵀp in one pass over M: (F, q, 2)
        Mt_wp = xp.matrix_transpose(M) @ xp.matrix_transpose(xp.stack([w, loading], axis=1))
        y_loading = (Mt_wp[:, :, 0] - _bmv(Qk, ttk * Ptw)) / safe_tt[:, None] * keep[:, None]
        t2 = (tt * tt * keep)[:, None, None]
        if y_side:                                         # Mₖ₊₁ = Mₖ - tᵀt p qᵀ; B = MₖᵀMₖ
            Mp = Mt_wp[:, :, 1] - _bmv(Qk, ttk * _bmv(xp.matrix_transpose(Pk), loading))
            u, v = Mp, y_loading
            B = B - (tt * keep)[:, None, None] * (u[:, :, None] * v[:, None, :] + v[:, :, None] * u[:, None, :]) \
                + t2 * xp.sum(loading * loading, axis=1)[:, None, None] * (v[:, :, None] * v[:, None, :])
        else:                                              # B = MₖMₖᵀ
            Mq = _bmv(M, y_loading) - _bmv(Pk, ttk * _bmv(xp.matrix_transpose(Qk), y_loading))
            u, v = Mq, loading
            B = B - (tt * keep)[:, None, None] * (u[:, :, None] * v[:, None, :] + v[:, :, None] * u[:, None, :]) \
                + t2 * xp.sum(y_loading * y_loading, axis=1)[:, None, None] * (v[:, :, None] * v[:, None, :])
        B = (B + xp.matrix_transpose(B)) / 2
        W[:, :, k], P[:, :, k], Q[:, :, k] = w * keep[:, None], loading, y_loading
        tts[:, k] = tt * keep
        if host:
            counts += active
    if not host:                                           # the one transfer to the host
        counts = np.rint(to_numpy(xp.sum(xp.astype(tts > 0, xp.float64), axis=1))).astype(int)
    predictions, info = [], FitInfo()
    for f, (train, test) in enumerate(folds):
        _, _, Xte_c, my, _ = parts[f]
        k = int(counts[f])
        info.add("n_components", k)
        if not k:
            predictions.append(float64_zeros(xp, dev, (Xte_c.shape[0], q)) + my)
            continue
        W_f, P_f, Q_f = W[f, :, :k], P[f, :, :k], Q[f, :, :k]
        coef = W_f @ xp.linalg.solve(P_f.T @ W_f, Q_f.T)   # W (PᵀW)⁻¹ Qᵀ, (p, q)
        predictions.append(Xte_c @ coef + my)
    return predictions, info


def _bmv(a: Array, v: Array) -> Array:
    """Batched matrix-vector product: (F, m, n) x (F, n) -> (F, m)."""
    return (a @ v[..., None])[..., 0]


def _pls_kernel(design: Design, folds, n_components: int) -> tuple[list[Array], FitInfo]:
    """Kernel PLS for all folds in lock-step (p > n): one product with ``G`` per component.

    Per fold, ``K`` is the centred training kernel, ``Yc`` the centred training targets and
    ``Z₀ = K Yc``. After ``k`` components with scores ``T = [t₁ … tₖ]`` (orthogonal), the deflation
    is the projector ``Dₖ = I - T diag(1/tᵀt) Tᵀ``: ``Yₖ = Dₖ Yc`` and ``Kₖ = Dₖ K Dₖ``. These are
    never formed; only ``Aₖ = YₖᵀKₖYₖ`` (q x q) is kept, by a rank-two update per component.
    Component ``k+1``: ``c`` = dominant eigenvector of ``Aₖ`` (eigenvalue λ),
    ``a = Yₖ c / √λ`` (so that the weight ``w = Xₖᵀa`` has unit norm), score
    ``t = Kₖ Yₖ c / √λ = Dₖ (Z₀ c - K T diag(1/tᵀt) TᵀYc c) / √λ``. Prediction:
    ``Ŷ = K_te A (TᵀK A diag-scaled by 1/tᵀt)⁻¹ Qᵀ + ȳ`` (the ``W (PᵀW)⁻¹ Qᵀ`` of NIPALS in kernel
    form), with ``Q`` the y-loadings ``Ycᵀt / tᵀt``. The products ``K t`` and ``K A`` of all folds
    come from one product with ``G`` each.
    """
    states, GM = _kernel_fold_states(design, folds, n_components)
    _kernel_components(design, states, n_components)
    return _kernel_predictions(design, states, GM)


def _kernel_fold_states(design: Design, folds, n_components: int) -> tuple[list[dict], Array]:
    """The start of :func:`_pls_kernel`: per fold, its training rows' centring terms (``r`` the row means of
    the training block of ``G``, ``s`` their mean), ``[Yc | Z₀ = K Yc]`` (``YZ``, (n_tr, 2q)), ``A₀ = YcᵀKYc``
    (q x q) and empty stores for ``n_components`` components; and ``GM`` (n, F), the training row sums of
    ``G`` per fold (the test rows' centring of the prediction uses it)."""
    xp, dev, G, Yg = design.xp, design.dev, design.G, design.Y
    n, q = Yg.shape
    F = len(folds)
    GY = G @ Yg                                            # (n, q), shared by all folds
    mask = float64_zeros(xp, dev, (n, F))
    for f, (train, _) in enumerate(folds):
        mask[train, f] = 1.0
    GM = G @ mask                                          # (n, F): training row sums of G per fold
    K_max = n_components
    states = []
    for f, (train, test) in enumerate(folds):
        n_tr = train.shape[0]
        r = GM[train, f] / n_tr                            # row means of the training block
        s = float(xp.mean(r))
        my = xp.mean(Yg[train], axis=0)
        YZ = float64_zeros(xp, dev, (n_tr, 2 * q))        # [Yc | Z₀] side by side: one pass per product
        YZ[:, :q] = Yg[train] - my
        Yc = YZ[:, :q]
        # G_tt Yc without forming G_tt: (G Yg)[train] - G[train, test] Yg[test] - G_tt 1 myᵀ
        GYc = GY[train] - take_block(xp, G, train, test) @ Yg[test] - (n_tr * r)[:, None] * my[None, :]
        sum_y = xp.sum(Yc, axis=0)
        YZ[:, q:] = GYc - r[:, None] * sum_y[None, :] - (r @ Yc)[None, :] + s * sum_y[None, :]   # K Yc
        A = Yc.T @ YZ[:, q:]
        A = (A + A.T) / 2
        states.append(dict(train=train, test=test, n_tr=n_tr, r=r, s=s, my=my + design.y_mean, YZ=YZ, A=A,
                           scale=float(xp.sqrt(xp.sum(A * A))), T=float64_zeros(xp, dev, (n_tr, K_max)),
                           KT=float64_zeros(xp, dev, (n_tr, K_max)), Avec=float64_zeros(xp, dev, (n_tr, K_max)),
                           TY=float64_zeros(xp, dev, (K_max, q)), tt=np.zeros(K_max), k=0, done=False))
    return states, GM


def _kernel_components(design: Design, states: list[dict], n_components: int) -> None:
    """Extract up to ``n_components`` components for every fold of ``states`` in lock-step (in place): per
    component, each active fold's score ``t`` from the dominant eigenvector of its ``A``, then ``K t`` of
    all folds from one product with ``G``, then the rank-two update of ``A``. A fold whose ``A`` has no
    eigenvalue above ``1e-12`` of its start's norm (its training rank ran out) is done."""
    xp, dev, G = design.xp, design.dev, design.G
    n, q = design.Y.shape
    for _ in range(n_components):
        active = [st for st in states if not st["done"]]
        if not active:
            break
        pad = float64_zeros(xp, dev, (n, len(active)))
        for j, st in enumerate(active):
            lam, c = top_eigenvector(xp, st["A"])
            if lam <= 1e-12 * st["scale"]:
                st["done"] = True
                continue
            k, n_tr = st["k"], st["n_tr"]
            yz_c = xp.reshape(xp.reshape(st["YZ"], (2 * n_tr, q)) @ c, (n_tr, 2))   # [Yc c, Z₀ c]
            y_c, z_c = yz_c[:, 0], yz_c[:, 1]
            if k:
                T, KT = st["T"][:, :k], st["KT"][:, :k]
                inv_tt = xp.asarray(1.0 / st["tt"][:k], dtype=xp.float64, device=dev)
                coef = (st["TY"][:k] @ c) * inv_tt                          # diag(1/tᵀt) TᵀYc c
                y_c = y_c - T @ coef                                        # Yₖ c
                z_c = z_c - KT @ coef                                       # K Yₖ c
                z_c = z_c - T @ ((T.T @ z_c) * inv_tt)                      # Dₖ K Yₖ c = Kₖ Yₖ c
            st["t"] = z_c / np.sqrt(lam)
            st["a"] = y_c / np.sqrt(lam)
            pad[st["train"], j] = st["t"]
        GT = G @ pad                                       # K t for every fold: one pass over G
        for j, st in enumerate(active):
            if st["done"]:
                continue
            t, r, s, k = st["t"], st["r"], st["s"], st["k"]
            sum_t = float(xp.sum(t))
            Kt = GT[st["train"], j] - r * sum_t - float(r @ t) + s * sum_t          # K t
            Kkt = Kt
            if k:                                                                   # Kₖ t = Dₖ K t
                T = st["T"][:, :k]
                Kkt = Kt - T @ ((T.T @ Kt) / xp.asarray(st["tt"][:k], dtype=xp.float64, device=dev))
            tt = float(t @ t)
            kappa = float(t @ Kkt)
            Yc = st["YZ"][:, :q]
            uv = Yc.T @ xp.stack([t, Kkt], axis=1)         # u = Yₖᵀt = Ycᵀt, v = YₖᵀKₖt = YcᵀKₖt
            u, v = uv[:, 0], uv[:, 1]
            A = st["A"] - (u[:, None] * v[None, :] + v[:, None] * u[None, :]) / tt \
                + (kappa / tt ** 2) * (u[:, None] * u[None, :])
            st["A"] = (A + A.T) / 2
            st["T"][:, k], st["KT"][:, k], st["Avec"][:, k] = t, Kt, st["a"]
            st["TY"][k], st["tt"][k] = u, tt
            st["k"] = k + 1


def _kernel_predictions(design: Design, states: list[dict], GM: Array) -> tuple[list[Array], FitInfo]:
    """Each fold's test predictions ``K_te A (TᵀK A / tᵀt)⁻¹ Qᵀ + ȳ`` from its extracted components (the mean
    ``ȳ`` alone where none was), and the number of components per fold."""
    xp, dev, G = design.xp, design.dev, design.G
    n, q = design.Y.shape
    # predictions: K A and K_te A from one product of G with every fold's A
    counts = [st["k"] for st in states]
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(int)
    GA = None
    if offsets[-1]:
        pad = float64_zeros(xp, dev, (n, int(offsets[-1])))
        for f, st in enumerate(states):
            pad[st["train"], offsets[f]:offsets[f + 1]] = st["Avec"][:, :counts[f]]
        GA = G @ pad
    predictions, info = [], FitInfo()
    for f, st in enumerate(states):
        k = counts[f]
        info.add("n_components", k)
        if k == 0:
            predictions.append(float64_zeros(xp, dev, (st["test"].shape[0], q)) + st["my"])
            continue
        Amat, T = st["Avec"][:, :k], st["T"][:, :k]
        tt = xp.asarray(st["tt"][:k], dtype=xp.float64, device=dev)
        Q = st["TY"][:k].T / tt[None, :]                   # y-loadings Ycᵀt / tᵀt, (q, k)
        block = GA[:, offsets[f]:offsets[f + 1]]
        r, s, n_tr = st["r"], st["s"], st["n_tr"]
        sum_a = xp.sum(Amat, axis=0)
        ra = r @ Amat
        KA = block[st["train"]] - r[:, None] * sum_a[None, :] - ra[None, :] + s * sum_a[None, :]
        r_te = GM[st["test"], f] / n_tr
        KteA = block[st["test"]] - r_te[:, None] * sum_a[None, :] - ra[None, :] + s * sum_a[None, :]
        PW = (T.T @ KA) / tt[:, None]
        predictions.append(KteA @ xp.linalg.solve(PW, Q.T) + st["my"])
    return predictions, info


def _pls_kernel_batched(design: Design, folds, n_components: int) -> tuple[list[Array], FitInfo]:
    """:func:`_pls_kernel` for all folds as stacked arrays, with no host synchronisation in its loop.

    Fold ``f``'s vectors live in all ``n`` stimuli, zero outside its training rows (mask ``m_f``).
    For such a ``v``, ``K v = m∘(G v) - r (Σv) - m (r·v) + m s (Σv)`` with ``r = m∘(G m)/n_tr`` the
    training row means and ``s`` their mean: the same centring as :func:`_pls_kernel`. A fold whose
    dominant eigenvalue falls to ``1e-12`` of its initial scale stops (its later components are
    zero, as are its rows of the stored scores); the prediction solves ``PW`` padded with the identity
    on those components, which leaves the others' solution as it is. Only the component counts
    (``FitInfo``) come to the host, once, after the loop.
    """
    xp, dev, G, Yg = design.xp, design.dev, design.G, design.Y
    n, q = Yg.shape
    F, K_max = len(folds), n_components
    mask = float64_zeros(xp, dev, (F, n))
    for f, (train, _) in enumerate(folds):
        mask[f, train] = 1.0
    n_tr = xp.asarray([float(train.shape[0]) for train, _ in folds], dtype=xp.float64, device=dev)
    GM = mask @ G                                          # (F, n): row sums of G over each fold's training columns
    r_all = GM / n_tr[:, None]                             # (F, n): row means, every row (test rows too)
    r = mask * r_all                                       # training rows only
    s = xp.sum(r, axis=1) / n_tr                           # (F,)
    my = (mask @ Yg) / n_tr[:, None]                       # (F, q) training means
    Yc = mask[:, :, None] * (Yg[None, :, :] - my[:, None, :])   # (F, n, q)

    def G_times(V: Array) -> Array:                        # G V for every fold, (F, n, c): one GEMM, one pass over G
        c = V.shape[2]
        side = xp.reshape(xp.permute_dims(V, (1, 0, 2)), (n, F * c))
        return xp.permute_dims(xp.reshape(G @ side, (n, F, c)), (1, 0, 2))

    def kernel_times(V: Array) -> Array:                   # K V per fold, V (F, n, c) zero outside training rows
        sum_v = xp.sum(V, axis=1)                          # (F, c)
        rv = xp.sum(r[:, :, None] * V, axis=1)             # (F, c)
        return mask[:, :, None] * G_times(V) - r[:, :, None] * sum_v[:, None, :] \
            + mask[:, :, None] * (s[:, None] * sum_v - rv)[:, None, :]

    Z0 = kernel_times(Yc)                                  # K Yc
    A = xp.matrix_transpose(Yc) @ Z0
    A = (A + xp.matrix_transpose(A)) / 2
    scale = xp.sqrt(xp.sum(A * A, axis=(1, 2)))
    T, KT, Avec = (float64_zeros(xp, dev, (F, n, K_max)) for _ in range(3))
    TY = float64_zeros(xp, dev, (F, K_max, q))
    inv_tt = float64_zeros(xp, dev, (F, K_max))            # 1/tᵀt of stored components, 0 elsewhere
    active = xp.ones((F,), dtype=xp.float64, device=dev)
    for k in range(K_max):
        lam, c = top_eigenpairs(xp, A)                     # one batched eigh for every fold
        active = active * xp.astype(lam > 1e-12 * scale, xp.float64)
        root = xp.sqrt(xp.where(active > 0, lam, 1.0))
        y_c, z_c = _bmv(Yc, c), _bmv(Z0, c)                # Yc c, Z₀ c
        if k:
            Tk, KTk, it = T[:, :, :k], KT[:, :, :k], inv_tt[:, :k]
            coef = _bmv(TY[:, :k, :], c) * it              # diag(1/tᵀt) TᵀYc c
            y_c = y_c - _bmv(Tk, coef)                     # Yₖ c
            z_c = z_c - _bmv(KTk, coef)                    # K Yₖ c
            z_c = z_c - _bmv(Tk, _bmv(xp.matrix_transpose(Tk), z_c) * it)   # Kₖ Yₖ c
        t = z_c / root[:, None] * active[:, None]
        a = y_c / root[:, None] * active[:, None]
        Kt = kernel_times(t[:, :, None])[:, :, 0]          # K t
        Kkt = Kt
        if k:
            Kkt = Kt - _bmv(Tk, _bmv(xp.matrix_transpose(Tk), Kt) * it)   # Kₖ t
        tt = xp.sum(t * t, axis=1)
        kappa = xp.sum(t * Kkt, axis=1)
        safe_tt = xp.where(active > 0, tt, 1.0)
        uv = xp.matrix_transpose(Yc) @ xp.stack([t, Kkt], axis=2)   # (F, q, 2): Ycᵀt, YcᵀKₖt
        u, v = uv[:, :, 0], uv[:, :, 1]
        update = (u[:, :, None] * v[:, None, :] + v[:, :, None] * u[:, None, :]) / safe_tt[:, None, None] \
            - (kappa / safe_tt ** 2)[:, None, None] * (u[:, :, None] * u[:, None, :])
        A = A - active[:, None, None] * update
        A = (A + xp.matrix_transpose(A)) / 2
        T[:, :, k], KT[:, :, k], Avec[:, :, k] = t, Kt * active[:, None], a
        TY[:, k, :], inv_tt[:, k] = u, active / safe_tt
    stored = xp.astype(inv_tt > 0, xp.float64)             # (F, K): components each fold extracted
    # predictions for every row of every fold: K A from one batched product with G
    GA = G_times(Avec)                                     # (F, n, K)
    sum_a = xp.sum(Avec, axis=1)                           # (F, K)
    ra = xp.sum(r[:, :, None] * Avec, axis=1)              # (F, K)
    KA = GA - r_all[:, :, None] * sum_a[:, None, :] + (s[:, None] * sum_a - ra)[:, None, :]
    PW = (xp.matrix_transpose(T) @ KA) * inv_tt[:, :, None]   # (F, K, K), rows scaled by 1/tᵀt
    PW = PW + xp.eye(K_max, dtype=xp.float64, device=dev)[None, :, :] * (1.0 - stored)[:, :, None]
    Qt = TY * inv_tt[:, :, None]                           # y-loadings Ycᵀt / tᵀt, (F, K, q)
    full = KA @ xp.linalg.solve(PW, Qt) + (my + design.y_mean)[:, None, :]   # (F, n, q)
    predictions, info = [], FitInfo()
    for f, (_, test) in enumerate(folds):
        predictions.append(full[f][test])
    for count in to_numpy(xp.sum(stored, axis=1)):        # the one transfer to the host
        info.add("n_components", int(round(float(count))))
    return predictions, info
