"""Timing cases for the RDM and CKA metrics: ours vs the reference's way of computing them.

MajajHong2015-sized problem: 3200 stimuli, model features of 20000 or 1000 units (float32, as
networks give them) against 168 neuroids.

- ours: ``brainscore.metrics.similarity`` on labelled assemblies (one symmetric float32 product per
  representation; Spearman by argsort ranks; CKA in O(n²) from the Gram matrices).
- reference: what Brain-Score does, on bare arrays (so without its xarray overhead, which only
  favours it): ``1 - np.corrcoef`` per representation and ``scipy.stats.spearmanr`` on the upper
  triangles; biased CKA as its ``linear_CKA`` (three HSICs, each forming both Gram matrices and
  centring them with explicit n x n matrices H K H); unbiased CKA as its ``unbiased_linear_CKA``
  (three HSICs, each forming both Gram matrices in the features' dtype, then O(n²) sums).

Targets: RDM >= 2x, CKA >= 5x faster.

``CASES`` follows the format of ``perf/metrics.py`` (which collects and times every
``cases_*.py``); ``size`` is ``"full"`` (3200 stimuli), ``"small"`` (400) or a number of stimuli.
``ours`` and ``reference`` return the metric value, so the runner reports how far apart they are.
This file also runs standalone (median of repeated runs after a warm-up):

    python perf/cases_similarity.py [--size small] [--repeats 3] [--case rdm]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

N_NEUROIDS = 168
SIZES = {"full": 3200, "small": 400}


def _n_stimuli(size) -> int:
    return SIZES[size] if isinstance(size, str) else int(size)


def _setup(n_features: int):
    def setup(size="full"):
        from brainscore.data.assemblies import NeuroidAssembly

        n = _n_stimuli(size)
        rng = np.random.default_rng(0)
        X = rng.standard_normal((n, n_features), dtype=np.float32)
        Y = (X[:, :50] @ rng.standard_normal((50, N_NEUROIDS), dtype=np.float32) * 0.2
             + rng.standard_normal((n, N_NEUROIDS), dtype=np.float32)).astype(np.float32)
        ids = np.array([f"stimulus{i:05d}" for i in range(n)])
        objects = np.array([f"object{i % 64:02d}" for i in range(n)])

        def assembly(values):
            return NeuroidAssembly(values, dims=("presentation", "neuroid"),
                                   coords={"stimulus_id": ("presentation", ids),
                                           "object_name": ("presentation", objects),
                                           "neuroid_id": ("neuroid", np.arange(values.shape[1]))})

        return {"X": X, "Y": Y, "source": assembly(X), "target": assembly(Y)}

    return setup


# ---- ours ---------------------------------------------------------------------------------------
def ours_rdm(inputs) -> float:
    from brainscore.metrics.similarity.rdm import RDMMetric

    return float(RDMMetric()(inputs["source"], inputs["target"]))


def ours_cka(inputs) -> float:
    from brainscore.metrics.similarity.cka import CKAMetric

    return float(CKAMetric(unbiased=True)(inputs["source"], inputs["target"]))


def ours_cka_biased(inputs) -> float:
    from brainscore.metrics.similarity.cka import CKAMetric

    return float(CKAMetric(unbiased=False)(inputs["source"], inputs["target"]))


# ---- the reference's way ------------------------------------------------------------------------
def reference_rdm(inputs) -> float:
    import scipy.stats

    X, Y = inputs["X"], inputs["Y"]
    rdm_x, rdm_y = 1 - np.corrcoef(X), 1 - np.corrcoef(Y)
    upper = np.triu_indices(X.shape[0], k=1)
    return float(scipy.stats.spearmanr(rdm_x[upper], rdm_y[upper])[0])


def _centre(K):
    n = K.shape[0]
    H = np.eye(n) - np.ones((n, n)) / n
    return np.dot(np.dot(H, K), H)


def _linear_hsic(X, Y):
    return np.sum(_centre(np.dot(X, X.T)) * _centre(np.dot(Y, Y.T)))


def reference_cka_biased(inputs) -> float:
    """The reference's ``linear_CKA``: three HSIC calls, each with two Gram matrices and two n x n centrings."""
    X, Y = inputs["X"], inputs["Y"]
    return float(_linear_hsic(X, Y) / (np.sqrt(_linear_hsic(X, X)) * np.sqrt(_linear_hsic(Y, Y))))


def _unbiased_hsic(X, Y):
    n = X.shape[0]
    K, L = X @ X.T, Y @ Y.T
    K, L = K.copy(), L.copy()
    np.fill_diagonal(K, 0.0)
    np.fill_diagonal(L, 0.0)
    ones = np.ones((n, 1), dtype=K.dtype)
    K1, L1 = K @ ones, L @ ones
    return (float((K * L).sum()) + float(K1.sum() * L1.sum()) / ((n - 1.0) * (n - 2.0))
            - 2.0 * float((K1 * L1).sum()) / (n - 2.0)) / (n * (n - 3.0))


def reference_cka(inputs) -> float:
    """The reference's unbiased CKA: three HSIC calls, each computing both Gram matrices (in X's dtype)."""
    X, Y = inputs["X"], inputs["Y"]
    xy, xx, yy = _unbiased_hsic(X, Y), _unbiased_hsic(X, X), _unbiased_hsic(Y, Y)
    if xx * yy <= 0:
        return 0.0
    return float(xy / (np.sqrt(xx * yy) + 1e-12))


CASES = [
    {"name": "rdm 3200x20000 vs 168", "setup": _setup(20000), "ours": ours_rdm, "reference": reference_rdm},
    {"name": "rdm 3200x1000 vs 168", "setup": _setup(1000), "ours": ours_rdm, "reference": reference_rdm},
    {"name": "cka 3200x20000 vs 168", "setup": _setup(20000), "ours": ours_cka, "reference": reference_cka},
    {"name": "cka 3200x1000 vs 168", "setup": _setup(1000), "ours": ours_cka, "reference": reference_cka},
    {"name": "cka_biased 3200x20000 vs 168", "setup": _setup(20000), "ours": ours_cka_biased,
     "reference": reference_cka_biased, "reference_warmup": False,
     "note": "reference: 12 n x n centring products"},
    {"name": "cka_biased 3200x1000 vs 168", "setup": _setup(1000), "ours": ours_cka_biased,
     "reference": reference_cka_biased, "reference_warmup": False,
     "note": "reference: 12 n x n centring products"},
]


def _time(fn, inputs, repeats: int) -> tuple[float, float]:
    value = fn(inputs)  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn(inputs)
        times.append(time.perf_counter() - start)
    return float(np.median(times)), value


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="full", help="'full' (3200 stimuli), 'small' (400) or a number")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--case", default="", help="run only cases whose name contains this")
    args = parser.parse_args(argv)
    size = args.size if args.size in SIZES else int(args.size)
    print(f"{_n_stimuli(size)} stimuli, median of {args.repeats} runs after a warm-up")
    print(f"{'case':32s} {'ours (s)':>9s} {'reference (s)':>14s} {'speed-up':>9s} {'|difference|':>13s}")
    for case in CASES:
        if args.case not in case["name"]:
            continue
        inputs = case["setup"](size)
        ours, ours_value = _time(case["ours"], inputs, args.repeats)
        reference, reference_value = _time(case["reference"], inputs, args.repeats)
        print(f"{case['name']:32s} {ours:9.3f} {reference:14.3f} {reference / ours:8.1f}x "
              f"{abs(ours_value - reference_value):13.2e}", flush=True)


if __name__ == "__main__":
    main()
