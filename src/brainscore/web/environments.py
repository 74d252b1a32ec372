"""The Python environment a submission's requirements.txt asks for: the server's own where it satisfies them,
else a virtual environment per requirements hash, built by the queue before the submission's first pair is
scored (never inside the upload's request).

At upload (:func:`brainscore.web.checks.check_zip` with the site's allow-list, then :func:`conflicts`), a
requirements.txt may name only the site's allowed packages, and none in a version other than the one the
server has installed: what is not allowed is refused with the allowed list, and nothing is installed then.
Those the server has are used as they are (:func:`unsatisfied`: name, version specifier and environment
markers, read with :mod:`importlib.metadata` and :mod:`packaging`). The rest are installed by
:func:`python_for`, which the queue's Dask task calls when it starts a pair (the upload has long returned),
with pip, into a virtual environment that sees the server's packages (``--system-site-packages`` and a ``.pth`` file
adding the server's own site-packages where it runs in a virtual environment, :func:`make_venv`) and is named
by the sha256 of the sorted unsatisfied requirements, so submissions asking for the same packages share it
(:func:`prepare`):

- wheels only (``pip install --only-binary=:all:``): no package's build script ever runs;
- never shadowing the server's own packages: every distribution installed on the server is pinned to its
  installed version (a pip constraints file), so neither a requirement nor a dependency of one can install
  another version of it; and an environment whose site-packages holds a module the server's interpreter
  already imports (or a ``.pth`` file, which runs at every start) is refused (:func:`shadowed`). A
  tensorflow install once replaced packages brainscore needs, and scoring failed with
  ``No module named 'pandas'``;
- within quotas: :data:`INSTALL_TIMEOUT_S` of wall-clock time and :data:`DISK_QUOTA_BYTES` of disk (the
  environment and pip's downloads, which go to a folder inside it: no pip cache), measured while pip runs;
  pip is killed at either;
- made once, in a temporary folder renamed into place when complete (a crashed install leaves no
  half environment), under a lock so two submissions never build the same one; a failed install is
  remembered for :data:`RETRY_AFTER_S` (each pair of the submission fails with its reason at once instead of
  installing again);
- made by the server's process, with the network, never in the scoring child (which has none);
- a requirement pip cannot install as a wheel, or that breaks a quota or shadows, is a
  :class:`~brainscore.web.checks.SubmissionRejected` naming the package and the reason (the queue records it
  as the failure of the pair).

pip reads its usual configuration (``PIP_INDEX_URL``, ``PIP_FIND_LINKS``, ``PIP_NO_INDEX``, pip.conf),
so a server behind a mirror, or offline with a folder of wheels, works unchanged. The scoring child
then runs with the environment's interpreter (:func:`python_for`).
"""
from __future__ import annotations

import hashlib
import json
import os
import pkgutil
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from importlib.metadata import PackageNotFoundError, distributions, version
from pathlib import Path
from typing import Callable

from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

from brainscore.web.checks import PROVIDED, SubmissionRejected

INSTALL_TIMEOUT_S = 600
"""Wall-clock seconds pip may take to install one environment (it is killed then)."""
DISK_QUOTA_BYTES = 2 * 1024**3
"""Bytes one environment may take on disk, pip's downloads included (pip is killed past it)."""
RETRY_AFTER_S = 3600
"""Seconds a failed install is remembered: the submission's other pairs fail with its reason at once."""
_VENV_TIMEOUT_S = 120
_POLL_S = 0.5


def _name(requirement: Requirement | str) -> str:
    name = requirement.name if isinstance(requirement, Requirement) else requirement
    return re.sub(r"[-_.]+", "-", name).lower()


def _installed(requirement: Requirement) -> str | None:
    """The version of ``requirement``'s distribution installed on the server (None: not installed)."""
    try:
        return version(requirement.name)
    except PackageNotFoundError:
        return None


def _parse(line: str) -> Requirement:
    try:
        return Requirement(line)
    except Exception as error:  # packaging's InvalidRequirement
        raise SubmissionRejected([f"requirements.txt: {line!r} is not a requirement ({error})"]) from error


def _applies(requirement: Requirement) -> bool:
    """Whether ``requirement`` concerns this server: its markers hold and brainscore does not provide it."""
    if requirement.marker is not None and not requirement.marker.evaluate():
        return False
    return _name(requirement) not in PROVIDED


def _allows(requirement: Requirement, installed: str) -> bool:
    try:
        return requirement.specifier.contains(installed, prereleases=True)
    except InvalidVersion:
        return False


def unsatisfied(requirements: list[str]) -> list[str]:
    """The requirements the server's environment does not satisfy (in the order given, normalised text).

    A requirement is satisfied when a distribution of its name is installed in a version its
    specifier allows (pre-releases included), or when its markers exclude this platform. The
    reference's ``brainscore-vision``, ``brainscore-core`` and ``brainio`` count as provided by brainscore.

    Raises
    ------
    SubmissionRejected
        If a line is not a requirement.
    """
    return [str(requirement) for requirement, installed in _installed_versions(requirements)
            if installed is None or not _allows(requirement, installed)]


def conflicts(requirements: list[str]) -> list[str]:
    """Why some of ``requirements`` can never be installed here: each asks for a package the server has, in a
    version it does not have (installing it would shadow the server's own, which brainscore itself runs on).
    Checked at upload, before anything is queued; empty when there is no such requirement.

    Raises
    ------
    SubmissionRejected
        If a line is not a requirement.
    """
    return [f"requirements.txt asks for {str(requirement)!r}, but the server has {requirement.name} {installed}, which a "
            f"submission cannot replace (brainscore runs on it); ask for {requirement.name}=={installed} or leave the "
            f"version out" for requirement, installed in _installed_versions(requirements)
            if installed is not None and not _allows(requirement, installed)]


def _installed_versions(requirements: list[str]) -> list[tuple[Requirement, str | None]]:
    """``(requirement, version the server has or None)`` of each line that concerns this server (:func:`_applies`).

    Raises
    ------
    SubmissionRejected
        If a line is not a requirement.
    """
    parsed = [_parse(line) for line in requirements]
    return [(requirement, _installed(requirement)) for requirement in parsed if _applies(requirement)]


def environment_key(requirements: list[str]) -> str:
    """sha256 (first 16 hex digits) of the sorted unsatisfied requirements: one environment per key."""
    return hashlib.sha256("\n".join(sorted(requirements)).encode("utf-8")).hexdigest()[:16]


def python_for(requirements: list[str], root: Path, *, log: Callable[[str], None] | None = None,
               timeout_s: float = INSTALL_TIMEOUT_S, disk_bytes: int = DISK_QUOTA_BYTES) -> str:
    """The interpreter a submission with ``requirements`` is scored with: the server's own
    (:data:`sys.executable`) when it satisfies them all, else that of its environment, which is built here
    the first time it is needed (:func:`prepare`): the queue's step before a submission's first pair.

    Parameters
    ----------
    log : callable, optional
        Called with a line saying that the packages are being installed (and with pip's last lines when they
        are), for the submission's log.
    timeout_s, disk_bytes : float, int
        The install's quotas (:data:`INSTALL_TIMEOUT_S`, :data:`DISK_QUOTA_BYTES`).

    Raises
    ------
    SubmissionRejected
        If the environment cannot be made (see :func:`prepare`).
    """
    folder = prepare(list(requirements or []), root, log=log, timeout_s=timeout_s, disk_bytes=disk_bytes)
    return sys.executable if folder is None else str(folder / "bin" / "python")


def prepare(requirements: list[str], root: Path, *, log: Callable[[str], None] | None = None,
            timeout_s: float = INSTALL_TIMEOUT_S, disk_bytes: int = DISK_QUOTA_BYTES) -> Path | None:
    """Make (or reuse) the virtual environment for what the server lacks of ``requirements``.

    Parameters
    ----------
    requirements : list of str
        The submission's requirements.txt lines (checked at upload: allowed names, no conflicting version).
    root : Path
        Folder of the environments (one sub-folder per :func:`environment_key`).
    log : callable, optional
        Called with progress lines for the submission's log.
    timeout_s : float
        Wall-clock seconds pip may take (it is killed then).
    disk_bytes : int
        Bytes the environment may take, pip's downloads included (pip is killed past it).

    Returns
    -------
    Path or None
        The environment's folder, or None when the server's environment satisfies everything.

    Raises
    ------
    SubmissionRejected
        Naming each package pip could not install as a wheel (with pip's reason), the quota an install broke,
        or the server module it would shadow; a failure of the last :data:`RETRY_AFTER_S` seconds is raised
        again without installing.
    """
    missing = unsatisfied(list(requirements or []))
    if not missing:
        return None
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    target = root / environment_key(missing)
    if (target / "bin" / "python").exists():
        return target
    from filelock import FileLock

    with FileLock(str(target) + ".lock", timeout=timeout_s + _VENV_TIMEOUT_S + 60):
        if (target / "bin" / "python").exists():  # built by another submission while this one waited
            return target
        _raise_recent_failure(target)
        if log is not None:
            log(f"installing {', '.join(missing)} (wheels only; at most {timeout_s:.0f} s and "
                f"{disk_bytes / 2**30:.3g} GiB) into the environment {target.name}\n")
        building = Path(tempfile.mkdtemp(prefix=target.name + ".building-", dir=root))
        try:
            _build(building, missing, timeout_s, disk_bytes)
            # mkdtemp makes the folder 0700: open it to the sandbox's unprivileged users (read and run, not write)
            building.chmod(0o755)
            os.replace(building, target)
        except SubmissionRejected as rejected:
            _remember_failure(target, rejected.problems)
            raise
        finally:
            if building.exists():
                shutil.rmtree(building, ignore_errors=True)
    if log is not None:
        log(f"installed {', '.join(missing)}\n")
    return target


def _failure_file(target: Path) -> Path:
    return target.with_name(target.name + ".failed.json")


def _raise_recent_failure(target: Path) -> None:
    """Raise the failure of the last install of ``target`` if it is under :data:`RETRY_AFTER_S` seconds old."""
    path = _failure_file(target)
    try:
        failure = json.loads(path.read_text(encoding="utf-8"))
        age = time.time() - float(failure["at"])
        problems = [str(p) for p in failure["problems"]]
    except (OSError, ValueError, KeyError, TypeError):
        return
    if 0 <= age < RETRY_AFTER_S:
        raise SubmissionRejected([*problems[:-1], f"{problems[-1]} (from an install {age / 60:.0f} min ago; "
                                                  f"tried again after {RETRY_AFTER_S // 60} min)"])


def _remember_failure(target: Path, problems: list[str]) -> None:
    try:
        _failure_file(target).write_text(json.dumps({"at": time.time(), "problems": problems}), encoding="utf-8")
    except OSError:
        pass  # only an optimisation: the next pair installs again


def server_constraints() -> list[str]:
    """``name==version`` for every distribution installed on the server (pip's constraints: nothing the
    server has can be installed in another version into an environment)."""
    pins = {}
    for distribution in distributions():
        name, installed = distribution.metadata["Name"], distribution.version
        try:
            Version(installed)
        except (InvalidVersion, TypeError):
            continue
        if name:
            pins.setdefault(_name(name), f"{name}=={installed}")
    return sorted(pins.values())


def _site_packages(folder: Path) -> list[Path]:
    """The site-packages folders of the environment ``folder`` (purelib and platlib)."""
    paths = {sysconfig.get_path(kind, vars={"base": str(folder), "platbase": str(folder)}) for kind in
             ("purelib", "platlib")}
    return [Path(p) for p in sorted(paths) if Path(p).is_dir()]


def server_modules() -> set[str]:
    """Top-level module names the server's interpreter imports: its standard library, built-in modules and
    everything on its path."""
    return {*sys.stdlib_module_names, *sys.builtin_module_names, *(m.name for m in pkgutil.iter_modules())}


SERVER_PTH = "_brainscore_server_packages.pth"
"""The ``.pth`` file :func:`make_venv` writes into an environment: it adds the server's own site-packages."""


def server_site_dirs() -> list[str]:
    """The site-packages folders of the server's own environment, in its order (a virtual environment's first,
    then its base interpreter's where it includes them), as :func:`site.getsitepackages` lists them."""
    import site

    return [path for path in site.getsitepackages() if os.path.isdir(path)]


def _server_pth() -> str:
    """The text of :data:`SERVER_PTH`: one ``import`` line adding each of :func:`server_site_dirs` as a site folder
    (their own ``.pth`` files, e.g. editable installs, processed too)."""
    return f"import site; list(map(site.addsitedir, {server_site_dirs()!r}))\n"  # exec'd: no comprehension scope


def make_venv(folder: Path) -> None:
    """Create the virtual environment ``folder`` (no pip) that sees the server's own packages after its own.

    ``venv --system-site-packages`` alone exposes the packages of the *base* interpreter, not those of a server
    that runs in a virtual environment (scoring then failed with ``No module named 'pandas'``): a ``.pth`` file
    (:data:`SERVER_PTH`) adds the server's site-packages, so the order of ``sys.path`` is the environment's own
    site-packages, then the server's (its virtual environment's, then its base interpreter's).

    Raises
    ------
    subprocess.CalledProcessError, subprocess.TimeoutExpired
        If ``venv`` fails.
    """
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(folder)],
                   check=True, capture_output=True, timeout=_VENV_TIMEOUT_S)
    for site_dir in _site_packages(folder):
        (site_dir / SERVER_PTH).write_text(_server_pth(), encoding="utf-8")


def shadowed(folder: Path) -> list[str]:
    """What the environment ``folder`` installed that would shadow the server's own code: top-level modules of
    its site-packages that the server's interpreter also imports, and ``.pth`` files (they run at every start
    of the interpreter and may reorder its path). Empty when there is none."""
    found = []
    known = server_modules()
    for site in _site_packages(folder):
        for entry in sorted(site.iterdir()):
            if entry.name == SERVER_PTH and entry.read_text(encoding="utf-8", errors="replace") == _server_pth():
                continue  # ours (make_venv), as written
            if entry.name.endswith(".pth"):
                found.append(f"{entry.name} (a .pth file, run at every start of Python)")
                continue
            if entry.name.endswith((".dist-info", ".data", ".egg-info")) or entry.name == "__pycache__":
                continue
            module = entry.name.split(".", 1)[0] if entry.is_file() else entry.name
            if module in known:
                found.append(f"the module {module!r}, which the server has")
    return found


def _build(folder: Path, missing: list[str], timeout_s: float, disk_bytes: int) -> None:
    """Create the environment in ``folder`` and install ``missing`` into it, wheels only, pinned to the server's
    versions of what it has, within ``timeout_s`` seconds and ``disk_bytes`` bytes."""
    make_venv(folder)
    work = folder / ".install"  # pip's downloads and log: inside the folder, so they count against the quota
    (work / "tmp").mkdir(parents=True)
    constraints = work / "server-constraints.txt"
    constraints.write_text("\n".join(server_constraints()) + "\n", encoding="utf-8")
    # the server's pip installs into the environment (--python): no pip is bootstrapped into it
    command = [sys.executable, "-m", "pip", "--python", str(folder / "bin" / "python"), "install",
               "--only-binary=:all:", "--no-input", "--disable-pip-version-check", "--no-cache-dir",
               "--constraint", str(constraints), *missing]
    output = work / "pip.log"
    with open(output, "wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True,
                                   env={**os.environ, "TMPDIR": str(work / "tmp"), "PIP_NO_CACHE_DIR": "1"})
        broke = _watch(process, folder, timeout_s, disk_bytes)
    if broke is None and _disk_usage(folder) > disk_bytes:  # grew past it between two looks
        broke = f"needed more than the disk limit of {disk_bytes / 2**20:.0f} MiB"
    text = output.read_text(encoding="utf-8", errors="replace")
    if broke is not None:
        raise SubmissionRejected([f"installing {', '.join(missing)} {broke}; ask for fewer or smaller packages"])
    if process.returncode != 0:
        raise SubmissionRejected(_reasons(text, missing))
    shutil.rmtree(work)
    shadows = shadowed(folder)
    if shadows:
        raise SubmissionRejected([f"requirements.txt: installing {', '.join(missing)} added "
                                  f"{'; '.join(shadows)}: an environment may add packages, never replace the "
                                  f"server's own; leave the package out"])
    # moved into place afterwards: it is used through bin/python only (a link to the server's interpreter that
    # finds the environment by the pyvenv.cfg beside it), never through scripts that name their folder


def _watch(process: subprocess.Popen, folder: Path, timeout_s: float, disk_bytes: int) -> str | None:
    """Wait for ``process`` (pip), killing its process group when it runs past ``timeout_s`` or ``folder``
    grows past ``disk_bytes``; returns which quota it broke (None: it ended on its own)."""
    started = time.monotonic()
    while True:
        try:
            process.wait(timeout=_POLL_S)
            return None
        except subprocess.TimeoutExpired:
            pass
        if time.monotonic() - started > timeout_s:
            broke = f"took more than the limit of {timeout_s:.0f} s (pip was stopped)"
        elif _disk_usage(folder) > disk_bytes:
            broke = f"needed more than the disk limit of {disk_bytes / 2**20:.0f} MiB (pip was stopped)"
        else:
            continue
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()
        return broke


def _disk_usage(folder: Path) -> int:
    """Bytes of the files under ``folder`` (allocated blocks, links not followed)."""
    total = 0
    for current, _folders, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(current, name)).st_blocks * 512
            except OSError:
                continue
    return total


def _reasons(output: str, missing: list[str]) -> list[str]:
    """One rejection per package pip names as uninstallable (else one naming every requested package)."""
    names = {re.sub(r"[-_.]+", "-", m.group(1)).lower().split("[")[0]
             for m in re.finditer(r"No matching distribution found for ([A-Za-z0-9_.\-\[\]]+)", output)}
    last = [line.strip() for line in output.splitlines() if line.strip().startswith("ERROR")][-1:] or \
        [line.strip() for line in output.splitlines() if line.strip()][-1:] or ["pip failed"]
    reasons = []
    for requirement in missing:
        name = _name(Requirement(requirement))
        if name in names:
            reasons.append(f"requirements.txt: {requirement!r} cannot be installed: no wheel of {name} matches "
                           f"(only wheels are installed, no build scripts run; the server's environment lacks it)")
    if not reasons:
        conflict = "conflict" in output.lower() or "ResolutionImpossible" in output
        why = (" (it needs a package the server has, in another version: the server's packages are never "
               "replaced)" if conflict else "")
        reasons.append(f"requirements.txt: {', '.join(repr(m) for m in missing)} could not be installed as wheels"
                       f"{why}: {last[0][:300]}")
    return reasons
