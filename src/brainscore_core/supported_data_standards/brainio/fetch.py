"""``brainscore_core.supported_data_standards.brainio.fetch``: the reference's fetch helpers, resolved locally.

``get_stimulus_set(identifier)`` and ``get_assembly(identifier)`` load a registered stimulus set or assembly
(brainscore's registry, plugin folders included); ``fetch_file(location_type, location, version_id, sha1)``
returns the local file of an S3 URL found by name and sha1, downloaded when no folder holds it (:mod:`.s3`); ``unzip(path)``
extracts a zip once, safely, under ``$BRAINSCORE_HOME``; ``verify_sha1(path, sha1)`` checks a file.
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

from brainscore.errors import HashMismatchError

from .s3 import _hashes, locate_by_sha1
from .stimuli import StimulusSet, StimulusSetLoader


def resolve_stimulus_set_class(name: str = "StimulusSet") -> type:
    """The stimulus set class named ``name`` (the reference's lookup; only ``StimulusSet`` exists).

    Raises
    ------
    ValueError
        For any other name.
    """
    if name != "StimulusSet":
        raise ValueError(f"unknown stimulus set class {name!r}; only 'StimulusSet' exists")
    return StimulusSet

__all__ = ["get_stimulus_set", "get_assembly", "fetch_file", "unzip", "verify_sha1", "StimulusSetLoader",
           "resolve_stimulus_set_class"]


def get_stimulus_set(identifier: str):
    """The stimulus set registered as ``identifier`` (:func:`brainscore.load_stimulus_set`)."""
    from brainscore import registry

    return registry.load_stimulus_set(identifier)


def get_assembly(identifier: str):
    """The assembly registered as ``identifier`` (:func:`brainscore.load_dataset`)."""
    from brainscore import registry

    return registry.load_dataset(identifier)


def fetch_file(location_type: str, location: str, version_id: str | None = None, sha1: str | None = None) -> Path:
    """The local file of ``location`` (``https://<bucket>.s3.amazonaws.com/<key>``), found by name and ``sha1``
    (or downloaded, see :func:`.s3.locate_by_sha1`).

    Raises
    ------
    ValueError
        Without ``sha1`` (a file is only used once its content is known).
    DataNotFoundError, HashMismatchError
        See :func:`.s3.locate_by_sha1`.
    """
    if not sha1:
        raise ValueError(f"fetch_file({location!r}) needs the file's sha1")
    parsed = urlparse(location)
    bucket = (parsed.hostname or "").split(".s3")[0]
    key = parsed.path.lstrip("/")
    folder, _, name = key.rpartition("/")
    return locate_by_sha1([name], sha1, f"{bucket}/{folder}" if folder else bucket, key=name, version_id=version_id)[0]


def verify_sha1(filepath: str | Path, sha1: str) -> None:
    """Raise :class:`~brainscore.errors.HashMismatchError` unless the file's sha1 is ``sha1``."""
    actual = _hashes(Path(filepath))[0]
    if actual != sha1:
        raise HashMismatchError(f"{filepath}: sha1 {actual}, expected {sha1}; replace it with the original file")


def unzip(zip_path: str | Path) -> str:
    """The folder ``zip_path`` is extracted to (once, checked: no member may leave it), as a string."""
    from brainscore.data import store

    path = Path(zip_path)
    return str(store.extract_zip(path, _hashes(path)[1]))
