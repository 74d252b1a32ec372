"""``brainscore.benchmarks.aggregate`` (the mean of child benchmarks over subjects or folds) and
``brainscore.data.assemblies.block_diagonal_concat``, against closed forms.

The children are tiny benchmarks with fixed scores, raw values and ceilings, so every number of the aggregate is
known in advance: the mean, the SEM (``std(ddof=1) / sqrt(n)``), and the bootstrap error recomputed here by hand
with the same generator and seed.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from brainscore.benchmarks.aggregate import (RESERVED_ATTRIBUTES, UNIT_N_BOOTSTRAP, FoldMeanBenchmark,
                                             SubjectMeanBenchmark, UnitMeanBenchmark, child_raw_value,
                                             kfold_benchmarks, release_child, standard_error)
from brainscore.benchmarks.base import BenchmarkBase
from brainscore.data.assemblies import NeuroidAssembly, block_diagonal_concat
from brainscore.errors import ValidationError
from brainscore.metrics.score import Score

SCORES = {"s1": 0.2, "s2": 0.5, "s3": 0.9, "s4": 0.4}
CEILINGS = {"s1": 0.6, "s2": 0.8, "s3": 0.7, "s4": 0.9}
RAWS = {"s1": [0.1, 0.3], "s2": [0.4], "s3": [0.5, 0.6, 0.7], "s4": [0.2, 0.2]}


class Child(BenchmarkBase):
    """A benchmark with a fixed score (``raw`` per neuroid in its attrs) and a fixed ceiling."""

    def __init__(self, unit, score, ceiling, raw=None, log=None):
        super().__init__(identifier=f"Toy.{unit}", version=4, ceiling_func=None, parent="V4", bibtex="@misc{toy}")
        self.region, self.value, self.fixed_ceiling, self.raw, self.log = "V4", score, ceiling, raw, log
        self.data = np.zeros(3)
        self.score_range = (0.0, math.inf)

    @property
    def ceiling(self):
        if self.log is not None:
            self.log.append(("ceiling", self.identifier))
        return Score(self.fixed_ceiling)

    def __call__(self, candidate):
        score = Score(self.value)
        if self.raw is not None:
            score.attrs["raw"] = Score(np.array(self.raw), dims=("neuroid",))
        return score

    def load_data(self):
        return True


def factory(log=None, scores=SCORES):
    def build(unit):
        if log is not None:
            log.append(("built", unit))
        return Child(unit, scores[unit], CEILINGS.get(unit, 1.0), RAWS.get(unit), log)
    return build


def hand_bootstrap(values, n_bootstrap, seed=0):
    generator = np.random.default_rng(seed)
    draws = [np.mean(values[generator.integers(0, len(values), len(values))]) for _ in range(n_bootstrap)]
    return float(np.std(draws, ddof=1))


def test_subject_mean_is_the_mean_of_the_children_with_their_detail():
    log = []
    benchmark = SubjectMeanBenchmark("Toy.V4-subjects", list(SCORES), factory(log))
    assert log == [("built", "s1")]  # one child for the metadata
    assert (benchmark.region, benchmark.parent, benchmark.version, benchmark.bibtex) == ("V4", "V4", 4, "@misc{toy}")
    assert benchmark.score_range == (0.0, math.inf) and benchmark.dim == "subject"
    score = benchmark(None)
    values = np.array(list(SCORES.values()))
    ceilings = np.array(list(CEILINGS.values()))
    assert float(score) == pytest.approx(values.mean(), abs=1e-15)
    assert float(score.attrs["raw"]) == pytest.approx(np.mean([np.mean(r) for r in RAWS.values()]), abs=1e-15)
    np.testing.assert_array_equal(score.attrs["raw_subjects"].values, values)
    assert list(score.attrs["raw_subjects"]["subject"].values) == list(SCORES)
    assert score.attrs["raw_subjects"].name == "Toy.V4-subjects_per_subject"
    assert score.attrs["sem_subjects"] == pytest.approx(values.std(ddof=1) / 2, abs=1e-15)
    ceiling = score.attrs["ceiling"]
    assert float(ceiling) == pytest.approx(ceilings.mean(), abs=1e-15)
    assert ceiling.attrs["sem"] == ceiling.attrs["error"] == pytest.approx(ceilings.std(ddof=1) / 2, abs=1e-15)
    np.testing.assert_array_equal(ceiling.attrs["raw_subjects"].values, ceilings)
    assert float(score.attrs["s3"]) == 0.9 and score.attrs["s3"].attrs["raw"].dims == ("neuroid",)
    assert score.attrs["error"] == pytest.approx(hand_bootstrap(values, UNIT_N_BOOTSTRAP), abs=1e-15)
    assert score.attrs["error_over"] == ["subject"] and score.attrs["n_bootstrap"] == UNIT_N_BOOTSTRAP == 200
    # each child built, scored and its ceiling read in turn: one child at a time
    assert log[1:] == [entry for unit in SCORES for entry in (("built", unit), ("ceiling", f"Toy.{unit}"))]


def test_the_ceiling_is_the_mean_computed_once_per_object():
    log = []
    benchmark = SubjectMeanBenchmark("Toy.V4-subjects", ["s1", "s2"], factory(log))
    first = benchmark.ceiling
    assert float(first) == pytest.approx(0.7, abs=1e-15)
    assert first.attrs["sem"] == pytest.approx(np.std([0.6, 0.8], ddof=1) / math.sqrt(2), abs=1e-15)
    calls = len(log)
    assert benchmark.ceiling is first and len(log) == calls
    assert float(SubjectMeanBenchmark("Toy.V4-one", ["s1"], factory()).ceiling.attrs["sem"]) == 0.0


def test_fold_mean_keeps_the_fold_scores_in_a_list_and_one_unit_says_why_it_has_no_error():
    scores = {0: 0.3, 1: 0.6, 2: 0.45}
    benchmark = FoldMeanBenchmark("Toy.V4-folds", 3, factory(scores=scores))
    score = benchmark(None, device=None)
    assert benchmark.units == [0, 1, 2] and benchmark.n_folds == 3
    assert float(score) == pytest.approx(0.45, abs=1e-15)
    assert [float(s) for s in score.attrs["folds"]] == [0.3, 0.6, 0.45]
    assert score.attrs["raw"] is score.attrs["raw_folds"]  # no child has a raw: the per-fold scores stand in
    assert score.attrs["error"] == pytest.approx(hand_bootstrap(np.array([0.3, 0.6, 0.45]), 200), abs=1e-15)
    single = FoldMeanBenchmark("Toy.V4-one-fold", 1, factory(scores=scores))(None)
    assert math.isnan(single.attrs["error"])
    assert single.attrs["error_nan_reason"] == "a single fold: nothing to resample at this level"
    assert single.attrs["sem_folds"] == 0.0


def test_a_unit_that_is_not_finite_is_an_error_listing_every_unit():
    benchmark = SubjectMeanBenchmark("Toy.nan", ["a", "b", "c"], factory(scores={"a": 0.4, "b": np.nan, "c": np.inf}))
    with pytest.raises(ValidationError) as error:
        benchmark(None)
    assert str(error.value) == ("Toy.nan: the score of subject ['b', 'c'] is not a finite number, so their mean would "
                                "not be either (a: 0.4, b: nan, c: inf); fix or leave out that subject")

    def nan_ceiling(unit):
        return Child(unit, 0.5, np.nan if unit == 1 else 0.8)
    with pytest.raises(ValidationError,
                       match=r"the ceiling of fold \[1\] is not a finite number, .*\(0: 0.8, 1: nan\)"):
        FoldMeanBenchmark("Toy.nan", 2, nan_ceiling).ceiling


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="needs a non-empty sequence of subjects"):
        SubjectMeanBenchmark("x", "s1", factory())
    with pytest.raises(ValueError, match=r"subjects \['s1'\] are listed more than once"):
        SubjectMeanBenchmark("x", ["s1", "s2", "s1"], factory())
    with pytest.raises(ValueError, match=r"subject names \['ceiling'\] are names of the score's own attributes"):
        SubjectMeanBenchmark("x", ["s1", "ceiling"], factory())
    assert {"raw", "error", "raw_subjects", "folds"} <= RESERVED_ATTRIBUTES
    with pytest.raises(ValueError, match="FoldMeanBenchmark 'x' needs at least one fold; got n_folds=0"):
        FoldMeanBenchmark("x", 0, factory())
    with pytest.raises(TypeError, match=r"the factory must be callable \(subject -> benchmark\); got int"):
        SubjectMeanBenchmark("x", ["s1"], 3)
    with pytest.raises(ValueError, match="needs at least one unit"):
        UnitMeanBenchmark("x", [], factory())


def test_released_attributes_are_cleared_and_load_data_visits_every_child():
    held = []

    class Releasing(UnitMeanBenchmark):
        released_attributes = ("data",)

    def build(unit):
        held.append(Child(unit, SCORES[unit], CEILINGS[unit]))
        return held[-1]

    benchmark = Releasing("Toy.release", ["s1", "s2"], build, dim="animal")
    assert benchmark.load_data() is True
    assert all(child.data is None for child in held) and len(held) == 3
    score = benchmark(None)
    assert [float(s) for s in score.attrs["animals"]] == [0.2, 0.5] and "raw_animals" in score.attrs
    child = Child("s1", 0.1, 0.2)
    release_child(child, ("data", "missing"))
    assert child.data is None


def test_time_bins_stored_are_read_at_construction_a_property_only_when_asked():
    log = []

    class Stored(Child):
        def __init__(self, unit):
            super().__init__(unit, 0.5, 0.5)
            self.timebins = [(70, 170)]

    class Lazy(Child):
        @property
        def time_bins(self):
            log.append("read")
            return [(50, 100)]

    stored = SubjectMeanBenchmark("Toy.stored", ["s1"], Stored)
    assert stored.time_bins == [(70, 170)]
    lazy = SubjectMeanBenchmark("Toy.lazy", ["s1"], lambda unit: Lazy(unit, 0.5, 0.5))
    assert log == []
    assert lazy.time_bins == [(50, 100)] and log == ["read"]
    assert lazy.time_bins == [(50, 100)] and log == ["read"]


def test_child_raw_value_and_standard_error():
    assert child_raw_value(Score.of(0.5, raw=Score(np.array([0.2, 0.4]), dims=("neuroid",)))) == pytest.approx(0.3)
    assert math.isnan(child_raw_value(Score(0.5))) and math.isnan(child_raw_value(Score.of(0.5, raw="text")))
    assert standard_error(np.array([1.0, 2.0, 4.0])) == pytest.approx(np.std([1, 2, 4], ddof=1) / math.sqrt(3))
    assert standard_error(np.array([3.0])) == 0.0


def _repeated_assembly():
    """12 stimuli, each shown twice in a shuffled order."""
    ids = np.array([f"im{i:02d}" for i in range(12)] * 2)
    order = np.random.default_rng(3).permutation(len(ids))
    ids = ids[order]
    return NeuroidAssembly(np.arange(len(ids) * 2, dtype=float).reshape(-1, 2), dims=("presentation", "neuroid"),
                           coords={"stimulus_id": ("presentation", ids), "neuroid_id": ("neuroid", ["n0", "n1"])})


def test_kfold_benchmarks_membership_is_scikit_learns_kfold_over_unique_stimuli():
    from sklearn.model_selection import KFold

    assembly = _repeated_assembly()
    ids = assembly["stimulus_id"].values
    _, first = np.unique(ids, return_index=True)
    unique = ids[np.sort(first)]  # order of first appearance
    built = {}
    make = kfold_benchmarks(assembly, 4, lambda k, train, test: built.setdefault(k, (train, test)), random_state=5)
    for k, (_, test_index) in enumerate(KFold(4, shuffle=True, random_state=5).split(unique)):
        train, test = make(k)
        assert set(test["stimulus_id"].values) == set(unique[test_index])
        assert not set(train["stimulus_id"].values) & set(test["stimulus_id"].values)
        assert train.sizes["presentation"] + test.sizes["presentation"] == 24  # repetitions stay together
        np.testing.assert_array_equal(test.values, assembly.values[np.isin(ids, unique[test_index])])  # order kept
    with pytest.raises(ValueError, match=r"fold 4 does not exist: there are 4 folds \(0 .. 3\)"):
        make(4)
    with pytest.raises(ValueError, match="cannot split over 'image'"):
        kfold_benchmarks(assembly, 2, lambda *a: None, split_coord="image")
    with pytest.raises(ValueError, match="k-fold needs 2 <= splits"):
        kfold_benchmarks(assembly, 13, lambda *a: None)


def _slice(values, stimuli, neuroids, subject):
    return NeuroidAssembly(values, dims=("presentation", "neuroid"), coords={
        "stimulus_id": ("presentation", stimuli), "neuroid_id": ("neuroid", neuroids),
        "subject": ("neuroid", [subject] * len(neuroids)), "only_a": ("presentation", [0] * len(stimuli))
        if subject == "a" else ("presentation", [1] * len(stimuli))})


def test_block_diagonal_concat_puts_each_subject_on_its_own_block():
    a = _slice(np.ones((2, 3), dtype=np.float64), ["a0", "a1"], ["a-0", "a-1", "a-2"], "a")
    b = _slice(np.full((1, 2), 5.0), ["b0"], ["b-0", "b-1"], "b").transpose("neuroid", "presentation")
    b = b.drop_vars("only_a")
    stacked = block_diagonal_concat([a, b])
    assert isinstance(stacked, NeuroidAssembly) and stacked.dims == ("presentation", "neuroid")
    assert stacked.name == "data" and stacked.dtype == np.float64
    nan = np.nan
    np.testing.assert_array_equal(stacked.values, [[1, 1, 1, nan, nan], [1, 1, 1, nan, nan], [nan, nan, nan, 5, 5]])
    assert list(stacked["stimulus_id"].values) == ["a0", "a1", "b0"]
    assert list(stacked["subject"].values) == ["a", "a", "a", "b", "b"]
    assert "only_a" not in stacked.coords  # a coordinate the second slice lacks is left out
    chosen = block_diagonal_concat([a, b], presentation_coords=("stimulus_id",), neuroid_coords=("neuroid_id",))
    assert sorted(chosen.coords) == ["neuroid_id", "stimulus_id"]
    assert block_diagonal_concat([a.astype(int)]).dtype == np.float32
    with pytest.raises(ValueError, match="at least one slice"):
        block_diagonal_concat([])
    with pytest.raises(ValueError, match=r"slice 0 has dims .*presentation x neuroid"):
        block_diagonal_concat([a.expand_dims("time_bin")])


def test_block_diagonal_concat_round_trips_through_each_subject():
    a = _slice(np.random.default_rng(0).normal(size=(3, 2)), ["a0", "a1", "a2"], ["a-0", "a-1"], "a")
    b = _slice(np.random.default_rng(1).normal(size=(2, 4)), ["b0", "b1"], ["b-0", "b-1", "b-2", "b-3"], "b")
    stacked = block_diagonal_concat([a, b])
    for part, subject in ((a, "a"), (b, "b")):
        block = stacked.isel(neuroid=np.flatnonzero(stacked["subject"].values == subject))
        block = block.isel(presentation=np.flatnonzero(np.isin(stacked["stimulus_id"].values,
                                                               part["stimulus_id"].values)))
        np.testing.assert_array_equal(block.values, part.values)
    assert int(np.isnan(stacked.values).sum()) == 5 * 6 - (3 * 2 + 2 * 4)
