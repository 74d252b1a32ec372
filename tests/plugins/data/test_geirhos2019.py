"""The Geirhos 2019 data plugin on the real files: stimulus sets, human trials, published network responses."""
from __future__ import annotations

import numpy as np
import pytest

import brainscore
from brainscore.errors import DataNotFoundError

from benchmark_helpers import csv_trials, shape_bias_from_csv

CATEGORIES = ["airplane", "bear", "bicycle", "bird", "boat", "bottle", "car", "cat", "chair", "clock", "dog",
              "elephant", "keyboard", "knife", "oven", "truck"]


@pytest.mark.parametrize("experiment, n_images", [("cue-conflict", 1280), ("edge", 160), ("silhouette", 160)])
def test_stimulus_sets(experiment, n_images):
    stimuli = brainscore.load_stimulus_set(f"Geirhos2019.{experiment}")
    assert len(stimuli) == n_images and stimuli["stimulus_id"].is_unique
    assert sorted(stimuli["truth"].unique()) == CATEGORIES
    assert (stimuli["truth"].value_counts() == n_images // 16).all()
    assert set(stimuli["condition"]) == {0}
    path = stimuli.get_stimulus(stimuli["stimulus_id"].iloc[0])
    assert path.is_file() and path.parent.name == stimuli["truth"].iloc[0]


def test_cue_conflict_columns():
    stimuli = brainscore.load_stimulus_set("Geirhos2019.cue-conflict").set_index("stimulus_id")
    row = stimuli.loc["airplane1-bicycle2"]
    assert (row["truth"], row["original_image"], row["original_image_category"], row["conflict_image"],
            row["conflict_image_category"], row["conflict_image_variation"]) == (
        "airplane", "airplane1", "airplane", "bicycle2", "bicycle", 2)
    # 80 images show shape and texture of the same category: 5 per category
    same = stimuli["original_image_category"] == stimuli["conflict_image_category"]
    assert same.sum() == 80 and (stimuli[same]["truth"].value_counts() == 5).all()


@pytest.mark.parametrize("experiment, n_images", [("cue-conflict", 1280), ("edge", 160), ("silhouette", 160)])
def test_human_trials(experiment, n_images, shared_data):
    humans = brainscore.load_dataset(f"Geirhos2019.{experiment}")
    assert humans.dims == ("presentation",) and humans.shape == (10 * n_images,)
    assert list(np.unique(humans["subject"].values)) == [f"subject-{i:02d}" for i in range(1, 11)]
    # each subject saw each image once
    frame = humans.coord_frame("presentation")
    assert (frame.groupby("subject")["stimulus_id"].nunique() == n_images).all()
    assert len(frame.drop_duplicates(["subject", "stimulus_id"])) == len(frame)
    np.testing.assert_array_equal(humans.values, humans["choice"].values)
    # same trials, same answers, in the same order as the CSVs
    trials = csv_trials(shared_data, experiment, "humans")
    np.testing.assert_array_equal(humans["choice"].values, trials["object_response"].astype(str).values)
    np.testing.assert_array_equal(humans["truth"].values, trials["category"].values)
    np.testing.assert_allclose(humans["response_time"].values, trials["rt"].values)
    assert humans.attrs["stimulus_set"].identifier == f"Geirhos2019.{experiment}"
    assert set(humans["stimulus_id"].values) == set(humans.attrs["stimulus_set"]["stimulus_id"])


def test_human_accuracy_per_subject(shared_data):
    """Per-subject accuracy equals the CSVs' (e.g. subject-09 on edges 0.6125, subject-08 0.95625)."""
    humans = brainscore.load_dataset("Geirhos2019.edge")
    frame = humans.coord_frame("presentation")
    accuracy = (frame["choice"] == frame["truth"]).groupby(frame["subject"]).mean()
    assert accuracy["subject-09"] == pytest.approx(98 / 160) and accuracy["subject-08"] == pytest.approx(153 / 160)


def test_human_shape_bias_is_the_published_96_percent(shared_data):
    """Geirhos et al. 2019 (Fig. 4): humans decide by shape on 95.9 % of cue-conflict decisions."""
    humans = brainscore.load_dataset("Geirhos2019.cue-conflict")
    conflict = humans["original_image_category"].values != humans["conflict_image_category"].values
    choice = humans["choice"].values[conflict]
    shape = (choice == humans["original_image_category"].values[conflict]).sum()
    texture = (choice == humans["conflict_image_category"].values[conflict]).sum()
    assert shape / (shape + texture) == pytest.approx(0.959, abs=0.0005)
    assert shape / (shape + texture) == pytest.approx(shape_bias_from_csv(csv_trials(shared_data, "cue-conflict",
                                                                                     "humans")), abs=1e-12)


@pytest.mark.parametrize("network, published", [("alexnet", 0.429), ("googlenet", 0.312), ("vgg", 0.172)])
def test_network_responses_give_the_published_shape_bias(network, published, shared_data):
    """The paper's Fig. 4 shape bias of the Caffe networks: AlexNet 42.9 %, GoogLeNet 31.2 %, VGG-16 17.2 %."""
    responses = brainscore.load_dataset(f"Geirhos2019.cue-conflict.{network}")
    assert responses.shape == (1280,) and set(responses["subject"].values) == {network}
    conflict = responses["original_image_category"].values != responses["conflict_image_category"].values
    choice = responses["choice"].values[conflict]
    shape = (choice == responses["original_image_category"].values[conflict]).sum()
    texture = (choice == responses["conflict_image_category"].values[conflict]).sum()
    assert shape / (shape + texture) == pytest.approx(published, abs=0.0005)
    assert shape / (shape + texture) == pytest.approx(
        shape_bias_from_csv(csv_trials(shared_data, "cue-conflict", network)), abs=1e-12)


def test_second_load_checks_files_by_stat_only(monkeypatch):
    from brainscore.plugins.data.geirhos2019 import packaging

    brainscore.load_stimulus_set("Geirhos2019.edge")

    def no_fetch(source):
        raise AssertionError(f"fetched {source.path} again")

    monkeypatch.setattr(packaging, "fetch", no_fetch)
    assert len(brainscore.load_stimulus_set("Geirhos2019.edge")) == 160


def test_missing_images_name_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_DATA_MIRROR", str(tmp_path / "empty"))
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    with pytest.raises(DataNotFoundError, match=r"geirhos2019_texture_vs_shape/stimuli/edges/airplane/airplane1\.png"):
        brainscore.load_stimulus_set("Geirhos2019.edge")
