"""The model zoo on real images: pretrained EfficientNet-Lite predictions, selection and caching."""
from __future__ import annotations

import glob
import os
from pathlib import Path

import matplotlib
import numpy as np
import pytest
import sklearn.datasets
import torch

import brainscore
from brainscore.data import StimulusSet
from brainscore.models import readouts
from brainscore.models.commitment import load_region_layer_map
from brainscore.models.extraction import DEFAULT_BATCH_SIZE
from brainscore.models.preprocessing import Preprocessing
from brainscore.testing import check_model
from brainscore.plugins.models.efficientnet_lite import model as lite

# classic natural test photographs shipped with matplotlib and scikit-learn
GRACE_HOPPER = os.path.join(matplotlib.get_data_path(), "sample_data", "grace_hopper.jpg")
FLOWER = os.path.join(os.path.dirname(sklearn.datasets.__file__), "images", "flower.jpg")
MILITARY_UNIFORM, DAISY = 652, 985


def _photos() -> StimulusSet:
    return StimulusSet({"stimulus_id": ["hopper", "flower"]},
                       stimulus_paths={"hopper": GRACE_HOPPER, "flower": FLOWER}, identifier="photos")


def _geirhos(shared_data, experiment: str, per_category: int = 2) -> StimulusSet:
    root = shared_data / "geirhos2019_texture_vs_shape" / "stimuli" / experiment
    files = [f for folder in sorted(glob.glob(str(root / "*")))
             for f in sorted(glob.glob(folder + "/*.png"))[:per_category]]
    ids = [os.path.basename(f)[:-4] for f in files]
    return StimulusSet({"stimulus_id": ids, "category": [f.split(os.sep)[-2] for f in files]},
                       stimulus_paths=dict(zip(ids, files)), identifier=f"geirhos-{experiment}-{per_category}")


def test_registered_and_weights_verified():
    registered = set(brainscore.list_models("efficientnet*"))
    assert {"efficientnet-lite0", "efficientnet-lite1", "efficientnet-lite2"} <= registered
    for identifier in lite.WEIGHTS:
        path = lite.weights_path(identifier)
        assert path.name.startswith(identifier)
    assert lite.layers("efficientnet-lite0")[0] == "_blocks.0" and len(lite.layers("efficientnet-lite0")) == 18
    assert "_swish" not in lite.layers("efficientnet-lite2")


@pytest.mark.parametrize("identifier,size", [("efficientnet-lite0", 224), ("efficientnet-lite1", 240),
                                             ("efficientnet-lite2", 260)])
def test_pretrained_networks_name_the_photographs(identifier, size):
    model = brainscore.load_model(identifier)
    assert model.activations_model.preprocessing.image_size == size and model.visual_degrees() == 8
    assert model.activations_model.weights_hash == lite.WEIGHTS[identifier][2]
    logits = model.activations_model(_photos(), ["logits"]).values
    assert np.argmax(logits[0]) == MILITARY_UNIFORM  # Grace Hopper in uniform
    model.start_task("label", "imagenet")
    labels = model.look_at(_photos())
    assert labels.values[0] == readouts.imagenet_synsets()[MILITARY_UNIFORM] == "n03763968"
    assert "military uniform" in labels["label_name"].values[0]


def test_tensorflow_normalisation_names_the_daisy():
    """The checkpoints were trained on (x - 127) / 128 inputs: with that normalisation the flower is a daisy."""
    model = brainscore.load_model("efficientnet-lite0", normalisation="tensorflow")
    assert model.activations_model.preprocessing.mean == (0.5, 0.5, 0.5)
    logits = model.activations_model(_photos(), ["logits"]).values
    assert np.argmax(logits[0]) == MILITARY_UNIFORM and np.argmax(logits[1]) == DAISY


def test_sixteen_class_readout_recognises_silhouettes(shared_data):
    """2 filled silhouettes per category (32): measured 12/32 right with ImageNet statistics, 16/32 with 0.5/0.5."""
    stimuli = _geirhos(shared_data, "filled-silhouettes")
    categories = sorted(set(stimuli["category"]))
    accuracy = {}
    for normalisation in ("imagenet", "tensorflow"):
        model = brainscore.load_model("efficientnet-lite0", normalisation=normalisation)
        model.start_task("label", categories)
        choices = model.look_at(stimuli)
        assert list(choices["category"].values) == list(stimuli["category"])
        accuracy[normalisation] = float(np.mean(choices.values == stimuli["category"].values))
    assert accuracy["imagenet"] >= 10 / 32  # chance is 2/32
    assert accuracy["tensorflow"] >= 14 / 32
    assert accuracy["tensorflow"] > accuracy["imagenet"]


def test_hooked_layers_equal_a_manual_forward_pass(shared_data):
    model = brainscore.load_model("efficientnet-lite0", region_layer_map={"V4": "_blocks.5"})
    stimuli = _geirhos(shared_data, "edges", per_category=1)[:6]
    net = model.activations_model.model
    x = Preprocessing("imagenet", 224)(stimuli.paths())
    with torch.no_grad():
        h = net._swish(net._bn0(net._conv_stem(x)))
        for block in net._blocks[:6]:
            h = block(h, drop_connect_rate=None)
    model.start_recording("V4", [(70, 170)])
    features = model.look_at(stimuli)
    assert features.shape == (6, 80 * 14 * 14, 1)
    # the model runs in channels-last layout: sums in another order, ~1e-7 relative to the largest values
    np.testing.assert_allclose(features.values[..., 0], h.reshape(6, -1).numpy(), rtol=1e-4, atol=1e-4)
    # a second look is served from the cache: no forward pass
    passes = model.activations_model.forward_passes
    model.look_at(stimuli)
    assert model.activations_model.forward_passes == passes


def test_layer_selection_with_a_fake_scorer_on_real_features(shared_data):
    """The scorer sees every candidate from one pass (PCA-reduced) and the argmax layer is committed."""
    stimuli = _geirhos(shared_data, "filled-silhouettes", per_category=1)[:8]
    seen = {}

    def scorer(region, candidates):
        layers = candidates.look_at_layers(stimuli)
        seen.update({layer: assembly.shape for layer, assembly in layers.items()})
        return {layer: -abs(i - 7) for i, layer in enumerate(candidates.layers)}  # peak at _blocks.7

    model = brainscore.load_model("efficientnet-lite0", layer_scorer=scorer)
    assert "V2" not in model.region_layer_map  # the plugin's stored map has no V2
    assert model.layer_for("V2") == "_blocks.7" and model.region_layer_map["V2"] == "_blocks.7"
    # all 18 layers in one pass over the 8 images (in batches of DEFAULT_BATCH_SIZE)
    assert model.activations_model.forward_passes == -(-8 // DEFAULT_BATCH_SIZE)
    assert seen["_blocks.0"] == (8, 8)  # 200,704 units reduced to the 8 components 8 images span
    assert seen["_avg_pooling"] == (8, 8)
    fresh = brainscore.load_model("efficientnet-lite0", layer_scorer=scorer)
    assert fresh.layer_for("V2") == "_blocks.7" and fresh.activations_model.forward_passes == 0


def test_stored_map_is_the_default_and_arguments_override_it():
    assert brainscore.load_model("efficientnet-lite0").region_layer_map == load_region_layer_map(
        lite.PLUGIN_DIR, "efficientnet-lite0")
    assert brainscore.load_model("efficientnet-lite0", region_layer_map={"V4": "_blocks.3"}).region_layer_map["V4"] \
        == "_blocks.3"


@pytest.mark.parametrize("identifier", ["efficientnet-lite0", "efficientnet-lite1", "efficientnet-lite2"])
def test_v1_is_the_deepest_block_whose_receptive_field_spans_a_v1_surround(identifier):
    """The a-priori V1 rule of region_layer_map/README.md: theoretical receptive field <= 2.5 degrees at 8 degrees."""
    network = lite.get_model(identifier)
    size, rf, jump, within = lite.WEIGHTS[identifier][3], 3, 2, []  # stem: 3x3 convolution, stride 2
    for i, block in enumerate(network._blocks):
        kernel, stride = block._depthwise_conv.kernel_size, block._depthwise_conv.stride
        kernel, stride = (k[0] if isinstance(k, (tuple, list)) else k for k in (kernel, stride))
        rf += (kernel - 1) * jump
        jump *= stride
        if rf / size * lite.VISUAL_DEGREES <= 2.5:
            within.append(f"_blocks.{i}")
    assert load_region_layer_map(lite.PLUGIN_DIR, identifier)["V1"] == within[-1]
    assert {"efficientnet-lite0": "_blocks.4", "efficientnet-lite1": "_blocks.5",
            "efficientnet-lite2": "_blocks.5"}[identifier] == within[-1]


def test_generic_plugin_check():
    report = check_model("efficientnet-lite0", region_layer_map={"V1": "_blocks.1", "IT": "_blocks.14"})
    assert report["shapes"]["V1"] == {"presentation": 4, "neuroid": 24 * 56 * 56, "time_bin": 1}
    assert report["shapes"]["IT"]["neuroid"] == 192 * 7 * 7
    assert len(report["labels"]) == 4


def test_pixels_baseline_features_are_the_preprocessed_images():
    stimuli = _photos()
    model = brainscore.load_model("pixels")
    assert model.region_layer_map == {"V1": "pixels", "V2": "pixels", "V4": "pixels", "IT": "pixels"}
    model.start_recording("IT", [(70, 170)])
    features = model.look_at(stimuli)
    expected = Preprocessing("imagenet", 224)(stimuli.paths()).reshape(2, -1).numpy()
    np.testing.assert_array_equal(features.values[..., 0], expected)
    assert features["channel"].values[224 * 224] == 1  # units in (channel, row, column) order


def _tv():
    try:
        from brainscore.models.torchvision_loading import import_torchvision

        return import_torchvision()
    except ImportError:
        pytest.skip("torchvision is not installed (python -m pip install -e \".[zoo]\")")


def test_torchvision_untrained_is_named_so_and_reproducible():
    _tv()
    first = brainscore.load_model("torchvision:resnet18-untrained")
    assert first.identifier == "torchvision:resnet18-untrained"
    second = brainscore.load_model("torchvision:resnet18-untrained")
    assert first.activations_model.weights_hash == second.activations_model.weights_hash
    assert torch.equal(first.activations_model.model.fc.weight, second.activations_model.model.fc.weight)
    second.region_layer_map["V4"] = "layer3.1"
    report = check_model(second)
    assert report["shapes"]["V4"]["neuroid"] == 256 * 14 * 14 and len(report["labels"]) == 4
    assert {"torchvision:resnet18", "torchvision:resnet18-untrained"} <= set(brainscore.list_models("torchvision:*"))


TORCHVISION_ARCHITECTURES = ("alexnet", "vgg16", "vgg19", "resnet18", "resnet34", "resnet50", "resnet101",
                             "convnext_tiny", "densenet121", "mobilenet_v2", "efficientnet_b0", "vit_b_16")


def test_each_torchvision_identifier_is_a_lazy_commitment_that_registers_without_importing_torch():
    """Each ``torchvision:<arch>[-untrained]`` is one ``lazy(commitment, arch, pretrained=...)`` line (issue 38): the
    factory says what it builds, and importing the plugin imports neither torch nor the plugin's model module."""
    import subprocess
    import sys

    from brainscore.registry import LazyFactory, models

    code = ("import sys; import brainscore.plugins.models.torchvision_models\n"
            "print(sorted(m for m in ('torch', 'torchvision', 'brainscore.plugins.models.torchvision_models.model') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    expected = {f"torchvision:{arch}{suffix}": (arch, not suffix) for arch in TORCHVISION_ARCHITECTURES
                for suffix in ("", "-untrained")}
    assert set(brainscore.list_models("torchvision:*")) == set(expected)
    for identifier, (arch, pretrained) in expected.items():
        factory = models.factory(identifier)
        assert isinstance(factory, LazyFactory), identifier
        assert factory.target == "brainscore.plugins.models.torchvision_models.model:commitment"
        assert (factory.args, factory.kwargs) == ((arch,), {"pretrained": pretrained}), identifier


def test_trained_name_without_weights_is_refused(tmp_path, monkeypatch):
    """A trained model's name never stands for the untrained network (issue 15, item 1)."""
    _tv()
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))  # an empty torch-hub cache
    monkeypatch.delenv("BRAINSCORE_TORCHVISION_WEIGHTS", raising=False)
    with pytest.raises(brainscore.DataNotFoundError) as error:
        brainscore.load_model("torchvision:resnet18")
    message = str(error.value)
    for needed in ("resnet18-f37072fd.pth", "brainscore config set torchvision_weights",
                   "BRAINSCORE_TORCHVISION_WEIGHTS", "weights_path=", "torchvision:resnet18-untrained"):
        assert needed in message
    # from the command line: one line on stderr, exit code 2, no score printed under the trained name
    from brainscore.cli import main

    code = main(["score", "--model", "torchvision:resnet18", "--benchmark", "Cowley2026.210325.V4-pls"])
    assert code == 2


def test_timm_trained_name_without_weights_is_refused(monkeypatch):
    _tv()
    pytest.importorskip("timm")
    monkeypatch.delenv("BRAINSCORE_TIMM_WEIGHTS", raising=False)
    with pytest.raises(brainscore.DataNotFoundError, match="timm:resnet50-untrained"):
        brainscore.load_model("timm:resnet50")


def test_missing_zoo_package_is_one_line_with_the_install_command(monkeypatch, capsys):
    import sys

    from brainscore.cli import main
    from brainscore.errors import ZOO_INSTALL, MissingDependencyError

    monkeypatch.setitem(sys.modules, "timm", None)  # `import timm` raises ImportError
    monkeypatch.setitem(sys.modules, "torchvision", None)
    with pytest.raises(MissingDependencyError, match="install the model zoo"):
        brainscore.load_model("timm:resnet50-untrained")
    capsys.readouterr()
    assert main(["score", "--model", "timm:resnet50-untrained", "--benchmark", "Cowley2026.210325.V4-pls"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: torchvision is not installed; install the model zoo: {ZOO_INSTALL}"]
    assert ZOO_INSTALL == 'python -m pip install -e ".[zoo]"'
    root = Path(__file__).resolve().parents[3]
    assert ZOO_INSTALL in (root / "docs" / "models.md").read_text()  # where the README sends users for the zoo
    for page in [root / "README.md", *(root / "docs").glob("*.md")]:  # one install command, the same everywhere
        for line in page.read_text().splitlines():
            if ".[zoo]" in line and "pip install" in line:
                assert ZOO_INSTALL in line and "--no-deps" not in line, f"{page.name}: {line}"


def test_torchvision_weights_file_is_hash_checked(tmp_path, monkeypatch):
    tv = _tv()
    from brainscore.data import file_sha256

    net = tv.models.resnet18()
    path = tmp_path / "my-resnet18.pth"
    torch.save(net.state_dict(), path)
    sha256 = file_sha256(path)
    model = brainscore.load_model("torchvision:resnet18", weights_path=path, weights_sha256=sha256)
    assert model.identifier == "torchvision:resnet18" and model.activations_model.weights_hash == sha256
    loaded = model.activations_model.model
    assert torch.equal(loaded.fc.weight, net.fc.weight)
    with pytest.raises(brainscore.HashMismatchError):
        brainscore.load_model("torchvision:resnet18", weights_path=path, weights_sha256="0" * 64)
    with pytest.raises(brainscore.ValidationError, match="weights_sha256"):
        brainscore.load_model("torchvision:resnet18", weights_path=path)
    # a file under the official name must match the hash prefix in that name
    folder = tmp_path / "weights"
    folder.mkdir()
    (folder / "resnet18-f37072fd.pth").write_bytes(path.read_bytes())
    monkeypatch.setenv("BRAINSCORE_TORCHVISION_WEIGHTS", str(folder))
    with pytest.raises(brainscore.HashMismatchError, match="f37072fd"):
        brainscore.load_model("torchvision:resnet18")
    # the same folder from the user's config file (environment variables override it)
    monkeypatch.delenv("BRAINSCORE_TORCHVISION_WEIGHTS")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    from brainscore import config

    config.set_value("torchvision_weights", str(folder))
    with pytest.raises(brainscore.HashMismatchError, match="f37072fd"):
        brainscore.load_model("torchvision:resnet18")
    with pytest.raises(brainscore.ValidationError, match="takes no weights_path"):
        brainscore.load_model("torchvision:resnet18-untrained", weights_path=path)


def test_transformer_tokens_get_embedding_coordinates():
    _tv()
    model = brainscore.load_model("torchvision:vit_b_16-untrained",
                                  region_layer_map={"IT": "encoder.layers.encoder_layer_11"})
    model.start_recording("IT", [(70, 170)])
    features = model.look_at(_photos())
    assert features.sizes["neuroid"] == 197 * 768
    assert features["embedding"].values[769] == 1 and features["channel"].values[769] == 1  # token 1, feature 1


def test_timm_untrained():
    _tv()
    pytest.importorskip("timm")
    model = brainscore.load_model("timm:convnext_tiny-untrained", region_layer_map={"V1": "stages.0.blocks.2"})
    assert model.identifier == "timm:convnext_tiny-untrained"
    report = check_model(model)
    assert report["shapes"]["V1"]["neuroid"] == 96 * 56 * 56


def test_missing_weights_message_says_when_torchvision_is_missing_too(monkeypatch):
    """Issue 25 #6: without torchvision, the error named the weights file but not the missing package."""
    import importlib.util

    from brainscore.errors import ZOO_INSTALL
    from brainscore.plugins.models.torchvision_models.model import missing_weights_message

    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torchvision" else found(name, *a))
    message = missing_weights_message("resnet18")
    assert "resnet18-f37072fd.pth" in message
    assert message.endswith(f" torchvision itself is not installed either: {ZOO_INSTALL}")
    monkeypatch.setattr(importlib.util, "find_spec", found)
    assert "not installed" not in missing_weights_message("resnet18")
