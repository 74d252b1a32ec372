"""Accuracy distance (Brain-Score's ``accuracy_distance``): closed forms and the reference's own test values."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import brainscore
from brainscore.data import BehavioralAssembly
from brainscore.errors import AlignmentError
from brainscore.metrics.behavior.accuracy_distance import AccuracyDistance, AccuracyDistanceCeiling, accuracy_distance


def _three_subjects() -> BehavioralAssembly:
    """The reference's test data (brainscore_vision/metrics/accuracy_distance/test.py): 9 stimuli, 3 subjects;
    A is right on 5 of 9, B on 3 of 9, C on all 9."""
    return BehavioralAssembly(
        ["dog", "cat", "chair", "cat", "dog", "dog", "dog", "dog", "chair",
         "cat", "cat", "chair", "cat", "dog", "cat", "chair", "cat", "cat",
         "dog", "cat", "chair", "dog", "cat", "chair", "dog", "cat", "chair"],
        coords={"stimulus_id": ("presentation", np.resize(np.arange(9), 27).astype(str)),
                "truth": ("presentation", np.resize(["dog", "cat", "chair"], 27)),
                "condition": ("presentation", np.resize([1, 1, 1, 2, 2, 2, 3, 3, 3], 27)),
                "animacy": ("presentation", np.resize(["animate", "animate", "inanimate"], 27)),
                "subject": ("presentation", ["A"] * 9 + ["B"] * 9 + ["C"] * 9)},
        dims=["presentation"])


def _subject(assembly, name):
    return assembly.isel(presentation=np.flatnonzero(assembly["subject"].values == name))


def test_the_formula():
    assert accuracy_distance(5 / 9, 5 / 9) == 1.0
    assert accuracy_distance(5 / 9, 3 / 9) == pytest.approx(1 - (2 / 9) / (6 / 9))  # farthest end 0 -> 1
    assert accuracy_distance(0.0, 1.0) == 0.0 and accuracy_distance(1.0, 0.0) == 0.0
    assert accuracy_distance(0.5, 0.5) == 1.0 and accuracy_distance(1.0, 0.5) == 0.0
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        accuracy_distance(1.2, 0.5)


def test_the_reference_values():
    """The reference's test_score (0.74074074), test_score_single_variable and _multi_variable (0.55555556),
    test_raw_subjects (subject A against itself: 1)."""
    data = _three_subjects()
    score = AccuracyDistance()(_subject(data, "A"), data)
    assert float(score) == pytest.approx((1 + 2 / 3 + 5 / 9) / 3) == pytest.approx(0.74074074)
    assert float(score.raw.sel(subject="A")) == 1.0 and score.error == pytest.approx(np.std([1, 2 / 3, 5 / 9]))
    assert float(AccuracyDistance(variables=("condition",))(_subject(data, "C"), data)) == pytest.approx(0.55555556)
    assert float(AccuracyDistance(variables=("condition", "animacy"))(_subject(data, "C"), data)) == pytest.approx(
        0.55555556)
    assert float(brainscore.load_metric("accuracy_distance")(_subject(data, "A"), data)) == pytest.approx(0.74074074)


def test_the_ceiling_is_the_metric_over_pairs_of_subjects():
    data = _three_subjects()
    ceiling = AccuracyDistanceCeiling()(data)
    expected = [float(AccuracyDistance()(_subject(data, left), _subject(data, right)))
                for left, right in itertools.combinations("ABC", 2)]
    # A vs B: 1 - (2/9)/(6/9); A vs C: 5/9; B vs C: 3/9
    np.testing.assert_allclose(expected, [2 / 3, 5 / 9, 3 / 9])
    assert float(ceiling) == pytest.approx(np.mean(expected)) and ceiling.error == pytest.approx(np.std(expected))
    assert list(ceiling.raw["subject_left"].values) == ["A", "A", "B"]
    assert float(brainscore.load_ceiling("accuracy_distance")(data)) == pytest.approx(float(ceiling))


def test_the_model_is_judged_against_the_subjects_correct_answers_on_their_stimuli():
    """A model answering more stimuli than the subjects saw is scored on theirs; the truth is the subjects'."""
    data = _three_subjects()
    model = BehavioralAssembly(["dog", "cat", "chair", "dog", "cat", "chair", "dog", "cat", "chair", "extra"],
                               coords={"stimulus_id": ("presentation", [*map(str, range(9)), "99"])},
                               dims=["presentation"])
    assert float(AccuracyDistance()(model, data)) == pytest.approx(float(AccuracyDistance()(_subject(data, "C"), data)))
    with pytest.raises(AlignmentError,
                       match=r"the source has no answer for 1 stimulus_id values of the trials of subject "
                             r".*e\.g\. \['0'\]"):
        AccuracyDistance()(model.isel(presentation=slice(1, None)), data)


def test_the_bootstrap_with_every_stimulus_once_is_the_score():
    data = _three_subjects()
    ids = np.sort(np.unique(data["stimulus_id"].values))
    model = _subject(data, "A")
    once = np.ones((1, len(ids)))
    assert AccuracyDistance().bootstrap(model, data, once, ids)[0] == pytest.approx(float(AccuracyDistance()(model, data)))
    assert AccuracyDistanceCeiling().bootstrap(data, once, ids)[0] == pytest.approx(float(AccuracyDistanceCeiling()(data)))
    twice_first = np.ones((1, len(ids)))
    twice_first[0, 0] = 2   # stimulus 0 drawn twice: A and C right on it, B wrong
    a, b, c = 6 / 10, 3 / 10, 1.0
    expected = np.mean([1, 1 - abs(a - b) / max(b, 1 - b), 1 - abs(a - c) / max(c, 1 - c)])
    assert AccuracyDistance().bootstrap(model, data, twice_first, ids)[0] == pytest.approx(expected)
    assert AccuracyDistance(variables=("condition",)).bootstrap(model, data, once, ids) is None
