"""`brainscore data package` writes every file and the manifest or nothing (issue 32): a refused assembly, a long
Unicode identifier, a full disk or a killed run leave nothing in --out; warnings for data no metric can use."""
from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from brainscore.cli import main
from brainscore.data import NeuroidAssembly, write_netcdf
from brainscore.data.packaging import read_manifest

SRC = Path(__file__).resolve().parents[2] / "src"


def stimuli(folder: Path, n: int = 4) -> Path:
    """``n`` small PNG images and their CSV (stimulus_id, stimulus_path relative to the CSV)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = ["stimulus_id,stimulus_path,object_name"]
    for k in range(n):
        Image.new("RGB", (8, 8), (40 * k % 256, 7, 9)).save(folder / f"s{k}.png")
        rows.append(f"s{k},s{k}.png,thing{k % 2}")
    (folder / "stimuli.csv").write_text("\n".join(rows) + "\n")
    return folder / "stimuli.csv"


def assembly(path: Path, values: np.ndarray, ids: list[str]) -> Path:
    data = NeuroidAssembly(values, coords={"stimulus_id": ("presentation", ids),
                                           "neuroid_id": ("neuroid", [f"n{i}" for i in range(values.shape[1])]),
                                           "region": ("neuroid", ["IT"] * values.shape[1])},
                           dims=["presentation", "neuroid"])
    return write_netcdf(data, path)


def package(csv: Path, out: Path, *extra: str, identifier: str = "Test2026") -> int:
    return main(["data", "package", "--stimuli", str(csv), "--stimulus-set-identifier", identifier, "--out", str(out),
                 *extra])


def everything_in(folder: Path) -> list[str]:
    """Every entry under ``folder``, hidden ones included (empty when it does not exist)."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


def test_a_refused_assembly_leaves_nothing_of_the_stimulus_set(tmp_path, capsys):
    """The stimulus CSV and zip were written before the assembly was refused, and stayed there without a manifest."""
    csv = stimuli(tmp_path / "in")
    values = np.random.default_rng(0).normal(size=(4, 3))
    values[1, 2] = np.nan
    nc = assembly(tmp_path / "raw.nc", values, ["s0", "s1", "s2", "s3"])
    out = tmp_path / "out"
    assert package(csv, out, "--assembly", str(nc), "--identifier", "Test2026.IT") == 2
    assert "1 values are NaN" in capsys.readouterr().err
    assert everything_in(out) == []


def test_a_long_unicode_identifier_is_one_clear_error_and_writes_nothing(tmp_path, capsys):
    """It was a raw `OSError: [Errno 36] File name too long`, after the stimulus files were written."""
    csv = stimuli(tmp_path / "in")
    out = tmp_path / "out"
    long_name = "Ünïcödé" * 30  # 210 characters, 330 bytes in UTF-8
    assert package(csv, out, identifier=long_name) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith(f"error: stimulus set identifier {long_name!r}: 1 problem(s)")
    assert "the stimulus set identifier is 330 bytes long in UTF-8; file names are made of it, so the limit is 200" in err
    assert everything_in(out) == []
    # an assembly identifier refused after a good stimulus set identifier: nothing either
    nc = assembly(tmp_path / "raw.nc", np.random.default_rng(0).normal(size=(4, 3)), ["s0", "s1", "s2", "s3"])
    assert package(csv, out, "--assembly", str(nc), "--identifier", long_name) == 2
    assert everything_in(out) == []


def test_a_full_disk_is_one_line_naming_out_and_leaves_nothing(tmp_path, capsys, monkeypatch):
    """A full disk gave a raw `OSError: [Errno 28]` traceback of 58 lines and no advice."""
    import brainscore.data.packaging as packaging

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    csv = stimuli(tmp_path / "in")
    nc = assembly(tmp_path / "raw.nc", np.random.default_rng(0).normal(size=(4, 3)), ["s0", "s1", "s2", "s3"])
    out = tmp_path / "out"
    monkeypatch.setattr(packaging, "write_netcdf", full)  # the disk fills while the assembly is written
    assert package(csv, out, "--assembly", str(nc), "--identifier", "Test2026.IT") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: the disk holding --out {out} is full (")
    assert "free space there or give another --out; nothing was added to" in err
    assert everything_in(out) == []


KILLED_RUN = """
import os, signal, sys
import brainscore.data.packaging as packaging
read, count = packaging._read_regular_file, []
def read_then_die(path):
    count.append(path)
    if len(count) == 3:  # killed in the middle of writing the zip
        os.kill(os.getpid(), signal.SIGKILL)
    return read(path)
packaging._read_regular_file = read_then_die
from brainscore.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_killed_package_leaves_nothing_once_the_next_one_ran(tmp_path):
    """A killed `data package` left an 11 MB hidden .part file in --out for ever."""
    csv = stimuli(tmp_path / "in", n=6)
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(SRC), "BRAINSCORE_DEV_SRC": str(SRC)}
    killed = subprocess.run([sys.executable, "-c", KILLED_RUN, "data", "package", "--stimuli", str(csv),
                             "--stimulus-set-identifier", "Test2026", "--out", str(out), "--no-images"], env=env,
                            capture_output=True, text=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert everything_in(out) != []  # what the killed run left (its staging folder)
    assert main(["data", "package", "--stimuli", str(csv), "--stimulus-set-identifier", "Test2026",
                 "--out", str(out), "--no-images"]) == 0
    assert everything_in(out) == ["manifest.json", "stimulus_Test2026.csv", "stimulus_Test2026.zip"]
    (item,) = read_manifest(out / "manifest.json")
    assert item.n_stimuli == 6 and item.zip.path == out / "stimulus_Test2026.zip"


def test_data_no_metric_can_use_are_packaged_with_a_warning(tmp_path, capsys):
    """A zero-variance neuroid and a one-stimulus assembly were packaged without a word."""
    csv = stimuli(tmp_path / "in")
    values = np.random.default_rng(0).normal(size=(4, 3))
    values[:, 1] = 2.5  # neuroid n1 never changes
    nc = assembly(tmp_path / "raw.nc", values, ["s0", "s1", "s2", "s3"])
    assert package(csv, tmp_path / "out", "--assembly", str(nc), "--identifier", "Test2026.IT") == 0
    err = capsys.readouterr().err
    assert ("warning: stimulus set 'Test2026' and assembly 'Test2026.IT': 1 of 3 neuroids (neuroid_id ['n1']) have the same value in every "
            "presentation (zero variance)") in err
    single = assembly(tmp_path / "one.nc", np.ones((1, 3)), ["s0"])
    assert package(csv, tmp_path / "out1", "--assembly", str(single), "--identifier", "Test2026.One") == 0
    err = capsys.readouterr().err
    assert ("warning: stimulus set 'Test2026' and assembly 'Test2026.One': the assembly holds responses to 1 stimulus: no metric can compare "
            "a model with so few") in err
    assert "zero variance" not in err  # one presentation: a variance is not defined, the stimulus count says it
    assert (tmp_path / "out1" / "assy_Test2026_One.nc").is_file()  # a warning, not a refusal


@pytest.mark.parametrize("identifier", ["Test2026", "Test2026.V4"])
def test_a_successful_package_leaves_only_its_files_and_manifest(tmp_path, identifier):
    csv = stimuli(tmp_path / "in")
    out = tmp_path / "out"
    assert package(csv, out, identifier=identifier) == 0
    stem = identifier.replace(".", "_")
    assert everything_in(out) == ["manifest.json", f"stimulus_{stem}.csv", f"stimulus_{stem}.zip"]
