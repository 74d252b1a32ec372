"""The one array-backend mechanism of the kernels: array-api-compat, plus the operations it lacks.

Every kernel (:mod:`.correlation`, :mod:`.regression` and its solvers, :mod:`.rdm`, :mod:`.cka` and the
split-half kernel of :mod:`brainscore.metrics.ceilings.internal_consistency`) is written once against
the Python Array API standard. It asks :func:`namespace` for the namespace of its inputs, which is what
``array_api_compat.array_namespace`` returns (``array_api_compat.numpy`` or ``array_api_compat.torch``,
the wrappers scikit-learn and SciPy use), and :func:`device` for where they live; new arrays are made
with ``xp.zeros(..., dtype=xp.float64, device=dev)`` and so on, so a kernel given CUDA tensors runs
on the GPU and returns tensors there, one given numpy arrays runs on numpy.

The standard lacks a few operations the kernels need for speed or precision. They are here, and only
here, each dispatching on the namespace (never on the type of an array inside a kernel; a test
checks that no kernel module grows its own backend check):

- :func:`take_block`: ``a[rows][:, cols]`` in one gather (numpy's ``np.ix_``), not two.
- :func:`top_eigenvector`: the dominant eigenpair of a symmetric matrix; numpy uses LAPACK's
  subset driver (``scipy.linalg.eigh(subset_by_index=...)``), much cheaper than a full ``eigh``.
- :func:`top_eigenpairs`: the dominant eigenpair of each matrix of a stack: one batched ``eigh``
  on torch (no host round trip per matrix), :func:`top_eigenvector` per matrix on numpy.
- :func:`lock_step`: whether a kernel should run its folds as one batched computation with no
  host synchronisation inside its loops (torch, above all on a GPU) or keep numpy's loops.
- :func:`cholesky_solve`: ``A x = B`` for symmetric positive-definite ``A`` by Cholesky
  (``scipy.linalg.cho_solve`` / ``torch.cholesky_solve``); the standard has only a general solve.
- :func:`single_threaded`: one BLAS (or torch intra-op) thread for loops of many small products.
- :func:`sort_keys`: the sort permutation and sorted keys for average ranks; float32 on numpy
  sorts packed 64-bit integer keys (several times faster than ``argsort``).
- :func:`upper_triangle`: the strict upper triangle, by row slices on numpy (no ``n²`` index
  arrays) or ``torch.triu_indices``.
- :func:`clip_`, :func:`fill_diagonal_`: in-place clip and diagonal fill (the standard only has
  out-of-place ``clip``; an ``n x n`` copy of a 3200-stimulus matrix is 82 MB).
- :func:`as_row_major`: ``asarray`` that makes numpy arrays C-contiguous; :func:`as_float`,
  :func:`as_float64`: floating copies or views of the RDM and CKA kernels' inputs; :func:`check_2d`.
- :func:`to_numpy`, :func:`on_device`, :func:`dtype_of`: conversions at the boundary (device names
  are checked once, where a job starts: :func:`brainscore.device.resolve`).

Numerics: the same float64 decompositions run on every backend, so numpy and torch agree to
rounding, which the tests check for every public kernel. The design follows himalaya (Dupré la Tour,
Eickenberg, Nunez-Elizalde & Gallant 2022, NeuroImage 264:119728: one algorithm, several array
backends) and the Array API standard (Consortium for Python Data API Standards, 2020-2025) as
adopted by scikit-learn and SciPy through array-api-compat.
"""
from __future__ import annotations

import contextlib
import importlib
from types import ModuleType
from typing import Any, Iterator

import array_api_compat
import numpy as np
from array_api_compat import is_numpy_array, is_numpy_namespace, is_torch_namespace

__all__ = ["Array", "namespace", "device", "namespace_of_device", "to_numpy", "on_device", "dtype_of",
           "take_block", "top_eigenvector", "top_eigenpairs", "lock_step", "cholesky_solve", "single_threaded", "sort_keys",
           "upper_triangle", "clip_", "fill_diagonal_", "as_row_major", "as_float", "as_float64", "check_2d"]

Array = Any  # numpy.ndarray or torch.Tensor (any array array-api-compat knows)

_SCALARS = (bool, int, float, complex)


def _numpy_namespace() -> ModuleType:
    # imported on first use: building array_api_compat.numpy touches numpy's lazy submodules (~0.1 s)
    return importlib.import_module("array_api_compat.numpy")


def _arrays(arrays: tuple[Any, ...]) -> list[Any]:
    """The arguments that are arrays (Python scalars and None dropped); numpy ones last to count."""
    candidates = [a for a in arrays if a is not None and not isinstance(a, _SCALARS)]
    foreign = [a for a in candidates if not is_numpy_array(a)]
    return foreign or candidates


def namespace(*arrays: Any) -> ModuleType:
    """The Array API namespace of ``arrays``: ``array_api_compat.numpy`` or ``array_api_compat.torch``.

    numpy arrays mixed with tensors of one other library take that library's namespace (the kernel
    then moves them with ``xp.asarray(a, device=dev)``); without any array, numpy's.

    Raises
    ------
    TypeError
        If the arrays belong to two non-numpy libraries, or one is not an array at all (from
        ``array_api_compat.array_namespace``).
    """
    arrays = _arrays(arrays)
    if not arrays:
        return _numpy_namespace()
    return array_api_compat.array_namespace(*arrays)


def device(*arrays: Any) -> Any:
    """The device of the first non-numpy array among ``arrays`` (``"cpu"`` for numpy)."""
    arrays = _arrays(arrays)
    return array_api_compat.device(arrays[0]) if arrays else "cpu"


def namespace_of_device(device: Any | None) -> tuple[ModuleType, Any]:
    """``(xp, device)`` for a torch device name (e.g. ``"cuda"``, ``"cpu"``), or numpy's for ``None``."""
    if device is None:
        return _numpy_namespace(), "cpu"
    import torch
    return importlib.import_module("array_api_compat.torch"), torch.device(device)


def to_numpy(a: Any) -> np.ndarray:
    """``a`` as a numpy array on the host (a copy from a GPU; no copy for numpy input)."""
    if is_numpy_array(a):
        return np.asarray(a)
    if array_api_compat.is_torch_array(a):
        return a.detach().cpu().numpy()
    return np.asarray(array_api_compat.to_device(a, "cpu"))


def on_device(a: Any, device: Any | None) -> Any:
    """numpy ``a`` as a tensor on the torch ``device``; ``a`` itself when ``device`` is None."""
    if device is None:
        return a
    xp, dev = namespace_of_device(device)
    return xp.asarray(a, device=dev)


def dtype_of(xp: ModuleType, dtype: Any) -> Any:
    """``dtype`` (a numpy or torch dtype, a type or a name such as ``"float32"``) as a dtype of ``xp``.

    ``None`` stays ``None``.
    """
    if dtype is None:
        return None
    name = str(dtype).replace("torch.", "")
    if not hasattr(xp, name):
        name = np.dtype(dtype).name
    return getattr(xp, name)


# ---- operations the standard lacks ----------------------------------------------------------------
def take_block(xp: ModuleType, a: Array, rows: Array, cols: Array) -> Array:
    """``a[rows][:, cols]`` in one copy (integer index arrays of ``xp``)."""
    if is_numpy_namespace(xp):
        return a[np.ix_(rows, cols)]
    if is_torch_namespace(xp):
        return a.index_select(0, rows).index_select(1, cols)
    return xp.take(xp.take(a, rows, axis=0), cols, axis=1)


def top_eigenvector(xp: ModuleType, A: Array) -> tuple[float, Array]:
    """Largest eigenvalue and its eigenvector of the symmetric ``A`` (float64).

    numpy uses LAPACK's ``syevr`` for the last eigenpair only when ``A`` is larger than 32 x 32
    (cheaper than all of them); otherwise, and on other backends, a full ``eigh``.
    """
    if is_numpy_namespace(xp) and A.shape[0] > 32:
        import scipy.linalg
        m = A.shape[0]
        values, vectors = scipy.linalg.eigh(A, subset_by_index=[m - 1, m - 1], driver="evr", check_finite=False)
        return float(values[0]), vectors[:, 0]
    values, vectors = xp.linalg.eigh(A)
    return float(values[-1]), vectors[:, -1]


def top_eigenpairs(xp: ModuleType, A: Array) -> tuple[Array, Array]:
    """Largest eigenvalue and its eigenvector of each symmetric matrix of the stack ``A`` (F, m, m), float64.

    Returns ``(values, vectors)`` of shapes ``(F,)`` and ``(F, m)``, arrays of ``xp`` on ``A``'s
    device. torch: one batched ``torch.linalg.eigh`` (on a GPU one launch for every matrix and no
    host synchronisation; issue 24 measured 80% of PLS's GPU time in ~600 single small ``eigh``
    calls each followed by one). numpy: :func:`top_eigenvector` per matrix (LAPACK's subset driver).
    Eigenvectors are defined up to sign; the callers' results do not depend on it.
    """
    if is_numpy_namespace(xp):
        F, m = A.shape[0], A.shape[1]
        values, vectors = np.zeros(F), np.zeros((F, m))
        for f in range(F):
            values[f], vectors[f] = top_eigenvector(xp, A[f])
        return values, vectors
    values, vectors = xp.linalg.eigh(A)
    return values[..., -1], vectors[..., -1]


def lock_step(xp: ModuleType) -> bool:
    """True where kernels should batch their per-fold work with no host synchronisation in their loops.

    On torch (above all on a GPU) every ``float(tensor)``, ``.item()`` or Python branch on a device
    value waits for the device, and a loop of small launches leaves it idle: kernels then run every
    fold as stacked arrays and decide on device masks. numpy keeps its loops (LAPACK's subset
    eigensolver, early exits), whose numbers the tests compare bit for bit.
    """
    return not is_numpy_namespace(xp)


def cholesky_solve(xp: ModuleType, A: Array, B: Array) -> Array:
    """Solve ``A X = B`` for a symmetric positive-definite ``A`` (n x n) by Cholesky; ``B`` (n,) or (n, k)."""
    if is_numpy_namespace(xp):
        import scipy.linalg
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(A, lower=True, check_finite=False), B,
                                      check_finite=False)
    if is_torch_namespace(xp):
        import torch
        factor = torch.linalg.cholesky(A)
        return torch.cholesky_solve(B if B.ndim == 2 else B[:, None], factor).reshape(B.shape)
    return xp.linalg.solve(A, B)


def single_threaded(xp: ModuleType, device: Any = "cpu") -> contextlib.AbstractContextManager:
    """Context in which products use one thread (faster for a loop of many small products).

    numpy: one BLAS thread (threadpoolctl). torch on the CPU: one intra-op thread, restored after.
    On a GPU (or another library): nothing.
    """
    if is_numpy_namespace(xp):
        from threadpoolctl import threadpool_limits
        return threadpool_limits(1, user_api="blas")
    if is_torch_namespace(xp) and getattr(device, "type", str(device)) == "cpu":
        return _torch_one_thread()
    return contextlib.nullcontext()


@contextlib.contextmanager
def _torch_one_thread() -> Iterator[None]:
    import torch
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(saved)


def sort_keys(xp: ModuleType, x: Array) -> tuple[Array, Array]:
    """``(order, keys)`` of a 1-D ``x``: ``x[order]`` is sorted; ``keys`` (sorted) are equal exactly where the values are.

    On numpy, float32 values are sorted as 64-bit integers that pack an order-preserving image of
    the value (high 32 bits) with the position (low 32 bits): one vectorised integer sort, several
    times faster than ``argsort``, with ties in position order. Otherwise a stable ``xp.argsort``
    (``keys`` then are the sorted values).
    """
    if is_numpy_namespace(xp):
        n = x.shape[0]
        if x.dtype == np.float32 and n < 2 ** 32:
            bits = (x + np.float32(0)).view(np.uint32)  # + 0 turns -0.0 into +0.0 (equal values, equal keys)
            flip = np.where(bits >> np.uint32(31), np.uint32(0xFFFFFFFF), np.uint32(0x80000000))
            keys = ((bits ^ flip).astype(np.uint64) << np.uint64(32)) | np.arange(n, dtype=np.uint64)
            keys.sort()
            order = (keys & np.uint64(0xFFFFFFFF)).astype(np.intp)
            keys >>= np.uint64(32)
            return order, keys
        order = np.argsort(x)
        return order, x[order]
    order = xp.argsort(x)
    return order, x[order]


def upper_triangle(xp: ModuleType, M: Array) -> Array:
    """The strict upper triangle (``k=1``) of the square ``M``, row by row: shape ``(n (n - 1) / 2,)``."""
    n = M.shape[0]
    if is_torch_namespace(xp):
        import torch
        rows, cols = torch.triu_indices(n, n, offset=1, device=M.device)
        return M[rows, cols]
    out = xp.empty(n * (n - 1) // 2, dtype=M.dtype, device=device(M))
    start = 0
    for i in range(n - 1):  # row slices: no n² index arrays (np.triu_indices) to build and gather
        stop = start + n - 1 - i
        out[start:stop] = M[i, i + 1:]
        start = stop
    return out


def clip_(xp: ModuleType, a: Array, low: float, high: float) -> Array:
    """Clip ``a`` to ``[low, high]`` in place; returns ``a``."""
    if is_numpy_namespace(xp):
        return np.clip(a, low, high, out=a)
    if is_torch_namespace(xp):
        return a.clamp_(low, high)
    a[...] = xp.clip(a, low, high)
    return a


def fill_diagonal_(xp: ModuleType, a: Array, value: float) -> Array:
    """Set the diagonal of the square ``a`` to ``value`` in place; returns ``a``."""
    if is_numpy_namespace(xp):
        np.fill_diagonal(a, value)
        return a
    if is_torch_namespace(xp):
        return a.fill_diagonal_(value)
    index = xp.arange(a.shape[0], device=device(a))
    a[index, index] = value
    return a


def as_row_major(xp: ModuleType, a: Array, dtype: Any = None, copy: bool | None = None) -> Array:
    """``xp.asarray(a, dtype=dtype, copy=copy)`` on ``a``'s device, row-major (C order) on numpy.

    numpy's reductions along rows and its BLAS calls then read contiguous memory, and their
    rounding does not depend on how the caller's array happened to be laid out (e.g. a transposed
    view from xarray). ``copy=None`` copies only when needed.
    """
    if is_numpy_namespace(xp):
        return np.array(a, dtype=dtype, order="C", copy=copy)
    return xp.asarray(a, dtype=dtype, copy=copy, device=device(a))


def check_2d(name: str, a: Array) -> None:
    """Raise ValueError unless ``a`` is 2-D (``(n_stimuli, n_features)``); ``name`` names it in the message."""
    if a.ndim != 2:
        raise ValueError(f"{name} must be 2-D of shape (n_stimuli, n_features), got shape {tuple(a.shape)}")


def as_float(a: Array, dtype: Any | None, copy: bool) -> Array:
    """``a`` as a floating array of ``dtype`` (default: keep float32/float64, else float64), row-major on numpy."""
    xp = namespace(a)
    dtype = dtype_of(xp, dtype)
    if dtype is None:
        dtype = a.dtype if a.dtype in (xp.float32, xp.float64) else xp.float64
    return as_row_major(xp, a, dtype=dtype, copy=True if copy else None)


def as_float64(a: Array) -> Array:
    """``a`` as float64 of its own library and device (no copy when it already is)."""
    xp = namespace(a)
    return xp.astype(a, xp.float64, copy=False)
