"""The one backend mechanism of the metric kernels: the shim's operations, a guard against backend
checks outside it, and numpy == torch for every public kernel."""
from __future__ import annotations

import ast
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
import torch

import array_api_compat.numpy
import array_api_compat.torch
import brainscore.metrics
from brainscore.metrics.ceilings.internal_consistency import InternalConsistency, split_half_consistency
from brainscore.metrics.kernels import backend as ns
from brainscore.metrics.kernels import correlation as C
from brainscore.metrics.kernels import regression as R
from brainscore.metrics.kernels import cka as CK
from brainscore.metrics.kernels import rdm as RD

XN, XT = array_api_compat.numpy, array_api_compat.torch
METRICS = Path(brainscore.metrics.__file__).parent
SHIM = METRICS / "kernels" / "backend.py"

# torch devices to compare with numpy: the CPU always, a GPU where there is one
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


# ---- no backend checks outside the shim -----------------------------------------------------------
_CHECK_NAMES = {"is_torch", "_is_torch", "is_torch_array", "is_numpy_array", "is_torch_namespace",
                "is_numpy_namespace", "is_cupy_array", "is_cupy_namespace", "is_array_api_obj"}
_TORCH_TYPES = {("torch", "Tensor")}
_NUMPY_TYPES = {("np", "ndarray"), ("numpy", "ndarray")}


def backend_checks(source: str, numpy_types: bool = True) -> list[str]:
    """Places in ``source`` that choose code by array library (what only the shim may do).

    Flags: ``import torch`` (and ``from torch ...``), the names of type predicates (``is_torch``,
    ``_is_torch``, ``is_torch_array``, ``is_numpy_namespace``, ...), also when imported,
    ``isinstance(..., torch.Tensor)`` (and ``np.ndarray`` with ``numpy_types``),
    ``type(...).__module__`` and ``xp.name``.
    """
    array_types = _TORCH_TYPES | (_NUMPY_TYPES if numpy_types else set())
    found = []
    for node in ast.walk(ast.parse(source)):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "torch" for a in node.names):
            found.append(f"{where}: import torch")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch":
            found.append(f"{where}: from torch import")
        elif isinstance(node, ast.ImportFrom) and any(a.name in _CHECK_NAMES for a in node.names):
            found.append(f"{where}: imports a type predicate")
        elif isinstance(node, ast.Name) and node.id in _CHECK_NAMES:
            found.append(f"{where}: {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in _CHECK_NAMES:
            found.append(f"{where}: .{node.attr}")
        elif isinstance(node, ast.Attribute) and node.attr == "__module__":
            found.append(f"{where}: .__module__")
        elif isinstance(node, ast.Attribute) and node.attr == "name" and isinstance(node.value, ast.Name) \
                and node.value.id == "xp":
            found.append(f"{where}: xp.name")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" \
                and len(node.args) == 2:
            types = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
            for t in types:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and (t.value.id, t.attr) in array_types:
                    found.append(f"{where}: isinstance(..., {t.value.id}.{t.attr})")
    return found


@pytest.mark.parametrize("snippet", [
    "import torch\n",
    "from torch import Tensor\n",
    "def f(a):\n    return isinstance(a, torch.Tensor)\n",
    "def f(a):\n    return isinstance(a, (int, np.ndarray))\n",
    "def f(a):\n    return _is_torch(a)\n",
    "def f(a):\n    return backend.is_torch(a)\n",
    "def f(a):\n    return type(a).__module__.startswith('torch')\n",
    "def f(xp):\n    return xp.name == 'numpy'\n",
    "from array_api_compat import is_torch_array\n",
])
def test_the_guard_flags_a_backend_check(snippet):
    assert backend_checks(snippet)


def test_the_guard_passes_array_api_code():
    assert backend_checks("def f(a):\n    xp = namespace(a)\n    return xp.sum(a * a, axis=0)\n") == []


#: The modules whose array code runs on numpy or torch (a ``device`` argument): no check of any kind.
ARRAY_MODULES = sorted({*(METRICS / "kernels").glob("*.py"), METRICS / "ceilings" / "internal_consistency.py",
                        METRICS / "neural" / "regression.py"} - {SHIM})


def test_no_kernel_checks_the_array_library_outside_the_shim():
    """Every numpy/torch difference lives in kernels/backend.py; the kernels are written once."""
    assert {"correlation.py", "regression.py", "design.py", "pls.py", "ridge.py", "least_squares.py",
            "single_unit.py", "rdm.py", "cka.py", "internal_consistency.py"} <= {p.name for p in ARRAY_MODULES}
    offenders = {str(p.relative_to(METRICS)): checks for p in ARRAY_MODULES if (checks := backend_checks(p.read_text()))}
    assert offenders == {}, f"backend checks outside kernels/backend.py (move them into the shim): {offenders}"


def test_no_metric_module_has_torch_code_outside_the_shim():
    """Elsewhere in metrics/ numpy-only input handling (e.g. ``isinstance(data, np.ndarray)``) is fine, torch is not."""
    modules = sorted(p for p in METRICS.rglob("*.py") if p != SHIM)
    offenders = {str(p.relative_to(METRICS)): checks for p in modules
                 if (checks := backend_checks(p.read_text(), numpy_types=False))}
    assert offenders == {}, f"torch code outside kernels/backend.py: {offenders}"


# ---- the shim ---------------------------------------------------------------------------------------
def test_namespace_is_array_api_compat():
    a, t = np.zeros(3), torch.zeros(3)
    assert ns.namespace(a) is XN and ns.namespace(t) is XT
    assert ns.namespace(a, t) is XT and ns.namespace(t, a, 1.0, None) is XT    # numpy follows the tensor
    assert ns.namespace() is XN and ns.namespace(2.0) is XN
    assert ns.device(a) == "cpu" and ns.device(a, t) == torch.device("cpu")
    with pytest.raises(TypeError):
        ns.namespace([1.0, 2.0])


def test_namespace_of_device_and_conversions():
    assert ns.namespace_of_device(None) == (XN, "cpu")
    xp, dev = ns.namespace_of_device("cpu")
    assert xp is XT and dev == torch.device("cpu")
    a = np.arange(6.0).reshape(2, 3)
    assert ns.on_device(a, None) is a
    t = ns.on_device(a, "cpu")
    assert isinstance(t, torch.Tensor) and t.dtype == torch.float64
    np.testing.assert_array_equal(ns.to_numpy(t), a)
    np.testing.assert_array_equal(ns.to_numpy(torch.ones(2, requires_grad=True) * 2), [2.0, 2.0])
    assert ns.to_numpy(a) is a
    for xp in (XN, XT):
        for dtype in (np.float32, np.dtype("float32"), "float32", torch.float32):
            assert ns.dtype_of(xp, dtype) == xp.float32
        assert ns.dtype_of(xp, None) is None and ns.dtype_of(xp, "f8") == xp.float64


@pytest.mark.parametrize("xp,lib", [(XN, np.asarray), (XT, torch.as_tensor)])
def test_shim_operations_agree_with_plain_numpy(xp, lib):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((40, 40))
    rows, cols = np.array([3, 0, 7, 7]), np.array([1, 5])
    np.testing.assert_array_equal(ns.to_numpy(ns.take_block(xp, lib(A), lib(rows), lib(cols))), A[rows][:, cols])
    sym = A @ A.T + np.eye(40)
    for m in (40, 10):                                          # scipy's subset driver (> 32) and full eigh
        value, vector = ns.top_eigenvector(xp, lib(sym[:m, :m]))
        values, vectors = np.linalg.eigh(sym[:m, :m])
        assert value == pytest.approx(values[-1], rel=1e-12)
        assert abs(float(ns.to_numpy(vector) @ vectors[:, -1])) == pytest.approx(1.0, abs=1e-10)
    B = rng.standard_normal((40, 3))
    np.testing.assert_allclose(ns.to_numpy(ns.cholesky_solve(xp, lib(sym), lib(B))), np.linalg.solve(sym, B), rtol=1e-9)
    np.testing.assert_allclose(ns.to_numpy(ns.cholesky_solve(xp, lib(sym), lib(B[:, 0]))),
                               np.linalg.solve(sym, B[:, 0]), rtol=1e-9)
    np.testing.assert_array_equal(ns.to_numpy(ns.upper_triangle(xp, lib(A))), A[np.triu_indices(40, k=1)])
    clipped = lib(A.copy())
    assert ns.clip_(xp, clipped, -0.5, 0.5) is clipped or xp is XN
    np.testing.assert_array_equal(ns.to_numpy(clipped), np.clip(A, -0.5, 0.5))
    filled = lib(A.copy())
    ns.fill_diagonal_(xp, filled, 7.0)
    expected = A.copy()
    np.fill_diagonal(expected, 7.0)
    np.testing.assert_array_equal(ns.to_numpy(filled), expected)


@pytest.mark.parametrize("xp,lib", [(XN, np.asarray), (XT, torch.as_tensor)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sort_keys_sort_and_mark_ties(xp, lib, dtype):
    x = np.array([0.5, -0.0, 2.0, 0.0, -3.0, 0.5, np.float32(1e-30)], dtype=dtype)
    order, keys = ns.sort_keys(xp, lib(x))
    order, keys = ns.to_numpy(order), ns.to_numpy(keys)
    np.testing.assert_array_equal(x[order], np.sort(x))
    # equal values (including -0.0 and 0.0) have equal keys, different values different keys
    equal_keys = keys[1:] == keys[:-1]
    np.testing.assert_array_equal(equal_keys, np.sort(x)[1:] == np.sort(x)[:-1])


def test_single_threaded_restores_torch_threads():
    before = torch.get_num_threads()
    with ns.single_threaded(XT, torch.device("cpu")):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def test_as_row_major_makes_numpy_c_contiguous():
    a = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    out = ns.as_row_major(XN, a, dtype=np.float32)
    assert out.flags.c_contiguous and out.dtype == np.float32
    np.testing.assert_array_equal(out, a)
    c = np.arange(4.0)
    assert ns.as_row_major(XN, c) is c and ns.as_row_major(XN, c, copy=True) is not c


# ---- numpy == torch for every public kernel ---------------------------------------------------------
def _rng_data(n=90, p=40, q=6, seed=3):
    rng = np.random.default_rng(seed)
    latent = rng.standard_normal((n, 5))
    X = latent @ rng.standard_normal((5, p)) + 0.5 * rng.standard_normal((n, p)) + 2.0
    Y = latent @ rng.standard_normal((5, q)) + rng.standard_normal((n, q)) - 1.0
    return X, Y


def _folds(n, k=3):
    tests = [np.arange(i, n, 9) for i in range(k)]
    return [(np.setdiff1d(np.arange(n), test), test) for test in tests]


def _cases():
    """(name, function, numpy arguments, keyword arguments): numpy arrays become tensors for torch."""
    rng = np.random.default_rng(1)
    X, Y = _rng_data()
    Xw, Yw = _rng_data(p=300, seed=4)                        # features > stimuli: the kernel (Gram) form
    a, b = rng.standard_normal((50, 7)), rng.standard_normal((50, 7))
    an = a.copy()
    an[[2, 9], 1] = np.nan
    ties = np.round(rng.standard_normal(300), 1)
    K, L = CK.gram(X), CK.gram(Y)
    rdm1, rdm2 = RD.correlation_rdm(X), RD.correlation_rdm(X + rng.standard_normal(X.shape))
    folds = _folds(90)
    cases = [
        ("correlation.pearsonr_columns", C.pearsonr_columns, (a, b), {}),
        ("correlation.pearsonr_columns float32", C.pearsonr_columns, (a.astype(np.float32), b.astype(np.float32)), {}),
        ("correlation.pearsonr_columns_nan", C.pearsonr_columns_nan, (an, b), {}),
        ("correlation.spearman_brown", C.spearman_brown, (np.array([-0.2, 0.5, 0.9]),), {}),
        ("correlation.pearsonr_column_pairs", C.pearsonr_column_pairs, (a, b[:, :4]), {}),
        ("rdm.stimulus_correlation_matrix", RD.stimulus_correlation_matrix, (X,), {}),
        ("rdm.stimulus_correlation_matrix float32", RD.stimulus_correlation_matrix, (X,), dict(dtype=np.float32)),
        ("rdm.correlation_rdm", RD.correlation_rdm, (X,), {}),
        ("rdm.upper_triangle", RD.upper_triangle, (rdm1,), {}),
        ("rdm.rankdata_average", RD.rankdata_average, (ties,), {}),
        ("rdm.rankdata_average float32", RD.rankdata_average, (ties.astype(np.float32),), {}),
        ("rdm.spearman", RD.spearman, (ties, ties[::-1] + rng.standard_normal(300)), {}),
        ("rdm.pearson", RD.pearson, (ties, rng.standard_normal(300)), {}),
        ("rdm.rdm_spearman", RD.rdm_spearman, (rdm1, rdm2), {}),
        ("cka.gram", CK.gram, (X,), {}),
        ("cka.centre_gram", CK.centre_gram, (K,), {}),
        ("cka.hsic_biased", CK.hsic_biased, (K, L), {}),
        ("cka.hsic_unbiased", CK.hsic_unbiased, (K, L), {}),
        ("cka.cka_from_grams", CK.cka_from_grams, (K, L), {}),
        ("cka.cka_from_grams biased", CK.cka_from_grams, (K, L), dict(unbiased=False)),
        ("cka.linear_cka gram", CK.linear_cka, (Xw, Y), dict(method="gram")),
        ("cka.linear_cka features", CK.linear_cka, (X, Y), dict(method="features")),
        ("cka.linear_cka_unbiased", CK.linear_cka_unbiased, (Xw, Y), {}),
        ("cka.linear_cka_biased float32", CK.linear_cka_biased, (X, Y), dict(dtype=np.float32)),
        ("regression.fold_pearsonr", R.fold_pearsonr, ([Y[test] + 0.1 for _, test in folds], Y, folds), {}),
        ("regression.fit_predict", R.fit_predict, ("ridge", Xw[:80], Yw[:80], Xw[80:]), {}),
        ("regression.cross_validated_predictions", R.cross_validated_predictions, ("linear", Xw, Yw, folds), {}),
    ]
    for method, kwargs in [("pls", dict(n_components=6)), ("ridge", {}), ("ridgecv", {}), ("linear", {}),
                           ("neuron_to_neuron", {})]:
        function = getattr(R, method)
        cases.append((f"regression.{method} covariance form", function, (X, Y, folds), kwargs))
        cases.append((f"regression.{method} kernel form", function, (Xw, Yw, folds), kwargs))
        cases.append((f"regression.{method} float32", function, (Xw.astype(np.float32), Yw, folds), kwargs))
    return cases


CASES = _cases()

#: Public names of the kernel modules that are not array kernels, or are numpy-only by design.
NOT_COMPARED = {
    "regression.ALPHA_LIST", "regression.Folds", "regression.METHODS",   # constants
    "rdm.SubsetRanks", "rdm.subset_spearman",             # numpy only: ranks of subsets of one sort
}


def test_every_public_kernel_is_compared_on_both_backends():
    public = {f"{module.__name__.rsplit('.', 1)[1]}.{name}" for module in (C, R, RD, CK) for name in module.__all__}
    compared = {name.split(" ")[0] for name, *_ in CASES}
    assert public - NOT_COMPARED - compared == set()


def _to_torch(value, dev):
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return torch.as_tensor(value, device=dev)
    if isinstance(value, list):
        return [_to_torch(v, dev) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v for v in value]
    return value


def _as_numpy(value):
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], R.FitInfo):
        return _as_numpy(value[0]), value[1].values
    if isinstance(value, list):
        return [_as_numpy(v) for v in value]
    return ns.to_numpy(value) if hasattr(value, "shape") else value


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("name,function,args,kwargs", CASES, ids=[c[0] for c in CASES])
def test_torch_gives_the_numpy_numbers_for_every_kernel(name, function, args, kwargs, dev):
    expected = function(*args, **kwargs)
    got = function(*[_to_torch(a, dev) for a in args], **kwargs)
    arrays = [] if isinstance(got, (float, np.floating)) else [got] if hasattr(got, "shape") else got if isinstance(got, list) else \
        ([got[0]] if hasattr(got[0], "shape") else got[0]) if isinstance(got, tuple) else []
    for array in arrays:                                                      # results stay in the caller's library
        assert isinstance(array, torch.Tensor) and array.device.type == dev
    expected, got = _as_numpy(expected), _as_numpy(got)
    if isinstance(expected, tuple):                                           # (predictions, info.values)
        (expected, info_np), (got, info_torch) = expected, got
        for key in ("alpha", "rank", "n_components"):
            assert info_np.get(key) == info_torch.get(key)
        for e, g in zip(info_np.get("mapping", []), info_torch.get("mapping", [])):
            np.testing.assert_array_equal(e, g)
    if isinstance(expected, np.ndarray) and isinstance(got, np.ndarray) and expected.ndim == 2 and \
            name.startswith("regression."):
        expected, got = [expected], [got]
    # float64: rounding only; float32 products: float32 rounding (summed in a different order by each
    # BLAS), amplified by the conditioning of a regression: compared relative to the largest entry
    rtol, atol = (1e-4, 1e-4) if "float32" in name else (1e-7, 1e-10)
    if isinstance(expected, list):
        assert len(expected) == len(got)
        for e, g in zip(expected, got):
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol * np.abs(e).max())
    elif isinstance(expected, (float, np.floating)):
        assert isinstance(got, (float, np.floating))
        assert got == pytest.approx(expected, rel=rtol * 1e-3, abs=atol * 1e-2)
    else:
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("missing", [0.0, 0.25])
def test_split_half_kernel_gives_the_numpy_numbers_on_torch(dev, missing):
    rng = np.random.default_rng(5)
    n_reps, n_stimuli = 8, 30
    values = rng.standard_normal((n_reps * n_stimuli, 4)) + np.tile(rng.standard_normal((n_stimuli, 4)), (n_reps, 1))
    values[rng.random(len(values)) < missing] = np.nan
    stimuli, repetitions = np.tile(np.arange(n_stimuli), n_reps), np.repeat(np.arange(n_reps), n_stimuli)
    _, halves = InternalConsistency().halves(np.arange(n_reps))
    expected = split_half_consistency(values, stimuli, repetitions, n_stimuli, halves)
    got = split_half_consistency(values, stimuli, repetitions, n_stimuli, halves, xp_device=dev)
    assert isinstance(got, np.ndarray) and got.shape == (10, 4)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    # and the first split against a direct computation: half means, Pearson r, Spearman-Brown
    first = halves[0][repetitions] == 1
    with warnings.catch_warnings():                                            # a stimulus without trials in a half
        warnings.simplefilter("ignore", RuntimeWarning)
        means = [np.array([np.nanmean(values[half & (stimuli == s)], axis=0) for s in range(n_stimuli)])
                 for half in (first, ~first)]
    keep = ~np.isnan(means[0][:, 0]) & ~np.isnan(means[1][:, 0])
    r = scipy.stats.pearsonr(means[0][keep, 0], means[1][keep, 0])[0]
    assert got[0, 0] == pytest.approx(2 * r / (1 + r), abs=1e-12)

