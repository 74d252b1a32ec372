"""The reference's S3 loaders: files found in local folders by name and sha1, else fetched from S3 once.

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
3. the folder of locally packaged files (``$BRAINSCORE_HOME/packages``, where
   ``package_*_locally`` write);

in each folder at ``<bucket key prefix>/<name>``, ``<bucket>/<name>`` and ``<name>`` (the folders are
the sources of :mod:`brainscore.data.locator`). A file is used only if its sha1 is the one
registered. When no folder holds it, it is downloaded from ``s3://<bucket name>/<key prefix>/<name>``
at the registered ``version_id`` (the reference's name, ``.`` written ``_``) into the store
(``$BRAINSCORE_HOME/sources/<bucket name>/<key>``): anonymously, or with the standard AWS credential
chain when the object is not public; resumable; the endpoint from ``AWS_ENDPOINT_URL_S3`` /
``AWS_ENDPOINT_URL`` / the profile (a MinIO or Ceph mirror); kept only if its sha1 is the registered
one (:func:`brainscore.data.remote.download_s3_object`). The ``offline`` setting forbids the download:
a missing file is then one :class:`~brainscore.errors.DataNotFoundError` line naming the file, its
sha1, the object and the mirror setting. Loading goes through ``brainscore``'s own loaders
(:func:`brainscore.data.io.load_packaged_stimulus_set`,
:func:`brainscore.data.packaging.load_packaged_assembly`), and the files are recorded in the score's
provenance by their sha256.

Weights files (``load_weight_file``, ``load_file``, ``load_folder_from_s3`` = the reference's
``download_weights``, ``load_file_from_s3``) are found the same way, the weights mirrors (setting
``weights_mirror`` / ``$BRAINSCORE_WEIGHTS_MIRROR``) searched first, under the reference's S3 key
(``<folder_name>/<relative_path>``, e.g. ``brainscore-vision/models/user_1/w.pth``), its relative
path or its bare name, and downloaded from ``s3://<bucket>/<folder_name>/<relative_path>`` the same way;
``sha1_hash`` is the reference's.
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Callable

from brainscore import config
from brainscore.caching import file_hashes
from brainscore.caching.atomic import atomic_copy
from brainscore.data import locator, stand_ins, store
from brainscore.data.io import load_packaged_stimulus_set
from brainscore.data.packaging import ASSEMBLY_CLASSES, load_packaged_assembly
from brainscore.errors import DataNotFoundError, HashMismatchError

from .assemblies import NeuroidAssembly, as_reference_class

__all__ = ["load_stimulus_set_from_s3", "load_assembly_from_s3", "locate_by_sha1", "candidate_paths", "get_path",
           "load_weight_file", "load_file", "load_file_from_s3", "load_folder_from_s3", "download_file_if_not_exists",
           "sha1_hash"]

def _hashes(path: Path) -> tuple[str, str]:
    """``(sha1, sha256)`` of ``path`` from the one hash memo (:func:`brainscore.caching.file_hashes`)."""
    hashes = file_hashes(path, ("sha1", "sha256"))
    return hashes["sha1"], hashes["sha256"]


def _locator(weights: bool = False, first: list[Path] = ()) -> locator.Locator:
    """The folders searched, in order: ``first``, (for weights: the weights mirrors, then) the data mirrors, the
    store of fetched files and the folder of locally packaged files; then S3 (unless offline)."""
    return locator.brainio_locator(weights, [f for folder in first for f in locator.save_path(folder)])


def _relative_paths(names: list[str], bucket: str | None) -> list[str]:
    prefixes = [""]
    if bucket:
        bucket = bucket.strip("/")
        key_prefix = locator.split_bucket(bucket)[1]
        prefixes = [p for p in dict.fromkeys([key_prefix, bucket, ""])]
    return [f"{prefix}/{name}" if prefix else name for prefix in prefixes for name in names]


def candidate_paths(names: list[str], bucket: str | None = None, weights: bool = False) -> list[Path]:
    """Existing local files named one of ``names``, in search order (see the module notes); not verified.

    With ``weights``, the weights mirrors (setting ``weights_mirror``) are searched first."""
    return _locator(weights).candidates(_relative_paths(names, bucket))


def _s3_object(bucket: str | None, key: str | None, version_id: str | None) -> locator.S3Object | None:
    """The S3 object of the reference's ``bucket`` (``name[/key prefix]``) and ``key``, or None without a bucket."""
    if not bucket or not key:
        return None
    name, prefix = locator.split_bucket(bucket)
    return locator.S3Object(name, f"{prefix}/{key.lstrip('/')}" if prefix else key.lstrip("/"), version_id)


def _advice(names: list[str], relative: list[str], weights: bool, found: locator.Locator) -> str:
    """Where to put a missing file and which setting names the mirror (one line)."""
    if weights:
        mirrors = ", ".join(str(m) for m in config.weights_mirrors()) or "none set"
        return (f"put the file at <mirror>/{relative[0]} (or <mirror>/{names[0]}) and set the weights mirror with "
                f"`brainscore config set weights_mirror <mirror>` or BRAINSCORE_WEIGHTS_MIRROR=<mirror> (weights "
                f"mirrors: {mirrors}). Folders searched: {found.describe()}.")
    mirrors = ", ".join(str(m) for m in config.data_mirrors()) or "none set"
    return (f"put the file at <mirror>/{relative[0]} (or <mirror>/{names[0]}) and set the data mirror with "
            f"`brainscore config set data_mirror <mirror>` or BRAINSCORE_DATA_MIRROR=<mirror> (data mirrors: {mirrors}); "
            f"or package it here with package_stimulus_set_locally / package_data_assembly_locally. Folders "
            f"searched: {found.describe()}.")


def locate_by_sha1(names: list[str], sha1: str | None, bucket: str | None = None, weights: bool = False, *,
                   key: str | None = None, version_id: str | None = None, first: list[Path] = ()) -> tuple[Path, str]:
    """The first local file named one of ``names`` whose sha1 is ``sha1``, and its sha256; else fetched from S3.

    Parameters
    ----------
    names : list of str
        File names to look for, e.g. ``['assy_X.nc']``.
    sha1 : str or None
        The registered sha1 of the file. None (the reference's ``load_file``): the first file found is
        used, with a warning naming its sha1.
    bucket : str, optional
        The reference's bucket (``'brainscore-storage/brainscore-vision/data/x'``): its key prefix
        and the whole string are tried as sub-folders, and the object ``s3://<bucket name>/<key prefix>/<key>``
        is downloaded when no folder holds the file (:class:`brainscore.data.locator.S3Remote`).
    weights : bool
        Search the weights mirrors first (a weights file), and name that setting in the error.
    key : str, optional
        The object's key under the bucket's key prefix (default ``names[0]``).
    version_id : str, optional
        The S3 object version to download.
    first : list of Path
        Folders searched before all others.

    Raises
    ------
    DataNotFoundError
        If no folder holds such a file and it cannot be downloaded (offline: one line naming the object, its
        sha1 and the mirror setting); no bucket: names the file, its sha1, the folders and the fix.
    HashMismatchError
        If files of that name exist but none has the sha1 and none can be downloaded, or the downloaded file's
        sha1 differs (both named; nothing kept).
    PermissionDeniedError, NetworkError
        From the download (:func:`brainscore.data.remote.download_s3_object`).
    """
    obj = _s3_object(bucket, key or names[0], version_id)
    path, sha256 = _locate(names, sha1, bucket, weights, obj, list(first))
    return locator.note(obj.store_relative if obj is not None else names[0], path), sha256


def _locate(names: list[str], sha1: str | None, bucket: str | None, weights: bool, obj: locator.S3Object | None,
            first: list[Path]) -> tuple[Path, str]:
    """:func:`locate_by_sha1` without the note to :func:`brainscore.data.locator.recording`."""
    found = _locator(weights, first)
    relative = _relative_paths(names, bucket)
    what = f"{'weights' if weights else 'data'} file {names[0]}"
    if sha1 is None:
        path = found.first(relative)
        if path is not None:
            _warn_unchecked(path)
            return path, _hashes(path)[1]
        seen = []
    else:
        path, seen = found.by_sha1(relative, sha1)
        if path is not None:
            return path, _hashes(path)[1]
        for candidate, _, sha256 in seen:  # none is the registered file: a declared stand-in (brainscore.data.stand_ins)?
            if stand_ins.accepts(sha1, sha256, candidate):
                return candidate, sha256
    stored = obj is not None and (locator.store()[0].root / obj.store_relative).is_file()
    if seen and (obj is None or stored or config.offline()):
        wrong = "; ".join(f"{p} (sha1 {s})" for p, s, _ in seen)
        raise HashMismatchError(f"{names[0]}: the files found are not the registered one (sha1 {sha1}): {wrong}. "
                                f"Replace them with the original file, or register its sha1.")
    advice = _advice(names, relative, weights, found)
    if obj is None:
        raise DataNotFoundError(f"{what}{f' (sha1 {sha1})' if sha1 else ''} was not found and no S3 bucket is "
                                f"registered for it: {advice}")
    path, hashes = locator.S3Remote().fetch(obj, sha1, what=what, advice=advice)
    if sha1 is None:
        _warn_unchecked(path)
    return path, hashes["sha256"]


def get_path(identifier: str, file_type: str, bucket: str, version_id: str | None = None, sha1: str | None = None,
             filename_prefix: str | None = None, folder_name: str | None = None) -> Path:
    """The local file of a packaged stimulus set (``file_type`` ``'csv'``/``'zip'``) or assembly (``'nc'``), by sha1.

    Raises
    ------
    ValueError
        Without ``sha1`` (a file is only used once its content is known).
    DataNotFoundError, HashMismatchError
        See :func:`locate_by_sha1`.
    """
    if not sha1:
        raise ValueError(f"get_path({identifier!r}, {file_type!r}) needs the file's sha1")
    prefix = filename_prefix if filename_prefix is not None else ("stimulus_" if file_type in ("csv", "zip")
                                                                  else "assy_")
    where = f"{bucket.strip('/')}/{folder_name.strip('/')}" if folder_name else bucket
    names = _names(prefix, identifier, f".{file_type}")
    path, sha256 = locate_by_sha1(names, sha1, where, key=names[-1], version_id=version_id)
    _record(path, sha256)
    return path


def _names(prefix: str, identifier: str, suffix: str) -> list[str]:
    """The BrainIO file names of ``identifier``: as given, and (last) as the reference's S3 key, ``.`` written ``_``."""
    return list(dict.fromkeys([f"{prefix}{identifier}{suffix}", f"{prefix}{identifier.replace('.', '_')}{suffix}"]))


def _record(path: Path, sha256: str) -> None:
    """Name the file in the provenance of the score being computed (:func:`brainscore.data.store.recording_files`)."""
    store.used(store.Source(f"brainio/{path.name}", sha256))


def load_stimulus_set_from_s3(identifier: str, bucket: str | None = None, csv_sha1: str | None = None,
                              zip_sha1: str | None = None, csv_version_id: str | None = None,
                              zip_version_id: str | None = None, filename_prefix: str | None = None):
    """The packaged stimulus set ``identifier``, from files with these sha1s, local or fetched (module notes).

    Parameters
    ----------
    identifier : str
    bucket : str, optional
        The reference's S3 location (``name[/key prefix]``): a sub-folder name locally, and where the files
        are downloaded from when no folder holds them.
    csv_sha1, zip_sha1 : str
        Hashes printed by :func:`~.packaging.package_stimulus_set_locally`.
    csv_version_id, zip_version_id : str, optional
        The S3 object versions to download.
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
    csv_names, zip_names = _names(prefix, identifier, ".csv"), _names(prefix, identifier, ".zip")
    csv_path, csv_sha256 = locate_by_sha1(csv_names, csv_sha1, bucket, key=csv_names[-1], version_id=csv_version_id)
    zip_path, zip_sha256 = locate_by_sha1(zip_names, zip_sha1, bucket, key=zip_names[-1], version_id=zip_version_id)
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
        The S3 object version to download.
    sha1 : str
        Printed by :func:`~.packaging.package_data_assembly_locally`.
    bucket : str, optional
        The reference's S3 location (a sub-folder name locally, and where the file is downloaded from).
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
    names = _names(filename_prefix, identifier, ".nc")
    path, sha256 = locate_by_sha1(names, sha1, bucket, key=names[-1], version_id=version_id)
    _record(path, sha256)
    stimulus_set = stimulus_set_loader() if stimulus_set_loader is not None else None
    merge = stimulus_set is not None and merge_stimulus_set_meta
    assembly = load_packaged_assembly(path, stimulus_set=stimulus_set if merge else None, cls=ASSEMBLY_CLASSES[name])
    if stimulus_set is not None and not merge:  # kept, not merged (e.g. properties measured with these stimuli)
        assembly.attrs["stimulus_set"] = stimulus_set
        assembly.attrs["stimulus_set_identifier"] = getattr(stimulus_set, "identifier", None)
    return as_reference_class(assembly)


# ------------------------------------------------------------------------------------------------ weights files
_UNCHECKED: set[str] = set()  # files already warned about (used without a sha1), once per process


def _warn_unchecked(path: Path) -> None:
    """Warn once per process that ``path`` is used without a sha1 check, naming its sha1."""
    if str(path) not in _UNCHECKED:
        _UNCHECKED.add(str(path))
        warnings.warn(f"weights file {path} is used without a sha1 check (the plugin gave no sha1, as the "
                      f"reference's load_file never does); its sha1 is {_hashes(path)[0]}", UserWarning, stacklevel=4)


def sha1_hash(file_path: str | Path) -> str:
    """The sha1 (hex) of a file's content, as the reference's plugins declare their files (computed once per file
    state).

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    """
    return _hashes(Path(file_path))[0]


def _weight_names(relative_path: str, folder_name: str | None) -> list[str]:
    folder = folder_name if folder_name is not None else os.getenv("BRAINSCORE_S3_WEIGHT_FOLDER", "models")
    relative_path = relative_path.lstrip("/")
    first = f"{folder.strip('/')}/{relative_path}" if folder.strip("/") else relative_path
    return list(dict.fromkeys([first, relative_path, Path(relative_path).name]))


def load_weight_file(bucket: str, relative_path: str, version_id: str | None = None, sha1: str | None = None,
                     folder_name: str | None = None, save_path: str | Path | None = None) -> Path:
    """The local weights file ``<folder_name>/<relative_path>`` that the reference downloads from S3.

    Looked up, in order, in ``save_path`` (when given), in ``$BRAINSCORE_HOME`` (where the reference's own
    download puts it), then in every weights mirror (setting ``weights_mirror``), data mirror,
    ``$BRAINSCORE_HOME/sources`` and ``$BRAINSCORE_HOME/packages`` (each also under the bucket and its key
    prefix), as ``<folder_name>/<relative_path>``, ``<relative_path>`` and its bare file name; else downloaded
    from ``s3://<bucket>/<folder_name>/<relative_path>`` into the store (see the module notes). The path is
    returned where it lies (the reference returns its download location).

    Parameters
    ----------
    bucket : str
        The reference's S3 bucket (``'brainscore-storage'``; also a sub-folder name locally).
    relative_path : str
        Path under ``folder_name``, e.g. ``'mymodel/weights.pth'``.
    version_id : str, optional
        The S3 object version to download.
    sha1 : str, optional
        The file's sha1: only a file with it is used. Without one (the reference stopped checking it in
        2025) the first file found is used, with a warning giving its sha1.
    folder_name : str, optional
        Default ``$BRAINSCORE_S3_WEIGHT_FOLDER``, else ``'models'`` (as the reference).
    save_path : path, optional
        A folder searched first.

    Returns
    -------
    Path

    Raises
    ------
    DataNotFoundError
        If no folder holds the file and it cannot be downloaded: one line naming it, its sha1, the weights
        mirror setting and the folders.
    HashMismatchError
        If files of that name exist but none has the sha1, or the downloaded file's sha1 differs.
    PermissionDeniedError, NetworkError
        From the download (:func:`brainscore.data.remote.download_s3_object`).
    """
    names = _weight_names(relative_path, folder_name)
    first = [Path(save_path).expanduser()] if save_path is not None else []
    return locate_by_sha1(names, sha1, bucket, weights=True, version_id=version_id, first=first + [config.home()])[0]


def load_file(bucket: str, relative_path: str, version_id: str | None = None, folder_name: str | None = None) -> Path:
    """The reference's ``load_file`` (a weights file without a sha1): :func:`load_weight_file` with ``sha1=None``."""
    return locate_by_sha1(_weight_names(relative_path, folder_name), None, bucket, weights=True, version_id=version_id,
                          first=[config.home()])[0]


def _place(source: Path, destination: Path, sha1: str | None) -> None:
    """Copy ``source`` to ``destination`` (atomically) unless that already holds the same content."""
    destination = Path(destination)
    if destination.resolve() == source.resolve():
        return
    if destination.is_file() and _hashes(destination)[0] == (sha1 or _hashes(source)[0]):
        return
    atomic_copy(source, destination)


def load_file_from_s3(bucket: str, path: str, local_filepath: str | Path, sha1: str | None = None,
                      version_id: str | None = None) -> None:
    """Put the file ``<bucket>/<path>`` at ``local_filepath``, found or fetched as :func:`load_weight_file`.

    Raises
    ------
    DataNotFoundError, HashMismatchError
        As :func:`load_weight_file`.
    OSError
        If ``local_filepath`` cannot be written.
    """
    path = path.lstrip("/")
    names = list(dict.fromkeys([path, Path(path).name]))
    found = locate_by_sha1(names, sha1, bucket, weights=True, version_id=version_id, first=[config.home()])[0]
    _place(found, Path(local_filepath), sha1)


def load_folder_from_s3(bucket: str, folder_path: str, filename_version_sha, save_directory: str | Path) -> None:
    """Put each ``(filename, version_id, sha1)`` of ``<bucket>/<folder_path>`` in ``save_directory`` (the reference's
    ``download_weights``), found or fetched by name and sha1 (see :func:`load_file_from_s3`)."""
    for filename, version_id, sha1 in filename_version_sha:
        load_file_from_s3(bucket, f"{folder_path.strip('/')}/{filename}", Path(save_directory) / filename, sha1=sha1,
                          version_id=version_id)


def download_file_if_not_exists(local_path: str | Path, bucket: str, remote_filepath: str) -> None:
    """Nothing if ``local_path`` exists; else the file ``<bucket>/<remote_filepath>`` found or fetched there (:func:`load_file_from_s3`)."""
    if Path(local_path).is_file():
        return
    load_file_from_s3(bucket, remote_filepath, local_path)
