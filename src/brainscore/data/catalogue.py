"""The BrainIO catalogue's files: found locally by name and sha1, else fetched from S3 once.

The reference Brain-Score (Schrimpf et al. 2018, 2020) names its packaged data by the BrainIO
conventions and registers each file by its sha1, its S3 bucket and object version::

    load_stimulus_set_from_s3(identifier='X', bucket='brainscore-storage/brainscore-vision/data/x',
                              csv_sha1='...', zip_sha1='...', csv_version_id='...', zip_version_id='...')
    load_assembly_from_s3(identifier='X', bucket='...', sha1='...', version_id='...', cls=NeuroidAssembly, ...)

This module is where such a file is found (the reference's names over it live in
``brainscore_core.supported_data_standards.brainio.s3``).

**Names.** A stimulus set is ``stimulus_<id>.csv`` + ``stimulus_<id>.zip``, an assembly ``assy_<id>.nc``
(:func:`brainio_file_names`: the identifier as given, then, as the reference's S3 key, with ``.``
written ``_``). A weights file is ``<folder_name>/<relative_path>``, its relative path or its bare name
(:func:`weights_file_names`; ``folder_name`` defaults to ``$BRAINSCORE_S3_WEIGHT_FOLDER``, else
``'models'``, as the reference).

**Search order** (the sources of :mod:`brainscore.data.locator`, :func:`~brainscore.data.locator.brainio_locator`):

1. the folders the caller names first (``save_path``; ``$BRAINSCORE_HOME`` for weights, where the
   reference's own download puts them);
2. for weights only: every weights mirror (setting ``weights_mirror`` / ``$BRAINSCORE_WEIGHTS_MIRROR``);
3. every data mirror (setting ``data_mirror`` / ``$BRAINSCORE_DATA_MIRROR``);
4. the store of fetched files, ``$BRAINSCORE_HOME/sources``;
5. the folder of locally packaged files, ``$BRAINSCORE_HOME/packages`` (where ``package_*_locally`` write);

in each folder at ``<bucket key prefix>/<name>``, ``<bucket>/<name>`` and ``<name>``, every name in
turn. A file is used only if its sha1 is the registered one; where none is, a file declared as its
stand-in (:mod:`brainscore.data.stand_ins`, by sha256) is used instead.

**Download.** When no folder holds it, the file is downloaded from ``s3://<bucket name>/<key prefix>/<key>``
at the registered ``version_id`` into the store (``$BRAINSCORE_HOME/sources/<bucket name>/<key>``):
anonymously, or with the standard AWS credential chain when the object is not public; resumable; the
endpoint from ``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL`` / the profile (a MinIO or Ceph mirror);
kept only if its sha1 is the registered one (:class:`brainscore.data.locator.S3Remote`,
:func:`brainscore.data.remote.download_s3_object`). The ``offline`` setting forbids the download: a
missing file is then one :class:`~brainscore.errors.DataNotFoundError` line naming the file, its sha1,
the object and the mirror setting, with where to put the file.

**Unchecked files.** Without a sha1 (the reference's ``load_file``; the reference stopped checking
weights' sha1 in 2025) the first file found is used, with a warning, once per file and process,
giving its sha1.

**Provenance.** Each located file is noted to :func:`brainscore.data.locator.recording` (``brainscore
fetch`` copies it into a mirror) and the loaded ones to :func:`brainscore.data.store.recording_files`
as ``brainio/<file name>`` with their sha256.
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Callable, Sequence
from urllib.parse import urlparse

from brainscore import config
from brainscore.caching import file_hashes
from brainscore.caching.atomic import atomic_copy
from brainscore.data import locator, stand_ins, store
from brainscore.data.io import load_packaged_stimulus_set
from brainscore.data.packaging import ASSEMBLY_CLASSES, load_packaged_assembly
from brainscore.errors import DataNotFoundError, HashMismatchError

__all__ = ["brainio_file_names", "weights_file_names", "candidate_paths", "locate_by_sha1", "record_used_file",
           "locate_catalogue_file", "load_catalogue_stimulus_set", "load_catalogue_assembly", "locate_weights_file",
           "locate_bucket_file", "copy_bucket_file", "locate_s3_url", "file_sha1", "check_sha1"]


def _hashes(path: Path) -> tuple[str, str]:
    """``(sha1, sha256)`` of ``path`` from the one hash memo (:func:`brainscore.caching.file_hashes`)."""
    hashes = file_hashes(path, ("sha1", "sha256"))
    return hashes["sha1"], hashes["sha256"]


def file_sha1(path: str | Path) -> str:
    """The sha1 (hex, 40 characters) of a file's content, as the reference's plugins declare their files.

    Computed once per file state (:func:`brainscore.caching.file_hashes`).

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    """
    return _hashes(Path(path))[0]


def check_sha1(path: str | Path, sha1: str) -> None:
    """Return only if the file's sha1 is ``sha1``.

    Raises
    ------
    HashMismatchError
        Naming the file, its sha1 and the expected one.
    """
    actual = file_sha1(path)
    if actual != sha1:
        raise HashMismatchError(f"{path}: sha1 {actual}, expected {sha1}; replace it with the original file")


def brainio_file_names(prefix: str, identifier: str, suffix: str) -> list[str]:
    """The BrainIO file names of ``identifier``: as given, and (last) as the reference's S3 key, ``.`` written ``_``.

    ``brainio_file_names('assy_', 'Cowley2026.210325', '.nc')`` ->
    ``['assy_Cowley2026.210325.nc', 'assy_Cowley2026_210325.nc']`` (one name when the identifier has no ``.``).
    """
    return list(dict.fromkeys([f"{prefix}{identifier}{suffix}", f"{prefix}{identifier.replace('.', '_')}{suffix}"]))


def weights_file_names(relative_path: str, folder_name: str | None = None) -> list[str]:
    """The names a weights file is looked up by: ``<folder_name>/<relative_path>`` (its S3 key), ``relative_path``,
    its bare file name.

    ``folder_name`` None: ``$BRAINSCORE_S3_WEIGHT_FOLDER``, else ``'models'`` (as the reference); ``''``: none.
    """
    folder = folder_name if folder_name is not None else os.getenv("BRAINSCORE_S3_WEIGHT_FOLDER", "models")
    relative_path = relative_path.lstrip("/")
    first = f"{folder.strip('/')}/{relative_path}" if folder.strip("/") else relative_path
    return list(dict.fromkeys([first, relative_path, Path(relative_path).name]))


def _locator(weights: bool = False, first: Sequence[Path] = ()) -> locator.Locator:
    """The folders searched, in order (module notes), and S3."""
    return locator.brainio_locator(weights, [f for folder in first for f in locator.save_path(folder)])


def _relative_paths(names: list[str], bucket: str | None) -> list[str]:
    """Every name under the bucket's key prefix, under the whole bucket string, then bare."""
    prefixes = [""]
    if bucket:
        bucket = bucket.strip("/")
        prefixes = list(dict.fromkeys([locator.split_bucket(bucket)[1], bucket, ""]))
    return [f"{prefix}/{name}" if prefix else name for prefix in prefixes for name in names]


def candidate_paths(names: list[str], bucket: str | None = None, weights: bool = False) -> list[Path]:
    """Existing local files named one of ``names``, in search order (module notes); not verified.

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


_UNCHECKED: set[str] = set()  # files already warned about (used without a sha1), once per process


def _warn_unchecked(path: Path) -> None:
    """Warn once per process that ``path`` is used without a sha1 check, naming its sha1."""
    if str(path) not in _UNCHECKED:
        _UNCHECKED.add(str(path))
        warnings.warn(f"weights file {path} is used without a sha1 check (the plugin gave no sha1, as the "
                      f"reference's load_file never does); its sha1 is {_hashes(path)[0]}", UserWarning, stacklevel=5)


def locate_by_sha1(names: list[str], sha1: str | None, bucket: str | None = None, weights: bool = False, *,
                   key: str | None = None, version_id: str | None = None, first: Sequence[Path] = ()
                   ) -> tuple[Path, str]:
    """The first local file named one of ``names`` whose sha1 is ``sha1``, and its sha256; else fetched from S3.

    The search order, stand-ins, download and offline rules are the module notes'. The file is noted
    to :func:`brainscore.data.locator.recording` (as ``<bucket name>/<key>``, or its name without a bucket).

    Parameters
    ----------
    names : list of str
        File names to look for, e.g. ``['assy_X.nc']``.
    sha1 : str or None
        The registered sha1 (hex) of the file. None (the reference's ``load_file``): the first file
        found is used, with a warning (once per file) naming its sha1.
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
    first : sequence of Path
        Folders searched before all others.

    Returns
    -------
    (Path, str)
        The file where it lies and its sha256 (hex).

    Raises
    ------
    DataNotFoundError
        If no folder holds such a file and it cannot be downloaded (offline: one line naming the object, its
        sha1 and the mirror setting); no bucket: names the file, its sha1, the folders and the fix.
    HashMismatchError
        If files of that name exist but none has the sha1 and none can be downloaded (no bucket, offline, or
        the object already in the store), or the downloaded file's sha1 differs (both named; nothing kept).
    PermissionDeniedError, NetworkError
        From the download (:func:`brainscore.data.remote.download_s3_object`).
    ValidationError
        If the bucket and key do not make a relative key inside a bucket (``..``, a leading ``/``).
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
        for candidate, _, sha256 in seen:  # none is the registered file: a declared stand-in?
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


def record_used_file(path: Path, sha256: str) -> None:
    """Name the file in the provenance of the score being computed, as ``brainio/<file name>`` with its sha256
    (:func:`brainscore.data.store.recording_files`)."""
    store.used(store.Source(f"brainio/{Path(path).name}", sha256))


def locate_catalogue_file(identifier: str, file_type: str, bucket: str, sha1: str, version_id: str | None = None,
                          filename_prefix: str | None = None, folder_name: str | None = None) -> Path:
    """The verified local file of a packaged stimulus set (``file_type`` ``'csv'``/``'zip'``) or assembly
    (``'nc'``), located by :func:`locate_by_sha1` and recorded in the provenance.

    ``filename_prefix`` defaults to ``'stimulus_'`` (csv, zip) or ``'assy_'``; ``folder_name`` is appended
    to the bucket's key prefix. Raises as :func:`locate_by_sha1`.
    """
    prefix = filename_prefix if filename_prefix is not None else ("stimulus_" if file_type in ("csv", "zip")
                                                                  else "assy_")
    where = f"{bucket.strip('/')}/{folder_name.strip('/')}" if folder_name else bucket
    names = brainio_file_names(prefix, identifier, f".{file_type}")
    path, sha256 = locate_by_sha1(names, sha1, where, key=names[-1], version_id=version_id)
    record_used_file(path, sha256)
    return path


def load_catalogue_stimulus_set(identifier: str, csv_sha1: str, zip_sha1: str, bucket: str | None = None,
                                csv_version_id: str | None = None, zip_version_id: str | None = None,
                                filename_prefix: str = "stimulus_"):
    """The packaged stimulus set ``identifier`` of the catalogue, from its csv and zip with these sha1s.

    The files are located by :func:`locate_by_sha1` (key: the name with ``.`` written ``_``), recorded in the
    provenance, and loaded by :func:`brainscore.data.io.load_packaged_stimulus_set`.

    Parameters
    ----------
    identifier : str
    csv_sha1, zip_sha1 : str
        The files' registered sha1s (printed by ``package_stimulus_set_locally``).
    bucket : str, optional
        The reference's S3 location (``name[/key prefix]``): a sub-folder name locally, and where the files
        are downloaded from when no folder holds them.
    csv_version_id, zip_version_id : str, optional
        The S3 object versions to download.
    filename_prefix : str

    Returns
    -------
    brainscore.data.StimulusSet
        Its files extracted once under ``$BRAINSCORE_HOME/extracted/<zip sha256>/``
        (:func:`brainscore.data.store.extract_zip`).

    Raises
    ------
    ValueError
        Without both sha1s.
    DataNotFoundError, HashMismatchError
        See :func:`locate_by_sha1`.
    ValidationError
        If the csv lacks a column or names a file the zip does not hold.
    """
    if not csv_sha1 or not zip_sha1:
        raise ValueError(f"stimulus set {identifier!r}: both csv_sha1 and zip_sha1 are needed")
    csv_names = brainio_file_names(filename_prefix, identifier, ".csv")
    zip_names = brainio_file_names(filename_prefix, identifier, ".zip")
    csv_path, csv_sha256 = locate_by_sha1(csv_names, csv_sha1, bucket, key=csv_names[-1], version_id=csv_version_id)
    zip_path, zip_sha256 = locate_by_sha1(zip_names, zip_sha1, bucket, key=zip_names[-1], version_id=zip_version_id)
    record_used_file(csv_path, csv_sha256)
    record_used_file(zip_path, zip_sha256)
    return load_packaged_stimulus_set(csv_path, store.extract_zip(zip_path, zip_sha256), identifier=identifier)


def load_catalogue_assembly(identifier: str, sha1: str, bucket: str | None = None, version_id: str | None = None,
                            cls: type | str = "NeuroidAssembly",
                            stimulus_set_loader: Callable[[], object] | None = None,
                            merge_stimulus_set: bool = True, filename_prefix: str = "assy_"):
    """The packaged assembly ``identifier`` of the catalogue (``assy_<id>.nc``), from a file with this sha1.

    The file is located by :func:`locate_by_sha1` (key: the name with ``.`` written ``_``) and recorded in
    the provenance; then the stimulus set is loaded and the file read by
    :func:`brainscore.data.packaging.load_packaged_assembly`.

    Parameters
    ----------
    identifier : str
    sha1 : str
        The file's registered sha1 (printed by ``package_data_assembly_locally``).
    bucket : str, optional
        The reference's S3 location (a sub-folder name locally, and where the file is downloaded from).
    version_id : str, optional
        The S3 object version to download.
    cls : type or str
        A class of :data:`brainscore.data.packaging.ASSEMBLY_CLASSES`, or any class of the same name.
    stimulus_set_loader : callable () -> StimulusSet, optional
        Called after the file is found. Its columns are merged onto ``presentation`` by ``stimulus_id`` and
        it is kept in ``assembly.attrs['stimulus_set']``.
    merge_stimulus_set : bool
        False: keep the stimulus set in ``attrs['stimulus_set']`` (and its identifier in
        ``attrs['stimulus_set_identifier']``) without merging its columns (for assemblies without
        presentations, e.g. a ``PropertiesAssembly`` measured with those stimuli).
    filename_prefix : str

    Returns
    -------
    brainscore.data.DataAssembly
        Of brainscore's class of the same name as ``cls``.

    Raises
    ------
    ValueError
        Without ``sha1``, or for a class name not in ``ASSEMBLY_CLASSES``.
    DataNotFoundError, HashMismatchError
        See :func:`locate_by_sha1`.
    """
    if not sha1:
        raise ValueError(f"assembly {identifier!r}: its file's sha1 is needed")
    name = cls if isinstance(cls, str) else cls.__name__
    if name not in ASSEMBLY_CLASSES:
        raise ValueError(f"cls must be one of {sorted(ASSEMBLY_CLASSES)}, got {cls!r}")
    names = brainio_file_names(filename_prefix, identifier, ".nc")
    path, sha256 = locate_by_sha1(names, sha1, bucket, key=names[-1], version_id=version_id)
    record_used_file(path, sha256)
    stimulus_set = stimulus_set_loader() if stimulus_set_loader is not None else None
    merge = stimulus_set is not None and merge_stimulus_set
    assembly = load_packaged_assembly(path, stimulus_set=stimulus_set if merge else None, cls=ASSEMBLY_CLASSES[name])
    if stimulus_set is not None and not merge:  # kept, not merged (e.g. properties measured with these stimuli)
        assembly.attrs["stimulus_set"] = stimulus_set
        assembly.attrs["stimulus_set_identifier"] = getattr(stimulus_set, "identifier", None)
    return assembly


def locate_weights_file(bucket: str, relative_path: str, sha1: str | None = None, version_id: str | None = None,
                        folder_name: str | None = None, save_path: str | Path | None = None) -> Path:
    """The local weights file the reference downloads from ``s3://<bucket>/<folder_name>/<relative_path>``.

    Looked up by :func:`weights_file_names` in ``save_path`` (when given), ``$BRAINSCORE_HOME``, then the
    weights mirrors and the other folders (module notes); else downloaded into the store. The path is
    returned where it lies (the reference returns its download location).

    Parameters
    ----------
    bucket : str
        The reference's S3 bucket (``'brainscore-storage'``; also a sub-folder name locally).
    relative_path : str
        Path under ``folder_name``, e.g. ``'mymodel/weights.pth'``.
    sha1 : str, optional
        Only a file with this sha1 is used; None: the first file found, with a warning giving its sha1.
    version_id : str, optional
    folder_name : str, optional
        See :func:`weights_file_names`.
    save_path : path, optional
        A folder searched first.

    Raises
    ------
    DataNotFoundError
        If no folder holds the file and it cannot be downloaded: one line naming it, its sha1, the weights
        mirror setting and the folders.
    HashMismatchError, PermissionDeniedError, NetworkError
        See :func:`locate_by_sha1`.
    """
    first = [Path(save_path).expanduser()] if save_path is not None else []
    return locate_by_sha1(weights_file_names(relative_path, folder_name), sha1, bucket, weights=True,
                          version_id=version_id, first=first + [config.home()])[0]


def locate_bucket_file(bucket: str, path: str, sha1: str | None = None, version_id: str | None = None) -> Path:
    """The local file of the object ``<bucket>/<path>`` (``path`` the whole key), looked up as ``path`` and
    its bare name in ``$BRAINSCORE_HOME`` then as a weights file (:func:`locate_weights_file`)."""
    path = path.lstrip("/")
    names = list(dict.fromkeys([path, Path(path).name]))
    return locate_by_sha1(names, sha1, bucket, weights=True, version_id=version_id, first=[config.home()])[0]


def copy_bucket_file(bucket: str, path: str, destination: str | Path, sha1: str | None = None,
                     version_id: str | None = None) -> Path:
    """Put the file of :func:`locate_bucket_file` at ``destination`` (copied atomically, unless that already holds
    the same content or is the file itself); returns ``destination``.

    Raises
    ------
    DataNotFoundError, HashMismatchError
        As :func:`locate_weights_file`.
    OSError
        If ``destination`` cannot be written.
    """
    source, destination = locate_bucket_file(bucket, path, sha1, version_id), Path(destination)
    if destination.resolve() == source.resolve():
        return destination
    if destination.is_file() and _hashes(destination)[0] == (sha1 or _hashes(source)[0]):
        return destination
    atomic_copy(source, destination)
    return destination


def locate_s3_url(url: str, sha1: str, version_id: str | None = None) -> Path:
    """The local file of ``https://<bucket>.s3.amazonaws.com/<key>`` (a BrainIO catalogue's location), found by its
    name and ``sha1`` under the bucket and the key's folder, or downloaded (:func:`locate_by_sha1`)."""
    parsed = urlparse(url)
    bucket = (parsed.hostname or "").split(".s3")[0]
    folder, _, name = parsed.path.lstrip("/").rpartition("/")
    return locate_by_sha1([name], sha1, f"{bucket}/{folder}" if folder else bucket, key=name, version_id=version_id)[0]
