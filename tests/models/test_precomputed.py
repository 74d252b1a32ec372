"""PrecomputedFeatures: stored responses served by stimulus_id, as a model would give them."""
from __future__ import annotations

import numpy as np
import pytest

import brainscore
from brainscore.benchmarks.screen import place_on_screen
from brainscore.data import BehavioralAssembly, NeuroidAssembly
from brainscore.errors import AlignmentError, ValidationError
from brainscore.models.interface import BrainModel, Task
from brainscore.models.precomputed import PrecomputedFeatures


def test_is_a_brain_model(pixels92):
    model = PrecomputedFeatures(pixels92, visual_degrees=8, identifier="pixels")
    assert isinstance(model, BrainModel) and model.identifier == "pixels" and model.visual_degrees() == 8


def test_serves_stored_rows_of_a_placed_stimulus_set(images92, pixels92):
    """Placing on screen changes the files, not the stimulus ids: the stored rows are found again."""
    model = PrecomputedFeatures(pixels92, visual_degrees=8)
    model.start_recording("IT", time_bins=[(70, 170)])
    shuffled = images92.sample(frac=1, random_state=0)
    placed = place_on_screen(type(images92)(shuffled, identifier="shuffled", stimulus_paths=images92.stimulus_paths),
                             target_visual_degrees=8, source_visual_degrees=2.9)
    assert placed.get_stimulus("img01") != images92.get_stimulus("img01")
    features = model.look_at(placed)
    assert list(features["stimulus_id"].values) == list(shuffled["stimulus_id"])
    row = list(pixels92["stimulus_id"].values).index("img13")
    np.testing.assert_array_equal(features.sel_coords(stimulus_id="img13").values[0], pixels92.values[row])
    # the stimulus set's columns come along, as a network's activations carry them
    assert features.sel_coords(stimulus_id="img13")["category"].item() == "human face"


def test_missing_stimuli_are_named(images92, pixels92):
    model = PrecomputedFeatures(pixels92.isel(presentation=slice(0, 90)), visual_degrees=2.9)
    model.start_recording("IT", time_bins=[(70, 170)])
    with pytest.raises(AlignmentError, match=r"2 of the 92 stimuli.*img91"):
        model.look_at(images92)


def test_a_stimulus_listed_twice_gets_its_columns_from_its_first_row(images92, pixels92):
    """The stimulus set's columns are looked up by stimulus_id (brainscore.data.presentation_order, first row of a
    repeated id); a set listing an image twice failed with a pandas length mismatch before."""
    import pandas as pd

    model = PrecomputedFeatures(pixels92, visual_degrees=2.9)
    model.start_recording("IT", time_bins=[(70, 170)])
    twice = pd.concat([images92.iloc[[12]], images92.iloc[[5, 12]]], ignore_index=True)
    twice.loc[2, "category"] = "a later row's label"
    stimuli = type(images92)(twice, identifier="twice", stimulus_paths=images92.stimulus_paths)
    features = model.look_at(stimuli)
    assert list(features["stimulus_id"].values) == ["img13", "img06", "img13"]
    assert list(features["category"].values) == ["human face", images92["category"].iloc[5], "human face"]


def test_region_and_time_bin_selection(images92):
    values = np.arange(92 * 4 * 2, dtype=float).reshape(92, 4, 2)
    features = NeuroidAssembly(values, dims=("presentation", "neuroid", "time_bin"), coords={
        "stimulus_id": ("presentation", images92["stimulus_id"].to_numpy()),
        "neuroid_id": ("neuroid", ["a", "b", "c", "d"]), "region": ("neuroid", ["V4", "IT", "IT", "V4"]),
        "time_bin_start": ("time_bin", [70, 170]), "time_bin_end": ("time_bin", [170, 270])})
    model = PrecomputedFeatures(features, visual_degrees=2.9)
    model.start_recording("IT", time_bins=[(170, 270)])
    served = model.look_at(images92)
    assert list(served["neuroid_id"].values) == ["b", "c"] and served.sizes["time_bin"] == 1
    np.testing.assert_array_equal(served.values[:, :, 0], values[:, 1:3, 1])
    with pytest.raises(ValueError, match="no neuroid in region 'V1'"):
        model.start_recording("V1", time_bins=[(70, 170)])


def test_behavioural_answers_with_several_trials():
    humans = brainscore.load_dataset("Geirhos2019.edge")  # 10 trials (subjects) per image
    model = PrecomputedFeatures(humans, visual_degrees=3)
    stimuli = humans.attrs["stimulus_set"]
    model.start_task(Task.label, sorted(set(stimuli["truth"])))
    answers = model.look_at(stimuli.iloc[:5])
    assert isinstance(answers, BehavioralAssembly) and answers.sizes["presentation"] == 50
    assert list(answers["stimulus_id"].values[:10]) == [stimuli["stimulus_id"].iloc[0]] * 10
    with pytest.raises(ValueError, match="behavioural answers, not neural features"):
        model.start_recording("IT", time_bins=[(70, 170)])


def test_neural_features_cannot_answer_a_task(pixels92):
    model = PrecomputedFeatures(pixels92, visual_degrees=8)
    with pytest.raises(ValueError, match="cannot do the 'label' task"):
        model.start_task(Task.label, ["a", "b"])


def test_rejects_features_without_stimulus_ids():
    with pytest.raises(ValidationError, match="stimulus_id"):
        PrecomputedFeatures(NeuroidAssembly(np.zeros((2, 3)), dims=("presentation", "neuroid")), visual_degrees=8)
