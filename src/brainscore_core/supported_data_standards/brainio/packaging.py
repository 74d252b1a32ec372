"""The reference's local packaging calls, over :mod:`brainscore.data.packaging` (the same BrainIO files).

Differences from the reference: the files go by default to :func:`local_packages_dir` (``$BRAINSCORE_HOME/packages``,
searched by the loaders of :mod:`.s3`, so a plugin registered with the printed hashes loads them before any
upload), not ``~/Downloads/brainscore_packages``; the returned dictionaries hold the files' sha256 besides their sha1.
"""
from __future__ import annotations

from pathlib import Path

from brainscore.config import local_packages_dir
from brainscore.data import packaging as _packaging

__all__ = ["package_stimulus_set_locally", "package_data_assembly_locally", "local_packages_dir"]


def package_stimulus_set_locally(proto_stimulus_set, stimulus_set_identifier: str,
                                 downloads_path: str | Path | None = None) -> dict:
    """The reference's call: :func:`brainscore.data.packaging.package_stimulus_set` into ``downloads_path``.

    Returns ``{identifier, csv_path, zip_path, csv_sha1, zip_sha1}`` (the reference's) plus ``csv_sha256``,
    ``zip_sha256``."""
    target = Path(downloads_path).expanduser() if downloads_path is not None else local_packages_dir()
    packaged = _packaging.package_stimulus_set(proto_stimulus_set, stimulus_set_identifier, target)
    return {"identifier": packaged.identifier,
            "csv_path": str(packaged.csv.path), "zip_path": str(packaged.zip.path),
            "csv_sha1": packaged.csv.sha1, "zip_sha1": packaged.zip.sha1,
            "csv_sha256": packaged.csv.sha256, "zip_sha256": packaged.zip.sha256}


def package_data_assembly_locally(proto_data_assembly, assembly_identifier: str, stimulus_set_identifier: str | None,
                                  assembly_class_name: str = "NeuroidAssembly",
                                  downloads_path: str | Path | None = None) -> dict:
    """The reference's call: :func:`brainscore.data.packaging.package_data_assembly` into ``downloads_path``.

    Returns ``{identifier, path, sha1, cls}`` (the reference's) plus ``sha256``. Raises ``ValueError`` for an
    ``assembly_class_name`` not in :data:`brainscore.data.packaging.ASSEMBLY_CLASSES`."""
    if assembly_class_name not in _packaging.ASSEMBLY_CLASSES:
        raise ValueError(f"assembly_class_name must be one of {sorted(_packaging.ASSEMBLY_CLASSES)}, "
                         f"got {assembly_class_name!r}")
    target = Path(downloads_path).expanduser() if downloads_path is not None else local_packages_dir()
    packaged = _packaging.package_data_assembly(proto_data_assembly, assembly_identifier, stimulus_set_identifier,
                                                target, assembly_class=assembly_class_name)
    return {"identifier": packaged.identifier, "path": str(packaged.netcdf.path), "sha1": packaged.netcdf.sha1,
            "cls": packaged.assembly_class, "sha256": packaged.netcdf.sha256}
