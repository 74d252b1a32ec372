"""Weights of zoo models: local files checked against a declared hash, or a seeded untrained network.

A pretrained network is only as reproducible as its weights file, so every file is checked
before use: against a full sha256 when one is declared (remembered once verified, see
:func:`brainscore.data.store.verify`), or against the sha256 prefix that PyTorch's hub puts in
official file names (``resnet50-0676ba61.pth``: the file's sha256 starts with ``0676ba61``).
An untrained network is built under a fixed torch seed, so its weights, and the cache keys
derived from them, are the same on every run.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Sequence

from brainscore.data.stimuli import file_sha256
from brainscore.data.store import verify
from brainscore.errors import DataNotFoundError, HashMismatchError, ValidationError

_HUB_HASH = re.compile(r"-([a-f0-9]{8,})\.")


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
        return sha256
    prefix = hub_hash_prefix(official_name or path.name)
    if prefix is None:
        raise ValidationError(f"weights file {path}: declare its sha256 (weights_sha256=...) so the weights "
                              f"used are known; `sha256sum {path}` prints it")
    actual = file_sha256(path)
    if not actual.startswith(prefix):
        raise HashMismatchError(f"weights file {path} has sha256 {actual}, which does not start with {prefix} as "
                                f"the official {official_name or path.name} does: corrupt or another file")
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
