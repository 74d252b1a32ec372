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


#: Geirhos et al. (2019), the figure of the instructed experiments (the paper's appendix; its vector source is
#: ``paper-figures/results/style-transfer-512-nomask-{content,texture}-guessing-experiment/conflict_content.pdf`` in
#: github.com/rgeirhos/texture-vs-shape at the plugin's commit): the human average line at 103.76 pt (told to
#: report the shape) and 180.79 pt (the texture) on an axis of texture decisions from 95.51 pt (0) to 376.04 pt
#: (1): texture fractions 0.02941 and 0.30400 of the shape-or-texture decisions (0.01 pt = 0.00004); the bars of
#: decisions that name the shape or the texture, as a fraction of the cue-conflict trials, mean over the 16 shape
#: categories: 0.8498 and 0.4658 (width / 28.05 pt; 0.01 pt = 0.0004).
FIGURE_HUMANS = {"cue-conflict-shape-instructed": {"texture_fraction": (103.76 - 95.51) / 280.53, "decided": 0.8498},
                 "cue-conflict-texture-instructed": {"texture_fraction": (180.79 - 95.51) / 280.53, "decided": 0.4658}}


def _cue_fractions(assembly) -> dict:
    """Shape and texture answers on the cue-conflict trials: fractions of the trials, and texture / (shape + texture)."""
    conflict = assembly["original_image_category"].values != assembly["conflict_image_category"].values
    choice = assembly["choice"].values[conflict]
    shape = np.mean(choice == assembly["original_image_category"].values[conflict])
    texture = np.mean(choice == assembly["conflict_image_category"].values[conflict])
    return {"shape": shape, "texture": texture, "texture_fraction": texture / (shape + texture),
            "decided": shape + texture}


@pytest.mark.parametrize("experiment, column", [("cue-conflict-shape-instructed", 0),
                                                ("cue-conflict-texture-instructed", 1)])
def test_instructed_trials(experiment, column, shared_data):
    """The instructed experiments: the CSVs' trials on the cue-conflict images; the instructed category is the
    shape (first name of the image file) or the texture (second name), whatever the files' category column says."""
    humans = brainscore.load_dataset(f"Geirhos2019.{experiment}")
    assert humans.shape == (12800,) and humans.attrs["stimulus_set"].identifier == "Geirhos2019.cue-conflict"
    trials = csv_trials(shared_data, experiment, "humans")
    np.testing.assert_array_equal(humans["choice"].values, trials["object_response"].astype(str).values)
    np.testing.assert_array_equal(humans["truth"].values, trials["category"].values)   # the shape, in both files
    names = trials["imagename"].str.extract(r"_([a-z]+)\d+-([a-z]+)\d+\.png$")
    np.testing.assert_array_equal(humans["instructed_category"].values, names[column].values)
    assert set(humans["instruction"].values) == {("shape", "texture")[column]}
    frame = humans.coord_frame("presentation")
    assert (frame.groupby("subject")["stimulus_id"].nunique() == 1280).all()
    assert set(frame["stimulus_id"]) == set(brainscore.load_stimulus_set("Geirhos2019.cue-conflict")["stimulus_id"])


@pytest.mark.parametrize("experiment", sorted(FIGURE_HUMANS))
def test_instructed_humans_give_the_papers_figure(experiment):
    """Told to report the shape, humans name it on 97.1 % of their shape-or-texture decisions; told to report the
    texture, still on 69.6 % (texture 30.4 %); they name either cue on 85.0 % and 46.6 % of the trials."""
    fractions = _cue_fractions(brainscore.load_dataset(f"Geirhos2019.{experiment}"))
    assert fractions["texture_fraction"] == pytest.approx(FIGURE_HUMANS[experiment]["texture_fraction"], abs=5e-5)
    assert fractions["decided"] == pytest.approx(FIGURE_HUMANS[experiment]["decided"], abs=5e-4)


def test_instructed_subjects_accuracies():
    """Each subject's accuracy on the instructed cue (cue-conflict trials): told the shape 0.73-0.89; told the
    texture 0.01-0.28, and subjects 01, 02 and 09 named the shape on 79-88 % of the trials (1-4 % the texture)."""
    accuracy = {}
    for instruction in ("shape", "texture"):
        humans = brainscore.load_dataset(f"Geirhos2019.cue-conflict-{instruction}-instructed")
        frame = humans.coord_frame("presentation")
        frame = frame[frame["original_image_category"] != frame["conflict_image_category"]]
        accuracy[instruction] = (frame["choice"] == frame["instructed_category"]).groupby(frame["subject"]).mean()
        assert (frame.groupby("subject").size() == 1200).all()
    assert accuracy["shape"]["subject-01"] == pytest.approx(987 / 1200)
    assert accuracy["shape"].min() == pytest.approx(878 / 1200) and accuracy["shape"].max() == pytest.approx(1069 / 1200)
    assert accuracy["texture"]["subject-04"] == pytest.approx(330 / 1200)
    assert list(accuracy["texture"][accuracy["texture"] < 0.05].index) == ["subject-01", "subject-02", "subject-09"]


@pytest.mark.parametrize("network", ["alexnet", "googlenet", "vgg"])
def test_instructed_network_files_hold_the_uninstructed_answers(network):
    """A network is not instructed: the files beside the instructed experiments hold its uninstructed answers."""
    uninstructed = brainscore.load_dataset(f"Geirhos2019.cue-conflict.{network}").sortby("stimulus_id")
    for instruction in ("shape", "texture"):
        responses = brainscore.load_dataset(f"Geirhos2019.cue-conflict-{instruction}-instructed.{network}")
        responses = responses.sortby("stimulus_id")
        np.testing.assert_array_equal(responses.values, uninstructed.values)
        assert set(responses["instruction"].values) == {instruction}


def test_instructed_files_are_declared_with_their_sha256(shared_data):
    from brainscore.caching import file_sha256
    from brainscore.plugins.data.geirhos2019 import MIRROR_FOLDER, SOURCES

    for experiment in ("cue-conflict-shape-instructed", "cue-conflict-texture-instructed"):
        responses = SOURCES[experiment]["responses"]
        assert len(responses) == 13 and SOURCES[experiment]["stimuli"] is SOURCES["cue-conflict"]["stimuli"]
        for source in responses:
            assert source.path.startswith(f"{MIRROR_FOLDER}/raw-data/style-transfer-512-nomask-")
            assert source.url.endswith(source.path.removeprefix(MIRROR_FOLDER))
            assert file_sha256(shared_data / source.path) == source.sha256


def test_instructed_trials_pass_the_data_standard_and_package_as_the_reference(tmp_path):
    """The tutorial's path (docs/tutorial_benchmark_author.md): validated against the data standard, packaged into
    the reference's netCDF format and loaded back with the shared cue-conflict stimulus set, unchanged."""
    from brainscore.data import BehavioralAssembly
    from brainscore.data.packaging import load_packaged_assembly, package_data_assembly
    from brainscore.data.validation import validate

    humans = brainscore.load_dataset("Geirhos2019.cue-conflict-texture-instructed")
    stimuli = humans.attrs["stimulus_set"]
    assert not validate(stimulus_set=stimuli, assembly=humans, raise_on_error=False).problems
    packaged = package_data_assembly(humans, "Geirhos2019.cue-conflict-texture-instructed", stimuli.identifier,
                                     tmp_path, stimulus_set=stimuli)
    loaded = load_packaged_assembly(packaged.netcdf.path, stimulus_set=stimuli, cls=BehavioralAssembly)
    np.testing.assert_array_equal(loaded.values, humans.values)
    for coord in ("stimulus_id", "subject", "instruction", "instructed_category", "truth"):
        np.testing.assert_array_equal(loaded[coord].values.astype(str), humans[coord].values.astype(str))


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
