"""A submission's requirements.txt: satisfied from the server's environment where it can be, else installed as
wheels into a virtual environment per requirements hash (cached); what cannot be installed is a rejection
naming the package. pip is pointed at a folder of wheels made here (PIP_NO_INDEX, PIP_FIND_LINKS): no network."""
from __future__ import annotations

import base64
import hashlib
import io
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from brainscore.web import environments
from brainscore.web.checks import SubmissionRejected


def wheel(folder: Path, name: str, version: str, module_text: str) -> Path:
    """A pure-Python wheel of one module, as a build backend writes it."""
    module = name.replace("-", "_")
    info = f"{module}-{version}.dist-info"
    files = {f"{module}/__init__.py": module_text.encode(),
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
             f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: brainscore-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
                     f"{len(data)}\n" for path, data in files.items()) + f"{info}/RECORD,,\n"
    path = folder / f"{module}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name_in_zip, data in files.items():
            archive.writestr(name_in_zip, data)
        archive.writestr(f"{info}/RECORD", record)
    return path


def sdist(folder: Path, name: str, version: str) -> Path:
    """A source distribution whose setup.py would run code: must never be built."""
    path = folder / f"{name}-{version}.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        data = b"raise SystemExit('a build script ran')\n"
        info = tarfile.TarInfo(f"{name}-{version}/setup.py")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def wheels(tmp_path, monkeypatch):
    folder = tmp_path / "wheels"
    folder.mkdir()
    wheel(folder, "compat-tinywheel", "1.0", "VALUE = 42\n")
    sdist(folder, "compat-sdistonly", "1.0")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))
    return folder


def test_requirements_the_server_has_need_no_environment(tmp_path):
    import numpy

    assert environments.unsatisfied(["numpy", f"numpy=={numpy.__version__}", "torch>=1.0",
                                     "brainscore-vision", "brainio", "pywin32; sys_platform == 'win32'"]) == []
    assert environments.unsatisfied(["numpy<1.0", "compat-not-installed"]) == ["numpy<1.0", "compat-not-installed"]
    assert environments.prepare(["numpy", "torch"], tmp_path) is None
    assert environments.python_for(["numpy"], tmp_path) == sys.executable


def test_missing_wheels_are_installed_once_into_an_environment_per_hash(tmp_path, wheels, monkeypatch):
    root = tmp_path / "environments"
    folder = environments.prepare(["compat-tinywheel==1.0", "numpy"], root)
    assert folder == root / environments.environment_key(["compat-tinywheel==1.0"])
    python = environments.python_for(["numpy", "compat-tinywheel==1.0"], root)
    assert python == str(folder / "bin" / "python")
    # the environment has the wheel and sees the server's packages (numpy), brainscore on the path as children run
    out = subprocess.run([python, "-c", "import compat_tinywheel, numpy; print(compat_tinywheel.VALUE)"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "42"
    # cached: the same requirements reuse it without running pip
    monkeypatch.setattr(environments, "_build", lambda *a: pytest.fail("rebuilt a cached environment"))
    assert environments.prepare(["numpy", "compat-tinywheel==1.0"], root) == folder
    assert [p.name for p in root.iterdir() if p.is_dir()] == [folder.name]  # no half-built folder left


def test_what_cannot_be_installed_as_a_wheel_is_a_rejection_naming_it(tmp_path, wheels):
    root = tmp_path / "environments"
    with pytest.raises(SubmissionRejected) as rejected:
        environments.prepare(["compat-tinywheel==1.0", "compat-no-such-package==2.0"], root)
    assert len(rejected.value.problems) == 1
    assert rejected.value.problems[0].startswith("requirements.txt: 'compat-no-such-package==2.0' cannot be installed")
    with pytest.raises(SubmissionRejected) as rejected:
        environments.prepare(["compat-sdistonly==1.0"], root)  # a source distribution: its setup.py never runs
    assert "compat-sdistonly" in rejected.value.problems[0] and "only wheels" in rejected.value.problems[0]
    assert [p for p in root.iterdir() if p.is_dir()] == []  # nothing half-built is kept
    with pytest.raises(SubmissionRejected, match="was not prepared"):
        environments.python_for(["compat-no-such-package==2.0"], root)
