"""The reference's S3 loaders, resolved from local folders by file name and sha1 (never from S3).

Data plugins written for the reference register their data with::

    stimulus_set_registry['X'] = lambda: load_stimulus_set_from_s3(identifier='X', bucket='...',
                                                                   csv_sha1='...', zip_sha1='...', ...)
    data_registry['X'] = lambda: load_assembly_from_s3(identifier='X', bucket='...', sha1='...',
                                                       version_id='...', cls=NeuroidAssembly,
                                                       stimulus_set_loader=lambda: load_stimulus_set('X'))

Here the files are looked up, under their BrainIO names (``stimulus_<id>.csv``/``.zip``,
``assy_<id>.nc``, the identifier as given or with ``.`` written ``_``), in these folders, in order:

1. every data mirror (setting ``data_mirror`` / ``$BRAINSCORE_DATA_MIRROR``);
2. the store of fetched files, ``$BRAINSCORE_HOME/sources``;
3. the folder of locally packaged files (:func:`.packaging.local_packages_dir`, where
   ``package_*_locally`` write);

in each folder at ``<bucket key prefix>/<name>``, ``<bucket>/<name>`` and ``<name>``. A file is used
only if its sha1 is the one registered (the bucket and version ids only help to find it). Loading
then goes through ``brainscore``'s own loaders (:func:`brainscore.data.io.load_packaged_stimulus_set`,
:func:`brainscore.data.packaging.load_packaged_assembly`), and the files are recorded in the score's
provenance by their sha256. No network is used: a missing file is a
:class:`~brainscore.errors.DataNotFoundError` naming the file, its sha1 and the folders searched.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable

from brainscore import config
from brainscore.data import store
from brainscore.data.io import load_packaged_stimulus_set
from brainscore.data.packaging import ASSEMBLY_CLASSES, load_packaged_assembly
from brainscore.errors import DataNotFoundError, HashMismatchError

from .assemblies import NeuroidAssembly, as_reference_class
from .packaging import local_packages_dir

__all__ = ["load_stimulus_set_from_s3", "load_assembly_from_s3", "locate_by_sha1", "candidate_paths"]

_HASHES: dict[tuple, tuple[str, str]] = {}  # file state -> (sha1, sha256), computed once per process


def _hashes(path: Path) -> tuple[str, str]:
    """``(sha1, sha256)`` of ``path``, remembered per file state (path, inode, size, mtime, ctime)."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
    if key not in _HASHES:
        sha1, sha256 = hashlib.sha1(), hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                sha1.update(chunk)
                sha256.update(chunk)
        _HASHES[key] = (sha1.hexdigest(), sha256.hexdigest())
    return _HASHES[key]


def _folders() -> list[Path]:
    return [*config.data_mirrors(), config.home() / "sources", local_packages_dir()]


def _relative_paths(names: list[str], bucket: str | None) -> list[str]:
    prefixes = [""]
    if bucket:
        bucket = bucket.strip("/")
        key_prefix = bucket.split("/", 1)[1] if "/" in bucket else ""
        prefixes = [p for p in dict.fromkeys([key_prefix, bucket, ""])]
    return [f"{prefix}/{name}" if prefix else name for prefix in prefixes for name in names]


def candidate_paths(names: list[str], bucket: str | None = None) -> list[Path]:
    """Existing local files named one of ``names``, in search order (see the module notes); not verified."""
    relative = _relative_paths(names, bucket)
    return [folder / rel for folder in _folders() for rel in relative if (folder / rel).is_file()]


def locate_by_sha1(names: list[str], sha1: str, bucket: str | None = None) -> tuple[Path, str]:
    """The first local file named one of ``names`` whose sha1 is ``sha1``, and its sha256.

    Parameters
    ----------
    names : list of str
        File names to look for, e.g. ``['assy_X.nc']``.
    sha1 : str
        The registered sha1 of the file.
    bucket : str, optional
        The reference's bucket (``'brainscore-storage/brainscore-vision/data/x'``): its key prefix
        and the whole string are tried as sub-folders.

    Raises
    ------
    DataNotFoundError
        If no folder holds such a file; names the file, its sha1, the folders and the fix.
    HashMismatchError
        If files of that name exist but none has the sha1 (each found file named with its sha1).
    """
    wrong = []
    relative = _relative_paths(names, bucket)
    for candidate in candidate_paths(names, bucket):
        found_sha1, sha256 = _hashes(candidate)
        if found_sha1 == sha1:
            return candidate, sha256
        wrong.append(f"{candidate} (sha1 {found_sha1})")
    if wrong:
        raise HashMismatchError(f"{names[0]}: the files found are not the registered one (sha1 {sha1}): "
                                f"{'; '.join(wrong)}. Replace them with the original file, or register its sha1.")
    mirrors = ", ".join(str(m) for m in config.data_mirrors()) or "none set"
    raise DataNotFoundError(
        f"data file {names[0]} (sha1 {sha1}) was not found: this installation never downloads from the reference's S3. "
        f"Put the file at <mirror>/{relative[0]} (or <mirror>/{names[0]}) and set the data mirror with "
        f"`brainscore config set data_mirror <mirror>` or BRAINSCORE_DATA_MIRROR=<mirror> (data mirrors: {mirrors}); "
        f"or package it here with package_stimulus_set_locally / package_data_assembly_locally. Folders searched: "
        f"{', '.join(str(f) for f in _folders())}.")


def _names(prefix: str, identifier: str, suffix: str) -> list[str]:
    return list(dict.fromkeys([f"{prefix}{identifier}{suffix}", f"{prefix}{identifier.replace('.', '_')}{suffix}"]))


def _record(path: Path, sha256: str) -> None:
    """Name the file in the provenance of the score being computed (:func:`brainscore.data.store.recording_files`)."""
    store.used(store.Source(f"brainio/{path.name}", sha256))


def load_stimulus_set_from_s3(identifier: str, bucket: str | None = None, csv_sha1: str | None = None,
                              zip_sha1: str | None = None, csv_version_id: str | None = None,
                              zip_version_id: str | None = None, filename_prefix: str | None = None):
    """The packaged stimulus set ``identifier``, from local files with these sha1s (see the module notes).

    Parameters
    ----------
    identifier : str
    bucket : str, optional
        The reference's S3 location (used as a sub-folder name only).
    csv_sha1, zip_sha1 : str
        Hashes printed by :func:`~.packaging.package_stimulus_set_locally`.
    csv_version_id, zip_version_id : str, optional
        Accepted and ignored (S3 object versions).
    filename_prefix : str, optional
        Default ``'stimulus_'``.

    Returns
    -------
    StimulusSet
        Its files extracted once under ``$BRAINSCORE_HOME/extracted/<zip sha256>/``.

    Raises
    ------
    DataNotFoundError, HashMismatchError
        See :func:`locate_by_sha1`.
    """
    if not csv_sha1 or not zip_sha1:
        raise ValueError(f"load_stimulus_set_from_s3({identifier!r}) needs csv_sha1 and zip_sha1 (printed by "
                         f"package_stimulus_set_locally)")
    prefix = "stimulus_" if filename_prefix is None else filename_prefix
    csv_path, csv_sha256 = locate_by_sha1(_names(prefix, identifier, ".csv"), csv_sha1, bucket)
    zip_path, zip_sha256 = locate_by_sha1(_names(prefix, identifier, ".zip"), zip_sha1, bucket)
    _record(csv_path, csv_sha256)
    _record(zip_path, zip_sha256)
    return load_packaged_stimulus_set(csv_path, store.extract_zip(zip_path, zip_sha256), identifier=identifier)


def load_assembly_from_s3(identifier: str, version_id: str | None = None, sha1: str | None = None,
                          bucket: str | None = None, cls: type | str = NeuroidAssembly,
                          stimulus_set_loader: Callable[[], object] | None = None,
                          merge_stimulus_set_meta: bool = True, filename_prefix: str = "assy_"):
    """The packaged assembly ``identifier``, from a local file with this sha1, its stimulus set merged on.

    Parameters
    ----------
    identifier : str
    version_id : str, optional
        Accepted and ignored (S3 object version).
    sha1 : str
        Printed by :func:`~.packaging.package_data_assembly_locally`.
    bucket : str, optional
        The reference's S3 location (used as a sub-folder name only).
    cls : type or str
        ``NeuroidAssembly`` (default), ``BehavioralAssembly``, ... (from here or from ``brainscore``).
    stimulus_set_loader : callable () -> StimulusSet, optional
        E.g. ``lambda: load_stimulus_set('X')``; its columns are merged onto ``presentation`` by
        ``stimulus_id`` and it is kept in ``assembly.attrs['stimulus_set']`` (``assembly.stimulus_set``).
    merge_stimulus_set_meta : bool
        False: keep the stimulus set in ``attrs['stimulus_set']`` without merging its columns (for
        assemblies without presentations, e.g. a ``PropertiesAssembly`` measured with those stimuli).

    Returns
    -------
    DataAssembly
        Of the class here of the same name as ``cls`` (so ``mean(dim='repetition')`` works).

    Raises
    ------
    DataNotFoundError, HashMismatchError
        See :func:`locate_by_sha1`.
    """
    if not sha1:
        raise ValueError(f"load_assembly_from_s3({identifier!r}) needs sha1 (printed by package_data_assembly_locally)")
    name = cls if isinstance(cls, str) else cls.__name__
    if name not in ASSEMBLY_CLASSES:
        raise ValueError(f"cls must be one of {sorted(ASSEMBLY_CLASSES)}, got {cls!r}")
    path, sha256 = locate_by_sha1(_names(filename_prefix, identifier, ".nc"), sha1, bucket)
    _record(path, sha256)
    stimulus_set = stimulus_set_loader() if stimulus_set_loader is not None else None
    merge = stimulus_set is not None and merge_stimulus_set_meta
    assembly = load_packaged_assembly(path, stimulus_set=stimulus_set if merge else None, cls=ASSEMBLY_CLASSES[name])
    if stimulus_set is not None and not merge:  # kept, not merged (e.g. properties measured with these stimuli)
        assembly.attrs["stimulus_set"] = stimulus_set
        assembly.attrs["stimulus_set_identifier"] = getattr(stimulus_set, "identifier", None)
    return as_reference_class(assembly)
