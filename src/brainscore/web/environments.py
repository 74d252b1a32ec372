"""The Python environment a submission's requirements.txt asks for: the server's own where it satisfies them,
else a virtual environment per requirements hash, made before the scoring sandbox starts.

A submission's requirements are first checked against the packages installed on the server
(:func:`unsatisfied`: name, version specifier and environment markers, read with
:mod:`importlib.metadata` and :mod:`packaging`). Those the server has are used as they are. The rest
are installed, with pip, into a virtual environment that sees the server's packages
(``--system-site-packages``) and is named by the sha256 of the sorted unsatisfied requirements, so
submissions asking for the same packages share it (:func:`prepare`):

- wheels only (``pip install --only-binary=:all:``): no package's build script ever runs;
- made once, in a temporary folder renamed into place when complete (a crashed install leaves no
  half environment), under a lock so two submissions never build the same one;
- made when the submission is queued, with the network, never in the scoring child (which has none);
- a requirement pip cannot install as a wheel is a :class:`~brainscore.web.checks.SubmissionRejected`
  naming the package and pip's reason.

pip reads its usual configuration (``PIP_INDEX_URL``, ``PIP_FIND_LINKS``, ``PIP_NO_INDEX``, pip.conf),
so a server behind a mirror, or offline with a folder of wheels, works unchanged. The scoring child
then runs with the environment's interpreter (:func:`python_for`).
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import InvalidVersion

from brainscore.web.checks import PROVIDED, SubmissionRejected

INSTALL_TIMEOUT_S = 900
_LOCK_TIMEOUT_S = INSTALL_TIMEOUT_S + 60


def _name(requirement: Requirement) -> str:
    return re.sub(r"[-_.]+", "-", requirement.name).lower()


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
    missing = []
    for line in requirements:
        try:
            requirement = Requirement(line)
        except Exception as error:  # packaging's InvalidRequirement
            raise SubmissionRejected([f"requirements.txt: {line!r} is not a requirement ({error})"]) from error
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        if _name(requirement) in PROVIDED:
            continue
        try:
            installed = version(requirement.name)
        except PackageNotFoundError:
            missing.append(str(requirement))
            continue
        try:
            if requirement.specifier.contains(installed, prereleases=True):
                continue
        except InvalidVersion:
            pass
        missing.append(str(requirement))
    return missing


def environment_key(requirements: list[str]) -> str:
    """sha256 (first 16 hex digits) of the sorted unsatisfied requirements: one environment per key."""
    return hashlib.sha256("\n".join(sorted(requirements)).encode("utf-8")).hexdigest()[:16]


def python_for(requirements: list[str], root: Path) -> str:
    """The interpreter a submission with ``requirements`` is scored with: the server's own
    (:data:`sys.executable`) when it satisfies them all, else that of its prepared environment.

    Raises
    ------
    SubmissionRejected
        If the environment the requirements need was never prepared (see :func:`prepare`).
    """
    missing = unsatisfied(list(requirements or []))
    if not missing:
        return sys.executable
    python = Path(root) / environment_key(missing) / "bin" / "python"
    if not python.exists():
        raise SubmissionRejected([f"the environment for {', '.join(missing)} was not prepared under {root}; "
                                  f"submit again to install it"])
    return str(python)


def prepare(requirements: list[str], root: Path) -> Path | None:
    """Make (or reuse) the virtual environment for what the server lacks of ``requirements``.

    Parameters
    ----------
    requirements : list of str
        The submission's requirements.txt lines (checked by :func:`brainscore.web.checks.check_zip`).
    root : Path
        Folder of the environments (one sub-folder per :func:`environment_key`).

    Returns
    -------
    Path or None
        The environment's folder, or None when the server's environment satisfies everything.

    Raises
    ------
    SubmissionRejected
        Naming each package pip could not install as a wheel, with pip's reason.
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

    with FileLock(str(target) + ".lock", timeout=_LOCK_TIMEOUT_S):
        if (target / "bin" / "python").exists():  # built by another submission while this one waited
            return target
        building = Path(tempfile.mkdtemp(prefix=target.name + ".building-", dir=root))
        try:
            _build(building, missing)
            # mkdtemp makes the folder 0700: open it to the sandbox's unprivileged users (read and run, not write)
            building.chmod(0o755)
            os.replace(building, target)
        except BaseException:
            shutil.rmtree(building, ignore_errors=True)
            raise
    return target


def _build(folder: Path, missing: list[str]) -> None:
    """Create the environment in ``folder`` and install ``missing`` into it, wheels only."""
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(folder)],
                   check=True, capture_output=True, timeout=120)
    # the server's pip installs into the environment (--python): no pip is bootstrapped into it
    command = [sys.executable, "-m", "pip", "--python", str(folder / "bin" / "python"), "install",
               "--only-binary=:all:", "--no-input", "--disable-pip-version-check", *missing]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise SubmissionRejected([f"installing {', '.join(missing)} took more than {INSTALL_TIMEOUT_S} s; "
                                  f"ask for fewer or smaller packages"]) from None
    if result.returncode != 0:
        raise SubmissionRejected(_reasons(result.stderr + result.stdout, missing))
    # moved into place afterwards: it is used through bin/python only (a link to the server's interpreter that
    # finds the environment by the pyvenv.cfg beside it), never through scripts that name their folder


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
        reasons.append(f"requirements.txt: {', '.join(repr(m) for m in missing)} could not be installed as wheels: "
                       f"{last[0][:300]}")
    return reasons
