"""The reference's local packaging calls, over :mod:`brainscore.data.packaging` (the same file formats).

``package_stimulus_set_locally`` and ``package_data_assembly_locally`` write the BrainIO files
(``stimulus_<id>.csv`` + ``stimulus_<id>.zip``; ``assy_<id>.nc``; ``.`` in ``<id>`` written ``_``) with
:func:`brainscore.data.packaging.package_stimulus_set` / :func:`~brainscore.data.packaging.package_data_assembly`
(validated first) and return the dictionaries the reference's tutorial shows, with the files' sha1
(what the reference's loaders check) and, in addition, their sha256 (what ``brainscore``'s store checks).

**Where**: by default into :func:`local_packages_dir` (``$BRAINSCORE_HOME/packages``, not the
reference's ``~/Downloads/brainscore_packages``), where
:func:`~brainscore_core.supported_data_standards.brainio.s3.load_stimulus_set_from_s3` and
:func:`~brainscore_core.supported_data_standards.brainio.s3.load_assembly_from_s3` find them by
name and sha1, so a data plugin registered with the printed hashes loads the files at once,
before any upload. Give ``downloads_path`` to write elsewhere.
"""
from __future__ import annotations

from pathlib import Path

from brainscore import config
from brainscore.data import packaging as _packaging

__all__ = ["package_stimulus_set_locally", "package_data_assembly_locally", "local_packages_dir"]


def local_packages_dir() -> Path:
    """Default folder of locally packaged files: ``$BRAINSCORE_HOME/packages`` (searched by the ``s3`` loaders)."""
    return config.local_packages_dir()


def package_stimulus_set_locally(proto_stimulus_set, stimulus_set_identifier: str,
                                 downloads_path: str | Path | None = None) -> dict:
    """Package a stimulus set into ``stimulus_<id>.csv`` and ``stimulus_<id>.zip``.

    Parameters
    ----------
    proto_stimulus_set : StimulusSet
        One row per stimulus with a unique ``stimulus_id`` and each file in ``stimulus_paths``.
    stimulus_set_identifier : str
        E.g. ``'MyExperiment2024'``.
    downloads_path : path, optional
        Folder to write into (default :func:`local_packages_dir`).

    Returns
    -------
    dict
        ``identifier``, ``csv_path``, ``zip_path``, ``csv_sha1``, ``zip_sha1`` (as the reference),
        ``csv_sha256``, ``zip_sha256``.

    Raises
    ------
    ValidationError
        Listing every problem (duplicate ids, missing or unreadable files, bad identifier).
    """
    target = Path(downloads_path).expanduser() if downloads_path is not None else local_packages_dir()
    packaged = _packaging.package_stimulus_set(proto_stimulus_set, stimulus_set_identifier, target)
    return {"identifier": packaged.identifier,
            "csv_path": str(packaged.csv.path), "zip_path": str(packaged.zip.path),
            "csv_sha1": packaged.csv.sha1, "zip_sha1": packaged.zip.sha1,
            "csv_sha256": packaged.csv.sha256, "zip_sha256": packaged.zip.sha256}


def package_data_assembly_locally(proto_data_assembly, assembly_identifier: str, stimulus_set_identifier: str | None,
                                  assembly_class_name: str = "NeuroidAssembly",
                                  downloads_path: str | Path | None = None) -> dict:
    """Package an assembly into ``assy_<id>.nc`` (netCDF 4, variable ``data``, zlib level 9).

    Parameters
    ----------
    proto_data_assembly : DataAssembly
        E.g. a ``NeuroidAssembly`` ``presentation x neuroid [x time_bin]`` with ``stimulus_id``.
    assembly_identifier : str
    stimulus_set_identifier : str or None
        The stimulus set merged onto it when loaded (recorded in the file).
    assembly_class_name : str
        ``'NeuroidAssembly'``, ``'BehavioralAssembly'``, ``'PropertiesAssembly'`` or ``'DataAssembly'``.
    downloads_path : path, optional
        Folder to write into (default :func:`local_packages_dir`).

    Returns
    -------
    dict
        ``identifier``, ``path``, ``sha1``, ``cls`` (as the reference), ``sha256``.

    Raises
    ------
    ValidationError
        If the assembly does not meet its class's standard (dims, coordinates, NaN values).
    """
    if assembly_class_name not in _packaging.ASSEMBLY_CLASSES:
        raise ValueError(f"assembly_class_name must be one of {sorted(_packaging.ASSEMBLY_CLASSES)}, "
                         f"got {assembly_class_name!r}")
    target = Path(downloads_path).expanduser() if downloads_path is not None else local_packages_dir()
    packaged = _packaging.package_data_assembly(proto_data_assembly, assembly_identifier, stimulus_set_identifier,
                                                target, assembly_class=assembly_class_name)
    return {"identifier": packaged.identifier, "path": str(packaged.netcdf.path), "sha1": packaged.netcdf.sha1,
            "cls": packaged.assembly_class, "sha256": packaged.netcdf.sha256}
