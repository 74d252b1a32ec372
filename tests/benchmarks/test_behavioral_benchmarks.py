"""Geirhos2021 and Hermann2020 benchmarks: ceilings from the human CSVs, scores of the published networks."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import brainscore
from brainscore.leaderboard.tree import path_to_root
from brainscore.data import BehavioralAssembly
from brainscore.models.precomputed import PrecomputedFeatures

from benchmark_helpers import csv_trials

DATASETS = {"cueconflict": "cue-conflict", "edge": "edge", "silhouette": "silhouette"}


def kappa(c1: np.ndarray, c2: np.ndarray) -> float:
    """Cohen's kappa of two observers' correctness on the same trials (Geirhos et al. 2020)."""
    a1, a2 = c1.mean(), c2.mean()
    expected = a1 * a2 + (1 - a1) * (1 - a2)
    return ((c1 == c2).mean() - expected) / (1 - expected)


def correctness(trials: pd.DataFrame) -> dict[str, pd.Series]:
    """Per observer: correct (bool) per image name, sorted by image."""
    trials = trials.assign(image=trials["imagename"].str.split("_", n=6).str[6])
    return {who: pd.Series((t["object_response"] == t["category"]).to_numpy(), index=t["image"]).sort_index()
            for who, t in trials.groupby("subj")}


def human_ceiling(shared_data, dataset: str) -> float:
    humans = correctness(csv_trials(shared_data, dataset, "humans"))
    return abs(np.mean([kappa(humans[a].values, humans[b].values) for a, b in itertools.combinations(sorted(humans), 2)]))


@pytest.mark.parametrize("name", DATASETS)
def test_error_consistency_ceiling_over_subject_pairs(name, shared_data):
    benchmark = brainscore.load_benchmark(f"Geirhos2021{name}-error_consistency")
    assert float(benchmark.ceiling) == pytest.approx(human_ceiling(shared_data, DATASETS[name]), abs=1e-12)
    assert benchmark.ceiling.raw.sizes["pair"] == 45


def test_error_consistency_ceiling_values():
    """Measured on the real trials (10 subjects, 45 pairs)."""
    values = {name: float(brainscore.load_benchmark(f"Geirhos2021{name}-error_consistency").ceiling) for name in DATASETS}
    assert values == pytest.approx({"cueconflict": 0.3311, "edge": 0.3184, "silhouette": 0.4757}, abs=5e-5)


@pytest.mark.parametrize("name", DATASETS)
@pytest.mark.parametrize("network", ["alexnet", "vgg"])
def test_error_consistency_of_published_networks(name, network, shared_data):
    """The network's published answers as a model: raw = |mean kappa with each subject|, score = raw/ceiling in [0, 1]."""
    dataset = DATASETS[name]
    benchmark = brainscore.load_benchmark(f"Geirhos2021{name}-error_consistency")
    model = PrecomputedFeatures(brainscore.load_dataset(f"Geirhos2019.{dataset}.{network}"), visual_degrees=3)
    score = benchmark(model)
    humans = correctness(csv_trials(shared_data, dataset, "humans"))
    net = correctness(csv_trials(shared_data, dataset, network))[network]
    raw = abs(np.mean([kappa(net.values, humans[s].values) for s in sorted(humans)]))
    ceiling = human_ceiling(shared_data, dataset)
    assert float(score.raw) == pytest.approx(raw, abs=1e-12)
    assert float(score.ceiling) == pytest.approx(ceiling, abs=1e-12)
    assert float(score) == pytest.approx(min(max(raw / ceiling, 0), 1), abs=1e-12)
    assert benchmark.parent == "Geirhos2021" and path_to_root(benchmark.parent)[-1] == "average_vision"


def test_alexnet_cue_conflict_error_consistency_value():
    model = PrecomputedFeatures(brainscore.load_dataset("Geirhos2019.cue-conflict.alexnet"), visual_degrees=3)
    score = brainscore.load_benchmark("Geirhos2021cueconflict-error_consistency")(model)
    assert (float(score.raw), float(score)) == pytest.approx((0.1132, 0.3419), abs=5e-5)


def test_score_is_clipped_to_one():
    """The humans' majority answer per image agrees with each subject more than subjects agree with each other."""
    humans = brainscore.load_dataset("Geirhos2019.silhouette")
    frame = humans.coord_frame("presentation")
    counts = frame.groupby(["stimulus_id", "choice"]).size().reset_index(name="n")
    majority = counts.sort_values(["stimulus_id", "n", "choice"], ascending=[True, False, True]).drop_duplicates(
        "stimulus_id")
    model = PrecomputedFeatures(BehavioralAssembly(majority["choice"].to_numpy(), dims=("presentation",), coords={
        "stimulus_id": ("presentation", majority["stimulus_id"].to_numpy())}), visual_degrees=3)
    score = brainscore.load_benchmark("Geirhos2021silhouette-error_consistency")(model)
    assert float(score.raw) > float(score.ceiling) and float(score) == 1.0
    assert score.attrs["unbounded"] == pytest.approx(float(score.raw) / float(score.ceiling))


@pytest.mark.parametrize("name, network, expected", [("cueconflict", "alexnet", 0.2727), ("edge", "alexnet", 0.4),
                                                      ("silhouette", "googlenet", 0.4875)])
def test_top1_of_published_networks(name, network, expected, shared_data):
    benchmark = brainscore.load_benchmark(f"Geirhos2021{name}-top1")
    assert benchmark.number_of_trials == 10 and float(benchmark.ceiling) == 1
    assert benchmark.parent == "Geirhos2021-top1" and path_to_root(benchmark.parent)[-1] == "engineering_vision"
    model = PrecomputedFeatures(brainscore.load_dataset(f"Geirhos2019.{DATASETS[name]}.{network}"), visual_degrees=3)
    score = benchmark(model)
    trials = csv_trials(shared_data, DATASETS[name], network)
    assert float(score) == pytest.approx((trials["object_response"] == trials["category"]).mean(), abs=1e-12)
    assert float(score) == pytest.approx(expected, abs=5e-5)


def test_label_set_is_the_sorted_16_categories():
    benchmark = brainscore.load_benchmark("Geirhos2021edge-error_consistency")
    assert benchmark.labels == sorted(benchmark.labels) and len(benchmark.labels) == 16
    assert benchmark.visual_degrees == 3 and benchmark.number_of_trials == 1


@pytest.mark.parametrize("network, shape, texture", [("alexnet", 283, 376), ("googlenet", 228, 503), ("vgg", 130, 625)])
def test_hermann2020_of_published_networks(network, shape, texture):
    """Counts over the 1,200 conflict trials from the CSVs (AlexNet 283 shape, 376 texture answers: bias 42.9 %)."""
    model = PrecomputedFeatures(brainscore.load_dataset(f"Geirhos2019.cue-conflict.{network}"), visual_degrees=8)
    bias = brainscore.load_benchmark("Hermann2020cueconflict-shape_bias")(model)
    shape_match = brainscore.load_benchmark("Hermann2020cueconflict-shape_match")(model)
    texture_match = brainscore.load_benchmark("Hermann2020cueconflict-texture_match")(model)
    assert float(bias) == pytest.approx(shape / (shape + texture), abs=1e-12)
    assert float(shape_match) == pytest.approx(shape / 1200, abs=1e-12)
    assert float(texture_match) == pytest.approx(texture / 1200, abs=1e-12)
    assert float(bias.ceiling) == 1


def test_hermann2020_of_humans_is_the_published_96_percent():
    """All 10 subjects' trials as one observer: shape bias 0.959 (Geirhos et al. 2019)."""
    model = PrecomputedFeatures(brainscore.load_dataset("Geirhos2019.cue-conflict"), visual_degrees=8)
    assert float(brainscore.load_benchmark("Hermann2020cueconflict-shape_bias")(model)) == pytest.approx(0.959, abs=5e-4)


def test_hermann2020_shows_images_unplaced():
    benchmark = brainscore.load_benchmark("Hermann2020cueconflict-shape_bias")
    assert benchmark.visual_degrees is None and benchmark.parent == "behavior_vision"


def test_answers_get_the_stimulus_sets_columns_by_stimulus_id():
    """``with_stimulus_columns`` looks each answer's stimulus up (first row of a repeated id) and names a stranger."""
    from brainscore.benchmarks.behavioral import with_stimulus_columns
    from brainscore.data import StimulusSet
    from brainscore.errors import AlignmentError

    stimuli = StimulusSet(pd.DataFrame({"stimulus_id": ["a", "b", "a"], "truth": ["cat", "dog", "later row"]}),
                          identifier="toy", stimulus_paths={})
    answers = BehavioralAssembly(["x", "y", "z"], coords={"stimulus_id": ("presentation", ["b", "a", "b"])},
                                 dims=["presentation"])
    assert list(with_stimulus_columns(answers, stimuli, ["truth"])["truth"].values) == ["dog", "cat", "dog"]
    stranger = answers.assign_coords(stimulus_id=("presentation", ["b", "q", "b"]))
    with pytest.raises(AlignmentError, match=r"the stimulus set 'toy' has no row for 1 stimulus_id values of the "
                                             r"answers, e.g. \['q'\]"):
        with_stimulus_columns(stranger, stimuli, ["truth"])
