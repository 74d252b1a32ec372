"""Weights offline: the reference's S3 weight loaders and plugin code's own torch hub / torchvision / timm /
Hugging Face downloads resolve from the weights mirror (files checked by sha1, the hub's sha256 prefix, or a
declared stand-in), and a file that is not there fails at once with one line naming it, its URL or sha1 and the
weights_mirror setting (the test session is offline: no download is tried)."""
from __future__ import annotations

import hashlib
import json
import warnings

import pytest

from brainscore import config
from brainscore.errors import DataNotFoundError, HashMismatchError, NetworkError, ValidationError
from brainscore_core.supported_data_standards.brainio import s3


def sha1(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


@pytest.fixture
def mirror(weights_mirror):
    return weights_mirror


def stand_ins(tmp_path, monkeypatch, entries: dict) -> None:
    path = tmp_path / "stand_ins.json"
    path.write_text(json.dumps(entries))
    monkeypatch.setenv("BRAINSCORE_STAND_INS", str(path))


def test_load_weight_file_finds_the_reference_s3_layout_in_the_weights_mirror(mirror):
    weights = mirror / "brainscore-vision" / "models" / "user_1" / "net.pth"
    weights.parent.mkdir(parents=True)
    weights.write_bytes(b"weights of user 1")
    found = s3.load_weight_file(bucket="brainscore-storage", folder_name="brainscore-vision/models",
                                relative_path="user_1/net.pth", version_id="v", sha1=sha1(b"weights of user 1"))
    assert found == weights
    assert s3.sha1_hash(found) == sha1(b"weights of user 1")
    with pytest.raises(HashMismatchError, match="not the registered one"):
        s3.load_weight_file("brainscore-storage", "user_1/net.pth", "v", "0" * 40, folder_name="brainscore-vision/models")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert s3.load_file("brainscore-storage", "user_1/net.pth", "v", folder_name="brainscore-vision/models") == weights
    assert any(sha1(b"weights of user 1") in str(w.message) for w in caught)  # no sha1 given: its sha1 is named


def test_a_missing_weights_file_is_one_line_naming_it_its_sha1_and_the_setting(mirror):
    with pytest.raises(DataNotFoundError) as missing:
        s3.load_weight_file("brainscore-storage", "user_2/absent.pth", "v", "1" * 40,
                            folder_name="brainscore-vision/models")
    message = str(missing.value)
    assert "\n" not in message
    assert message.startswith("weights file brainscore-vision/models/user_2/absent.pth (sha1 " + "1" * 40)
    assert "weights_mirror" in message and str(mirror) in message


def test_download_weights_copies_from_the_mirror_into_the_plugins_folder(mirror, tmp_path):
    from brainscore_vision.model_helpers import download_weights

    source = mirror / "models" / "bp_net" / "ckpt.pth"
    source.parent.mkdir(parents=True)
    source.write_bytes(b"checkpoint")
    target = tmp_path / "plugin_folder"
    download_weights(bucket="brainscore-vision", folder_path="models/bp_net",
                     filename_version_sha=[("ckpt.pth", "version", sha1(b"checkpoint"))], save_directory=target)
    assert (target / "ckpt.pth").read_bytes() == b"checkpoint"


def test_weights_mirror_must_name_existing_folders(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_WEIGHTS_MIRROR", str(tmp_path / "typo"))
    with pytest.raises(ValidationError, match="weights_mirror .* do not exist"):
        config.weights_mirrors()
    with pytest.raises(ValidationError, match="is not a folder"):
        config.set_value("weights_mirror", str(tmp_path / "typo"))


def test_torchvision_pretrained_offline_is_one_line_naming_the_file_the_url_and_the_setting(mirror):
    from brainscore.models.torchvision_loading import import_torchvision

    torchvision = import_torchvision()
    with pytest.raises(NetworkError) as offline:
        torchvision.models.alexnet(weights="DEFAULT")
    message = str(offline.value)
    assert "\n" not in message
    assert "alexnet-owt-7be5be79.pth (https://download.pytorch.org/models/alexnet-owt-7be5be79.pth)" in message
    assert "offline" in message and "weights_mirror" in message


def test_torchvision_pretrained_reads_a_declared_stand_in_from_the_mirror_and_no_other(mirror, tmp_path,
                                                                                         monkeypatch):
    import torch

    from brainscore.data.stand_ins import StandInWarning
    from brainscore.models.torchvision_loading import import_torchvision
    from brainscore.models.weights import seeded

    torchvision = import_torchvision()
    untrained = seeded(lambda: torchvision.models.alexnet(weights=None))
    torch.save(untrained.state_dict(), mirror / "alexnet-owt-7be5be79.pth")
    with pytest.raises(HashMismatchError, match="sha256 does not start with 7be5be79"):  # not declared: refused
        torchvision.models.alexnet(weights="DEFAULT")
    digest = hashlib.sha256((mirror / "alexnet-owt-7be5be79.pth").read_bytes()).hexdigest()
    stand_ins(tmp_path, monkeypatch, {"alexnet-owt-7be5be79.pth": {"sha256": digest, "note": "test"}})
    with pytest.warns(StandInWarning, match="in place of the registered file alexnet-owt-7be5be79.pth"):
        loaded = torchvision.models.alexnet(weights="DEFAULT")
    assert all(torch.equal(a, b) for a, b in zip(loaded.state_dict().values(), untrained.state_dict().values()))
    assert not (torch.hub.get_dir() and (tmp_path / "hub").exists())  # read in place, never copied into torch's cache


def test_hugging_face_and_timm_offline_fail_at_once_and_mirror_files_are_used(mirror):
    import timm
    from huggingface_hub import hf_hub_download

    with pytest.raises(NetworkError) as offline:
        timm.create_model("resnet18", pretrained=True)
    assert "timm/resnet18.a1_in1k/model.safetensors (https://huggingface.co/timm/resnet18.a1_in1k/resolve/main/" \
           "model.safetensors)" in str(offline.value) and "weights_mirror" in str(offline.value)
    file = mirror / "someone" / "net" / "config.json"
    file.parent.mkdir(parents=True)
    file.write_text("{}")
    assert hf_hub_download("someone/net", "config.json") == str(file)
    (file.parent / "config.json.sha256").write_text("0" * 64)
    with pytest.raises(HashMismatchError, match="does not have the sha256"):
        hf_hub_download("someone/net", "config.json")
