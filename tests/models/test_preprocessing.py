"""Preprocessing reproduces the reference's PIL + torchvision pipeline value for value."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from brainscore.models.preprocessing import (IMAGENET_MEAN, IMAGENET_STD, Preprocessing, _center_crop_box,
                                             _resize_shorter_side, load_image)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def _save(tmp_path, name, image):
    path = tmp_path / name
    image.save(path)
    return path


def test_grey_palette_and_alpha_become_rgb(tmp_path):
    grey = _save(tmp_path, "grey.png", Image.fromarray(np.full((4, 5), 77, np.uint8), "L"))
    assert np.array_equal(np.asarray(load_image(grey)), np.full((4, 5, 3), 77, np.uint8))

    rgba = np.zeros((3, 3, 4), np.uint8)
    rgba[..., 0], rgba[..., 1], rgba[..., 2], rgba[..., 3] = 10, 20, 30, 0  # fully transparent
    loaded = load_image(_save(tmp_path, "alpha.png", Image.fromarray(rgba, "RGBA")))
    assert loaded.mode == "RGB"
    assert np.array_equal(np.asarray(loaded)[0, 0], [128, 128, 128])  # composited on the screen grey (issue 10)

    palette = Image.new("P", (2, 2))
    palette.putpalette([0, 0, 0, 200, 100, 50] + [0] * 762)
    palette.putpixel((1, 1), 1)
    loaded = np.asarray(load_image(_save(tmp_path, "palette.png", palette)))
    assert loaded[1, 1].tolist() == [200, 100, 50] and loaded[0, 0].tolist() == [0, 0, 0]


def test_imagenet_normalisation_of_a_constant_image(tmp_path):
    path = _save(tmp_path, "c.png", Image.new("RGB", (224, 224), (128, 64, 255)))
    tensor = Preprocessing()([path])
    assert tensor.shape == (1, 3, 224, 224) and tensor.dtype == torch.float32
    expected = (np.array([128, 64, 255]) / 255 - np.array(IMAGENET_MEAN)) / np.array(IMAGENET_STD)
    np.testing.assert_allclose(tensor[0, :, 5, 7].numpy(), expected, rtol=1e-6)
    half = Preprocessing("inception")([path])
    np.testing.assert_allclose(half[0, :, 0, 0].numpy(), (np.array([128, 64, 255]) / 255 - .5) / .5, atol=1e-6)


def test_imagenet_mode_squashes_without_crop(tmp_path, rng):
    array = rng.integers(0, 256, (150, 300, 3), dtype=np.uint8)
    path = _save(tmp_path, "wide.png", Image.fromarray(array))
    tensor = Preprocessing("imagenet", 224)([path])[0]
    resized = np.asarray(Image.fromarray(array).resize((224, 224), Image.Resampling.BILINEAR), dtype=np.float32)
    expected = (resized / 255 - np.array(IMAGENET_MEAN, np.float32)) / np.array(IMAGENET_STD, np.float32)
    np.testing.assert_allclose(tensor.permute(1, 2, 0).numpy(), expected, atol=1e-6)


def test_inception_mode_resizes_shorter_side_and_centre_crops(tmp_path, rng):
    array = rng.integers(0, 256, (200, 300, 3), dtype=np.uint8)
    path = _save(tmp_path, "wide.png", Image.fromarray(array))
    tensor = Preprocessing("inception", 224)([path])[0]
    # shorter side 200 -> 256, longer 300 -> int(256 * 300 / 200) = 384; crop (384 - 224) / 2 = 80, 16
    resized = Image.fromarray(array).resize((384, 256), Image.Resampling.BILINEAR)
    cropped = np.asarray(resized, dtype=np.float32)[16:240, 80:304]
    np.testing.assert_allclose(tensor.permute(1, 2, 0).numpy(), (cropped / 255 - .5) / .5, atol=1e-6)


def test_torchvision_geometry_rules():
    assert _resize_shorter_side(300, 200, 256) == (384, 256)
    assert _resize_shorter_side(175, 175, 256) == (256, 256)
    assert _resize_shorter_side(100, 333, 256) == (256, 852)  # int() truncates 852.48
    # offsets are Python's round(): half to even
    assert _center_crop_box(257, 224, 224) == (16, 0, 240, 224)  # 16.5 -> 16
    assert _center_crop_box(259, 224, 224) == (18, 0, 242, 224)  # 17.5 -> 18


def test_matches_torchvision_when_available(tmp_path, rng):
    from brainscore.models.torchvision_loading import import_torchvision

    try:
        transforms = import_torchvision().transforms
    except ImportError as error:
        pytest.skip(f"torchvision is not installed ({error}); pip install torchvision==0.28.0")
    array = rng.integers(0, 256, (175, 131, 3), dtype=np.uint8)
    path = _save(tmp_path, "x.png", Image.fromarray(array))
    for mode, pipeline in [("imagenet", transforms.Compose([transforms.Resize((224, 224)), transforms.ToTensor(),
                                                             transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD)])),
                           ("inception", transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224),
                                                              transforms.ToTensor(),
                                                              transforms.Normalize((.5,) * 3, (.5,) * 3)]))]:
        ours = Preprocessing(mode)([path])[0]
        theirs = pipeline(Image.open(path).convert("RGB"))
        assert torch.equal(ours, theirs), mode


def test_key_and_validation():
    assert Preprocessing().key() == Preprocessing("imagenet", 224, IMAGENET_MEAN, IMAGENET_STD).key()
    assert Preprocessing().key() != Preprocessing(mean=(.5, .5, .5), std=(.5, .5, .5)).key()
    assert Preprocessing().key() != Preprocessing(channels_last=True).key()  # summation order differs
    assert Preprocessing("inception").mean == (0.5, 0.5, 0.5)
    with pytest.raises(ValueError, match="mode"):
        Preprocessing("vgg")
    with pytest.raises(ValueError, match="image_size"):
        Preprocessing(image_size=0)
    with pytest.raises(ValueError, match="3 values"):
        Preprocessing(mean=(0.5,), std=(0.5,))


def test_channels_last_batch_has_same_values(tmp_path, rng):
    path = _save(tmp_path, "x.png", Image.fromarray(rng.integers(0, 256, (50, 60, 3), dtype=np.uint8)))
    plain, last = Preprocessing()([path]), Preprocessing(channels_last=True)([path])
    assert last.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(plain, last)


def test_a_batch_decoded_by_several_threads_equals_one_decoded_by_one(tmp_path, monkeypatch):
    from brainscore.models import preprocessing
    from model_fixtures import make_stimuli

    stimuli = make_stimuli(tmp_path / "images", 9, size=37)
    paths = list(stimuli["stimulus_path"])
    prep = preprocessing.imagenet(64)
    monkeypatch.setattr(preprocessing, "DECODE_THREADS", 1)
    alone = prep(paths)
    monkeypatch.setattr(preprocessing, "DECODE_THREADS", 4)
    together = prep(paths)
    assert together.shape == (9, 3, 64, 64)
    assert torch.equal(alone, together)  # bit for bit, in the same order
    assert torch.equal(together[3], prep.image(paths[3]))
