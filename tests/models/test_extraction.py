"""Activation extraction: values equal the network's own, streamed to a content-keyed cache."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from brainscore.data import StimulusSet
from brainscore.errors import ValidationError
from brainscore.models.extraction import (DEFAULT_BATCH_SIZE, ActivationsExtractor, microsaccade_shifts,
                                          state_dict_hash, translate)
from brainscore.models.preprocessing import Preprocessing

from model_fixtures import TinyNet

PRE = Preprocessing("imagenet", 20)


def _direct(net, stimuli):
    x = PRE(stimuli.paths())
    with torch.no_grad():
        conv = net.features[0](x)
        pooled = net.features(x)
        logits = net.head(pooled.flatten(1))
    return conv.numpy(), pooled.numpy(), logits.numpy()


def test_values_and_coords_equal_the_networks_own(tiny_net, stimuli):
    extractor = ActivationsExtractor(tiny_net, "tiny", PRE, batch_size=3)
    features = extractor(stimuli, ["features.0", "features.2", "logits"])
    conv, pooled, logits = _direct(tiny_net, stimuli)
    assert features.dims == ("presentation", "neuroid")
    assert features.shape == (7, conv[0].size + pooled[0].size + 5)
    np.testing.assert_allclose(features.sel_coords(layer="features.0").values, conv.reshape(7, -1), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(features.sel_coords(layer="logits").values, logits, rtol=1e-5, atol=1e-6)
    # a conv unit is named "layer.num" and carries its channel and position
    unit = features.sel_coords(neuroid_id="features.0.50")
    c, x, y = (int(unit[name].values[0]) for name in ("channel", "channel_x", "channel_y"))
    assert (c, x, y) == np.unravel_index(50, conv.shape[1:])
    np.testing.assert_allclose(unit.values.ravel(), conv[:, c, x, y], rtol=1e-5, atol=1e-6)
    assert list(features["stimulus_id"].values) == list(stimuli["stimulus_id"])
    assert list(features["category"].values) == list(stimuli["category"])
    assert set(features["model"].values) == {"tiny"}
    assert np.isnan(features.sel_coords(layer="logits")["channel_x"].values).all()


def test_presentations_follow_the_stimulus_set_order(tiny_net, stimuli):
    extractor = ActivationsExtractor(tiny_net, "tiny", PRE)
    shuffled = StimulusSet(stimuli.iloc[[4, 0, 6, 2, 1, 5, 3]].reset_index(drop=True),
                           stimulus_paths=stimuli.stimulus_paths)
    ordered = extractor(stimuli, ["logits"])
    again = extractor(shuffled, ["logits"])
    assert list(again["stimulus_id"].values) == list(shuffled["stimulus_id"])
    np.testing.assert_array_equal(again.values, ordered.values[[4, 0, 6, 2, 1, 5, 3]])


def test_cached_layers_are_not_recomputed(tiny_net, stimuli, private_cache):
    extractor = ActivationsExtractor(tiny_net, "tiny", PRE, batch_size=4)
    first = extractor(stimuli, ["features.0"])
    assert extractor.forward_passes == 2  # 7 images in batches of 4
    second = extractor(stimuli, ["features.0"])
    assert extractor.forward_passes == 2  # no forward pass: served from the cache
    np.testing.assert_array_equal(first.values, second.values)
    files = list((private_cache / "cache" / "activations").rglob("*.npy"))
    assert len(files) == 1 and not list((private_cache / "cache").rglob("*.part"))
    # adding a layer runs only that layer; the cached one is read back
    extractor(stimuli, ["features.0", "logits"])
    assert extractor.forward_passes == 4
    assert len(list((private_cache / "cache" / "activations").rglob("*.npy"))) == 2
    # another extractor with the same weights hash and preprocessing shares the cache
    other = ActivationsExtractor(TinyNet(), "renamed", PRE, batch_size=4)
    assert other.weights_hash == extractor.weights_hash
    other(stimuli, ["logits"])
    assert other.forward_passes == 0
    # other preprocessing, other weights: recomputed
    ActivationsExtractor(tiny_net, "tiny", Preprocessing("inception", 20))(stimuli, ["logits"])
    different = ActivationsExtractor(TinyNet(seed=1), "tiny", PRE, batch_size=16)
    assert different.weights_hash != extractor.weights_hash
    different(stimuli, ["logits"])
    assert different.forward_passes == 1


def test_layers_after_the_last_hooked_one_are_skipped(tiny_net, stimuli):
    extractor = ActivationsExtractor(tiny_net, "tiny", PRE, batch_size=4)
    extractor(stimuli, ["features.0"])
    assert tiny_net.images_seen == 7  # forward entered for every image ...
    calls = []
    tiny_net.head.register_forward_hook(lambda *args: calls.append(1))
    extractor(StimulusSet(stimuli.iloc[:5].assign(stimulus_id=[f"n{i}" for i in range(5)]),
                          stimulus_paths={f"n{i}": p for i, p in enumerate(stimuli.paths()[:5])}), ["features.0"])
    assert calls == [1]  # ... but the head ran only in the first batch (where call counts are checked)


def test_identical_files_run_once(tiny_net, stimuli):
    paths = stimuli.paths()
    doubled = StimulusSet({"stimulus_id": ["a", "b", "c", "d"],
                           "stimulus_path": [paths[0], paths[1], paths[0], paths[1]]})
    extractor = ActivationsExtractor(tiny_net, "tiny", PRE)
    features = extractor(doubled, ["logits"])
    assert tiny_net.images_seen == 2
    np.testing.assert_array_equal(features.values[0], features.values[2])
    np.testing.assert_array_equal(features.values[1], features.values[3])
    assert not np.array_equal(features.values[0], features.values[1])


def test_features_stream_to_disk_batch_by_batch(tiny_net, stimuli, private_cache):
    """While batch k runs, the partial file already holds the rows of batches before it."""
    extractor = ActivationsExtractor(tiny_net, "tiny", PRE, batch_size=2, prefetch=False, background_writes=False)
    sizes = []

    def spy(*_):
        parts = list((private_cache / "cache" / "activations").rglob("*.part"))
        sizes.append(parts[0].stat().st_size if parts else 0)

    tiny_net.features[0].register_forward_hook(spy)
    features = extractor.extract(stimuli, ["features.0"])["features.0"]
    row_bytes = features.n_features * 4
    header = sizes[1] - row_bytes * 2
    assert [s - header for s in sizes[1:]] == [row_bytes * 2 * k for k in range(1, 4)]
    assert isinstance(features.raw(), np.memmap) and features.raw().shape == (7, 4, 9, 9)


def test_peak_memory_is_one_batch_not_all_images(tmp_path):
    """A 1x1 conv with 12.8 MB of output per image, 32 images: 410 MB if held, a few batches if streamed."""
    script = textwrap.dedent(f"""
        import json, os, resource, sys
        os.environ["BRAINSCORE_HOME"] = {str(tmp_path / "home")!r}
        sys.path.insert(0, {str(tmp_path.parent)!r})
        import numpy as np, torch
        from PIL import Image
        from brainscore.data import StimulusSet
        from brainscore.models.extraction import ActivationsExtractor
        from brainscore.models.preprocessing import Preprocessing
        torch.set_num_threads(1)
        folder = {str(tmp_path / "big")!r}
        os.makedirs(folder, exist_ok=True)
        paths = []
        for i in range(32):
            paths.append(os.path.join(folder, f"{{i}}.png"))
            Image.new("RGB", (224, 224), (i, 2 * i, 3 * i)).save(paths[-1])
        stimuli = StimulusSet({{"stimulus_id": [str(i) for i in range(32)], "stimulus_path": paths}})
        net = torch.nn.Sequential(torch.nn.Conv2d(3, 64, 1))
        with torch.inference_mode():
            net(torch.zeros(4, 3, 224, 224))
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        features = ActivationsExtractor(net, "big", Preprocessing(), batch_size=4).extract(stimuli, ["0"])["0"]
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps({{"growth_mb": (after - before) / 1024, "file_mb": os.path.getsize(features.path) / 2**20}}))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["file_mb"] > 390
    # streaming holds at most: the batch the network computes, its copy out of the hook and two batches
    # queued for the background writer (4 x 51.4 MB); holding every image would be 410 MB. When the disk
    # is slow (another process writing) the writer's queue fills, so the bound is the queue's, not one batch.
    batch_mb = 4 * 64 * 224 * 224 * 4 / 2**20
    assert result["growth_mb"] < 5 * batch_mb < 0.65 * result["file_mb"], result


def test_microsaccade_spiral_follows_the_reference():
    shifts = microsaccade_shifts(4, image_size=224, visual_degrees=8)
    radius = 0.05 / 8 * 224  # 1.4 pixels
    expected = [(0, 0)] + [(radius * np.sqrt(i / 4) * np.cos(2 * np.pi * np.sqrt(i / 4)),
                            radius * np.sqrt(i / 4) * np.sin(2 * np.pi * np.sqrt(i / 4))) for i in (1, 2, 3)]
    np.testing.assert_allclose(shifts, expected)
    assert np.all(np.hypot(*shifts.T) < radius)
    with pytest.raises(ValueError, match="visual degrees"):
        microsaccade_shifts(3, 224, None)


def test_translate_is_bilinear_with_replicated_borders():
    image = torch.arange(20, dtype=torch.float32).reshape(1, 1, 4, 5)
    whole = translate(image, 1.0, 0.0)  # content moves right by one pixel, left column replicated
    np.testing.assert_array_equal(whole[0, 0, :, 0], image[0, 0, :, 0])
    np.testing.assert_array_equal(whole[0, 0, :, 1:], image[0, 0, :, :-1])
    half = translate(image, 0.0, 0.5)  # half a pixel down: mean of each row and the one above
    np.testing.assert_allclose(half[0, 0, 1:], (image[0, 0, 1:] + image[0, 0, :-1]) / 2)
    np.testing.assert_allclose(half[0, 0, 0], image[0, 0, 0])
    # OpenCV quantises the sub-pixel part to 1/32: 0.01 px rounds to 0/32 -> unchanged
    assert torch.equal(translate(image, 0.01, 0.0), image)
    np.testing.assert_allclose(translate(image, -0.25, 0.0)[0, 0, 0, :4], image[0, 0, 0, :4] + 0.25)


def test_require_variance_gives_one_presentation_per_trial(tiny_net, stimuli):
    extractor = ActivationsExtractor(tiny_net, "tiny", PRE)
    extractor.set_visual_degrees(8)
    features = extractor(stimuli, ["logits"], number_of_trials=3, require_variance=True)
    assert features.sizes["presentation"] == 21
    assert list(features["stimulus_id"].values[:6]) == ["s00"] * 3 + ["s01"] * 3
    shifts = microsaccade_shifts(3, 20, 8)
    np.testing.assert_allclose(features["microsaccade_shift_x_pixels"].values[:3], shifts[:, 0])
    np.testing.assert_allclose(features["microsaccade_shift_y_degrees"].values[:3], shifts[:, 1] * 8 / 20)
    deterministic = extractor(stimuli, ["logits"], number_of_trials=3)
    assert deterministic.sizes["presentation"] == 7  # deterministic: trials are not repeated
    np.testing.assert_allclose(features.values[::3], deterministic.values, rtol=1e-6)  # trial 0 is unshifted
    assert not np.allclose(features.values[1::3], deterministic.values)


def test_errors_name_the_problem(tiny_net, stimuli):
    extractor = ActivationsExtractor(tiny_net, "tiny", PRE)
    with pytest.raises(ValidationError, match="no sub-module 'nope'.*children"):
        extractor(stimuli, ["features.nope"])
    with pytest.raises(ValidationError, match="no layers"):
        extractor(stimuli, [])
    with pytest.raises(ValueError, match="batch_size"):
        ActivationsExtractor(tiny_net, "tiny", PRE, batch_size=0)
    assert ActivationsExtractor(tiny_net, "tiny", PRE, device="cpu").batch_size == DEFAULT_BATCH_SIZE


def test_cache_can_be_disabled(tiny_net, stimuli, private_cache, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_CACHE", "0")
    extractor = ActivationsExtractor(tiny_net, "tiny", PRE, batch_size=16)
    first = extractor(stimuli, ["logits"])
    extractor(stimuli, ["logits"])
    assert extractor.forward_passes == 2
    assert not list(private_cache.rglob("*.npy"))
    assert first.shape == (7, 5)


def test_state_dict_hash_depends_on_values():
    a, b = TinyNet(0), TinyNet(0)
    assert state_dict_hash(a) == state_dict_hash(b)
    with torch.no_grad():
        b.head.bias[0] += 1
    assert state_dict_hash(a) != state_dict_hash(b)


def test_channels_last_gives_the_same_features(tiny_net, stimuli):
    plain = ActivationsExtractor(tiny_net, "tiny", PRE)(stimuli, ["features.0", "logits"])
    last = ActivationsExtractor(TinyNet(), "tiny", Preprocessing("imagenet", 20, channels_last=True))(
        stimuli, ["features.0", "logits"])
    np.testing.assert_allclose(last.values, plain.values, rtol=1e-5, atol=1e-6)
    assert list(last["neuroid_id"].values) == list(plain["neuroid_id"].values)
