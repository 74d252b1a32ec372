"""The reference's ``LayerPCA`` hook on brainscore's extractor (issue 39), and batch-activations hooks in general.

``LayerPCA.hook(wrapper, n)`` reduces every layer to its first ``n`` principal components of ``n`` ImageNet
validation images (the reference's choice from ``imagenet2012-val.hdf5``; here a seeded stand-in in a weights
mirror). The values equal scikit-learn's PCA fitted on the unhooked activations of those images; the components'
sha256 is in the stored activations' key, so hooked and unhooked entries, and entries of another ``n``, never mix.
On main (a0c84d2) ``LayerPCA.hook`` raised ``NotImplementedError``.
"""
from __future__ import annotations

import functools

import h5py
import numpy as np
import pytest
import torch
from PIL import Image

from brainscore.errors import DataNotFoundError, ValidationError

N_IMAGES = 251  # the reference's choice of up to 5 components reads images 0, 50, ..., 200


@pytest.fixture
def imagenet_mirror(weights_mirror, tmp_path, monkeypatch):
    """A seeded stand-in ``imagenet2012-val.hdf5`` in an empty weights mirror; the reference's own places unset."""
    monkeypatch.delenv("MT_IMAGENET_PATH", raising=False)
    monkeypatch.setenv("MT_HOME", str(tmp_path / "model-tools"))
    rng = np.random.RandomState(7)
    y, x = np.mgrid[0:48, 0:48] / 48.0
    images = np.stack([np.stack([x * rng.rand(), y * rng.rand(), (x + y) / 2], axis=-1) * 200
                       + rng.randint(0, 55, (48, 48, 3)) for _ in range(N_IMAGES)]).astype(np.uint8)
    with h5py.File(weights_mirror / "imagenet2012-val.hdf5", "w") as handle:
        handle.create_dataset("val/images", data=images)
    return weights_mirror


@pytest.fixture
def stimuli(tmp_path):
    """Four seeded test images."""
    rng = np.random.RandomState(3)
    paths = []
    for index in range(4):
        path = tmp_path / f"test{index}.png"
        Image.fromarray(rng.randint(0, 256, (40, 40, 3), dtype=np.uint8)).save(path)
        paths.append(str(path))
    return paths


def tiny_wrapper():
    """A seeded network: ``0`` a convolution (2 x 30 x 30 units), ``3`` a linear layer of 2 units."""
    from brainscore_vision.model_helpers.activations import PytorchWrapper
    from brainscore_vision.model_helpers.activations.pytorch import load_preprocess_images

    torch.manual_seed(0)
    network = torch.nn.Sequential(torch.nn.Conv2d(3, 2, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                  torch.nn.Linear(2 * 30 * 30, 2))
    return PytorchWrapper(network, functools.partial(load_preprocess_images, image_size=32), identifier="tiny-pca")


def layer_values(activations, layer):
    return activations.isel(neuroid=np.flatnonzero(activations["layer"].values == layer)).values


def test_layer_pca_projects_on_components_fitted_on_the_imagenet_images(imagenet_mirror, stimuli):
    from sklearn.decomposition import PCA

    from brainscore_vision.model_helpers.activations.pca import LayerPCA, imagenet_validation_images

    hooked = tiny_wrapper()
    LayerPCA.hook(hooked, 3)
    reduced = hooked.from_paths(stimuli, layers=["0", "3"])
    assert reduced.sizes["neuroid"] == 3 + 2  # the linear layer has 2 units: kept whole, as the reference
    assert list(reduced["stimulus_path"].values) == stimuli

    images = imagenet_validation_images(3)
    assert [int(path.rsplit("/", 1)[1].split(".")[0]) for path in images] == [0, 50, 100]
    stored = h5py.File(imagenet_mirror / "imagenet2012-val.hdf5", "r")["val/images"]
    assert np.array_equal(np.asarray(Image.open(images[1])), stored[50])

    plain = tiny_wrapper()
    pca = PCA(n_components=3, random_state=0).fit(layer_values(plain.from_paths(images, layers=["0"]), "0"))
    raw = plain.from_paths(stimuli, layers=["0", "3"])
    expected = pca.transform(layer_values(raw, "0"))
    np.testing.assert_allclose(layer_values(reduced, "0"), expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    np.testing.assert_array_equal(layer_values(reduced, "3"), layer_values(raw, "3"))


def test_hooked_activations_have_their_own_keys_and_come_back_from_the_store(imagenet_mirror, stimuli):
    from brainscore.data.stimuli import StimulusSet
    from brainscore_vision.model_helpers.activations.pca import LayerPCA

    stimulus_set = StimulusSet({"stimulus_id": [f"s{i}" for i in range(4)]},
                               stimulus_paths={f"s{i}": path for i, path in enumerate(stimuli)})
    plain_paths = tiny_wrapper().cache_paths(stimulus_set, ["0"])
    first = tiny_wrapper()
    handle = LayerPCA.hook(first, 3)
    assert LayerPCA.is_hooked(first)
    with pytest.raises(AssertionError, match="already hooked"):
        LayerPCA.hook(first, 3)
    hooked_paths = first.cache_paths(stimulus_set, ["0"])
    assert hooked_paths["0"] != plain_paths["0"]
    values = first.from_stimulus_set(stimulus_set, layers=["0"]).values

    again = tiny_wrapper()  # a new process would build the same: the stored entry is found, no forward pass
    LayerPCA.hook(again, 3)
    assert again.cache_paths(stimulus_set, ["0"]) == hooked_paths
    passes = again.forward_passes
    np.testing.assert_array_equal(again.from_stimulus_set(stimulus_set, layers=["0"]).values, values)
    assert again.forward_passes == passes

    other = tiny_wrapper()
    LayerPCA.hook(other, 4)
    assert other.cache_paths(stimulus_set, ["0"])["0"] not in (hooked_paths["0"], plain_paths["0"])

    handle.remove()  # unhooked again: the full layer, under the plain key
    assert not LayerPCA.is_hooked(first)
    assert first.cache_paths(stimulus_set, ["0"]) == plain_paths
    assert first.from_stimulus_set(stimulus_set, layers=["0"]).sizes["neuroid"] == 2 * 30 * 30


def test_hooks_must_name_their_change_and_keep_the_rows(stimuli):
    wrapper = tiny_wrapper()
    with pytest.raises(TypeError, match="keys"):
        wrapper.register_batch_activations_hook(lambda batch: batch)

    class DropsARow:
        def __call__(self, batch):
            return {layer: values[1:] for layer, values in batch.items()}

        def keys(self, layers):
            return {layer: "drops-a-row" for layer in layers}

    handle = wrapper.register_batch_activations_hook(DropsARow())
    with pytest.raises(ValidationError, match="rows"):
        wrapper.from_paths(stimuli, layers=["3"])
    handle.disable()
    assert wrapper.from_paths(stimuli, layers=["3"]).sizes["presentation"] == 4


def test_too_few_images_and_no_file_say_so(imagenet_mirror, tmp_path, monkeypatch):
    from brainscore_vision.model_helpers.activations.pca import imagenet_validation_images

    with pytest.raises(ValueError, match=f"holds {N_IMAGES} images.*image 300"):
        imagenet_validation_images(7)  # 7 components read image 50 * 6
    (imagenet_mirror / "imagenet2012-val.hdf5").unlink()
    monkeypatch.setenv("BRAINSCORE_OFFLINE", "1")
    with pytest.raises(DataNotFoundError, match="imagenet2012-val.hdf5"):
        imagenet_validation_images(3)
