"""Each reference-API adapter gives the same numbers as brainscore's native call, on real data (to 1e-6).

The adapters are thin subclasses or re-exports of brainscore's own pieces (issue 21); these tests
build the same experiment both ways and compare the scores, ceilings and raw values.
"""
from __future__ import annotations

import functools
import hashlib

import numpy as np
import pytest

import brainscore
from brainscore import registry
from brainscore.data.assemblies import average_repetition as native_average_repetition
from brainscore.errors import DataNotFoundError, HashMismatchError, UnknownIdentifierError
from brainscore.metrics.normalisation import ceil_score as native_ceil_score
from brainscore.metrics.normalisation import explained_variance as native_explained_variance
from brainscore.metrics.score import Score
from brainscore.models.interface import BrainModel as NativeBrainModel
from compat_api_helpers import COWLEY, COWLEY_BENCHMARK, COWLEY_DEGREES, COWLEY_TRIALS, cowley_pixels, even_odd

from brainscore_core.supported_data_standards.brainio.assemblies import NeuroidAssembly, as_reference_class
from brainscore_vision import _names
from brainscore_vision.benchmark_helpers.neural_common import (NeuralBenchmark, TrainTestNeuralBenchmark,
                                                               average_repetition, explained_variance,
                                                               filter_reliable_neuroids)
from brainscore_vision.benchmarks import BenchmarkBase, ceil_score
from brainscore_vision.model_interface import BrainModel
from brainscore_vision.utils import LazyLoad


@pytest.fixture(scope="module")
def repetitions():
    return brainscore.load_dataset(COWLEY)


@pytest.fixture(scope="module")
def native_result():
    benchmark = brainscore.load_benchmark(COWLEY_BENCHMARK)
    return benchmark, benchmark(cowley_pixels())


def reference_style(repetitions, identifier="CompatTest.210325.V4-pls", **overrides):
    """The native Cowley benchmark written as the reference's guide writes a NeuralBenchmark."""
    assembly = as_reference_class(repetitions).mean(dim="repetition")
    ceiler = _names.load_ceiling("internal_consistency")
    settings = dict(identifier=identifier, version=1, assembly=assembly,
                    similarity_metric=_names.load_metric("pls", crossvalidation_kwargs=dict(stratification_coord=None)),
                    visual_degrees=COWLEY_DEGREES, number_of_trials=COWLEY_TRIALS,
                    ceiling_func=lambda: ceiler(even_odd(repetitions)), parent="V4", bibtex="")
    settings.update(overrides)
    return NeuralBenchmark(**settings)


def test_neural_benchmark_equals_native(repetitions, native_result):
    native, expected = native_result
    benchmark = reference_style(repetitions)
    assert benchmark.region == "V4" and benchmark.time_bins == [(50, 150)]
    result = benchmark(cowley_pixels())
    assert float(result) == pytest.approx(float(expected), abs=1e-6)
    assert float(result.attrs["raw"]) == pytest.approx(float(expected.attrs["raw"]), abs=1e-6)
    assert float(benchmark.ceiling) == pytest.approx(float(native.ceiling), abs=1e-6)
    # r² / ceiling (the reference since 2026-01-13), not (r / ceiling)²
    raw, ceiling = float(result.attrs["raw"]), float(result.attrs["ceiling"])
    assert float(result) == pytest.approx(raw * raw / ceiling, rel=1e-9)
    assert 0.05 < raw < 0.6 and 0.3 < ceiling < 1


def test_neural_benchmark_lazy_and_defaults(repetitions, native_result):
    """A LazyLoad assembly is read only when a model is scored; time bins come from the data."""
    loads = []

    def load():
        loads.append(1)
        return as_reference_class(repetitions).mean(dim="repetition")

    benchmark = reference_style(repetitions, identifier="CompatTest.lazy.V4-pls", assembly=LazyLoad(load))
    assert loads == [] and benchmark.region == "V4"  # region from parent: the data are not read for it
    assert float(benchmark(cowley_pixels())) == pytest.approx(float(native_result[1]), abs=1e-6)
    assert loads == [1]


def test_neural_benchmark_region_from_assembly(repetitions):
    assembly = average_repetition(repetitions)
    benchmark = reference_style(repetitions, identifier="CompatTest.region.V4-pls", assembly=assembly, parent="IT")
    assert benchmark.region == "V4" and benchmark.parent == "IT"  # the data's region, as the reference reads it


def test_benchmark_base_subclass_with_its_own_call(repetitions, native_result):
    """The Kar2019 / Bracci2019 pattern: BenchmarkBase with a custom __call__ and a no-argument ceiling."""
    from brainscore_vision.benchmark_helpers.screen import place_on_screen

    metric = _names.load_metric("pls", crossvalidation_kwargs=dict(stratification_coord=None))
    assembly = average_repetition(repetitions).squeeze("time_bin")

    class Custom(BenchmarkBase):
        def __init__(self):
            super().__init__(identifier="CompatTest.custom.V4-pls", version=1, parent="V4", bibtex="",
                             ceiling_func=lambda: _names.load_ceiling("internal_consistency")(even_odd(repetitions)))

        def __call__(self, candidate):
            candidate.start_recording("V4", time_bins=[(50, 150)])
            stimuli = place_on_screen(assembly.stimulus_set, target_visual_degrees=candidate.visual_degrees(),
                                      source_visual_degrees=COWLEY_DEGREES)
            features = candidate.look_at(stimuli, number_of_trials=COWLEY_TRIALS)
            if "time_bin" in features.dims and features.sizes["time_bin"] == 1:
                features = features.squeeze("time_bin")
            return explained_variance(metric(features, assembly), self.ceiling)

    result = Custom()(cowley_pixels())
    assert float(result) == pytest.approx(float(native_result[1]), abs=1e-6)


def test_benchmark_base_number_ceiling_and_defaults():
    class Fixed(BenchmarkBase):
        def __init__(self):
            super().__init__(identifier="CompatTest.fixed-ceiling", ceiling_func=lambda: 0.79, parent="IT")

        def __call__(self, candidate):
            return ceil_score(Score.of(0.395, error=0.01), self.ceiling)

    benchmark = Fixed()
    assert benchmark.version == 1 and benchmark.bibtex == ""
    assert float(type("NoCeiling", (Fixed,), {"__init__": lambda self: BenchmarkBase.__init__(
        self, identifier="CompatTest.no-ceiling")})().ceiling) == 1.0
    assert isinstance(benchmark.ceiling, Score) and float(benchmark.ceiling) == pytest.approx(0.79)
    assert float(benchmark(None)) == pytest.approx(0.5)
    with pytest.raises(TypeError, match="must be a number or a Score"):
        type("Bad", (BenchmarkBase,), {"__call__": lambda self, c: None})(
            identifier="CompatTest.bad", ceiling_func=lambda: "high").ceiling


def test_benchmark_base_ceiling_computed_once_per_object():
    """Not cached on disk by name: a second object (e.g. after the data changed) computes it again."""
    calls = []

    class Counting(BenchmarkBase):
        def __init__(self, value):
            super().__init__(identifier="CompatTest.counting", ceiling_func=lambda: calls.append(value) or value)

    first = Counting(0.5)
    assert float(first.ceiling) == 0.5 and float(first.ceiling) == 0.5 and calls == [0.5]
    assert float(Counting(0.7).ceiling) == 0.7 and calls == [0.5, 0.7]


def test_train_test_equals_native(repetitions):
    """TrainTestNeuralBenchmark (Papale2025 pattern, no-argument ceiling) against brainscore's class."""
    from brainscore.benchmarks.fixed_split import TrainTestNeuralBenchmark as Native

    ids = np.unique(repetitions["stimulus_id"].values)
    test_ids = set(ids[::4])
    is_test = np.isin(repetitions["stimulus_id"].values, list(test_ids))
    train, test = (repetitions.isel(presentation=np.flatnonzero(mask)) for mask in (~is_test, is_test))
    for part in (train, test):
        part.attrs["stimulus_set"] = repetitions.stimulus_set.restricted_to(part["stimulus_id"].values)
    metric = _names.load_metric("ridgecv_split")
    ceiler = _names.load_ceiling("internal_consistency")
    ours = TrainTestNeuralBenchmark(identifier="CompatTest.split.V4-ridgecv", version=1, train_assembly=train,
                                    test_assembly=LazyLoad(lambda: average_repetition(test)),
                                    similarity_metric=metric, ceiling_func=lambda: ceiler(test),
                                    visual_degrees=COWLEY_DEGREES, number_of_trials=1, parent="V4", bibtex="")
    native = Native(identifier="CompatTest.split-native.V4-ridgecv", version=1, train_assembly=train,
                    test_assembly=test, similarity_metric=metric, visual_degrees=COWLEY_DEGREES, number_of_trials=1,
                    region="V4", ceiling_func=ceiler)
    model = cowley_pixels()
    expected = native(model)
    result = ours(model)
    assert float(result) == pytest.approx(float(expected), abs=1e-6)
    assert float(result.attrs["ceiling"]) == pytest.approx(float(expected.attrs["ceiling"]), abs=1e-6)
    assert 0 < float(result.attrs["raw"]) < 1


def test_train_test_options_not_implemented_say_so(repetitions):
    with pytest.raises(NotImplementedError, match="alpha_coord .* not implemented here"):
        TrainTestNeuralBenchmark(identifier="CompatTest.alpha", train_assembly=repetitions, test_assembly=repetitions,
                                 similarity_metric=None, parent="V4", alpha_coord="subject")


def test_filter_reliable_neuroids(repetitions):
    from brainscore.benchmarks.fixed_split import split_half_reliability

    reliability = split_half_reliability(repetitions).values
    kept = filter_reliable_neuroids(repetitions, 0.3)
    assert kept.sizes["neuroid"] == int((reliability > 0.3).sum()) > 0
    with_coord = repetitions.assign_coords(reliability=("neuroid", np.linspace(0, 1, repetitions.sizes["neuroid"])))
    assert filter_reliable_neuroids(with_coord, 0.5, "reliability").sizes["neuroid"] == 25  # strictly above 0.5
    with pytest.raises(ValueError, match="no neuroid reaches"):
        filter_reliable_neuroids(repetitions, 1.5)


def test_helpers_are_brainscores():
    assert average_repetition is native_average_repetition
    assert explained_variance is native_explained_variance and ceil_score is native_ceil_score
    value = explained_variance(Score.of(0.5, error=0.0), Score.of(0.8, error=0.0))
    assert float(value) == pytest.approx(0.3125)


def test_mean_over_repetition_is_average_repetition(repetitions):
    averaged = as_reference_class(repetitions).mean(dim="repetition")
    expected = native_average_repetition(repetitions)
    assert isinstance(averaged, NeuroidAssembly) and averaged.sizes["presentation"] == 640
    np.testing.assert_array_equal(averaged.values, expected.values)
    assert averaged.stimulus_set is repetitions.stimulus_set
    with pytest.raises(ValueError, match="neither a dimension"):
        as_reference_class(repetitions).mean(dim="trial")
    np.testing.assert_allclose(as_reference_class(repetitions).mean(dim="presentation").values,
                               repetitions.mean(dim="presentation").values)


def test_arithmetic_aligns_entries_by_their_coordinates_as_the_references_multiindex():
    """The reference's assemblies index each dim by a MultiIndex of its coordinates, so ``a == b`` and ``a - b``
    combine the entries both hold by value (xarray's inner join): here by the coordinates' tuples."""
    bins = [(0, 10), (10, 20), (20, 30)]

    def binned(values, order):
        return NeuroidAssembly(np.asarray(values, dtype=float)[None, None, :],
                               dims=("presentation", "neuroid", "time_bin"),
                               coords={"stimulus_id": ("presentation", ["a"]), "neuroid_id": ("neuroid", ["n"]),
                                       "time_bin_start": ("time_bin", [bins[i][0] for i in order]),
                                       "time_bin_end": ("time_bin", [bins[i][1] for i in order])})

    ordered, reordered = binned([1.0, 2.0, 3.0], [0, 1, 2]), binned([3.0, 1.0, 2.0], [2, 0, 1])
    assert bool((ordered == reordered).all())  # by position it would be [1, 2, 3] against [3, 1, 2]
    difference = reordered - ordered  # the left operand's order
    assert difference.values.ravel().tolist() == [0.0, 0.0, 0.0]
    assert difference["time_bin_start"].values.tolist() == [20, 0, 10]
    # only the entries both hold: (10, 20) alone
    shared = ordered.isel(time_bin=[1, 2]) == binned([2.0, 9.0, 9.0], [1, 0, 0]).isel(time_bin=[0, 1])
    assert shared.sizes["time_bin"] == 1 and bool(shared.all())
    # no entry in common is an error, not an empty assembly that turns into NaN later
    with pytest.raises(ValueError, match="no entry"):
        ordered.isel(time_bin=[0]) - ordered.isel(time_bin=[2])
    # the same coordinates in the same order: by position, nothing reordered
    assert (ordered + ordered).values.ravel().tolist() == [2.0, 4.0, 6.0]
    # the same entry twice where the entries differ is ambiguous, as pandas refuses a MultiIndex with duplicates
    with pytest.raises(ValueError, match="more than once"):
        binned([1.0, 1.0, 3.0], [0, 0, 2]) - reordered
    # other coordinates on each side: by position, as xarray
    other = ordered.assign_coords(condition=("time_bin", ["x", "y", "z"]))
    assert (other - reordered).values.ravel().tolist() == [-2.0, 1.0, 1.0]


@pytest.mark.parametrize("features", [300, 20])
def test_dual_ridge_cv_regression_selects_alpha_as_ridgecv_on_an_n_by_n_design(features, monkeypatch):
    """The reference's DualRidgeCVRegression: scikit-learn's RidgeCV on the n x n Gram surrogate (when features
    outnumber samples) chooses RidgeCV's own alpha on X; predictions equal RidgeCV's."""
    from sklearn.linear_model import RidgeCV

    from brainscore_vision.metrics.regression_correlation import ALPHA_LIST, DualRidgeCVRegression

    rng = np.random.default_rng(features)
    X = rng.standard_normal((40, features)) + 3.0  # an offset: the surrogate must be of the centred design
    Y = X @ rng.standard_normal((features, 7)) / np.sqrt(features) + 2.0 * rng.standard_normal((40, 7))
    test = rng.standard_normal((5, features)) + 3.0
    expected = RidgeCV(alphas=ALPHA_LIST).fit(X, Y)
    designs = []
    original = RidgeCV.fit
    monkeypatch.setattr(RidgeCV, "fit", lambda self, design, y, **kwargs: designs.append(design.shape)
                        or original(self, design, y, **kwargs))
    regression = DualRidgeCVRegression(alphas=ALPHA_LIST).fit(X, Y)
    assert designs == [(40, min(40, features))]
    assert regression.alpha_ == expected.alpha_
    np.testing.assert_allclose(regression.predict(test), expected.predict(test), rtol=0, atol=1e-9)


def test_a_metric_built_on_dual_ridge_cv_regression_is_the_ridgecv_metric():
    """``CrossRegressedCorrelation(XarrayRegression(DualRidgeCVRegression()))`` chooses alpha per training set, as
    ``ridge_cv_regression()`` does (not ridge at a fixed alpha)."""
    from brainscore_vision.metric_helpers.xarray_utils import XarrayRegression
    from brainscore_vision.metrics.regression_correlation import (CrossRegressedCorrelation, DualRidgeCVRegression,
                                                                  ridge_cv_regression, ridge_regression)

    rng = np.random.default_rng(7)
    X = rng.standard_normal((60, 80))
    Y = X @ rng.standard_normal((80, 4)) / 9 + rng.standard_normal((60, 4))

    def assembly(values, prefix):
        return NeuroidAssembly(values, dims=("presentation", "neuroid"),
                               coords={"stimulus_id": ("presentation", [f"s{i}" for i in range(60)]),
                                       "neuroid_id": ("neuroid", [f"{prefix}{j}" for j in range(values.shape[1])])})

    source, target = assembly(X, "x"), assembly(Y, "y")
    split = {"stratification_coord": None}
    scores = {name: float(CrossRegressedCorrelation(regression=regression, crossvalidation_kwargs=split)(source, target))
              for name, regression in (("dual", XarrayRegression(DualRidgeCVRegression(alphas=[0.01, 1e3, 1e5]))),
                                       ("ridgecv", ridge_cv_regression(alphas=[0.01, 1e3, 1e5])),
                                       ("ridge", ridge_regression()))}
    assert scores["dual"] == scores["ridgecv"]
    assert scores["dual"] != scores["ridge"]


def test_brain_model_interface():
    class Mine(BrainModel):
        def __init__(self):
            self.identifier = "mine"

        def visual_degrees(self):
            return 8

    model = Mine()
    assert isinstance(model, NativeBrainModel) and model.identifier == "mine" and model.visual_degrees() == 8
    assert BrainModel.Task.probabilities == "probabilities" and BrainModel.RecordingTarget.IT == "IT"
    with pytest.raises(NotImplementedError, match="Mine does not implement look_at"):
        model.look_at(None)
    with pytest.raises(NotImplementedError, match="defines no identifier"):
        type("Anonymous", (BrainModel,), {})().identifier


def test_lazy_load():
    calls = []
    lazy = LazyLoad(lambda: calls.append(1) or {"a": 1})
    assert not lazy.loaded and calls == []
    assert lazy["a"] == 1 and len(lazy) == 1 and "a" in lazy and calls == [1]
    assert lazy.keys() == {"a": 1}.keys() and calls == [1]
    with pytest.raises(TypeError, match="needs a function"):
        LazyLoad(3)


@pytest.mark.parametrize("name", _names.REFERENCE_METRICS)
def test_reference_metric_names_load(name):
    kwargs = {"property_name": "surround_suppression_index"} if name == "ks_similarity" else {}
    metric = _names.load_metric(name, **kwargs)
    assert callable(metric) and repr(metric) == repr(registry.load_metric(name, **kwargs))


@pytest.mark.parametrize("name", _names.REFERENCE_CEILINGS)
def test_reference_ceiling_names_load(name):
    kwargs = {"property_name": "surround_suppression_index"} if name == "ks_similarity" else {}
    assert callable(_names.load_ceiling(name, **kwargs))


def test_unimplemented_reference_metric_says_so():
    with pytest.raises(UnknownIdentifierError, match="object-solution-time .* not implemented here"):
        _names.load_metric("ost")


def test_split_metric_reference_call(repetitions):
    """``load_metric('pls_split')(source_train, source_test, target_train, target_test)`` as the guide calls it."""
    target = average_repetition(repetitions).squeeze("time_bin")
    source = cowley_pixels().features
    source = source.isel(presentation=np.argsort(source["stimulus_id"].values))
    target = target.isel(presentation=np.argsort(target["stimulus_id"].values))
    train, test = np.arange(0, 640) % 5 != 0, np.arange(0, 640) % 5 == 0
    metric = _names.load_metric("pls_split")
    score = metric(source.isel(presentation=train), source.isel(presentation=test),
                   target.isel(presentation=train), target.isel(presentation=test))
    expected = registry.load_metric("pls_split")(source_train=source.isel(presentation=train),
                                                 source_test=source.isel(presentation=test),
                                                 target_train=target.isel(presentation=train),
                                                 target_test=target.isel(presentation=test))
    assert float(score) == pytest.approx(float(expected), abs=1e-12) and 0 < float(score) < 1


def test_rdm_2019_name(repetitions):
    from brainscore.metrics.rdm import RDM

    data = average_repetition(repetitions).squeeze("time_bin")
    features = cowley_pixels().features
    assert float(RDM()(assembly1=data, assembly2=data)) == pytest.approx(1.0)
    score = RDM()(assembly1=features, assembly2=data)
    assert float(score) == pytest.approx(float(registry.load_metric("rdm")(features, data)), abs=1e-12)
    assert -1 < float(score) < 1


def test_get_assembly_and_stimulus_set():
    assembly = brainscore.get_assembly(COWLEY)
    assert assembly.sizes["presentation"] == 4840 and assembly.stimulus_set is not None
    assert len(brainscore.get_stimulus_set(COWLEY)) == 640
    with pytest.raises(UnknownIdentifierError):
        brainscore.get_assembly("dicarlo.Majaj2015")
