"""The reference's generic plugin tests, callable from a plugin's ``test.py``: each loads the model by identifier
and asserts one part of the ``BrainModel`` interface (an identifier; ``0 < visual_degrees() < 9000``; some task or
region starts; V1 recordings and ``probabilities`` answers on three small images written to a temporary folder).
A malformed answer fails as ``AssertionError`` (wrong shape or value), ``KeyError`` (missing coordinate or dim)
or ``TypeError``/``AttributeError`` (no assembly at all).
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from brainscore_vision import BrainModel, load_model

__all__ = ["test_identifier", "test_visual_degrees", "test_start_task_or_recording", "test_look_at_neural_V1",
           "test_look_at_behavior_probabilities", "ProbeModel"]

TASKS = ("label", "probabilities", "odd_one_out")
REGIONS = ("V1", "V2", "V4", "IT")


def test_identifier(identifier: str) -> None:
    model = load_model(identifier)
    assert model.identifier is not None, f"model {identifier!r} has no identifier"


def test_visual_degrees(identifier: str) -> None:
    model = load_model(identifier)
    assert 0 < model.visual_degrees() < 9000, f"model {identifier!r}: visual_degrees() must be in (0, 9000)"


def test_start_task_or_recording(identifier: str) -> None:
    model = load_model(identifier)
    probe = ProbeModel()
    assert probe.can_start_task(model) or probe.can_start_recording(model), \
        f"model {identifier!r} can neither start a task {TASKS} nor record a region {REGIONS}"


def test_look_at_neural_V1(identifier: str) -> None:
    model = load_model(identifier)
    if not ProbeModel().can_start_recording_region(model, recording_target=BrainModel.RecordingTarget.V1):
        return  # no V1: test_start_task_or_recording checks that it does something
    with tempfile.TemporaryDirectory(prefix="brainscore-plugin-check-") as folder:
        stimuli = _make_stimulus_set(Path(folder))
        model.start_recording(recording_target=BrainModel.RecordingTarget.V1, time_bins=[(50, 100)])
        predictions = model.look_at(stimuli=stimuli, number_of_trials=1)
    assert set(predictions["stimulus_id"].values) == {"stimid1", "stimid2", "stimid3"}
    assert all(predictions["object_name"] == "rgb")
    assert len(predictions["neuroid"]) >= 1, "expected at least one neuroid"
    assert len(set(predictions["neuroid_id"].values)) == len(predictions["neuroid"]), "expected unique neuroid_ids"
    assert len(predictions.dims) <= 3 and "presentation" in predictions.dims and "neuroid" in predictions.dims
    if len(predictions.dims) == 3:
        assert "time_bin" in predictions.dims


def test_look_at_behavior_probabilities(identifier: str) -> None:
    model = load_model(identifier)
    with tempfile.TemporaryDirectory(prefix="brainscore-plugin-check-") as folder:
        stimuli = fitting_stimuli = _make_stimulus_set(Path(folder))
        if not ProbeModel().can_start_task_specific(model, task=BrainModel.Task.probabilities,
                                                    fitting_stimuli=fitting_stimuli):
            return  # no probabilities task: test_start_task_or_recording checks that it does something
        model.start_task(BrainModel.Task.probabilities, fitting_stimuli=fitting_stimuli)
        predictions = model.look_at(stimuli=stimuli, number_of_trials=1)
    assert set(predictions.dims) == {"presentation", "choice"}, f"expected dims presentation x choice, got " \
                                                                f"{predictions.dims}"
    assert set(predictions["stimulus_id"].values) == {"stimid1", "stimid2", "stimid3"}
    assert all(predictions["object_name"] == "rgb")
    assert set(predictions["choice"].values) == set(fitting_stimuli["image_label"].values)
    assert (0 <= predictions.values).all() and (predictions.values <= 1).all(), "probabilities must lie in [0, 1]"


def _make_stimulus_set(folder: Path):
    """Three small RGB images (two JPEG, one PNG) in ``folder`` as a StimulusSet with ``object_name`` and ``image_label``."""
    from PIL import Image

    from brainscore_core.supported_data_standards.brainio.stimuli import StimulusSet

    paths = {}
    rng = np.random.RandomState(0)
    for stimulus_id, name in (("stimid1", "rgb1.jpg"), ("stimid2", "rgb2.jpg"), ("stimid3", "rgb3.png")):
        Image.fromarray(rng.randint(0, 256, (64, 64, 3), dtype=np.uint8)).save(folder / name)
        paths[stimulus_id] = folder / name
    stimuli = StimulusSet({"stimulus_id": ["stimid1", "stimid2", "stimid3"], "object_name": ["rgb", "rgb", "rgb"],
                           "image_label": ["label1", "label1", "label2"], "filename": ["rgb1", "rgb2", "rgb3"]})
    stimuli.stimulus_paths = paths
    stimuli.identifier = "generic_plugin_tests.rgb_1_2_3"
    return stimuli


class ProbeModel:
    """Which tasks and regions a model accepts (it may raise for the others)."""

    def can_start_task(self, model) -> bool:
        return any(self.can_start_task_specific(model, task=task) for task in TASKS)

    def can_start_task_specific(self, model, task: str, fitting_stimuli=None) -> bool:
        for kwargs in ({}, {"fitting_stimuli": fitting_stimuli}):
            try:
                model.start_task(task=task, **kwargs)
                return True
            except Exception:  # noqa: BLE001 (any failure means: not this task)
                continue
        return False

    def can_start_recording(self, model) -> bool:
        return any(self.can_start_recording_region(model, recording_target=region) for region in REGIONS)

    def can_start_recording_region(self, model, recording_target: str) -> bool:
        try:
            model.start_recording(recording_target=recording_target, time_bins=[(100, 200)])
            return True
        except Exception:  # noqa: BLE001 (any failure means: not this region)
            return False
