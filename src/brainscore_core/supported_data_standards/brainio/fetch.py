"""The reference's fetch helpers (``brainio.fetch``), over :mod:`brainscore.registry` and
:mod:`brainscore.data.catalogue`."""
from __future__ import annotations

from pathlib import Path

from brainscore.data import catalogue, file_sha256, store

from .stimuli import StimulusSet, StimulusSetLoader

__all__ = ["get_stimulus_set", "get_assembly", "fetch_file", "unzip", "verify_sha1", "StimulusSetLoader",
           "resolve_stimulus_set_class"]


def resolve_stimulus_set_class(name: str = "StimulusSet") -> type:
    """The stimulus set class named ``name``; raises ``ValueError`` for any name but ``'StimulusSet'``."""
    if name != "StimulusSet":
        raise ValueError(f"unknown stimulus set class {name!r}; only 'StimulusSet' exists")
    return StimulusSet


def get_stimulus_set(identifier: str):
    """The reference's ``get_stimulus_set``: :func:`brainscore.registry.load_stimulus_set`."""
    from brainscore import registry

    return registry.load_stimulus_set(identifier)


def get_assembly(identifier: str):
    """The reference's ``get_assembly``: :func:`brainscore.registry.load_dataset`."""
    from brainscore import registry

    return registry.load_dataset(identifier)


def fetch_file(location_type: str, location: str, version_id: str | None = None, sha1: str | None = None) -> Path:
    """The reference's ``fetch_file``: :func:`brainscore.data.catalogue.locate_s3_url` (``location_type`` unused).

    Raises ``ValueError`` without ``sha1`` (a file is only used once its content is known)."""
    if not sha1:
        raise ValueError(f"fetch_file({location!r}) needs the file's sha1")
    return catalogue.locate_s3_url(location, sha1, version_id)


def verify_sha1(filepath: str | Path, sha1: str) -> None:
    """The reference's ``verify_sha1``: :func:`brainscore.data.catalogue.check_sha1`."""
    catalogue.check_sha1(filepath, sha1)


def unzip(zip_path: str | Path) -> str:
    """The reference's ``unzip``: :func:`brainscore.data.store.extract_zip` (once, checked), the folder as a string."""
    path = Path(zip_path)
    return str(store.extract_zip(path, file_sha256(path)))
