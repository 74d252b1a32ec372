"""Issue 23, items 1, 2, 5, 6 and 7: inputs from a hostile or careless author, each refused with a clear error.

1. an identifier in a manifest that would break out of the generated plugin code;
2. a symbolic link out of a stimulus (or plugin) folder;
5. ``run --workers 0`` and ``score --layer ''``;
6. decompression bombs (a tiny PNG whose header claims 50000 x 50000 pixels);
7. ``data validate --assembly`` on garbage or a missing file, ``data publish`` without its manifest.
"""
from __future__ import annotations

import ast
import json
import os
import struct
import zipfile
import zlib
from pathlib import Path

import pytest
from PIL import Image

from brainscore import registry
from brainscore.cli import main
from brainscore.data import StimulusSet
from brainscore.data.images import MAX_PIXELS, load_rgb
from brainscore.data.packaging import (PackagedFile, PackagedStimulusSet, package_stimulus_set, read_manifest,
                                       write_manifest)
from brainscore.data.publish import Publication, PublishedFile, publish, registration_snippet
from brainscore.data.validation import validate_stimulus_set
from brainscore.errors import BrainScoreError, DataNotFoundError, ValidationError

from authoring_helpers import isolated_registrations

PAYLOAD = 'x" + __import__("os").system("touch PWNED") * "" + "'
"""The identifier of issue 23 item 1: closes the string literal, runs a shell command, reopens it."""


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)  # a PWNED file would appear here
    with isolated_registrations():
        yield


def _png(path: Path, colour=(10, 20, 30)) -> Path:
    Image.new("RGB", (8, 8), colour).save(path)
    return path


def _stimulus_folder(root: Path) -> Path:
    folder = root / "stimuli"
    folder.mkdir()
    _png(folder / "a.png")
    return folder


def _packaged(tmp_path: Path, identifier: str = "Hostile.set") -> PackagedStimulusSet:
    folder = _stimulus_folder(tmp_path)
    stimuli = StimulusSet({"stimulus_id": ["a"], "stimulus_path": [str(folder / "a.png")]}, identifier=identifier)
    return package_stimulus_set(stimuli, identifier, tmp_path / "packaged")


# ---- 1. code injection through publish ------------------------------------------------------------------------------
def _manifest_with_identifier(tmp_path: Path, identifier: str) -> Path:
    manifest = write_manifest(tmp_path / "packaged" / "manifest.json", _packaged(tmp_path))
    data = json.loads(manifest.read_text())
    data["packaged"][0]["identifier"] = identifier  # hashes stay correct: only the identifier is hostile
    manifest.write_text(json.dumps(data))
    return manifest


def test_publish_refuses_an_identifier_that_would_break_out_of_the_plugin_code(tmp_path, capsys):
    manifest = _manifest_with_identifier(tmp_path, PAYLOAD)
    bucket = tmp_path / "bucket"
    code = main(["data", "publish", str(manifest), "--to", str(bucket), "--no-check", "--snippet-out",
                 str(tmp_path / "plugin.py")])
    captured = capsys.readouterr()
    assert code == 2
    assert "stimulus set identifier" in captured.err and "characters" in captured.err
    assert "register_stimulus_set" not in captured.out  # no code printed
    assert not bucket.exists() and not (tmp_path / "plugin.py").exists()  # nothing uploaded, nothing written
    assert not (tmp_path / "PWNED").exists()


def test_a_manifest_is_checked_when_read(tmp_path):
    with pytest.raises(ValidationError, match="identifier"):
        read_manifest(_manifest_with_identifier(tmp_path, PAYLOAD))
    manifest = tmp_path / "packaged" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["packaged"][0]["identifier"] = "Hostile.set"
    data["packaged"][0]["csv"]["sha256"] = '"); import os; os.system("touch PWNED") #'
    manifest.write_text(json.dumps(data))
    with pytest.raises(ValidationError, match="64 lowercase hex digits"):
        read_manifest(manifest)


def test_publish_and_the_snippet_check_identifiers_given_in_python(tmp_path):
    packaged = _packaged(tmp_path)
    hostile = PackagedStimulusSet(PAYLOAD, packaged.csv, packaged.zip, 1)
    with pytest.raises(ValidationError, match="stimulus set identifier"):
        publish(hostile, str(tmp_path / "bucket"), check=False)
    assert not (tmp_path / "bucket").exists()
    with pytest.raises(ValidationError, match="stimulus set identifier"):
        registration_snippet(_publication(hostile))


def _publication(item: PackagedStimulusSet, url: str = "https://example.org/x") -> Publication:
    files = {f.name: PublishedFile(f.name, f"/bucket/{f.name}", f"{url}/{f.name}", f"packaged/{f.name}", f.sha256,
                                   f.sha1, f.size) for f in item.files}
    return Publication((item,), files)


def test_importing_the_snippet_runs_nothing_even_if_a_check_were_skipped(tmp_path, monkeypatch):
    """The code is written with literals that read back as the data: the payload stays a string."""
    from brainscore.data import publish as publish_module

    monkeypatch.setattr(publish_module, "_check_identifiers", lambda items: None)  # as if a check were forgotten
    packaged = _packaged(tmp_path)
    hostile_url = 'https://e.org/"+__import__("os").system("touch PWNED")+"\n#'
    hostile = PackagedStimulusSet(PAYLOAD, packaged.csv, packaged.zip, 1)
    snippet = registration_snippet(_publication(hostile, url=hostile_url))
    tree = ast.parse(snippet)
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    called = {node.func.id if isinstance(node.func, ast.Name) else node.func.attr for node in calls}
    assert called == {"Source", "declare", "register_stimulus_set", "fetch_stimulus_set"}  # no __import__, no system
    registered = [node for node in calls if getattr(node.func, "id", None) == "register_stimulus_set"]
    assert ast.literal_eval(registered[0].args[0]) == PAYLOAD
    exec(compile(snippet, "plugin", "exec"), {"__name__": "hostile_plugin"})  # importing the plugin
    assert not (tmp_path / "PWNED").exists()
    assert PAYLOAD in registry.stimulus_sets


# ---- 2. symbolic links out of a packaged folder ----------------------------------------------------------------------
@pytest.fixture
def linked_folder(tmp_path) -> Path:
    """A stimulus folder with a real image and ``p.png -> /etc/passwd``, and its CSV."""
    folder = _stimulus_folder(tmp_path)
    os.symlink("/etc/passwd", folder / "p.png")
    (folder / "stimuli.csv").write_text("stimulus_id,filename\na,a.png\np,p.png\n")
    return folder


def test_package_without_images_refuses_a_link_to_etc_passwd(linked_folder, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["data", "package", "--stimuli", str(linked_folder / "stimuli.csv"), "--stimulus-set-identifier",
                 "Linked.set", "--out", str(out), "--no-images"])
    err = capsys.readouterr().err
    assert code == 2
    assert "p.png -> /etc/passwd" in err and "symbolic links" in err
    assert not out.exists() or not list(out.glob("*.zip"))


def test_validate_without_images_reports_the_link(linked_folder, capsys):
    code = main(["data", "validate", "--stimuli", str(linked_folder / "stimuli.csv"), "--no-images"])
    assert code == 2
    assert "/etc/passwd" in capsys.readouterr().err


def test_every_packaging_path_refuses_links_out(tmp_path):
    folder = _stimulus_folder(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("not for publication")
    os.symlink(secret, folder / "s.png")
    os.symlink(folder / "a.png", folder / "alias.png")  # a link inside the folder is fine
    stimuli = StimulusSet({"stimulus_id": ["a", "alias", "s"],
                           "stimulus_path": [str(folder / n) for n in ("a.png", "alias.png", "s.png")]},
                          identifier="Linked.set")
    report = validate_stimulus_set(stimuli, check_images=False)
    assert not report.ok and [p.offending for p in report.problems if p.check == "no_links_out"] == [("s",)]
    with pytest.raises(ValidationError, match="secret.txt"):
        package_stimulus_set(stimuli, "Linked.set", tmp_path / "packaged", validate=False)
    assert not list((tmp_path / "packaged").glob("*.zip")) if (tmp_path / "packaged").exists() else True
    # ... a '..' file name in the CSV, and a plugin folder zipped for submission
    (folder / "up.csv").write_text("stimulus_id,filename\nx,../secret.txt\n")
    assert main(["data", "package", "--stimuli", str(folder / "up.csv"), "--stimulus-set-identifier", "Up.set",
                 "--out", str(tmp_path / "up"), "--no-images"]) == 2
    from brainscore.cli.submit import zip_folder

    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "__init__.py").write_text("")
    os.symlink(secret, plugin / "weights.pt")
    with pytest.raises(BrainScoreError, match="secret.txt"):
        zip_folder(plugin)
    (plugin / "weights.pt").unlink()
    with zipfile.ZipFile(__import__("io").BytesIO(zip_folder(plugin))) as archive:
        assert archive.namelist() == ["plugin/__init__.py"]


def test_a_link_inside_the_folder_is_packaged(tmp_path):
    folder = _stimulus_folder(tmp_path)
    os.symlink("a.png", folder / "b.png")
    stimuli = StimulusSet({"stimulus_id": ["a", "b"], "stimulus_path": [str(folder / "a.png"), str(folder / "b.png")]},
                          identifier="Inside.set")
    packaged = package_stimulus_set(stimuli, "Inside.set", tmp_path / "packaged")
    with zipfile.ZipFile(packaged.zip.path) as archive:
        assert archive.read("b.png") == (folder / "a.png").read_bytes()


# ---- 5. options that were silently ignored --------------------------------------------------------------------------
def test_run_with_zero_workers_is_an_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["run", "--models", "pixels", "--benchmarks", "Kriegeskorte2008.IT-rdm", "--workers", "0"])
    assert info.value.code == 2
    assert "--workers: must be at least 1, got 0" in capsys.readouterr().err


def test_connect_with_zero_workers_is_an_error():
    from brainscore.runner.clusters import connect

    for cluster in (None, "slurm"):
        with pytest.raises(ValidationError, match="at least 1, got 0"):
            connect(cluster=cluster, workers=0)


@pytest.mark.parametrize("layer", ["", "  "])
def test_score_with_an_empty_layer_is_an_error(layer):
    with pytest.raises(SystemExit, match="--layer is empty"):
        main(["score", "--model", "pixels", "--benchmark", "Kriegeskorte2008.IT-rdm", "--layer", layer, "--no-record"])


# ---- 6. decompression bombs -----------------------------------------------------------------------------------------
def _png_claiming(path: Path, width: int, height: int) -> Path:
    """A PNG whose header claims ``width x height`` RGB pixels, with an empty image stream (a few dozen bytes)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b""))
                     + chunk(b"IEND", b""))
    return path


@pytest.mark.parametrize("width, height, claimed", [(50000, 50000, "2,500,000,000 pixels"),  # PIL's error
                                                    (10000, 10000, "10000 x 10000 pixels")])  # PIL only warns
def test_a_decompression_bomb_is_refused_naming_the_file(tmp_path, width, height, claimed):
    bomb = _png_claiming(tmp_path / "bomb.png", width, height)
    assert bomb.stat().st_size < 80
    with pytest.raises(ValidationError) as info:
        load_rgb(bomb)
    message = str(info.value)
    assert str(bomb) in message and claimed in message and f"{MAX_PIXELS:,}" in message


def test_a_bomb_among_stimuli_is_named_when_placing_on_screen_and_validating(tmp_path, capsys):
    from brainscore.benchmarks.screen import place_on_screen

    folder = _stimulus_folder(tmp_path)
    _png_claiming(folder / "bomb.png", 50000, 50000)
    stimuli = StimulusSet({"stimulus_id": ["a", "bomb"],
                           "stimulus_path": [str(folder / "a.png"), str(folder / "bomb.png")]}, identifier="Bomb.set")
    with pytest.raises(ValidationError, match="bomb.png claims 2,500,000,000 pixels"):
        place_on_screen(stimuli, 8, 4)
    (folder / "stimuli.csv").write_text("stimulus_id,filename\na,a.png\nbomb,bomb.png\n")
    assert main(["data", "validate", "--stimuli", str(folder / "stimuli.csv")]) == 1
    out = capsys.readouterr().out
    assert "'bomb'" in out and "bomb.png" in out and "decompression bomb" in out


# ---- 7. missing and garbage files -----------------------------------------------------------------------------------
@pytest.mark.parametrize("content, expected", [(None, "does not exist"), (b"garbage\n" * 10, "not a readable netCDF"),
                                               (b"\x89HDF\r\n\x1a\n" + b"\0" * 40, "not a readable netCDF")])
def test_validate_a_missing_or_garbage_assembly(tmp_path, capsys, content, expected):
    path = tmp_path / "assembly.nc"
    if content is not None:
        path.write_bytes(content)
    assert main(["data", "validate", "--assembly", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and str(path) in err and expected in err and "Traceback" not in err


def test_publish_a_missing_manifest(tmp_path, capsys):
    missing = tmp_path / "nowhere" / "manifest.json"
    assert main(["data", "publish", str(missing), "--to", str(tmp_path / "bucket")]) == 2
    err = capsys.readouterr().err
    assert f"manifest {missing} does not exist" in err and "brainscore data package" in err
    with pytest.raises(DataNotFoundError):
        read_manifest(missing)
