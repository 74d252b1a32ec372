"""brainscore_core's BrainIO adapters on real data: packaging locally, loading back by sha1, weights files."""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

import brainscore
from brainscore.data.store import recording_files
from brainscore.errors import DataNotFoundError, HashMismatchError, ValidationError

from brainscore_core.supported_data_standards.brainio import assemblies, packaging, s3
from brainscore_core.supported_data_standards.brainio.stimuli import StimulusSet
from brainscore_vision.model_helpers.s3 import load_weight_file


def sha1(path) -> str:
    return hashlib.sha1(Path(path).read_bytes()).hexdigest()


def sha256(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def kriegeskorte():
    return brainscore.load_stimulus_set("Kriegeskorte2008")


@pytest.fixture(scope="module")
def packaged_stimuli(kriegeskorte):
    # built as the submission guide builds it: rows of metadata, then stimulus_paths, then a name
    proto = StimulusSet([{"stimulus_id": sid, "category": str(cat)}
                         for sid, cat in zip(kriegeskorte["stimulus_id"], kriegeskorte.get("category", kriegeskorte["stimulus_id"]))])
    proto.stimulus_paths = {sid: str(kriegeskorte.get_stimulus(sid)) for sid in kriegeskorte["stimulus_id"]}
    proto.name = "CompatTest2008"
    return proto, packaging.package_stimulus_set_locally(proto_stimulus_set=proto,
                                                         stimulus_set_identifier="CompatTest2008")


def test_package_stimulus_set_locally_returns_the_reference_dict(packaged_stimuli):
    _, info = packaged_stimuli
    assert set(info) == {"identifier", "csv_path", "zip_path", "csv_sha1", "zip_sha1", "csv_sha256", "zip_sha256"}
    assert info["identifier"] == "CompatTest2008"
    assert Path(info["csv_path"]).name == "stimulus_CompatTest2008.csv"
    assert Path(info["zip_path"]).parent == packaging.local_packages_dir()
    for kind in ("csv", "zip"):
        assert info[f"{kind}_sha1"] == sha1(info[f"{kind}_path"])
        assert info[f"{kind}_sha256"] == sha256(info[f"{kind}_path"])


def test_load_stimulus_set_from_s3_finds_the_local_package(packaged_stimuli, kriegeskorte):
    proto, info = packaged_stimuli
    with recording_files() as files:
        loaded = s3.load_stimulus_set_from_s3(identifier="CompatTest2008", bucket="brainscore-storage/brainscore-vision/x",
                                              csv_sha1=info["csv_sha1"], zip_sha1=info["zip_sha1"],
                                              csv_version_id="v", zip_version_id="v", filename_prefix="stimulus_")
    assert list(loaded["stimulus_id"]) == list(proto["stimulus_id"]) and len(loaded) == 92
    for sid in loaded["stimulus_id"][:5]:
        assert Path(loaded.get_stimulus(sid)).read_bytes() == Path(kriegeskorte.get_stimulus(sid)).read_bytes()
    assert sorted(files.values()) == sorted([info["csv_sha256"], info["zip_sha256"]])


def test_s3_loader_errors_name_the_file_and_the_mirror(packaged_stimuli):
    _, info = packaged_stimuli
    with pytest.raises(DataNotFoundError, match=r"stimulus_Absent2020\.csv .*sha1 0+.*data_mirror"):
        s3.load_stimulus_set_from_s3("Absent2020", "bucket", csv_sha1="0" * 40, zip_sha1="0" * 40)
    with pytest.raises(HashMismatchError, match="not the registered one"):
        s3.load_stimulus_set_from_s3("CompatTest2008", "bucket", csv_sha1="1" * 40, zip_sha1=info["zip_sha1"])


def test_package_data_assembly_locally_round_trip(packaged_stimuli):
    data = brainscore.load_dataset("Cowley2026.190923")
    proto = assemblies.NeuroidAssembly(data.values, dims=data.dims,
                                       coords={name: coord for name, coord in data.coords.items()})
    info = packaging.package_data_assembly_locally(proto_data_assembly=proto, assembly_identifier="CompatTest.V4",
                                                   stimulus_set_identifier="Cowley2026.190923",
                                                   assembly_class_name="NeuroidAssembly")
    assert set(info) == {"identifier", "path", "sha1", "cls", "sha256"}
    assert info["cls"] == "NeuroidAssembly" and Path(info["path"]).name == "assy_CompatTest_V4.nc"
    assert info["sha1"] == sha1(info["path"])
    loaded = s3.load_assembly_from_s3(identifier="CompatTest.V4", version_id="v", sha1=info["sha1"], bucket="b",
                                      cls=assemblies.NeuroidAssembly,
                                      stimulus_set_loader=lambda: brainscore.load_stimulus_set("Cowley2026.190923"))
    assert isinstance(loaded, assemblies.NeuroidAssembly)
    np.testing.assert_array_equal(loaded.transpose(*data.dims).values, data.values)
    assert len(loaded.stimulus_set) == 1200 and "session" in loaded.coords
    with pytest.raises(ValueError, match="assembly_class_name must be one of"):
        packaging.package_data_assembly_locally(proto, "CompatTest.V4b", None, assembly_class_name="Neuroid")


def test_packaging_validates(kriegeskorte, tmp_path):
    proto = StimulusSet([{"stimulus_id": "a"}, {"stimulus_id": "a"}])
    proto.stimulus_paths = {"a": str(kriegeskorte.get_stimulus(kriegeskorte["stimulus_id"][0]))}
    with pytest.raises(ValidationError, match="stimulus_id"):
        packaging.package_stimulus_set_locally(proto, "Dup2020", downloads_path=tmp_path)


def test_load_weight_file(tmp_path, monkeypatch):
    weights = tmp_path / "brainscore-vision" / "models" / "mymodel" / "weights.pth"
    weights.parent.mkdir(parents=True)
    weights.write_bytes(b"not really weights")
    # the reference's signature: bucket, relative_path, version_id, sha1, folder_name
    found = load_weight_file("brainscore-storage", "mymodel/weights.pth", "v", sha1(weights),
                             folder_name="brainscore-vision/models", save_path=tmp_path)
    assert found == weights
    with pytest.raises(HashMismatchError, match="not the registered one"):
        load_weight_file(bucket="brainscore-storage", folder_name="brainscore-vision/models",
                         relative_path="mymodel/weights.pth", version_id="v", sha1="2" * 40, save_path=tmp_path)
    with pytest.raises(DataNotFoundError, match=r"weights\.pth .*offline setting"):
        load_weight_file(bucket="brainscore-storage", relative_path="absent/weights.pth", version_id="v", sha1="2" * 40)
    # where the reference's own download puts it: $BRAINSCORE_HOME/<folder_name>/<relative_path> (default 'models')
    import brainscore.config
    home_copy = brainscore.config.home() / "models" / "mymodel" / "weights.pth"
    home_copy.parent.mkdir(parents=True, exist_ok=True)
    home_copy.write_bytes(weights.read_bytes())
    assert load_weight_file("brainscore-storage", "mymodel/weights.pth", "v", sha1(weights)) == home_copy
    with pytest.warns(UserWarning, match="without a sha1 check"):  # the reference no longer checks sha1 (2025)
        assert load_weight_file("brainscore-storage", "mymodel/weights.pth", "v", None) == home_copy
