"""Timing cases of the spine: the metric stage of Cowley2026.210325.V4-pls on real features.

The features are EfficientNet-Lite0's activations at its committed V4 layer (and optionally any
``BRAINSCORE_SPINE_LAYERS``, comma-separated) for the 640 images of session 210325 as the benchmark
shows them; the target is the repetition-averaged V4 data (640 x 50). Ours is the registered
``pls`` metric exactly as the benchmark calls it; the reference is scikit-learn's PLSRegression(25,
scale=False) fitted per split as the reference does, with a per-neuroid ``scipy.stats.pearsonr``
loop, median over neuroids, mean over splits, on the same 10 shuffle splits.

Needs the data mirror (``BRAINSCORE_DATA_MIRROR``, default ``../shared/data``) and runs the network
once if the activations are not cached. Run with ``python perf/metrics.py --case Cowley``.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

BENCHMARK = "Cowley2026.210325.V4-pls"
os.environ.setdefault("BRAINSCORE_DATA_MIRROR", str(Path(__file__).resolve().parents[2] / "shared" / "data"))


def _setup(layer: str | None):
    def setup(size):
        import brainscore
        from brainscore.benchmarks.screen import place_on_screen
        from brainscore.data import align_presentations

        benchmark = brainscore.load_benchmark(BENCHMARK)
        model = brainscore.load_model("efficientnet-lite0")
        chosen = layer or model.layer_for("V4")
        stimuli = place_on_screen(benchmark.stimulus_set, model.visual_degrees(), benchmark.visual_degrees)
        features = model.activations_model(stimuli, layers=[chosen])
        features = features.squeeze("time_bin") if "time_bin" in features.dims else features
        target = benchmark.assembly
        source, _ = align_presentations(features, target)
        return {"benchmark": benchmark, "features": features, "target": target, "layer": chosen,
                "X": np.asarray(source.values, dtype=np.float64), "Y": np.asarray(target.values, dtype=np.float64)}
    return setup


def ours(inputs):
    return float(inputs["benchmark"].metric(inputs["features"], inputs["target"]))


def reference(inputs):
    from scipy.stats import pearsonr
    from sklearn.cross_decomposition import PLSRegression
    from sklearn.model_selection import ShuffleSplit

    X, Y = inputs["X"], inputs["Y"]
    split_scores = []
    for train, test in ShuffleSplit(n_splits=10, train_size=0.9, test_size=None, random_state=1).split(X):
        prediction = PLSRegression(n_components=25, scale=False).fit(X[train], Y[train]).predict(X[test])
        r = [pearsonr(prediction[:, i], Y[test, i])[0] for i in range(Y.shape[1])]
        split_scores.append(np.median(r))
    return float(np.mean(split_scores))


def _case(layer: str | None):
    label = layer or "committed V4 layer"
    return {"name": f"pls Cowley2026.210325 efficientnet-lite0 {label}", "setup": _setup(layer), "ours": ours,
            "reference": reference, "reference_warmup": False,
            "note": "real features (640 stimuli) vs 50 V4 neuroids; sklearn NIPALS stops early, so values differ ~1e-3"}


CASES = [_case(None)] + [_case(layer) for layer in os.environ.get("BRAINSCORE_SPINE_LAYERS", "").split(",") if layer]
