"""The store: errors that name the file, the hash and the fix; verification remembered once; offline mode."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from brainscore import registry
from brainscore.cli import main
from brainscore.data import remote, store
from brainscore.data.store import Source
from brainscore.errors import DataNotFoundError, HashMismatchError

from authoring_helpers import call_counter, http_server, isolated_registrations


@pytest.fixture(autouse=True)
def _no_leaked_registrations():
    """Plugins executed here register identifiers; remove them after each test."""
    with isolated_registrations():
        yield


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A fresh, empty store for one test (the session's mirror stays set)."""
    path = tmp_path / "home"
    monkeypatch.setenv("BRAINSCORE_HOME", str(path))
    return path


@pytest.fixture
def mirror(tmp_path, monkeypatch) -> Path:
    """A mirror folder of our own, searched before anything else."""
    path = tmp_path / "mirror"
    path.mkdir()
    monkeypatch.setenv("BRAINSCORE_DATA_MIRROR", str(path))
    return path


def test_missing_file_error_names_file_hash_and_fix(home, mirror):
    source = Source("nowhere/responses.npy", "ab" * 32)  # declared without URL
    with pytest.raises(DataNotFoundError) as info:
        store.fetch(source)
    message = str(info.value)
    assert "nowhere/responses.npy" in message
    assert "ab" * 32 in message
    assert "BRAINSCORE_DATA_MIRROR" in message and str(mirror) in message
    assert "no URL is declared" in message


def test_real_mirror_file_is_found_and_verified(shared_data, home):
    data = (shared_data / "cowley2026_v4/readme.txt").read_bytes()
    source = Source("cowley2026_v4/readme.txt", _sha256(data))
    path = store.fetch(source)
    assert path == shared_data / "cowley2026_v4/readme.txt"
    assert path.read_bytes() == data


def test_hash_mismatch_names_both_hashes_and_the_fix(home, mirror):
    (mirror / "set").mkdir()
    (mirror / "set/file.bin").write_bytes(b"corrupted bytes")
    expected = _sha256(b"original bytes")
    with pytest.raises(HashMismatchError) as info:
        store.fetch(Source("set/file.bin", expected))
    message = str(info.value)
    assert expected in message and _sha256(b"corrupted bytes") in message
    assert "set/file.bin" in message and "fetch it again" in message


def test_verification_is_remembered_and_not_repeated(home, mirror, monkeypatch):
    (mirror / "f.bin").write_bytes(b"x" * 1000)
    source = Source("f.bin", _sha256(b"x" * 1000))
    counted, calls = call_counter(store.file_sha256)
    monkeypatch.setattr(store, "file_sha256", counted)

    store.fetch(source)
    assert len(calls) == 1
    store.fetch(source)
    store.fetch(source)
    assert len(calls) == 1  # verified.json answered, the file was not read again
    remembered = json.loads((home / "verified.json").read_text())
    assert list(remembered.values()) == [source.sha256]
    assert str((mirror / "f.bin").resolve()) in next(iter(remembered))

    # a changed file (new mtime and content) is hashed again, and the change is detected
    (mirror / "f.bin").write_bytes(b"y" * 1000)
    os.utime(mirror / "f.bin", ns=(1, 1))
    with pytest.raises(HashMismatchError):
        store.fetch(source)
    assert len(calls) == 2


def test_a_killed_writers_part_file_is_removed_and_concurrent_processes_keep_every_entry(home, mirror):
    home.mkdir(parents=True)
    stale = home / ".verified.json.abc123.part"  # what a process killed mid-write leaves
    stale.write_text("{")
    # two processes verify three files each at once, both updating verified.json
    files = []
    for i in range(6):
        (mirror / f"p{i}.bin").write_bytes(b"%d" % i * 100)
        files.append((mirror / f"p{i}.bin", _sha256(b"%d" % i * 100)))
    code = ("import sys; from pathlib import Path; from brainscore.data import store\n"
            "for path, sha in zip(sys.argv[1::2], sys.argv[2::2]): store.verify(Path(path), sha)\n")
    workers = [subprocess.Popen([sys.executable, "-c", code, *[str(x) for pair in files[k::2] for x in pair]],
                                env={**os.environ, "BRAINSCORE_HOME": str(home)}) for k in range(2)]
    assert [w.wait(timeout=120) for w in workers] == [0, 0]
    remembered = json.loads((home / "verified.json").read_text())
    assert sorted(remembered.values()) == sorted(sha for _, sha in files)  # no read-modify-write lost an entry
    assert not stale.exists()
    assert not list(home.glob(".verified.json.*.part"))


def test_force_verify_rehashes(home, mirror, monkeypatch):
    (mirror / "g.bin").write_bytes(b"payload")
    source = Source("g.bin", _sha256(b"payload"))
    store.fetch(source)
    counted, calls = call_counter(store.caching.file_sha256)
    monkeypatch.setattr(store.caching, "file_sha256", counted)
    store.verify(mirror / "g.bin", source.sha256)
    assert calls == []
    store.verify(mirror / "g.bin", source.sha256, force=True)
    assert len(calls) == 1


def test_offline_mode_never_downloads(home, mirror, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_OFFLINE", "1")

    def no_download(*args, **kwargs):
        raise AssertionError("offline mode must not download")

    monkeypatch.setattr(remote, "download", no_download)
    source = Source("remote/only.nc", "cd" * 32, "http://127.0.0.1:9/only.nc")
    with pytest.raises(DataNotFoundError) as info:
        store.fetch(source)
    assert "BRAINSCORE_OFFLINE=1" in str(info.value)
    assert "remote/only.nc" in str(info.value) and "cd" * 32 in str(info.value)


def test_download_is_stored_remembered_and_found_offline(tmp_path, home, mirror, monkeypatch):
    served = tmp_path / "served"
    served.mkdir()
    (served / "a.bin").write_bytes(b"a" * 5000)
    source_hash = _sha256(b"a" * 5000)
    monkeypatch.setenv("BRAINSCORE_OFFLINE", "0")
    with http_server(served) as url:
        source = Source("downloads/a.bin", source_hash, f"{url}/a.bin")
        path = store.fetch(source)
    assert path == home / "sources/downloads/a.bin"
    assert path.read_bytes() == b"a" * 5000
    assert json.loads((home / "verified.json").read_text())  # remembered without a second hash
    # the server is gone and downloads are forbidden: the stored copy is used
    monkeypatch.setenv("BRAINSCORE_OFFLINE", "1")
    counted, calls = call_counter(store.file_sha256)
    monkeypatch.setattr(store, "file_sha256", counted)
    assert store.fetch(source) == path
    assert calls == []


def test_mirror_is_preferred_to_the_store(home, mirror):
    data = b"mirror copy"
    source = Source("pref/x.bin", _sha256(data))
    stored = store.store_path(source)
    stored.parent.mkdir(parents=True)
    stored.write_bytes(data)
    (mirror / "pref").mkdir()
    (mirror / "pref/x.bin").write_bytes(data)
    assert store.locate(source) == mirror / "pref/x.bin"
    assert store.fetch(source) == mirror / "pref/x.bin"


def test_file_url_source(tmp_path, home, mirror, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_OFFLINE", "0")
    (tmp_path / "published.bin").write_bytes(b"published")
    source = Source("fs/published.bin", _sha256(b"published"), (tmp_path / "published.bin").as_uri())
    assert store.fetch(source).read_bytes() == b"published"
    missing = Source("fs/other.bin", _sha256(b"x"), (tmp_path / "other.bin").as_uri())
    with pytest.raises(DataNotFoundError, match="does not exist"):
        store.fetch(missing)


def test_import_plugins_lists_the_data_folder():
    modules = registry.import_plugins("data")
    folders = sorted(p.parent.name for p in (Path(registry.__file__).parent / "plugins/data").glob("*/__init__.py"))
    assert modules == [f"brainscore.plugins.data.{f}" for f in folders]
    with pytest.raises(ValueError, match="unknown plugin folder"):
        registry.import_plugins("nonsense")


def test_cli_fetch_and_verify_declared_sources(home, mirror, monkeypatch, capsys):
    monkeypatch.setattr(registry, "import_plugins", lambda folder="data": [])
    (mirror / "cli").mkdir()
    (mirror / "cli/ok.bin").write_bytes(b"ok")
    store.declare("StoreTest.cli", Source("cli/ok.bin", _sha256(b"ok")))
    assert main(["data", "fetch", "StoreTest.cli"]) == 0
    assert main(["data", "verify", "StoreTest.cli"]) == 0
    assert main(["data", "list", "StoreTest.*"]) == 0
    assert "StoreTest.cli: 1 files, 1 local" in capsys.readouterr().out
    (mirror / "cli/ok.bin").write_bytes(b"no")
    assert main(["data", "verify", "StoreTest.cli"]) == 1
    assert "sha256" in capsys.readouterr().err
    assert main(["data", "where", "StoreTest.cli"]) == 0
    assert str(home) in capsys.readouterr().out
