"""``brainscore_vision.benchmark_helpers.multi_subject`` (the reference's per-subject and K-fold aggregates, which its
``laion_fmri`` benchmark folder builds on) and ``metric_helpers.bootstrap_error``, on small synthetic assemblies.

Every child is a real ``TrainTestNeuralBenchmark`` scoring a ``PrecomputedFeatures`` model with
``linear_predictivity_split``. The model's features are an affine map of each subject's responses, so the
regression is exact on the test stimuli: every neuroid's r is 1, the child's raw score is 1 and its score is
r² / ceiling = 1 / ceiling. With per-subject ceilings 0.5, 0.8 and 1.0 the children score 2, 1.25 and 1, and the
aggregate is their mean, 4.25 / 3.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from brainscore.data.assemblies import NeuroidAssembly
from brainscore.data.stimuli import StimulusSet
from brainscore.errors import ValidationError
from brainscore.metrics.score import Score
from brainscore.metrics.splits import kfold
from brainscore.models.precomputed import PrecomputedFeatures

from brainscore_vision import load_metric
from brainscore_vision.benchmark_helpers.multi_subject import (WRAPPER_N_BOOTSTRAP, KFoldNeuralBenchmark,
                                                               MultiSubjectNeuralBenchmark, block_diagonal_concat,
                                                               kfold_factory)
from brainscore_vision.benchmark_helpers.neural_common import TrainTestNeuralBenchmark
from brainscore_vision.benchmarks import BenchmarkBase
from brainscore_vision.metric_helpers.bootstrap_error import attach_error, bootstrap_error, declare_no_error

SUBJECTS = ("sub-01", "sub-02", "sub-03")
CEILINGS = {"sub-01": 0.5, "sub-02": 0.8, "sub-03": 1.0}
N_STIMULI, N_NEUROIDS, N_TEST, DEGREES = 30, 4, 10, 8


def _assembly(values: np.ndarray, stimulus_ids, subject: str) -> NeuroidAssembly:
    assembly = NeuroidAssembly(values, dims=("presentation", "neuroid"), coords={
        "stimulus_id": ("presentation", list(stimulus_ids)),
        "neuroid_id": ("neuroid", [f"{subject}-{i}" for i in range(values.shape[1])]),
        "subject": ("neuroid", [subject] * values.shape[1]), "region": ("neuroid", ["IT"] * values.shape[1])})
    assembly.attrs["stimulus_set"] = StimulusSet(pd.DataFrame({"stimulus_id": list(stimulus_ids)}))
    return assembly


@pytest.fixture(scope="module")
def data():
    """Each subject's responses to its own 30 stimuli, and one model whose features are 3 y - 2 of them."""
    rng = np.random.default_rng(7)
    per_subject = {s: _assembly(rng.normal(size=(N_STIMULI, N_NEUROIDS)), [f"{s}-im{i}" for i in range(N_STIMULI)], s)
                   for s in SUBJECTS}
    ids = sum((list(a["stimulus_id"].values) for a in per_subject.values()), [])
    features = np.concatenate([3 * a.values - 2 for a in per_subject.values()])
    model = PrecomputedFeatures(_assembly(features, ids, "model"), visual_degrees=DEGREES)
    return per_subject, model


def _restrict(assembly, rows):
    part = assembly.isel(presentation=rows)
    part.attrs["stimulus_set"] = StimulusSet(pd.DataFrame({"stimulus_id": list(part["stimulus_id"].values)}))
    return part


def _child(identifier, train, test, ceiling):
    return TrainTestNeuralBenchmark(identifier=identifier, train_assembly=train, test_assembly=test,
                                    similarity_metric=load_metric("linear_predictivity_split"),
                                    ceiling_func=lambda: Score(ceiling), visual_degrees=DEGREES, number_of_trials=1,
                                    parent="IT", bibtex="@misc{synthetic}", version=3)


def _per_subject_factory(per_subject, built):
    def build(subject):
        built.append(subject)
        assembly = per_subject[subject]
        return _child(f"Synthetic.IT-{subject}", _restrict(assembly, np.arange(N_TEST, N_STIMULI)),
                      _restrict(assembly, np.arange(N_TEST)), CEILINGS[subject])
    return build


def test_multi_subject_score_is_the_mean_of_the_subjects(data):
    per_subject, model = data
    built = []
    benchmark = MultiSubjectNeuralBenchmark("Synthetic.IT-multi", SUBJECTS, _per_subject_factory(per_subject, built))
    assert built == ["sub-01"]  # one child for the metadata, released again
    assert (benchmark.region, benchmark.version, benchmark.parent) == ("IT", 3, "IT")
    assert benchmark.bibtex == "@misc{synthetic}"
    score = benchmark(model)
    expected = np.array([1 / 0.5, 1 / 0.8, 1 / 1.0])
    assert float(score) == pytest.approx(4.25 / 3, abs=1e-9)
    np.testing.assert_allclose(score.attrs["raw_subjects"].values, expected, atol=1e-9)
    assert list(score.attrs["raw_subjects"]["subject"].values) == list(SUBJECTS)
    assert float(score.attrs["raw"]) == pytest.approx(1.0, abs=1e-9)
    assert float(score.attrs["ceiling"]) == pytest.approx(2.3 / 3, abs=1e-12)
    assert score.attrs["sem_subjects"] == pytest.approx(expected.std(ddof=1) / np.sqrt(3), abs=1e-9)
    assert float(score.attrs["sub-02"]) == pytest.approx(1.25, abs=1e-9)
    assert score.attrs["n_bootstrap"] == WRAPPER_N_BOOTSTRAP and score.attrs["error_over"] == ["subject"]
    assert 0 < score.attrs["error"] < expected.std(ddof=0)
    assert built == ["sub-01"] + list(SUBJECTS)  # one child per subject, in order
    assert float(benchmark.ceiling) == pytest.approx(2.3 / 3, abs=1e-12)
    assert benchmark.timebins == [(70, 170)] and built[-1] == "sub-01"  # asked of a fresh first child when read


def test_single_subject_says_why_it_has_no_error(data):
    per_subject, model = data
    score = MultiSubjectNeuralBenchmark("Synthetic.IT-one", ["sub-02"], _per_subject_factory(per_subject, []))(model)
    assert float(score) == pytest.approx(1.25, abs=1e-9)
    assert np.isnan(score.attrs["error"]) and "single subject" in score.attrs["error_nan_reason"]


def test_kfold_folds_partition_the_stimuli_and_average(data):
    per_subject, model = data
    assembly = per_subject["sub-01"]
    tests = []

    def build(k, train, test):
        tests.append(list(test["stimulus_id"].values))
        assert not set(train["stimulus_id"].values) & set(test["stimulus_id"].values)
        return _child(f"Synthetic.IT-fold{k}", _restrict(train, np.arange(train.sizes["presentation"])),
                      _restrict(test, np.arange(test.sizes["presentation"])), 0.8)

    benchmark = KFoldNeuralBenchmark("Synthetic.IT-kfold", 3, kfold_factory(assembly, 3, build))
    score = benchmark(model)
    assert float(score) == pytest.approx(1.25, abs=1e-9)
    np.testing.assert_allclose(score.attrs["raw_folds"].values, [1.25] * 3, atol=1e-9)
    assert len(score.attrs["folds"]) == 3 and score.attrs["error"] == pytest.approx(0, abs=1e-9)
    ids = np.asarray(assembly["stimulus_id"].values)
    expected = [sorted(ids[test]) for _, test in kfold(N_STIMULI, 3, random_state=1)]
    assert [sorted(t) for t in tests[1:4]] == expected  # fold 0 built once more for the metadata first
    assert sorted(sum(tests[1:4], [])) == sorted(ids)


class _Fixed(BenchmarkBase):
    def __init__(self, value):
        super().__init__(identifier="Synthetic.fixed", ceiling_func=lambda: 1.0, parent="IT")
        self.region, self.value = "IT", value

    def __call__(self, candidate):
        return Score(self.value)


def test_a_nan_child_is_an_error_listing_every_score():
    benchmark = MultiSubjectNeuralBenchmark("Synthetic.nan", ["a", "b"], lambda s: _Fixed(0.4 if s == "a" else np.nan))
    with pytest.raises(ValidationError, match=r"subject \['b'\] is not a finite number.*a: 0.4, b: nan"):
        benchmark(None)


def test_bad_arguments_say_what_is_wrong():
    with pytest.raises(ValueError, match="non-empty sequence of subjects"):
        MultiSubjectNeuralBenchmark("x", [], lambda s: _Fixed(1))
    with pytest.raises(ValueError, match="at least one fold"):
        KFoldNeuralBenchmark("x", 0, lambda k: _Fixed(1))
    with pytest.raises(ValueError, match=r"subjects \['a'\] are listed more than once"):
        MultiSubjectNeuralBenchmark("x", ["a", "b", "a"], lambda s: _Fixed(1))
    with pytest.raises(ValueError, match=r"subject names \['raw'\] are names of the score's own attributes"):
        MultiSubjectNeuralBenchmark("x", ["a", "raw"], lambda s: _Fixed(1))
    with pytest.raises(TypeError, match="factory must be callable"):
        MultiSubjectNeuralBenchmark("x", ["a"], None)


def test_block_diagonal_concat():
    a = _assembly(np.ones((2, 3)), ["a0", "a1"], "a")
    b = _assembly(np.full((1, 2), 5.0), ["b0"], "b")
    stacked = block_diagonal_concat([a, b], presentation_coords=("stimulus_id",), neuroid_coords=("neuroid_id", "x"))
    expected = np.array([[1, 1, 1, np.nan, np.nan], [1, 1, 1, np.nan, np.nan], [np.nan] * 3 + [5, 5]])
    np.testing.assert_array_equal(stacked.values, expected)
    assert list(stacked["stimulus_id"].values) == ["a0", "a1", "b0"]
    assert list(stacked["neuroid_id"].values) == ["a-0", "a-1", "a-2", "b-0", "b-1"]
    assert "x" not in stacked.coords  # a coordinate the slices lack is left out
    with pytest.raises(ValueError, match="presentation x neuroid"):
        block_diagonal_concat([a.expand_dims("time_bin")])


def test_bootstrap_error_of_a_mean_is_its_standard_error():
    import xarray as xr

    values = xr.DataArray(np.arange(1.0, 9.0), dims=("subject",))
    error = bootstrap_error(values, ["subject"], n_bootstrap=4000, seed=0)
    assert error == pytest.approx(values.std().item() / np.sqrt(8), rel=0.05)  # population sd / sqrt(n)
    assert bootstrap_error(values, ["subject"], n_bootstrap=50, seed=3) == \
        bootstrap_error(values, ["subject"], n_bootstrap=50, seed=3)
    score = attach_error(Score(4.5), values, ["subject"], n_bootstrap=50)
    assert score.attrs["raw"] is values and score.attrs["error_over"] == ["subject"]
    with pytest.raises(ValueError, match="not dims of the values"):
        bootstrap_error(values, ["stimulus"])
    with pytest.raises(ValueError, match="needs a reason"):
        declare_no_error(Score(1.0), " ")
