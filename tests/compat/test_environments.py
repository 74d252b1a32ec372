"""A submission's requirements.txt: satisfied from the server's environment where it can be, else installed as
wheels into a virtual environment per requirements hash (cached), within time and disk quotas, never shadowing
the server's own packages; what cannot be installed is a rejection naming the package and the reason. pip is
pointed at a folder of wheels made here (PIP_NO_INDEX, PIP_FIND_LINKS): no network."""
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


def wheel(folder: Path, name: str, version: str, module_text: str, *, requires: tuple = (),
          module: str | None = None, extra: dict | None = None) -> Path:
    """A pure-Python wheel of one module (``module``, default the distribution's name), as a build backend
    writes it; ``requires``: its Requires-Dist lines; ``extra``: further files (path -> bytes)."""
    distribution = name.replace("-", "_")
    module = module or distribution
    info = f"{distribution}-{version}.dist-info"
    requires_text = "".join(f"Requires-Dist: {r}\n" for r in requires)
    files = {f"{module}/__init__.py": module_text.encode(), **(extra or {}),
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{requires_text}".encode(),
             f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: brainscore-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
                     f"{len(data)}\n" for path, data in files.items()) + f"{info}/RECORD,,\n"
    path = folder / f"{distribution}-{version}-py3-none-any.whl"
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
    # the queue's later pairs of the same submission get the same reason at once, without installing again
    with pytest.raises(SubmissionRejected, match="cannot be installed.*from an install 0 min ago"):
        environments.python_for(["compat-no-such-package==2.0", "compat-tinywheel==1.0"], root)


def test_the_queue_builds_the_environment_the_first_time_a_pair_needs_it(tmp_path, wheels):
    """python_for is what the queue's Dask task calls before a pair (the upload no longer installs anything)."""
    root, lines = tmp_path / "environments", []
    python = environments.python_for(["compat-tinywheel==1.0"], root, log=lines.append)
    assert python == str(root / environments.environment_key(["compat-tinywheel==1.0"]) / "bin" / "python")
    assert lines[0].startswith("installing compat-tinywheel==1.0 (wheels only; at most 600 s and 2 GiB)")
    assert lines[-1] == "installed compat-tinywheel==1.0\n"


def test_a_dependency_on_another_version_of_a_server_package_is_refused(tmp_path, wheels):
    """tensorflow==2.15 once brought its own versions of packages brainscore runs on, and scoring failed with
    "No module named 'pandas'": every server distribution is pinned to its installed version."""
    import numpy

    wheel(wheels, "compat-needsoldnumpy", "1.0", "VALUE = 1\n", requires=("numpy<2",))
    with pytest.raises(SubmissionRejected) as rejected:
        environments.prepare(["compat-needsoldnumpy==1.0"], tmp_path / "environments")
    assert rejected.value.problems[0].startswith("requirements.txt: 'compat-needsoldnumpy==1.0' could not be "
                                                 "installed as wheels (it needs a package the server has, in another "
                                                 "version: the server's packages are never replaced)")
    assert numpy.__version__.startswith("2")
    assert [p for p in (tmp_path / "environments").iterdir() if p.is_dir()] == []


def test_a_wheel_that_brings_a_module_the_server_has_is_refused(tmp_path, wheels):
    wheel(wheels, "compat-shadowyaml", "1.0", "HACKED = True\n", module="yaml")
    with pytest.raises(SubmissionRejected) as rejected:
        environments.prepare(["compat-shadowyaml==1.0"], tmp_path / "environments")
    assert rejected.value.problems == [
        "requirements.txt: installing compat-shadowyaml==1.0 added the module 'yaml', which the server has: an "
        "environment may add packages, never replace the server's own; leave the package out"]
    wheel(wheels, "compat-pthfile", "1.0", "X = 1\n", extra={"compat_pthfile.pth": b"import os\n"})
    with pytest.raises(SubmissionRejected, match=r"added compat_pthfile.pth \(a .pth file, run at every start"):
        environments.prepare(["compat-pthfile==1.0"], tmp_path / "environments")
    assert [p for p in (tmp_path / "environments").iterdir() if p.is_dir()] == []


def test_the_disk_quota_stops_an_install_that_grows_past_it(tmp_path, wheels):
    import os

    wheel(wheels, "compat-bigwheel", "1.0", "X = 1\n", extra={"compat_bigwheel/blob.bin": os.urandom(4 * 2**20)})
    with pytest.raises(SubmissionRejected) as rejected:
        environments.prepare(["compat-bigwheel==1.0"], tmp_path / "environments", disk_bytes=2**20)
    assert rejected.value.problems[0].startswith("installing compat-bigwheel==1.0 needed more than the disk limit "
                                                 "of 1 MiB")
    assert [p for p in (tmp_path / "environments").iterdir() if p.is_dir()] == []


def test_the_time_quota_stops_a_hanging_install(tmp_path, monkeypatch):
    """An index that never answers: pip is killed at the quota, not after its own 15 s timeouts and retries."""
    import socket
    import time

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # connections are accepted by the kernel, never answered
        monkeypatch.setenv("PIP_NO_INDEX", "1")
        monkeypatch.setenv("PIP_FIND_LINKS", f"http://127.0.0.1:{silent.getsockname()[1]}/")
        started = time.monotonic()
        with pytest.raises(SubmissionRejected) as rejected:
            environments.prepare(["compat-slowwheel==1.0"], tmp_path / "environments", timeout_s=2)
    assert rejected.value.problems[0].startswith("installing compat-slowwheel==1.0 took more than the limit of 2 s "
                                                 "(pip was stopped)")
    assert time.monotonic() - started < 60
    assert [p for p in (tmp_path / "environments").iterdir() if p.is_dir()] == []


def test_a_requirement_on_another_version_of_a_server_package_is_a_conflict_at_upload():
    import numpy

    assert environments.conflicts(["numpy", f"numpy=={numpy.__version__}", "compat-not-installed==1"]) == []
    assert environments.conflicts(["numpy<2", "pywin32==1; sys_platform == 'win32'"]) == [
        f"requirements.txt asks for 'numpy<2', but the server has numpy {numpy.__version__}, which a submission "
        f"cannot replace (brainscore runs on it); ask for numpy=={numpy.__version__} or leave the version out"]


def test_a_server_in_a_virtual_environment_lends_its_own_packages_to_a_submission_environment(tmp_path, wheels):
    """The audit's "No module named 'pandas'": the server ran in a virtual environment, whose packages
    ``--system-site-packages`` does not expose (it exposes the base interpreter's). Here the server runs in a
    virtual environment holding a package of its own; the submission's environment, built through prepare (pip
    included) by that server, imports it, and its sys.path has its own site-packages, then the server's, then
    the base interpreter's."""
    import os

    server = tmp_path / "server-venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(server)], check=True,
                   capture_output=True, timeout=120)
    (server_site,) = environments._site_packages(server)
    (server_site / "compat_serveronly").mkdir()
    (server_site / "compat_serveronly" / "__init__.py").write_text("VALUE = 7\n")
    (server_site / "compat_serveronly-1.0.dist-info").mkdir()
    (server_site / "compat_serveronly-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: compat-serveronly\nVersion: 1.0\n")
    src = str(Path(environments.__file__).resolve().parents[2])
    root = tmp_path / "environments"
    build = ("import sys; from pathlib import Path; from brainscore.web import environments; "
             "assert environments.unsatisfied(['compat-serveronly']) == [], 'the server has it'; "
             f"print(environments.python_for(['compat-tinywheel==1.0', 'compat-serveronly'], Path({str(root)!r})))")
    env = {**os.environ, "PYTHONPATH": src}
    made = subprocess.run([str(server / "bin" / "python"), "-c", build], env=env, capture_output=True, text=True,
                          timeout=600)
    assert made.returncode == 0, made.stderr[-2000:]
    python = made.stdout.strip().splitlines()[-1]
    assert python.startswith(str(root))
    env.pop("PYTHONPATH")
    run = subprocess.run([python, "-c", "import sys, compat_serveronly, compat_tinywheel, numpy; "
                                        "print(compat_serveronly.VALUE, compat_tinywheel.VALUE); print(repr(sys.path))"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    values, path = run.stdout.splitlines()
    assert values == "7 42"
    path = [p for p in eval(path) if p.endswith("site-packages")]  # noqa: S307 - our own repr of a list of str
    own = str(environments._site_packages(Path(python).parent.parent)[0])
    base = next(p for p in path if p.startswith(sys.base_prefix) and not p.startswith(str(tmp_path)))
    assert path.index(own) < path.index(str(server_site)) < path.index(base), path
