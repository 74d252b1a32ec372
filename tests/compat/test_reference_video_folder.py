"""The reference's ``models/temporal_model_torchvision`` folder (a video model), unchanged, on the plugin path (issue 39).

The folder builds ``torchvision.models.video.r3d_18(weights="KINETICS400_V1")`` in a ``PytorchWrapper`` of the
reference's temporal framework (25 fps, ``layer4`` in ``CTHW``). The weights come from the weights mirror, where the
test puts the untrained network (torch seed 0) under the official file name ``r3d_18-b3b3357e.pth``, declared a
stand-in by its sha256. An image is shown as a 1000 ms video (25 identical frames); ``layer4`` has 4 time steps,
put evenly on [0, 1000] ms (250 ms each), then averaged onto bins of 40 ms by overlap: bin 0 is step 0 alone, bin 6
(240-280 ms) is 1/4 of step 0 and 3/4 of step 1. A second recording is read from the activations store; IT
committed to layer4 and recorded at 70-170 ms averages the 40 ms bins it overlaps by overlap.
"""
from __future__ import annotations

import hashlib
import json
import shutil

import numpy as np
import pytest
from PIL import Image

from brainscore import registry

pytest.importorskip("av")


@pytest.fixture(scope="module")
def mirror(tmp_path_factory):
    """A weights mirror holding the seeded untrained r3d_18 under its official name, declared a stand-in."""
    import torch

    from brainscore.models.torchvision_loading import import_torchvision
    from brainscore.models.weights import seeded

    folder = tmp_path_factory.mktemp("weights")
    weights = folder / "r3d_18-b3b3357e.pth"
    torch.save(seeded(lambda: import_torchvision().models.video.r3d_18(weights=None)).state_dict(), weights)
    stand_ins = folder / "stand_ins.json"
    stand_ins.write_text(json.dumps({weights.name: {"sha256": hashlib.sha256(weights.read_bytes()).hexdigest(),
                                                    "note": "untrained r3d_18 (torch seed 0) for a test"}}))
    return folder, stand_ins


@pytest.fixture
def r3d_18(reference_tree, mirror, tmp_path, monkeypatch):
    """The folder's ``r3d_18`` as the registry loads it (its modules and registrations are gone after the test)."""
    from authoring_helpers import isolated_registrations

    plugins = tmp_path / "plugins"
    name = "temporal_model_torchvision"
    shutil.copytree(reference_tree / "models" / name, plugins / "models" / name)
    folder, stand_ins = mirror
    for name, value in {"BRAINSCORE_WEIGHTS_MIRROR": folder, "BRAINSCORE_STAND_INS": stand_ins,
                        "TORCH_HOME": tmp_path / "torch", "BRAINSCORE_HOME": tmp_path / "home",
                        "BRAINSCORE_PLUGIN_DIRS": plugins}.items():
        monkeypatch.setenv(name, str(value))
    with isolated_registrations():
        registry.reset_discovery()
        yield registry.models.load("r3d_18")
        monkeypatch.delenv("BRAINSCORE_PLUGIN_DIRS", raising=False)
        registry.reset_discovery()


def test_r3d_18_sees_an_image_as_a_one_second_video_on_time_bins_of_its_frame_rate(r3d_18, tmp_path):
    from brainscore.data.stimuli import StimulusSet
    from brainscore_vision.model_helpers.activations.temporal.inputs import Video
    from brainscore_vision.model_helpers.activations.temporal.utils import get_specified_layers

    assert get_specified_layers(r3d_18) == ["stem", "layer1", "layer2", "layer3", "layer4", "avgpool", "fc"]
    paths = {}
    for index, colour in enumerate([(200, 30, 30), (20, 90, 220)]):
        path = tmp_path / f"image{index}.png"
        pixels = (np.random.RandomState(index).rand(60, 80, 3) * 55 + colour).clip(0, 255).astype(np.uint8)
        Image.fromarray(pixels).save(path)
        paths[f"image{index}"] = str(path)
    stimuli = StimulusSet({"stimulus_id": list(paths), "colour": ["red", "blue"]}, stimulus_paths=paths)

    wrapper = r3d_18.activations_model
    recorded = wrapper(stimuli, layers=["layer4"])
    assert recorded.dims == ("presentation", "neuroid", "time_bin")
    assert list(recorded["stimulus_id"].values) == ["image0", "image1"]
    assert list(recorded["colour"].values) == ["red", "blue"]
    np.testing.assert_allclose(recorded["time_bin_start"].values, np.arange(25) * 40)
    np.testing.assert_allclose(recorded["time_bin_end"].values, np.arange(1, 26) * 40)
    assert recorded.sizes["neuroid"] == 512 * 7 * 7 and recorded.dtype == np.float16

    # the network's own layer4 on the same clips, in one batch as recorded: (channel, time, y, x) = (512, 4, 7, 7)
    clips = [wrapper.preprocessing(Video.from_img_path(paths[i], 1000, 25).set_fps(25)) for i in ("image0", "image1")]
    steps = wrapper.get_activations(clips, ["layer4"])["layer4"][1].astype(np.float16)
    assert steps.shape == (512, 4, 7, 7)
    step = [steps[:, t].reshape(-1).astype(float) for t in range(4)]
    values = recorded.isel(presentation=1).values.astype(float)  # (neuroid, time_bin)
    np.testing.assert_array_equal(values[:, 0], step[0])
    straddling = (0.25 * step[0] + 0.75 * step[1]).astype(np.float16)  # within one float16 step (ties round
    one_step = np.spacing(np.abs(straddling)).astype(float)               # either way with the weights' round-off)
    assert np.all(np.abs(values[:, 6] - straddling.astype(float)) <= one_step)
    assert np.abs(values[:, 6] - values[:, 0]).max() > 100 * one_step.max()  # and it is not step 0
    np.testing.assert_array_equal(values[:, 24], step[3])

    # stored by content (weights, the plugin folder's code, the inferencer, the image files): no second forward pass
    def refuse(*args, **kwargs):
        raise AssertionError("a forward pass for activations that are stored")

    wrapper._model.forward = refuse
    np.testing.assert_array_equal(wrapper(stimuli, layers=["layer4"]).values, recorded.values)

    # committed to IT and recorded at 70-170 ms: the 40 ms bins it overlaps, weighted by overlap (1/4, 1, 1, 1/4)
    r3d_18.region_layer_map["IT"] = "layer4"
    r3d_18.start_recording("IT", [(70, 170)])
    it = r3d_18.look_at(stimuli)
    assert list(it["stimulus_id"].values) == ["image0", "image1"] and it.sizes["neuroid"] == 512 * 7 * 7
    bins = recorded.isel(presentation=1).values.astype(float)
    expected = (0.25 * bins[:, 1] + bins[:, 2] + bins[:, 3] + 0.25 * bins[:, 4]) / 2.5
    np.testing.assert_allclose(it.isel(presentation=1).values.reshape(-1), expected, rtol=1e-12, atol=1e-12)


def test_r3d_18_candidate_layers_for_selection_are_its_recordings_in_the_benchmarks_window(r3d_18, tmp_path):
    """Layer selection's view of the video model: each candidate layer averaged over the window as the commitment
    records it (``avgpool``, 512 units, kept whole; ``layer4``, 25,088, as principal-component scores), stored by the
    model's content key, which also keys the region's stored choice."""
    from brainscore.data.stimuli import StimulusSet
    from brainscore.models.candidates import LayerCandidates, gram_pca
    from brainscore.models.time_bins import align_time_bins

    paths = {}
    for index in range(3):
        path = tmp_path / f"image{index}.png"
        Image.fromarray((np.random.RandomState(index).rand(56, 56, 3) * 255).astype(np.uint8)).save(path)
        paths[f"image{index}"] = str(path)
    stimuli = StimulusSet({"stimulus_id": list(paths)}, stimulus_paths=paths)
    wrapper, window = r3d_18.activations_model, [(70, 170)]
    assert wrapper.records_time and wrapper.cacheable
    features = LayerCandidates(r3d_18, ["layer4", "avgpool"]).look_at_layers(stimuli, time_bins=window)

    def recording(layer):
        return align_time_bins(wrapper(stimuli, layers=[layer]), window).squeeze("time_bin").values.astype(np.float32)

    np.testing.assert_array_equal(features["avgpool"].values, recording("avgpool"))
    np.testing.assert_allclose(features["layer4"].values, gram_pca(recording("layer4")), rtol=1e-4, atol=1e-3)
    assert features["layer4"].sizes["neuroid"] == 3 and list(features["layer4"]["stimulus_id"].values) == list(paths)

    def refuse(*args, **kwargs):
        raise AssertionError("a forward pass for candidate features that are stored")

    forward, wrapper._model.forward = wrapper._model.forward, refuse
    again = LayerCandidates(r3d_18, ["layer4", "avgpool"]).look_at_layers(stimuli, time_bins=window)
    np.testing.assert_array_equal(again["layer4"].values, features["layer4"].values)
    wrapper._model.forward = forward
    key = r3d_18._selection_key("V4")
    wrapper.model_key = lambda: "another network"
    assert r3d_18._selection_key("V4") != key
