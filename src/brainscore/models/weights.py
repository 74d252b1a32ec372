"""Weights of zoo models: local files checked against a declared hash, or a seeded untrained network.

A pretrained network is only as reproducible as its weights file, so every file is checked
before use: against a full sha256 when one is declared (remembered once verified, see
:func:`brainscore.data.store.verify`), or against the sha256 prefix that PyTorch's hub puts in
official file names (``resnet50-0676ba61.pth``: the file's sha256 starts with ``0676ba61``).
An untrained network is built under a fixed torch seed, so its weights, and the cache keys
derived from them, are the same on every run.
"""
from __future__ import annotations

import contextlib
import contextvars
import re
from pathlib import Path
from typing import Callable, Sequence

from brainscore.data.stimuli import file_sha256
from brainscore.data.store import verify
from brainscore.errors import DataNotFoundError, HashMismatchError, ValidationError

_HUB_HASH = re.compile(r"-([a-f0-9]{8,})\.")


#: the weights statuses, from best to worst: checked against a published hash; read without one; a declared stand-in
WEIGHTS_STATUSES = ("verified", "unverified", "stand-in")
_WEIGHTS_RECORDERS: contextvars.ContextVar[tuple[dict[str, dict], ...]] = contextvars.ContextVar(
    "brainscore_weights_files", default=())


@contextlib.contextmanager
def recording_weights():
    """Collect ``{name: {"sha256", "status", "path"}}`` of every weights file read inside the ``with`` block
    (:func:`note_weights_file`); :func:`weights_summary` makes the provenance's ``weights`` entry of them."""
    files: dict[str, dict] = {}
    token = _WEIGHTS_RECORDERS.set(_WEIGHTS_RECORDERS.get() + (files,))
    try:
        yield files
    finally:
        _WEIGHTS_RECORDERS.reset(token)


def note_weights_file(name: str, sha256: str, status: str, path: str | None = None) -> None:
    """Note that the computation under way read the weights file ``name`` (a URL, a hub file name or
    ``repo/file``) with content ``sha256``; ``status`` is ``"verified"`` (its content matched a published hash),
    ``"unverified"`` (no published hash was checked) or ``"stand-in"`` (a declared stand-in, not the original).

    Raises
    ------
    ValueError
        If ``status`` is not one of :data:`WEIGHTS_STATUSES`.
    """
    if status not in WEIGHTS_STATUSES:
        raise ValueError(f"weights status is one of {', '.join(WEIGHTS_STATUSES)}, got {status!r}")
    for files in _WEIGHTS_RECORDERS.get():
        previous = files.get(name)
        if previous is None or WEIGHTS_STATUSES.index(status) > WEIGHTS_STATUSES.index(previous["status"]):
            files[name] = {"sha256": sha256, "status": status, **({"path": str(path)} if path else {})}


def weights_summary(files: dict[str, dict]) -> dict | None:
    """The provenance's ``weights`` entry: ``{"status", "files": {name: {"sha256", "status"}}}``, the status the
    worst of the files' (a stand-in anywhere makes the network a stand-in), or None when no weights file was read
    (an untrained network, a model that is not a PyTorch network of this installation)."""
    if not files:
        return None
    status = max((entry["status"] for entry in files.values()), key=WEIGHTS_STATUSES.index)
    return {"status": status, "files": {name: {"sha256": entry["sha256"], "status": entry["status"]}
                                        for name, entry in sorted(files.items())}}


def weights_status(provenance: dict | None) -> str | None:
    """The ``weights`` status of a record's provenance (``"verified"``, ``"unverified"``, ``"stand-in"``), or None
    where it records no weights file (older records, untrained networks)."""
    weights = (provenance or {}).get("weights") if isinstance(provenance, dict) else None
    status = weights.get("status") if isinstance(weights, dict) else None
    return status if status in WEIGHTS_STATUSES else None


def weights_label(provenance: dict | None) -> str | None:
    """What a table shows beside a record's score: ``"unverified weights"``, ``"stand-in weights"``, or None for
    verified weights and records without the entry."""
    status = weights_status(provenance)
    return f"{status} weights" if status in ("unverified", "stand-in") else None


def weights_note(provenance: dict | None) -> str | None:
    """One sentence on a record's weights where they are not verified (None otherwise): which files, and that the
    score is not one of the published pretrained network."""
    status = weights_status(provenance)
    if status not in ("unverified", "stand-in"):
        return None
    files = (provenance.get("weights") or {}).get("files") or {}
    named = [f"{name} (sha256 {str(entry.get('sha256', ''))[:12]})" for name, entry in sorted(files.items())
             if entry.get("status") == status][:3]
    if status == "stand-in":
        return (f"weights: STAND-IN: {', '.join(named)} declared to stand in for the published file(s); this is not a "
                f"score of the pretrained network")
    return (f"weights: UNVERIFIED: {', '.join(named)} not checked against a published hash; not known to be the "
            f"pretrained network")


def hub_hash_prefix(filename: str) -> str | None:
    """The sha256 prefix in a PyTorch-hub file name (``"resnet50-0676ba61.pth"`` -> ``"0676ba61"``), or None."""
    match = _HUB_HASH.search(Path(filename).name)
    return match.group(1) if match else None


def check_weights_file(path: str | Path, sha256: str | None = None, official_name: str | None = None) -> str:
    """Verify a weights file and return its full sha256 (the weights hash of cache keys).

    Parameters
    ----------
    path : path
        The file.
    sha256 : str, optional
        Declared full sha256; checked exactly.
    official_name : str, optional
        The official file name with a hub hash prefix; checked when no ``sha256`` is declared.

    Raises
    ------
    DataNotFoundError
        If the file does not exist.
    HashMismatchError
        If the content does not match the declared hash.
    ValidationError
        If there is nothing to check the file against.
    """
    path = Path(path).expanduser()
    if not path.is_file():
        raise DataNotFoundError(f"weights file {path} does not exist")
    if sha256:
        verify(path, sha256, what="weights file")
        note_weights_file(official_name or path.name, sha256, "verified", str(path))
        return sha256
    prefix = hub_hash_prefix(official_name or path.name)
    if prefix is None:
        raise ValidationError(f"weights file {path}: declare its sha256 (weights_sha256=...) so the weights "
                              f"used are known; `sha256sum {path}` prints it")
    actual = file_sha256(path)
    if not actual.startswith(prefix):
        raise HashMismatchError(f"weights file {path} has sha256 {actual}, which does not start with {prefix} as "
                                f"the official {official_name or path.name} does: corrupt or another file")
    note_weights_file(official_name or path.name, actual, "verified", str(path))
    return actual


def find_weights(filename: str, setting: str, weights_path: str | Path | None = None) -> Path | None:
    """The local weights file: ``weights_path``, else ``<folder>/<filename>`` where the folder is the
    :mod:`brainscore.config` ``setting`` (its environment variable or the config file), else the
    torch-hub cache, or None."""
    from brainscore import config
    from brainscore.data import locator

    if weights_path is not None:
        return Path(weights_path).expanduser()
    folder = config.path_setting(setting)
    folders = [locator.Folder(setting, Path(folder).expanduser())] if folder else []
    return locator.Locator([*folders, *locator.hub_cache()]).first([filename])


def weights_file_from_url(url: str, folder: str | None = None) -> str:
    """The local copy of a weights file a plugin names by URL (the reference's video models'
    ``download_weight_file``).

    Looked for, in order: the weights mirrors (setting ``weights_mirror``) as ``<name>``, ``<folder>/<name>`` or
    ``models/<folder>/<name>``; ``<home>/models[/<folder>]/<name>`` (where the reference keeps it); else downloaded
    there (atomically). No hash is published for these files, so the file is recorded as ``unverified``
    (:func:`note_weights_file`). ``folder``'s empty, ``.`` and ``..`` parts are dropped.

    Returns
    -------
    str
        The file's path.

    Raises
    ------
    NetworkError
        When offline or the host cannot be reached, naming the file and the mirror setting.
    """
    import os
    from urllib.parse import urlparse

    from brainscore import config
    from brainscore.data import locator
    from brainscore.data.remote import download

    name = os.path.basename(urlparse(url).path)
    parts = [part for part in (folder or "").split("/") if part not in ("", ".", "..")]
    relative = "/".join([*parts, name])
    found = locator.Locator(locator.weights_mirrors()).first([name, relative, f"models/{relative}"])
    if found is None:
        found = Path(config.home(), "models", *parts, name)
        if not found.is_file():
            download(url, found, None, what=f"weights file {name}",
                     hint="or put it in the weights mirror (setting weights_mirror)")
    note_weights_file(url, file_sha256(found), "unverified", str(found))
    return str(found)


def seeded(factory: Callable, seed: int = 0):
    """Call ``factory()`` under ``torch.manual_seed(seed)`` without disturbing the global random state."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return factory()


def resnet_layers(blocks: Sequence[int], prefix: str = "", stem: str = "conv1", pool: str = "avgpool") -> list[str]:
    """Candidate layers of a ResNet: the stem, every residual block (``layer<i>.<j>``), the global pool."""
    return ([f"{prefix}{stem}"] + [f"{prefix}layer{i + 1}.{j}" for i, n in enumerate(blocks) for j in range(n)]
            + [f"{prefix}{pool}"])
