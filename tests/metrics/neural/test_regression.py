"""Cross-validated regression metrics: the whole score against a reference-style computation."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.stats
import xarray as xr
from sklearn.cross_decomposition import PLSRegression
from sklearn.linear_model import Ridge, RidgeCV
from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit

from brainscore.registry import load_metric
from brainscore.data import NeuroidAssembly
from brainscore.errors import AlignmentError, ValidationError
from brainscore.metrics.kernels.regression import ALPHA_LIST
from brainscore.metrics.neural.regression import CrossRegressedCorrelation


def _pair(n=200, p=300, q=20, seed=0, n_objects=8, dtype=np.float32):
    """A model (source) and data (target) driven by shared latents; target sorted by stimulus_id."""
    rng = np.random.default_rng(seed)
    latent = rng.standard_normal((n, 6))
    X = np.maximum(latent @ rng.standard_normal((6, p)) + rng.standard_normal((n, p)), 0).astype(dtype)
    Y = latent @ rng.standard_normal((6, q)) + 2 * rng.standard_normal((n, q))
    ids = np.array([f"stim{i:04d}" for i in range(n)])
    objects = np.array([f"obj{i % n_objects}" for i in range(n)])
    source = NeuroidAssembly(X, dims=("presentation", "neuroid"),
                             coords={"stimulus_id": ("presentation", ids), "object_name": ("presentation", objects),
                                     "neuroid_id": ("neuroid", [f"unit{i}" for i in range(p)])})
    target = NeuroidAssembly(Y, dims=("presentation", "neuroid"),
                             coords={"stimulus_id": ("presentation", ids), "object_name": ("presentation", objects),
                                     "neuroid_id": ("neuroid", [f"n{i}" for i in range(q)]),
                                     "region": ("neuroid", ["V4"] * q)})
    return source, target


def _reference_style(source, target, make_regression, splitter, labels=None):
    """What the reference computes: sklearn regression per split, per-neuroid scipy pearsonr loop."""
    X, Y = source.values.astype(np.float64), target.values
    medians = []
    for train, test in splitter.split(np.zeros(len(Y)), labels):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prediction = make_regression().fit(X[train], Y[train]).predict(X[test])
        r = [scipy.stats.pearsonr(prediction[:, j], Y[test, j])[0] for j in range(Y.shape[1])]
        medians.append(np.median(r))
    medians = np.array(medians)
    return medians.mean(), medians.std() / np.sqrt(len(medians)), medians


def test_pls_score_matches_reference_style_computation():
    source, target = _pair()
    score = load_metric("pls", crossvalidation_kwargs=dict(stratification_coord=None))(source, target)
    center, error, medians = _reference_style(source, target, lambda: PLSRegression(25, scale=False),
                                              ShuffleSplit(10, train_size=0.9, test_size=None, random_state=1))
    assert float(score) == pytest.approx(center, abs=2e-3)
    # per split, scikit-learn's NIPALS (tol 1e-6) stops short of convergence by a few 1e-3 ...
    np.testing.assert_allclose(score.attrs["split_scores"], medians, atol=5e-3)
    assert score.attrs["error"] == pytest.approx(error, abs=1e-3)
    # ... and run to convergence it gives our numbers
    _, _, converged = _reference_style(source, target,
                                       lambda: PLSRegression(25, scale=False, tol=1e-14, max_iter=100000),
                                       ShuffleSplit(10, train_size=0.9, test_size=None, random_state=1))
    np.testing.assert_allclose(score.attrs["split_scores"], converged, atol=1e-5)
    assert score.attrs["error"] == pytest.approx(np.std(score.attrs["split_scores"]) / np.sqrt(10), rel=1e-12)
    assert 0.3 < float(score) < 0.95                      # the latents make the data predictable
    raw = score.attrs["raw"]
    assert raw.dims == ("split", "neuroid") and raw.shape == (10, 20)
    np.testing.assert_array_equal(raw["neuroid_id"].values, target["neuroid_id"].values)
    np.testing.assert_array_equal(raw["region"].values, ["V4"] * 20)
    assert score.attrs["n_components"] == 25 and score.attrs["splits"] == 10 and score.attrs["seed"] == 1
    assert score.attrs["metric"] == "pls" and score.attrs["stratification_coord"] is None


def test_default_stratifies_by_object_name():
    source, target = _pair(n=160, p=80, q=8, seed=1)
    score = load_metric("ridge")(source, target)
    center, _, _ = _reference_style(source, target, lambda: Ridge(alpha=1),
                                    StratifiedShuffleSplit(10, train_size=0.9, test_size=None, random_state=1),
                                    labels=target["object_name"].values)
    assert float(score) == pytest.approx(center, abs=1e-6)   # float32 model activations
    assert score.attrs["stratification_coord"] == "object_name"


def test_missing_stratification_coord_says_how_to_fix():
    source, target = _pair(n=60, p=30, q=4)
    target = target.drop_vars("object_name")
    with pytest.raises(ValidationError, match="stratification_coord=None"):
        load_metric("pls")(source, target)


def test_source_order_does_not_matter_but_target_order_does():
    source, target = _pair(n=120, p=150, q=6, seed=2)
    metric = load_metric("pls", crossvalidation_kwargs=dict(stratification_coord=None), n_components=10)
    shuffled = source.isel(presentation=np.random.default_rng(0).permutation(120))
    assert float(metric(shuffled, target)) == pytest.approx(float(metric(source, target)), abs=1e-12)
    # splits are drawn on the target's order: reordering the target changes the splits
    reordered = target.isel(presentation=np.arange(120)[::-1])
    assert float(metric(source, reordered)) != pytest.approx(float(metric(source, target)), abs=1e-6)


def test_misaligned_stimuli_raise_alignment_error():
    source, target = _pair(n=60, p=30, q=4)
    source = source.assign_coords(stimulus_id=("presentation", [f"other{i}" for i in range(60)]))
    with pytest.raises(AlignmentError, match="stimulus_id"):
        load_metric("pls", crossvalidation_kwargs=dict(stratification_coord=None))(source, target)


def test_a_constant_neuroid_is_an_error_not_a_nan_score():
    """The reference lets one constant neuroid's NaN r make the whole score NaN (issue 10): refused here."""
    source, target = _pair(n=60, p=30, q=4)
    values = target.values.copy()
    values[:, 2] = 1.0                                     # a constant neuroid: r would be NaN in every split
    target = target.copy(data=values)
    with pytest.raises(ValidationError, match="same response to every stimulus") as info:
        load_metric("ridge", crossvalidation_kwargs=dict(stratification_coord=None))(source, target)
    assert str(target["neuroid_id"].values[2]) in str(info.value) if "neuroid_id" in target.coords else True


def test_bad_dims_and_kwargs():
    source, target = _pair(n=40, p=10, q=3)
    with pytest.raises(ValidationError, match="presentation, neuroid"):
        load_metric("pls")(source.expand_dims(time_bin=2), target)
    with pytest.raises(TypeError, match="unknown crossvalidation_kwargs"):
        load_metric("pls", crossvalidation_kwargs=dict(n_splits=3))


def test_kfold_option():
    source, target = _pair(n=100, p=40, q=5, seed=3)
    score = load_metric("ridge", crossvalidation_kwargs=dict(stratification_coord=None, kfold=True))(source, target)
    from sklearn.model_selection import KFold
    center, _, _ = _reference_style(source, target, lambda: Ridge(alpha=1), KFold(10, shuffle=True, random_state=1))
    assert float(score) == pytest.approx(center, abs=1e-6)   # float32 model activations


def test_pls_split_matches_sklearn():
    source, target = _pair(n=150, p=60, q=6, seed=4)
    train, test = np.arange(120), np.arange(120, 150)
    metric = load_metric("pls_split", n_components=5)
    score = metric(source.isel(presentation=train), source.isel(presentation=test)[::-1],
                   target.isel(presentation=train), target.isel(presentation=test))
    X, Y = source.values.astype(np.float64), target.values
    prediction = PLSRegression(5, scale=False, tol=1e-15, max_iter=10000).fit(X[train], Y[train]).predict(X[test])
    r = [scipy.stats.pearsonr(prediction[:, j], Y[test, j])[0] for j in range(6)]
    np.testing.assert_allclose(score.attrs["raw"].values, r, atol=1e-5)
    assert float(score) == pytest.approx(np.median(r), abs=1e-5)


def test_ridgecv_split_records_the_chosen_alpha():
    source, target = _pair(n=150, p=400, q=6, seed=5, dtype=np.float64)
    train, test = np.arange(120), np.arange(120, 150)
    score = load_metric("ridgecv_split")(source.isel(presentation=train), source.isel(presentation=test),
                                         target.isel(presentation=train), target.isel(presentation=test))
    X, Y = source.values, target.values
    sk = RidgeCV(alphas=ALPHA_LIST).fit(X[train], Y[train])
    assert score.attrs["alpha"] == sk.alpha_
    prediction = sk.predict(X[test])
    r = [scipy.stats.pearsonr(prediction[:, j], Y[test, j])[0] for j in range(6)]
    assert float(score) == pytest.approx(np.median(r), abs=1e-9)


def test_split_metric_alignment_error_names_the_pair():
    source, target = _pair(n=40, p=10, q=3)
    with pytest.raises(AlignmentError, match="source_test vs target_test"):
        load_metric("ridge_split")(source[:30], source[30:35], target[:30], target[30:])


def test_reverse_pls_swaps_source_and_target():
    source, target = _pair(n=120, p=15, q=10, seed=6)
    kwargs = dict(crossvalidation_kwargs=dict(stratification_coord=None), n_components=5)
    reverse = load_metric("reverse_pls", **kwargs)(source, target)
    assert reverse.attrs["raw"].dims == ("split", "neuroid")
    np.testing.assert_array_equal(reverse.attrs["raw"]["neuroid_id"].values, source["neuroid_id"].values)
    # the same as predicting the model from the data with the roles exchanged (splits on the same order)
    swapped = CrossRegressedCorrelation("pls", regression_kwargs=dict(n_components=5),
                                        crossvalidation_kwargs=dict(stratification_coord=None))(
        target.astype(np.float64), source.astype(np.float64))
    assert float(reverse) == pytest.approx(float(swapped), abs=1e-5)


def test_all_regressions_registered_and_run():
    source, target = _pair(n=80, p=100, q=5, seed=7)
    for identifier in ("pls", "pls_cv", "ridge", "ridge_cv", "ridgecv", "ridgecv_cv", "linear_predictivity",
                       "linear_predictivity_cv", "neuron_to_neuron", "neuron_to_neuron_cv", "reverse_pls",
                       "reverse_pls_cv"):
        extra = dict(n_components=4) if identifier.startswith("reverse") else {}   # at most 5 neuroids to regress on
        score = load_metric(identifier, crossvalidation_kwargs=dict(stratification_coord=None, splits=3), **extra)(
            source, target)
        assert np.isfinite(float(score)) and score.attrs["metric"] == identifier
        assert score.attrs["raw"].shape[0] == 3


def _temporal(assembly, T, rng):
    values = np.stack([assembly.values + 0.3 * t + 0.5 * rng.standard_normal(assembly.shape) for t in range(T)], -1)
    return NeuroidAssembly(values, dims=("presentation", "neuroid", "time_bin"),
                           coords={**{k: (c.dims[0], c.values) for k, c in assembly.coords.items()},
                                   "time_bin_start": ("time_bin", [70 + 10 * t for t in range(T)]),
                                   "time_bin_end": ("time_bin", [80 + 10 * t for t in range(T)])})


def test_spantime_pls_fits_once_over_stacked_time_bins():
    rng = np.random.default_rng(8)
    source, target = _pair(n=90, p=40, q=5, seed=8, dtype=np.float64)
    T = 3
    source_t, target_t = _temporal(source, T, rng), _temporal(target, T, rng)
    score = load_metric("spantime_pls", crossvalidation_kwargs=dict(stratification_coord=None), n_components=4)(
        source_t, target_t)
    assert score.dims == ("time_bin",)
    np.testing.assert_array_equal(score["time_bin_start"].values, [70, 80, 90])
    # independent: stack (presentation, time bin) samples, sklearn PLS, r per time bin
    X, Y = source_t.values.transpose(0, 2, 1), target_t.values.transpose(0, 2, 1)      # (n, T, features)
    medians = np.zeros((10, T))
    for s, (train, test) in enumerate(ShuffleSplit(10, train_size=0.9, random_state=1).split(np.zeros(90))):
        pls = PLSRegression(4, scale=False, tol=1e-15, max_iter=10000).fit(X[train].reshape(-1, 40),
                                                                          Y[train].reshape(-1, 5))
        for t in range(T):
            prediction = pls.predict(X[test, t])
            medians[s, t] = np.median([scipy.stats.pearsonr(prediction[:, j], Y[test, t, j])[0] for j in range(5)])
    np.testing.assert_allclose(score.values, medians.mean(0), atol=1e-6)
    np.testing.assert_allclose(score.attrs["error"].values, medians.std(0) / np.sqrt(10), atol=1e-6)
    assert score.attrs["raw"].dims == ("split", "time_bin", "neuroid")


def test_spantime_rejects_different_time_bins():
    rng = np.random.default_rng(9)
    source, target = _pair(n=40, p=10, q=3, dtype=np.float64)
    source_t, target_t = _temporal(source, 2, rng), _temporal(target, 2, rng)
    source_t = source_t.assign_coords(time_bin_start=("time_bin", [0, 50]))
    with pytest.raises(ValidationError, match="time bins differ"):
        load_metric("spantime_ridge", crossvalidation_kwargs=dict(stratification_coord=None))(source_t, target_t)


def test_torch_device_gives_the_numpy_score():
    source, target = _pair(n=100, p=150, q=6, seed=10)
    cv = dict(stratification_coord=None)
    expected = load_metric("pls", crossvalidation_kwargs=cv)(source, target)
    got = load_metric("pls", crossvalidation_kwargs=cv, device="cpu")(source, target)
    assert float(got) == pytest.approx(float(expected), abs=1e-5)
    np.testing.assert_allclose(got.attrs["raw"].values, expected.attrs["raw"].values, atol=1e-5)
    assert isinstance(got.attrs["raw"], xr.DataArray)


def test_integer_against_string_stimulus_ids_names_the_type_not_the_stimuli():
    """PLS with integer model ids and string data ids said the model had no presentation for 200 stimuli of the
    target ("was the model shown the benchmark's stimuli?"): it names the two types and the fix."""
    source, target = _pair(n=60, p=30, q=4, n_objects=2)
    numbered = source.assign_coords(stimulus_id=("presentation", np.arange(60)))
    target = target.assign_coords(stimulus_id=("presentation", np.arange(60).astype(str)))
    with pytest.raises(AlignmentError) as error:
        CrossRegressedCorrelation("pls")(numbered, target)
    assert str(error.value) == (
        "the source (model)'s stimulus_id values are numbers (e.g. [0, 1]) and the target's are strings (e.g. ['0', "
        "'1']): a number never equals a string, so no stimulus matches. Give both the same type (e.g. "
        "assign_coords(stimulus_id=assembly['stimulus_id'].astype(str)))")
    as_text = numbered.assign_coords(stimulus_id=("presentation", np.arange(60).astype(str)))
    assert np.isfinite(float(CrossRegressedCorrelation("pls")(as_text, target)))  # the fix it names works
