"""value_delta, accuracy_distance (and kato_), kato_error_consistency, threshold and threshold_elevation.

The numbers pinned are the reference's own test expectations (brainscore-vision 2.4.2,
``metrics/<name>/test.py``) on the same synthetic inputs, plus closed forms worked by hand.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from brainscore import registry
from brainscore.data.assemblies import BehavioralAssembly, PropertiesAssembly
from brainscore.metrics.behavior.accuracy_distance import AccuracyDistance, accuracy_distance
from brainscore.metrics.behavior.error_consistency import ErrorConsistency
from brainscore.metrics.behavior.threshold import (Threshold, ThresholdElevation, inverse_psychometric_cum_gauss,
                                                   psychometric_cum_gauss)
from brainscore.metrics.behavior.value_delta import ValueDelta
from brainscore.errors import ValidationError

CHOICES = ['dog', 'cat', 'chair', 'cat', 'dog', 'dog', 'dog', 'dog', 'chair',  # subject A: 5/9 correct
           'cat', 'cat', 'chair', 'cat', 'dog', 'cat', 'chair', 'cat', 'cat',  # subject B: 3/9 correct
           'dog', 'cat', 'chair', 'dog', 'cat', 'chair', 'dog', 'cat', 'chair']  # subject C: 9/9 correct


def subjects(choices=CHOICES) -> BehavioralAssembly:
    """The reference's accuracy_distance/error_consistency test data: 3 subjects x 9 stimuli."""
    return BehavioralAssembly(choices, dims=["presentation"], coords={
        "stimulus_id": ("presentation", np.resize(np.arange(9), 27)),
        "truth": ("presentation", np.resize(["dog", "cat", "chair"], 27)),
        "condition": ("presentation", np.resize([1, 1, 1, 2, 2, 2, 3, 3, 3], 27)),
        "animacy": ("presentation", np.resize(["animate", "animate", "inanimate"], 27)),
        "subject": ("presentation", ["A"] * 9 + ["B"] * 9 + ["C"] * 9)})


def of_subject(assembly, subject):
    return assembly.isel(presentation=np.flatnonzero(assembly["subject"].values == subject))


# ---- value_delta ------------------------------------------------------------------------------------
@pytest.mark.parametrize("source, target, expected", [
    (1.25, 1.25, 1.0), (1.5, 1.0, 0.6065), (1.0, 1.5, 0.6065), (1.0, -1.0, 0.1353), (-1.0, 1.0, 0.1353),
    (-5.0, 5.0, 0.0), (5.0, -5.0, 0.0)])
def test_value_delta_reference_numbers(source, target, expected):
    score = registry.load_metric("value_delta")(source, target)
    assert float(score) == pytest.approx(expected, abs=5e-4)  # the reference test's tolerance
    assert float(score) == pytest.approx(math.exp(-abs(source - target)), rel=1e-12)
    assert score.attrs["raw"] == [source, target]


def test_value_delta_scale_and_bad_input():
    assert float(ValueDelta(scale=2.0)(1.0, 1.5)) == pytest.approx(math.exp(-1.0))
    with pytest.raises(ValidationError, match="finite"):
        ValueDelta()(float("nan"), 1.0)
    with pytest.raises(ValidationError, match="scale"):
        ValueDelta(scale=0)


# ---- accuracy_distance ------------------------------------------------------------------------------
def test_accuracy_distance_reference_number_by_hand():
    data = subjects()
    score = registry.load_metric("accuracy_distance")(of_subject(data, "A"), data)
    # A vs A: 1; vs B (3/9): 1 - (2/9)/(6/9) = 2/3; vs C (9/9): 1 - (4/9)/1 = 5/9
    per_subject = [1.0, 2 / 3, 5 / 9]
    assert float(score) == pytest.approx(0.74074074)  # the reference test's number
    assert float(score) == pytest.approx(np.mean(per_subject), rel=1e-12)
    assert score.attrs["error"] == pytest.approx(np.std(per_subject), rel=1e-12)
    assert float(score.raw.sel(subject="A")) == 1.0


@pytest.mark.parametrize("variables", [("condition",), ("condition", "animacy")])
def test_accuracy_distance_by_condition_reference_number(variables):
    data = subjects()
    score = registry.load_metric("accuracy_distance")(of_subject(data, "C"), data, variables)
    assert float(score) == pytest.approx(0.55555556)


def test_accuracy_distance_closed_form_and_ceiling():
    assert accuracy_distance(0.5, 0.5) == 1.0
    assert accuracy_distance(1.0, 0.25) == pytest.approx(1 - 0.75 / 0.75)
    ceiling = AccuracyDistance().ceiling(subjects())
    pairs = [accuracy_distance(5 / 9, 3 / 9), accuracy_distance(5 / 9, 1.0), accuracy_distance(3 / 9, 1.0)]
    assert float(ceiling) == pytest.approx(np.mean(pairs), rel=1e-12)


def test_kato_accuracy_distance_drops_missing_responses():
    choices = list(CHOICES)
    choices[3] = ""       # subject A gave no response to stimulus 3 (which A got wrong)
    choices[9 + 4] = "NaN"  # subject B gave none to stimulus 4
    data = subjects(choices)
    model = of_subject(subjects(), "C")  # always right
    score = registry.load_metric("kato_accuracy_distance")(model, data)
    # per subject, accuracies on the trials valid in both: A 5/8 (model 1), B 3/8 (model 1), C 1 (model 1)
    expected = [accuracy_distance(1.0, 5 / 8), accuracy_distance(1.0, 3 / 8), accuracy_distance(1.0, 1.0)]
    assert float(score) == pytest.approx(np.mean(expected), rel=1e-12)
    plain = registry.load_metric("accuracy_distance")(model, data)
    assert float(plain) != pytest.approx(float(score))  # the plain metric counts a missing response as wrong


def test_kato_error_consistency_drops_missing_responses():
    data = subjects()
    model = of_subject(data, "A")
    plain = registry.load_metric("error_consistency")(model, data)
    assert float(plain) == pytest.approx(0.2)  # the reference test's number
    assert float(registry.load_metric("kato_error_consistency")(model, data)) == pytest.approx(0.2)
    choices = list(CHOICES)
    choices[9 + 0] = ""  # subject B: no response to stimulus 0 (condition 1)
    with_missing = subjects(choices)
    kato = ErrorConsistency(valid_only=True)(model, with_missing)
    # the same as leaving that trial out of the data altogether
    keep = np.ones(27, dtype=bool)
    keep[9] = False
    dropped = ErrorConsistency()(model, with_missing.isel(presentation=np.flatnonzero(keep)))
    assert float(kato) == pytest.approx(float(dropped), rel=1e-12)
    assert float(ErrorConsistency()(model, with_missing)) != pytest.approx(float(kato))


# ---- threshold, threshold_elevation -----------------------------------------------------------------
def test_threshold_from_thresholds_reference_numbers():
    thresholds = PropertiesAssembly([10.0, 20.0, 40.0, 20.0], dims=["subject"],
                                    coords={"subject": ["A", "B", "C", "D"]})
    score = registry.load_metric("threshold", independent_variable="placeholder")(10.0, thresholds)
    assert float(score) == pytest.approx(0.5625)  # (1 + 1/2 + 1/4 + 1/2) / 4
    assert score.attrs["error"] == pytest.approx(np.std([1, 0.5, 0.25, 0.5]))
    elevations = PropertiesAssembly([3.0, 2.0, 1.5, 5.0], dims=["subject"], coords={"subject": list("ABCD")})
    metric = registry.load_metric("threshold_elevation", independent_variable="placeholder",
                                  baseline_condition="placeholder", test_condition="placeholder")
    assert float(metric(3.0, elevations)) == pytest.approx(0.525)  # (1 + 1/2 + 0 + 3/5) / 4


def test_threshold_ceiling_leaves_each_human_out_in_the_reference_order():
    values = [10.0, 20.0, 40.0, 20.0]
    ceiling = Threshold("x").ceiling(PropertiesAssembly(values, dims=["subject"], coords={"subject": list("ABCD")}))
    pool, expected = list(values), []
    for i in range(len(values)):  # the reference's draw: RandomState(i), the drawn one appended back at the end
        drawn = np.random.RandomState(i).choice(pool, replace=False)
        pool.remove(drawn)
        expected.append(np.mean([max(1 - abs(t - drawn) / t, 0) for t in pool]))
        pool.append(drawn)
    assert float(ceiling) == pytest.approx(np.mean(expected), rel=1e-12)
    assert ceiling.attrs["error"] == pytest.approx(np.std(expected), rel=1e-12)


def _psychometric_responses(alpha=0.8, beta=4.0, lapse=0.05, levels=np.arange(1.0, 9.0), trials=400):
    """Model choice probabilities whose proportion correct per level follows the psychometric function exactly."""
    x, correct = [], []
    for level in levels:
        hits = int(round(psychometric_cum_gauss(level, alpha, beta, lapse) * trials))
        x += [level] * trials
        correct += [1] * hits + [0] * (trials - hits)
    correct = np.array(correct)
    probabilities = np.where(correct[:, None] == 1, [[0.9, 0.1]], [[0.1, 0.9]])
    return BehavioralAssembly(probabilities, dims=["presentation", "choice"], coords={
        "stimulus_id": ("presentation", np.arange(len(x))), "vernier_offset": ("presentation", np.array(x)),
        "image_label": ("presentation", ["left"] * len(x)), "choice": ["left", "right"]})


def test_threshold_fit_recovers_the_generating_psychometric_function():
    responses = _psychometric_responses()
    metric = Threshold("vernier_offset", threshold_accuracy=0.75)
    threshold, accuracy = metric.threshold(responses)
    assert accuracy == 0.75
    assert threshold == pytest.approx(float(inverse_psychometric_cum_gauss(0.75, 0.8, 4.0, 0.05)), rel=0.02)
    score = metric(responses, [threshold, 2 * threshold])
    assert float(score) == pytest.approx(np.mean([1.0, 0.5]), abs=0.02)
    assert score.attrs["threshold"] == pytest.approx(threshold)


def test_threshold_fit_failure_scores_zero_and_says_why():
    responses = _psychometric_responses(alpha=0.0001, lapse=0.45)  # at chance everywhere
    score = Threshold("vernier_offset")(responses, [1.0, 2.0])
    assert float(score) == 0.0
    assert "below the required" in score.attrs["fit_failure"]


def test_threshold_elevation_of_two_conditions():
    baseline = _psychometric_responses(beta=3.0)
    test = _psychometric_responses(beta=6.0)
    metric = ThresholdElevation("vernier_offset", baseline_condition="base", test_condition="flanked",
                                threshold_accuracy=0.75)
    score = metric({"base": baseline, "flanked": test}, [2.0, 1.0])
    expected = (float(inverse_psychometric_cum_gauss(0.75, 0.8, 6.0, 0.05))
                / float(inverse_psychometric_cum_gauss(0.75, 0.8, 3.0, 0.05)))
    assert score.attrs["threshold_elevation"] == pytest.approx(expected, rel=0.03)
