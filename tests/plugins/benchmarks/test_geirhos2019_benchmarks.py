"""Geirhos2019 instructed benchmarks: the folds, the published networks and the subjects against the paper's figure,
ceilings and scores recomputed from the CSVs, and a second run served from the cache."""
from __future__ import annotations

import itertools
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import brainscore
from brainscore.leaderboard.tree import path_to_root
from brainscore.models.precomputed import PrecomputedFeatures

from benchmark_helpers import csv_trials

INSTRUCTIONS = ("shape", "texture")
NETWORKS = ("alexnet", "googlenet", "vgg")
#: Geirhos et al. (2019), the figure of the instructed experiments: its vector source files
#: (``paper-figures/results/style-transfer-512-nomask-{content,texture}-guessing-experiment/conflict_content.pdf``
#: in github.com/rgeirhos/texture-vs-shape at the data plugin's commit) draw each observer's average as a line on
#: an axis of texture decisions from 95.51 pt (0) to 376.04 pt (1), and the fraction of cue-conflict trials
#: answered with the shape or the texture as bars (mean over the 16 shape categories, width / 28.05 pt). A network
#: gives the same answers in both panels (it is not instructed). Texture fraction of decisions, decided fraction:
FIGURE = {"humans": {"shape": ((103.76 - 95.51) / 280.53, 0.8498), "texture": ((180.79 - 95.51) / 280.53, 0.4658)},
          "alexnet": ((255.57 - 95.51) / 280.53, 0.5492), "googlenet": ((288.54 - 95.51) / 280.53, 0.6092),
          "vgg": ((327.74 - 95.51) / 280.53, 0.6292)}
#: the paper's Fig. 4 (uninstructed; the networks' answers are the same): shape bias 42.9 %, 31.2 %, 17.2 %
PUBLISHED_SHAPE_BIAS = {"alexnet": 0.429, "googlenet": 0.312, "vgg": 0.172}
LINE, BAR = 5e-5, 5e-4   # the figure's resolution (0.01 pt) on the lines and on the mean of 16 bars
#: the published answers' scores (docs/benchmarks.md): (accuracy_distance, error_consistency) per instruction
SCORES = {("shape", "alexnet"): (0.3171, 0.2437), ("shape", "googlenet"): (0.2555, 0.1884),
          ("shape", "vgg"): (0.1457, 0.1101), ("texture", "alexnet"): (0.9242, 0.5342),
          ("texture", "googlenet"): (0.7817, 0.7330), ("texture", "vgg"): (0.6449, 0.7331)}


def _benchmark(instruction: str, metric: str):
    return brainscore.load_benchmark(f"Geirhos2019{instruction}instructed-{metric}")


def _csv(shared_data, instruction: str, who: str) -> pd.DataFrame:
    """Cue-conflict trials straight from the CSVs, with the instructed category from the image file name."""
    trials = csv_trials(shared_data, f"cue-conflict-{instruction}-instructed", who)
    names = trials["imagename"].str.extract(r"_([a-z]+)\d+-([a-z]+)\d+\.png$")
    trials = trials.assign(image=trials["imagename"].str.split("_", n=6).str[6], shape=names[0], texture=names[1])
    trials = trials[trials["shape"] != trials["texture"]]
    return trials.assign(correct=trials["object_response"] == trials[instruction])


def _per_subject(trials: pd.DataFrame) -> dict[str, pd.Series]:
    return {who: t.set_index("image")["correct"].sort_index() for who, t in trials.groupby("subj")}


def _distance(a_model: float, a_subject: float) -> float:
    return 1 - abs(a_model - a_subject) / max(a_subject, 1 - a_subject)


def _kappa(c1: np.ndarray, c2: np.ndarray) -> float:
    a1, a2 = c1.mean(), c2.mean()
    expected = a1 * a2 + (1 - a1) * (1 - a2)
    return ((c1 == c2).mean() - expected) / (1 - expected)


@pytest.mark.parametrize("instruction", INSTRUCTIONS)
def test_exemplar_folds(instruction):
    """Every image is tested once; a fold holds whole exemplars of the instructed cue, a third of each category's;
    fitting and tested images are disjoint and the fitting ones hold all 16 categories; the folds are seeded."""
    benchmark = _benchmark(instruction, "accuracy_distance")
    stimuli, folds = benchmark.stimulus_set, benchmark.folds
    label, exemplar = benchmark.label_coord, benchmark.group_coord
    assert len(folds) == 1280 and set(folds) == {0, 1, 2}
    assert (stimuli.groupby(stimuli[exemplar])[exemplar].transform(lambda s: folds[s.index].min())
            == folds).all()                                     # an exemplar never spans two folds
    per_label = pd.DataFrame({"label": stimuli[label], "exemplar": stimuli[exemplar], "fold": folds}
                             ).drop_duplicates("exemplar").groupby(["label", "fold"]).size().unstack()
    expected = {"shape": {3, 4}, "texture": {1}}[instruction]  # 10 shape photographs, or 3 textures, per category
    assert set(per_label.to_numpy().ravel()) == expected
    for fold in range(3):
        fitting = benchmark.fitting_stimuli(fold)
        tested = set(stimuli["stimulus_id"][folds == fold])
        assert tested.isdisjoint(fitting["stimulus_id"]) and len(tested) + len(fitting) == 1280
        assert sorted(set(fitting["image_label"])) == benchmark.labels and len(benchmark.labels) == 16
        assert set(fitting[exemplar]).isdisjoint(stimuli[exemplar][folds == fold])
    np.testing.assert_array_equal(folds, _benchmark(instruction, "error_consistency").folds)
    again = type(benchmark)(benchmark.identifier, 1, lambda: benchmark.assembly, label_coord=label, group_coord=exemplar,
                            truth_coord=benchmark.truth_coord, metric=benchmark.metric, ceiling=None, visual_degrees=3,
                            seed=1)
    assert (again.folds != folds).any()


def test_a_readout_of_another_cue_than_the_trials_judge_is_refused():
    from brainscore.errors import ValidationError

    shape = _benchmark("shape", "accuracy_distance")
    wrong = type(shape)("wrong", 1, lambda: shape.assembly, label_coord="conflict_image_category",
                        group_coord="conflict_image", truth_coord="instructed_category", metric=shape.metric,
                        ceiling=None, visual_degrees=3)
    with pytest.raises(ValidationError, match="differs from their stimuli's 'conflict_image_category'"):
        wrong.fitting_stimuli(0)


@pytest.mark.parametrize("instruction", INSTRUCTIONS)
def test_ceilings_from_the_csvs(instruction, shared_data):
    """Accuracy distance and error consistency between the 45 pairs of subjects, from the CSVs."""
    subjects = _per_subject(_csv(shared_data, instruction, "humans"))
    pairs = list(itertools.combinations(sorted(subjects), 2))
    distance = np.mean([_distance(subjects[a].mean(), subjects[b].mean()) for a, b in pairs])
    kappa = abs(np.mean([_kappa(subjects[a].to_numpy(), subjects[b].to_numpy()) for a, b in pairs]))
    assert float(_benchmark(instruction, "accuracy_distance").ceiling) == pytest.approx(distance, abs=1e-12)
    assert float(_benchmark(instruction, "error_consistency").ceiling) == pytest.approx(kappa, abs=1e-12)
    pinned = {"shape": (0.9072, 0.3406), "texture": (0.8740, 0.1463)}[instruction]
    assert (distance, kappa) == pytest.approx(pinned, abs=5e-5)


@pytest.mark.parametrize("instruction", INSTRUCTIONS)
@pytest.mark.parametrize("network", NETWORKS)
def test_published_networks_give_the_papers_figure(instruction, network, shared_data):
    """The Caffe networks' published answers, scored as a precomputed model: their shape and texture answers are
    the paper's figure (texture fraction of the shape-or-texture decisions, fraction decided), their shape bias
    its Fig. 4, their instructed-cue accuracy the product; scores recomputed from the CSVs."""
    model = PrecomputedFeatures(brainscore.load_dataset(f"Geirhos2019.cue-conflict-{instruction}-instructed.{network}"),
                                visual_degrees=3, identifier=network)   # 3: shown as the files are
    accuracy = _benchmark(instruction, "accuracy_distance")(model)
    consistency = _benchmark(instruction, "error_consistency")(model)
    texture_fraction, decided = FIGURE[network]
    for score in (accuracy, consistency):
        attrs = score.attrs
        assert attrs["texture_match"] / (attrs["shape_match"] + attrs["texture_match"]) == pytest.approx(
            texture_fraction, abs=LINE)
        assert attrs["shape_match"] + attrs["texture_match"] == pytest.approx(decided, abs=BAR)
        assert attrs["shape_bias"] == pytest.approx(PUBLISHED_SHAPE_BIAS[network], abs=5e-4)
        assert attrs["accuracy"] == attrs[f"{instruction}_match"]
        cue_fraction = 1 - texture_fraction if instruction == "shape" else texture_fraction
        assert attrs["accuracy"] == pytest.approx(cue_fraction * decided, abs=BAR)
    # from the CSVs: the network's correctness on the instructed cue against each subject's
    net = _csv(shared_data, instruction, network).set_index("image")["correct"].sort_index()
    subjects = _per_subject(_csv(shared_data, instruction, "humans"))
    assert accuracy.attrs["accuracy"] == pytest.approx(net.mean(), abs=1e-12)
    raw_distance = np.mean([_distance(net.mean(), s.mean()) for s in subjects.values()])
    raw_kappa = abs(np.mean([_kappa(net.loc[s.index].to_numpy(), s.to_numpy()) for s in subjects.values()]))
    assert float(accuracy.attrs["raw"]) == pytest.approx(raw_distance, abs=1e-12)
    assert float(consistency.attrs["raw"]) == pytest.approx(raw_kappa, abs=1e-12)
    assert float(accuracy) == pytest.approx(min(1.0, raw_distance / float(accuracy.attrs["ceiling"])), abs=1e-12)
    assert float(consistency) == pytest.approx(min(1.0, raw_kappa / float(consistency.attrs["ceiling"])), abs=1e-12)
    assert (float(accuracy), float(consistency)) == pytest.approx(SCORES[instruction, network], abs=5e-5)


@pytest.mark.parametrize("instruction", INSTRUCTIONS)
def test_the_subjects_accuracy_is_the_papers_figure(instruction):
    """Told to report the shape, the subjects name it on 0.9706 x 0.8498 = 82.5 % of the cue-conflict trials;
    told the texture, on 0.3040 x 0.4658 = 14.2 % (the figure's human line and bars)."""
    model = PrecomputedFeatures(brainscore.load_dataset("Geirhos2019.cue-conflict.alexnet"), visual_degrees=3)
    score = _benchmark(instruction, "accuracy_distance")(model)
    texture_fraction, decided = FIGURE["humans"][instruction]
    cue_fraction = 1 - texture_fraction if instruction == "shape" else texture_fraction
    assert score.attrs["human_accuracy"] == pytest.approx(cue_fraction * decided, abs=BAR)
    assert score.attrs["human_accuracy"] == pytest.approx({"shape": 9897 / 12000, "texture": 1699 / 12000}[instruction])


def test_in_the_leaderboard_tree_and_the_list():
    for instruction, metric in itertools.product(INSTRUCTIONS, ("accuracy_distance", "error_consistency")):
        benchmark = _benchmark(instruction, metric)
        assert benchmark.parent == "Geirhos2019" and benchmark.version == 1 and "@inproceedings" in benchmark.bibtex
        assert path_to_root(benchmark.parent) == ["Geirhos2019", "behavior_vision", "average_vision"]
    listed = subprocess.run([sys.executable, "-m", "brainscore", "list", "benchmarks", "Geirhos2019*"],
                            capture_output=True, text=True, check=True).stdout.split()
    assert listed == sorted(f"Geirhos2019{i}instructed-{m}" for i in INSTRUCTIONS
                            for m in ("accuracy_distance", "error_consistency"))


@pytest.mark.slow
def test_a_second_run_is_served_from_the_cache(monkeypatch):
    """A real (tiny) network through the readout: the first run shows the 1,280 images to it once (the folds'
    fitting images are read from that pass); a second run, with a new model and benchmark, runs no network,
    fits no readout and computes no ceiling, and gives the same answers and score. The error-consistency
    benchmark of the same instruction reuses the fitted readouts."""
    import torch  # noqa: F401  (the extractor's framework)

    from brainscore.metrics.behavior.accuracy_distance import AccuracyDistanceCeiling
    from brainscore.models import readouts
    from brainscore.models.commitment import ModelCommitment
    from brainscore.models.extraction import ActivationsExtractor
    from brainscore.models.preprocessing import Preprocessing

    from model_fixtures import TinyNet

    def model():  # weights of their own (seed 7): nothing of this network is in the session's cache yet
        extractor = ActivationsExtractor(TinyNet(seed=7), "tiny", Preprocessing("imagenet", 32), batch_size=64)
        return ModelCommitment("tiny", extractor, ["features.2"])

    first_model = model()
    first = _benchmark("shape", "accuracy_distance")(first_model)
    assert first_model.activations_model.forward_passes == math.ceil(1280 / 64)   # one pass over the images
    assert 0 <= float(first) <= 1 and first.attrs["n_folds"] == 3 and set(first.attrs["choices"]["fold"].values) == {0, 1, 2}

    def refuse(*args, **kwargs):
        raise AssertionError("computed again")

    monkeypatch.setattr(readouts.ProbabilitiesClassifier, "fit", refuse)
    monkeypatch.setattr(AccuracyDistanceCeiling, "__call__", refuse)
    second_model = model()
    second = _benchmark("shape", "accuracy_distance")(second_model)
    assert second_model.activations_model.forward_passes == 0
    assert float(second) == float(first) and float(second.attrs["ceiling"]) == float(first.attrs["ceiling"])
    np.testing.assert_array_equal(second.attrs["choices"].values, first.attrs["choices"].values)
    consistency = _benchmark("shape", "error_consistency")(second_model)          # same readouts, its own ceiling
    np.testing.assert_array_equal(consistency.attrs["choices"].values, first.attrs["choices"].values)
    assert second_model.activations_model.forward_passes == 0
