"""brainscore.data.catalogue: the BrainIO catalogue's files found by name and sha1 in order, else fetched from S3.

Local folders in a fresh home; downloads from moto's S3 server on 127.0.0.1 (never the internet).
"""
from __future__ import annotations

import hashlib
import warnings
from pathlib import Path

import numpy as np
import pytest

from brainscore.data import PropertiesAssembly, catalogue, locator, remote, store
from brainscore.data.packaging import package_data_assembly, package_stimulus_set
from brainscore.errors import DataNotFoundError, HashMismatchError

from authoring_helpers import moto_s3
from model_fixtures import make_stimuli

BUCKET, PREFIX = "brainscore-storage", "brainscore-vision/data/catalogue"


def sha1(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


@pytest.fixture
def folders(tmp_path, monkeypatch):
    """Two data mirrors, a fresh home (store, local packages), offline; returns the folders by kind."""
    mirrors = [tmp_path / "mirror_a", tmp_path / "mirror_b"]
    for mirror in mirrors:
        mirror.mkdir()
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("BRAINSCORE_DATA_MIRROR", ":".join(str(m) for m in mirrors))
    monkeypatch.delenv("BRAINSCORE_WEIGHTS_MIRROR", raising=False)
    monkeypatch.setenv("BRAINSCORE_OFFLINE", "1")
    return {"a": mirrors[0], "b": mirrors[1], "store": tmp_path / "home" / "sources",
            "packages": tmp_path / "home" / "packages", "home": tmp_path / "home"}


def test_brainio_names_write_dots_as_underscores_last_and_weights_names_follow_the_reference():
    assert catalogue.brainio_file_names("assy_", "Cowley2026.210325", ".nc") == ["assy_Cowley2026.210325.nc",
                                                                                 "assy_Cowley2026_210325.nc"]
    assert catalogue.brainio_file_names("stimulus_", "X", ".csv") == ["stimulus_X.csv"]
    assert catalogue.weights_file_names("/m/w.pth", "brainscore-vision/models") == [
        "brainscore-vision/models/m/w.pth", "m/w.pth", "w.pth"]
    assert catalogue.weights_file_names("m/w.pth", "") == ["m/w.pth", "w.pth"]


def test_the_first_file_with_the_registered_sha1_wins_in_folder_then_prefix_order(folders):
    right, wrong = b"the registered content", b"another content"
    bucket = f"{BUCKET}/{PREFIX}"
    write(folders["a"] / "assy_X.nc", wrong)                       # first folder, but not the registered file
    in_b_bare = write(folders["b"] / "assy_X.nc", right)
    in_b_prefix = write(folders["b"] / PREFIX / "assy_X.nc", right)  # the key prefix comes before the bare name
    write(folders["packages"] / "assy_X.nc", right)
    path, sha256 = catalogue.locate_by_sha1(["assy_X.nc"], sha1(right), bucket)
    assert path == in_b_prefix and sha256 == hashlib.sha256(right).hexdigest()
    in_b_prefix.unlink()
    assert catalogue.locate_by_sha1(["assy_X.nc"], sha1(right), bucket)[0] == in_b_bare
    assert catalogue.candidate_paths(["assy_X.nc"], bucket) == [folders["a"] / "assy_X.nc", in_b_bare,
                                                               folders["packages"] / "assy_X.nc"]
    with locator.recording() as noted:  # noted under the object's store path, for `brainscore fetch`
        catalogue.locate_by_sha1(["assy_X.nc"], sha1(right), bucket)
    assert noted == {f"{BUCKET}/{PREFIX}/assy_X.nc": in_b_bare}


def test_only_other_contents_is_a_mismatch_naming_both_sha1s(folders):
    write(folders["a"] / "w.bin", b"other")
    with pytest.raises(HashMismatchError, match=rf"not the registered one \(sha1 {'1' * 40}\).*sha1 {sha1(b'other')}"):
        catalogue.locate_by_sha1(["w.bin"], "1" * 40)


def test_a_missing_file_says_where_to_put_it_offline_or_without_a_bucket(folders):
    with pytest.raises(DataNotFoundError) as offline:
        catalogue.locate_by_sha1(["assy_Y.nc"], "2" * 40, f"{BUCKET}/{PREFIX}", version_id="v7")
    message = str(offline.value)
    assert "\n" not in message
    assert f"data file assy_Y.nc (sha1 {'2' * 40}) is not here, and the offline setting (BRAINSCORE_OFFLINE)" in message
    assert f"s3://{BUCKET}/{PREFIX}/assy_Y.nc version v7" in message
    assert f"put the file at <mirror>/{PREFIX}/assy_Y.nc" in message and "BRAINSCORE_DATA_MIRROR" in message
    with pytest.raises(DataNotFoundError, match="no S3 bucket is registered for it: put the file at <mirror>/w.bin"):
        catalogue.locate_by_sha1(["w.bin"], "2" * 40)


def test_a_file_without_sha1_is_used_with_one_warning_naming_its_sha1(folders):
    weights = write(folders["home"] / "models" / "m" / "w.pth", b"weights")
    with pytest.warns(UserWarning, match=f"without a sha1 check.*its sha1 is {sha1(b'weights')}"):
        assert catalogue.locate_weights_file(BUCKET, "m/w.pth") == weights
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert catalogue.locate_weights_file(BUCKET, "m/w.pth") == weights  # warned once per process


def test_catalogue_files_load_as_brainscore_classes_and_are_named_in_the_provenance(folders, tmp_path):
    images = make_stimuli(tmp_path / "images", 4, size=8)
    stimuli = package_stimulus_set(images, "Cat.1", folders["packages"], check_images=False)
    assembly = PropertiesAssembly(np.arange(4.0)[:, None], dims=("neuroid", "neuronal_property"), coords={
        "neuroid_id": ("neuroid", list("abcd")), "region": ("neuroid", ["V1"] * 4),
        "neuronal_property": ["size"]})
    netcdf = package_data_assembly(assembly, "Cat.1", "Cat.1", folders["a"], assembly_class="PropertiesAssembly").netcdf
    with store.recording_files() as used:
        stimulus_set = catalogue.load_catalogue_stimulus_set("Cat.1", stimuli.csv.sha1, stimuli.zip.sha1)
        loaded = catalogue.load_catalogue_assembly("Cat.1", netcdf.sha1, cls="PropertiesAssembly",
                                                   stimulus_set_loader=lambda: stimulus_set, merge_stimulus_set=False)
    assert sorted(stimulus_set["stimulus_id"]) == sorted(images["stimulus_id"]) and stimulus_set.identifier == "Cat.1"
    assert type(loaded) is PropertiesAssembly and loaded.attrs["stimulus_set_identifier"] == "Cat.1"
    assert loaded.attrs["stimulus_set"] is stimulus_set
    assert used == {"brainio/stimulus_Cat_1.csv": stimuli.csv.sha256, "brainio/stimulus_Cat_1.zip": stimuli.zip.sha256,
                    "brainio/assy_Cat_1.nc": netcdf.sha256}
    with pytest.raises(ValueError, match="cls must be one of"):
        catalogue.load_catalogue_assembly("Cat.1", netcdf.sha1, cls="SpikeAssembly")


@pytest.fixture
def s3(folders, tmp_path, monkeypatch):
    """moto's S3 server with a public versioned bucket, reached through AWS_ENDPOINT_URL_S3; online, no credentials."""
    import boto3

    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                 "BRAINSCORE_S3_ENDPOINT_URL", "BRAINSCORE_S3_ANONYMOUS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in (("AWS_DEFAULT_REGION", "us-east-1"), ("AWS_CONFIG_FILE", str(tmp_path / "none")),
                        ("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none")), ("AWS_EC2_METADATA_DISABLED", "true"),
                        ("BRAINSCORE_OFFLINE", "0")):
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(remote, "RETRY_WAIT_S", 0.01)
    with moto_s3() as url:
        monkeypatch.setenv("AWS_ENDPOINT_URL_S3", url)
        client = boto3.client("s3", endpoint_url=url, region_name="us-east-1", aws_access_key_id="testing",
                              aws_secret_access_key="testing")
        client.create_bucket(Bucket=BUCKET)
        client.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})

        def put(key: str, data: bytes) -> str:
            return client.put_object(Bucket=BUCKET, Key=key, Body=data, ACL="public-read")["VersionId"]
        yield put


def test_a_file_no_folder_holds_is_downloaded_at_its_version_into_the_store_then_found_there(folders, s3, monkeypatch):
    version = s3(f"{PREFIX}/assy_Z_1.nc", b"registered")
    s3(f"{PREFIX}/assy_Z_1.nc", b"a newer upload under the same key")
    write(folders["a"] / "assy_Z.1.nc", b"a stale local copy")  # not the registered content: S3 is asked
    path = catalogue.locate_catalogue_file("Z.1", "nc", BUCKET, sha1(b"registered"), version, folder_name=PREFIX)
    assert path == folders["store"] / BUCKET / PREFIX / "assy_Z_1.nc" and path.read_bytes() == b"registered"
    monkeypatch.setenv("BRAINSCORE_OFFLINE", "1")  # now the store holds it
    assert catalogue.locate_by_sha1(["assy_Z_1.nc"], sha1(b"registered"), f"{BUCKET}/{PREFIX}")[0] == path
    url = f"https://{BUCKET}.s3.amazonaws.com/{PREFIX}/assy_Z_1.nc"
    assert catalogue.locate_s3_url(url, sha1(b"registered")) == path


def test_a_download_whose_sha1_differs_is_refused_and_not_kept(folders, s3):
    version = s3(f"{PREFIX}/assy_W.nc", b"not what was registered")
    with pytest.raises(HashMismatchError):
        catalogue.locate_by_sha1(["assy_W.nc"], "3" * 40, f"{BUCKET}/{PREFIX}", version_id=version)
    assert not (folders["store"] / BUCKET / PREFIX / "assy_W.nc").exists()


def test_copy_bucket_file_places_the_weights_once(folders, s3, tmp_path):
    version = s3("models/m/w.pth", b"weights")
    target = tmp_path / "plugin" / "w.pth"
    assert catalogue.copy_bucket_file(BUCKET, "models/m/w.pth", target, sha1(b"weights"), version) == target
    assert target.read_bytes() == b"weights"
    before = target.stat().st_mtime_ns
    catalogue.copy_bucket_file(BUCKET, "models/m/w.pth", target, sha1(b"weights"), version)
    assert target.stat().st_mtime_ns == before  # the same content already there: not copied again
    catalogue.check_sha1(target, sha1(b"weights"))
    with pytest.raises(HashMismatchError, match=f"sha1 {sha1(b'weights')}, expected {'4' * 40}"):
        catalogue.check_sha1(target, "4" * 40)
