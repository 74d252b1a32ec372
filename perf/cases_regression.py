"""Timing cases for the regression metrics and the internal-consistency ceiling.

MajajHong2015-sized problem: 3200 stimuli (64 objects), model features of 20000 or 1000 units
(float32, as networks give them: rectified mixtures of 100 latent factors with a decaying
spectrum) against 168 neuroids; for the ceiling, 50 repetitions of 3200 stimuli x 168 neuroids.

- ours: the registered metric on labelled assemblies (``load_metric("pls")`` etc.), including
  alignment, splits and the Score.
- reference: what Brain-Score does, on bare arrays (so without its xarray alignment and sorting,
  which only favours it): for each of the 10 stratified shuffle splits, the scikit-learn estimator
  (``PLSRegression(25, scale=False)``, ``Ridge(alpha=1)``, ``RidgeCV(alphas=ALPHA_LIST)``,
  ``LinearRegression()``) fitted and predicted, ``scipy.stats.pearsonr`` per neuroid in a Python
  loop, the median over neuroids, the mean over splits. For the ceiling: per split, xarray's
  groupby-mean of each half (as the reference averages halves), then the per-neuroid pearsonr loop
  and Spearman-Brown.
- Where the reference takes minutes, it runs only the first ``k`` splits and its time is scaled by
  ``10 / k`` (``reference_scale``); the value compared is then the mean over those ``k`` splits.

Each case is a dict (the format :mod:`benchmarks.metrics` documents)::

    {"name", "setup": callable(size) -> inputs, "ours": callable(inputs) -> value,
     "reference": callable(inputs) -> value, optional "reference_scale", "reference_warmup",
     "difference": callable(ours_value, reference_value) -> float, "note"}

Run all cases with ``python perf/metrics.py --case pls`` (see that script's options).
"""
from __future__ import annotations

import warnings

import numpy as np

N_NEUROIDS = 168
N_OBJECTS = 64
N_SPLITS = 10
SIZES = {"full": 3200, "small": 400}


def _n_stimuli(size) -> int:
    return SIZES[size] if isinstance(size, str) else int(size)


# ---- inputs -------------------------------------------------------------------------------------
def _setup(n_features: int):
    def setup(size="full"):
        from brainscore.data.assemblies import NeuroidAssembly

        n = _n_stimuli(size)
        rng = np.random.default_rng(0)
        latent = rng.standard_normal((n, 100)) * (0.93 ** np.arange(100))
        X = np.empty((n, n_features), dtype=np.float32)
        for start in range(0, n_features, 4096):               # bounded temporaries
            width = min(4096, n_features - start)
            X[:, start:start + width] = np.maximum(latent @ rng.standard_normal((100, width))
                                                   + rng.standard_normal((n, width)), 0)
        Y = latent[:, :30] @ rng.standard_normal((30, N_NEUROIDS)) + 2.0 * rng.standard_normal((n, N_NEUROIDS))
        ids = np.array([f"stimulus{i:05d}" for i in range(n)])
        n_objects = min(N_OBJECTS, n // 20)                    # stratified 10% test sets need >= 1 per object
        objects = np.array([f"object{i % n_objects:02d}" for i in range(n)])

        def assembly(values, prefix):
            return NeuroidAssembly(values, dims=("presentation", "neuroid"),
                                   coords={"stimulus_id": ("presentation", ids),
                                           "object_name": ("presentation", objects),
                                           "neuroid_id": ("neuroid", [f"{prefix}{i}" for i in range(values.shape[1])])})

        return {"X": X, "Y": Y, "objects": objects, "source": assembly(X, "unit"), "target": assembly(Y, "neuron")}

    return setup


def _splits(inputs, k=N_SPLITS):
    from sklearn.model_selection import StratifiedShuffleSplit

    splitter = StratifiedShuffleSplit(n_splits=N_SPLITS, train_size=0.9, test_size=None, random_state=1)
    return list(splitter.split(np.zeros(len(inputs["Y"])), inputs["objects"]))[:k]


# ---- ours ---------------------------------------------------------------------------------------
def _ours(identifier, **kwargs):
    def run(inputs):
        from brainscore.api import load_metric

        return load_metric(identifier, **kwargs)(inputs["source"], inputs["target"])

    return run


# ---- the reference's way ------------------------------------------------------------------------
def _reference(make_regression, k=N_SPLITS):
    """Per split: sklearn fit/predict, per-neuroid scipy pearsonr loop, median; the split medians."""

    def run(inputs):
        import scipy.stats

        X, Y = inputs["X"], inputs["Y"]
        medians = []
        for train, test in _splits(inputs, k):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")            # sklearn's PLS convergence warnings
                prediction = make_regression().fit(X[train], Y[train]).predict(X[test])
            r = [scipy.stats.pearsonr(prediction[:, j], Y[test, j])[0] for j in range(Y.shape[1])]
            medians.append(np.median(r))
        return np.array(medians)

    return run


def _difference(ours, reference) -> float:
    """|our mean over the splits the reference ran - the reference's mean over them|."""
    k = len(reference)
    return abs(float(np.mean(ours.attrs["split_scores"][:k])) - float(np.mean(reference)))


def _pls():
    from sklearn.cross_decomposition import PLSRegression
    return PLSRegression(n_components=25, scale=False)


def _ridge():
    from sklearn.linear_model import Ridge
    return Ridge(alpha=1)


def _ridgecv():
    from sklearn.linear_model import RidgeCV
    from brainscore.metrics.kernels.regression import ALPHA_LIST
    return RidgeCV(alphas=ALPHA_LIST)


def _linear():
    from sklearn.linear_model import LinearRegression
    return LinearRegression()


class _SingleUnit:
    """The reference's SingleRegression: per neuroid, the source unit of highest training r."""

    def fit(self, X, Y):
        Xc = X - X.mean(axis=0)
        Xn = Xc / np.linalg.norm(Xc, axis=0)
        r = np.zeros((Y.shape[1], X.shape[1]))
        for j in range(Y.shape[1]):                         # the reference's loop over neurons
            y = Y[:, j] - Y[:, j].mean()
            r[j] = (Xn * (y / np.linalg.norm(y))[:, None]).sum(axis=0)
        self.mapping = np.nanargmax(r, axis=1)
        return self

    def predict(self, X):
        return X[:, self.mapping]


# ---- internal consistency -----------------------------------------------------------------------
N_REPETITIONS = 50


def _setup_trials(size="full"):
    from brainscore.data.assemblies import NeuroidAssembly

    n = _n_stimuli(size)
    rng = np.random.default_rng(1)
    signal = rng.standard_normal((n, N_NEUROIDS))
    stimulus = np.repeat(np.arange(n), N_REPETITIONS)
    repetition = np.tile(np.arange(N_REPETITIONS), n)
    values = signal[stimulus] + 3.0 * rng.standard_normal((len(stimulus), N_NEUROIDS))
    assembly = NeuroidAssembly(values, dims=("presentation", "neuroid"),
                               coords={"stimulus_id": ("presentation", np.array([f"stimulus{i:05d}" for i in stimulus])),
                                       "repetition": ("presentation", repetition),
                                       "neuroid_id": ("neuroid", np.arange(N_NEUROIDS))})
    return {"assembly": assembly}


def _ours_ceiling(inputs):
    from brainscore.api import load_ceiling

    return load_ceiling("internal_consistency")(inputs["assembly"])


def _reference_ceiling(inputs):
    """Per split: xarray groupby-mean of each half, per-neuroid pearsonr loop, Spearman-Brown, median."""
    import scipy.stats
    import xarray as xr
    from sklearn.model_selection import ShuffleSplit

    assembly = xr.DataArray(inputs["assembly"])
    repetitions = assembly["repetition"].values
    unique = np.unique(repetitions)
    medians = []
    for first, second in ShuffleSplit(n_splits=10, train_size=0.5, test_size=None, random_state=1).split(unique):
        halves = []
        for part in (first, second):
            half = assembly.isel(presentation=np.isin(repetitions, unique[part]))
            halves.append(half.groupby("stimulus_id").mean().sortby("stimulus_id"))
        a, b = halves[0].transpose("stimulus_id", "neuroid").values, halves[1].transpose("stimulus_id", "neuroid").values
        r = np.array([scipy.stats.pearsonr(a[:, j], b[:, j])[0] for j in range(a.shape[1])])
        medians.append(np.median(2 * r / (1 + r)))
    return float(np.mean(medians))


# ---- the cases ----------------------------------------------------------------------------------
CASES = [
    {"name": "pls 3200x20000 vs 168", "setup": _setup(20000), "ours": _ours("pls"),
     "reference": _reference(_pls, k=1), "reference_scale": N_SPLITS, "reference_warmup": False,
     "difference": _difference, "note": "reference: 1 of 10 splits, time x10"},
    {"name": "pls 3200x1000 vs 168", "setup": _setup(1000), "ours": _ours("pls"),
     "reference": _reference(_pls), "reference_warmup": False, "difference": _difference},
    {"name": "ridgecv 3200x20000 vs 168", "setup": _setup(20000), "ours": _ours("ridgecv"), "repeats": 1,
     "ours_warmup": False, "reference": _reference(_ridgecv, k=1), "reference_scale": N_SPLITS, "reference_warmup": False,
     "difference": _difference, "note": "reference: 1 of 10 splits, time x10; ours: 1 run"},
    {"name": "ridgecv 3200x1000 vs 168", "setup": _setup(1000), "ours": _ours("ridgecv"),
     "reference": _reference(_ridgecv, k=2), "reference_scale": N_SPLITS / 2, "reference_warmup": False,
     "difference": _difference, "note": "reference: 2 of 10 splits, time x5"},
    {"name": "ridge 3200x20000 vs 168", "setup": _setup(20000), "ours": _ours("ridge"), "repeats": 2,
     "reference": _reference(_ridge, k=2), "reference_scale": N_SPLITS / 2, "reference_warmup": False,
     "difference": _difference, "note": "reference: 2 of 10 splits, time x5"},
    {"name": "ridge 3200x1000 vs 168", "setup": _setup(1000), "ours": _ours("ridge"),
     "reference": _reference(_ridge), "difference": _difference},
    {"name": "linear 3200x1000 vs 168", "setup": _setup(1000), "ours": _ours("linear_predictivity"),
     "reference": _reference(_linear), "difference": _difference},
    {"name": "neuron_to_neuron 3200x1000 vs 168", "setup": _setup(1000), "ours": _ours("neuron_to_neuron"),
     "reference": _reference(_SingleUnit), "difference": _difference},
    {"name": "internal_consistency 3200x168x50 reps", "setup": _setup_trials, "ours": _ours_ceiling,
     "reference": _reference_ceiling},
]
