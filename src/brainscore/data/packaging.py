"""Packaging stimulus sets and assemblies into files, and loading those files back.

The files are the reference implementation's packaged format (BrainIO, part of brain-score/core),
so files packaged here load in the reference and the reference's files load here:

- a stimulus set becomes ``stimulus_<identifier>.csv`` (every column, plus ``filename``) and
  ``stimulus_<identifier>.zip`` (one member per stimulus, named ``<stimulus_id><extension>``);
- an assembly becomes ``assy_<identifier>.nc``: netCDF 4, one variable ``data`` compressed with zlib
  level 9, plain (non-MultiIndex) coordinates;

where ``<identifier>`` has each ``.`` replaced by ``_``. Each packaged file is described by its
sha256 (what brainscore's store checks) and its sha1 (what the reference's catalogue records).

Loading an assembly merges its stimulus set onto it as the reference's ``StimulusMergeAssemblyLoader``
does: every stimulus-set column is left-merged onto ``presentation`` by ``stimulus_id`` (the
stimulus set's column replaces a coordinate of the same name, except ``stimulus_id``), and the attrs
``stimulus_set_identifier`` and ``stimulus_set`` are set.

Typical use (a benchmark author)::

    packaged_stimuli = package_stimulus_set(stimuli, "MyLab2026", "packaged/")
    packaged_assembly = package_data_assembly(assembly, "MyLab2026.V4", "MyLab2026", "packaged/",
                                              stimulus_set=stimuli)
    # then brainscore.data.publish.publish(...) and paste the printed snippet into a data plugin
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Type, Union

import numpy as np
import pandas as pd
import xarray as xr

from brainscore.data.assemblies import DataAssembly, NeuroidAssembly
from brainscore.data.io import load_packaged_stimulus_set, read_netcdf, write_netcdf
from brainscore.data.links import check_no_links_out
from brainscore.data.stimuli import StimulusSet
from brainscore.data.store import Source, extract_zip, fetch
from brainscore.data import validation as _validation
from brainscore.errors import DataNotFoundError, ValidationError
from brainscore.progress import stage, track

ASSEMBLY_CLASSES = _validation.ASSEMBLY_CLASSES

_LOCAL_PATH_COLUMNS = ("stimulus_path", "filepath")  # absolute paths on the packager's machine: not published
_STORED_SUFFIXES = {".jpg", ".jpeg", ".png", ".gif", ".webp", ".zip", ".gz", ".npz", ".mp4"}
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed member dates: the same files give the same zip, byte for byte


# ---- file descriptions -------------------------------------------------------------------------
@dataclass(frozen=True)
class PackagedFile:
    """One packaged file.

    Attributes
    ----------
    path : Path
        Where it was written.
    sha256 : str
        Hex digest of its bytes (checked by brainscore's store).
    sha1 : str
        Hex digest of its bytes (recorded by the reference's data catalogue).
    size : int
        Size in bytes.
    """

    path: Path
    sha256: str
    sha1: str
    size: int

    @classmethod
    def of(cls, path: str | Path) -> "PackagedFile":
        """Describe the file at ``path`` (reads it once to hash it)."""
        path = Path(path)
        sha256, sha1 = hashlib.sha256(), hashlib.sha1()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                sha256.update(chunk)
                sha1.update(chunk)
        return cls(path, sha256.hexdigest(), sha1.hexdigest(), path.stat().st_size)

    @property
    def name(self) -> str:
        """The file name (the name it is published under)."""
        return self.path.name

    def to_dict(self) -> dict:
        return {"path": str(self.path), "sha256": self.sha256, "sha1": self.sha1, "size": self.size}


@dataclass(frozen=True)
class PackagedStimulusSet:
    """A stimulus set packaged as a CSV and a zip of its files.

    Attributes
    ----------
    identifier : str
        Its identifier, e.g. ``"Cowley2026.210325"``.
    csv : PackagedFile
        ``stimulus_<identifier>.csv``: every column plus ``filename``.
    zip : PackagedFile
        ``stimulus_<identifier>.zip``: the files, named ``<stimulus_id><extension>``.
    n_stimuli : int
        Number of stimuli (rows).
    """

    identifier: str
    csv: PackagedFile
    zip: PackagedFile
    n_stimuli: int

    @property
    def files(self) -> tuple[PackagedFile, PackagedFile]:
        """``(csv, zip)``."""
        return self.csv, self.zip

    def to_dict(self) -> dict:
        return {"kind": "stimulus_set", "identifier": self.identifier, "n_stimuli": self.n_stimuli,
                "csv": self.csv.to_dict(), "zip": self.zip.to_dict()}


@dataclass(frozen=True)
class PackagedAssembly:
    """An assembly packaged as a netCDF file.

    Attributes
    ----------
    identifier : str
        Its identifier, e.g. ``"Cowley2026.210325"``.
    stimulus_set_identifier : str or None
        The stimulus set merged onto it on loading.
    assembly_class : str
        Name of its class, e.g. ``"NeuroidAssembly"``.
    netcdf : PackagedFile
        ``assy_<identifier>.nc``.
    shape : dict
        Dimension name -> length.
    """

    identifier: str
    stimulus_set_identifier: str | None
    assembly_class: str
    netcdf: PackagedFile
    shape: dict

    @property
    def files(self) -> tuple[PackagedFile]:
        """``(netcdf,)``."""
        return (self.netcdf,)

    def to_dict(self) -> dict:
        return {"kind": "assembly", "identifier": self.identifier,
                "stimulus_set_identifier": self.stimulus_set_identifier, "assembly_class": self.assembly_class,
                "shape": dict(self.shape), "netcdf": self.netcdf.to_dict()}


Packaged = Union[PackagedStimulusSet, PackagedAssembly]


def file_stem(identifier: str) -> str:
    """The identifier as the reference writes it in file names: each ``.`` replaced by ``_``."""
    return identifier.replace(".", "_")


def stimulus_set_file_names(identifier: str) -> tuple[str, str]:
    """``("stimulus_<id>.csv", "stimulus_<id>.zip")`` with ``.`` in the identifier replaced by ``_``."""
    stem = f"stimulus_{file_stem(identifier)}"
    return f"{stem}.csv", f"{stem}.zip"


def assembly_file_name(identifier: str) -> str:
    """``"assy_<id>.nc"`` with ``.`` in the identifier replaced by ``_``."""
    return f"assy_{file_stem(identifier)}.nc"


# ---- packaging ---------------------------------------------------------------------------------
def package_stimulus_set(stimulus_set: StimulusSet, identifier: str | None = None, target_dir: str | Path = ".", *,
                         validate: bool = True, check_images: bool = True) -> PackagedStimulusSet:
    """Write a stimulus set as the reference packages it: a CSV with ``filename`` and a zip of its files.

    Parameters
    ----------
    stimulus_set : StimulusSet
        One row per stimulus, a unique ``stimulus_id``, and the file of each in ``stimulus_paths``.
        A ``stimulus_path_within_store`` column, if present, names the zip members (as in the
        reference); otherwise they are ``<stimulus_id><file extension>``.
    identifier : str, optional
        Default: ``stimulus_set.identifier``.
    target_dir : path
        Folder to write ``stimulus_<id>.csv`` and ``stimulus_<id>.zip`` into (created if needed).
    validate : bool
        Run :func:`brainscore.data.validation.validate_stimulus_set` first (recommended).
    check_images : bool
        During validation, open every file as an image.

    Returns
    -------
    PackagedStimulusSet
        With the paths, sha256, sha1 and sizes of both files.

    Raises
    ------
    ValidationError
        Listing every problem found, if validation fails.

    Warns
    -----
    DataWarning
        For each warning of the validation (e.g. stimuli without a file extension).

    Notes
    -----
    Local path columns (``stimulus_path``, ``filepath``) are not written: ``filename`` replaces
    them. The zip's members carry a fixed date, so packaging the same files twice gives the same
    bytes and the same hashes.
    """
    identifier = identifier or getattr(stimulus_set, "identifier", None)
    _validation.validate_identifier(identifier, "stimulus set identifier").raise_if_failed()
    if validate:
        with stage(f"checking stimulus set {identifier}" + (" (opening every image)" if check_images else "")):
            _warn(_validation.validate(stimulus_set=stimulus_set, check_images=check_images,
                                       stimulus_set_identifier=identifier))
    target_dir = Path(target_dir)
    target_dir.mkdir(parents=True, exist_ok=True)
    csv_name, zip_name = stimulus_set_file_names(identifier)
    paths = _stimulus_paths(stimulus_set)
    frame = pd.DataFrame(stimulus_set).copy()
    frame["stimulus_id"] = frame["stimulus_id"].astype(str)
    if "stimulus_path_within_store" in frame.columns:
        members = frame["stimulus_path_within_store"].astype(str).tolist()
    else:
        members = [sid + Path(paths[sid]).suffix for sid in frame["stimulus_id"]]
    check_no_links_out(paths)  # always, even without validate: never package what a link points at
    if len(set(members)) != len(members):
        raise ValidationError(f"stimulus set {identifier!r}: zip member names repeat; each stimulus needs its own "
                              f"file name")
    frame = frame.drop(columns=[c for c in _LOCAL_PATH_COLUMNS if c in frame.columns])
    frame["filename"] = members

    zip_path = target_dir / zip_name
    with _atomic_path(zip_path) as tmp:
        with zipfile.ZipFile(tmp, "w") as archive:
            for sid, member in track(list(zip(frame["stimulus_id"], members)), f"packaging {zip_name}", unit="file"):
                info = zipfile.ZipInfo(member, date_time=_ZIP_DATE)
                info.external_attr = 0o644 << 16
                info.compress_type = (zipfile.ZIP_STORED if Path(member).suffix.lower() in _STORED_SUFFIXES
                                      else zipfile.ZIP_DEFLATED)
                archive.writestr(info, _read_regular_file(paths[sid]))
    csv_path = target_dir / csv_name
    with _atomic_path(csv_path) as tmp:
        frame.to_csv(tmp, index=False, lineterminator="\n")
    return PackagedStimulusSet(identifier, PackagedFile.of(csv_path), PackagedFile.of(zip_path), len(frame))


def package_data_assembly(assembly: xr.DataArray, identifier: str, stimulus_set_identifier: str | None,
                          target_dir: str | Path = ".", *, stimulus_set: pd.DataFrame | None = None,
                          assembly_class: type | str | None = None, allow_nan: bool = False,
                          validate: bool = True) -> PackagedAssembly:
    """Write an assembly as the reference packages it: ``assy_<id>.nc``, variable ``data``, zlib level 9.

    Parameters
    ----------
    assembly : DataArray
        E.g. a :class:`NeuroidAssembly` of shape ``(presentation, neuroid[, time_bin])``. A
        MultiIndex is reset to plain coordinates; attributes netCDF cannot hold are dropped.
    identifier : str
        E.g. ``"Cowley2026.210325"``.
    stimulus_set_identifier : str or None
        The stimulus set to merge onto it when it is loaded (stored as the attribute
        ``stimulus_set_identifier``).
    target_dir : path
        Folder to write into (created if needed).
    stimulus_set : StimulusSet, optional
        If given, validation checks that every ``stimulus_id`` of the assembly is in it.
    assembly_class : type or str, optional
        Type to validate against and record (default: the assembly's type, or inferred from dims).
    allow_nan : bool
        Allow NaN values (validation rejects them by default).
    validate : bool
        Run :func:`brainscore.data.validation.validate_assembly` first (recommended).

    Returns
    -------
    PackagedAssembly
        With the path, sha256, sha1 and size of the file.

    Raises
    ------
    ValidationError
        Listing every problem found, if validation fails.

    Warns
    -----
    DataWarning
        For each warning of the validation: responses to fewer than 3 stimuli, neuroids of zero variance,
        attributes netCDF cannot store, stimuli of the stimulus set without a presentation.
    """
    _validation.validate_identifier(identifier, "assembly identifier").raise_if_failed()
    if validate:
        _warn(_validation.validate(stimulus_set=stimulus_set, assembly=assembly, check_images=False,
                                   allow_nan=allow_nan, assembly_class=assembly_class, assembly_identifier=identifier))
    cls = _validation.assembly_class_of(assembly, assembly_class)
    target_dir = Path(target_dir)
    da = xr.DataArray(assembly).copy(deep=False)
    da.attrs = {k: v for k, v in da.attrs.items() if k != "stimulus_set"}
    da.attrs["identifier"] = identifier
    if stimulus_set_identifier:
        da.attrs["stimulus_set_identifier"] = stimulus_set_identifier
    with stage(f"packaging {assembly_file_name(identifier)} (netCDF, zlib level 9)"):
        path = write_netcdf(da, target_dir / assembly_file_name(identifier))
    return PackagedAssembly(identifier, stimulus_set_identifier, cls.__name__, PackagedFile.of(path),
                            {str(d): int(n) for d, n in da.sizes.items()})


class DataWarning(UserWarning):
    """Data that can be packaged but look unintended or will change on packaging (the message says which)."""


def _warn(report) -> None:
    """Each warning of a validation ``report`` as a :class:`DataWarning` naming what was validated."""
    for message in report.warnings:
        warnings.warn(f"{report.subject}: {message}", DataWarning, stacklevel=3)


def _read_regular_file(path: Path) -> bytes:
    """The bytes of ``path``, opened without following a final symbolic link (a link swapped in after the check)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(os.path.realpath(path), flags)  # links inside the folder were checked; none swapped in since
    except OSError as error:
        raise ValidationError(f"stimulus file {path} cannot be read without following a link ({error}); copy the "
                              f"real file into the stimulus folder") from None
    with os.fdopen(fd, "rb") as f:
        return f.read()


def _stimulus_paths(stimulus_set) -> dict[str, Path]:
    paths = getattr(stimulus_set, "stimulus_paths", None) or {}
    if not paths and "stimulus_path" in stimulus_set.columns:
        paths = dict(zip(stimulus_set["stimulus_id"].astype(str), stimulus_set["stimulus_path"]))
    return {str(k): Path(v) for k, v in paths.items()}


class _atomic_path:
    """Context manager giving a temporary path next to ``path``, renamed onto it on success."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def __enter__(self) -> str:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, self.tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".part")
        os.fchmod(fd, 0o644)  # a data file, readable by all like any other (mkstemp makes 0600): sandboxed scorers read it
        os.close(fd)
        return self.tmp

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            os.replace(self.tmp, self.path)
        else:
            Path(self.tmp).unlink(missing_ok=True)


# ---- packaging into a folder, all or nothing -----------------------------------------------------
STAGING_PREFIX = ".brainscore-package-"


class staged_output:
    """A hidden staging folder inside ``out`` to package into, so that ``out`` gets every file or none.

    ``with staged_output(out) as staging:`` takes an exclusive lock on ``out`` (``flock`` of the folder itself,
    no lock file), removes the staging folders of packagings that were killed (under the lock every other one is
    dead), and yields a new staging folder; :func:`commit_packaged` then moves the packaged files into ``out`` and
    writes the manifest. Whatever happens before (a refused identifier or data, a full disk, Ctrl-C), the staging
    folder is removed on leaving and ``out`` is left as it was; a process killed outright leaves its staging
    folder, removed by the next packaging into ``out``.

    Raises
    ------
    OSError
        If ``out`` cannot be created or locked.
    """

    def __init__(self, out: str | Path):
        self.out = Path(out)

    def __enter__(self) -> Path:
        import fcntl

        self.out.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.out, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        fcntl.flock(self._fd, fcntl.LOCK_EX)  # one packaging into out at a time
        for stale in self.out.glob(f"{STAGING_PREFIX}*"):
            shutil.rmtree(stale, ignore_errors=True)
        self.staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=self.out))
        return self.staging

    def __exit__(self, *exc) -> None:
        try:
            shutil.rmtree(self.staging, ignore_errors=True)
        finally:
            os.close(self._fd)  # releases the lock


def commit_packaged(staging: Path, out: Path, items: list[Packaged], manifest: Path | None = None) -> list[Packaged]:
    """Move the files of ``items`` (packaged into ``staging``, :class:`staged_output`) into ``out`` and add them to
    ``manifest`` (default ``out/manifest.json``; its other entries are kept); returns ``items`` with their files'
    paths in ``out``.

    The manifest's new text is written to a temporary file before anything moves (a full disk fails there, with
    ``out`` unchanged); the files are then renamed into ``out`` (same file system: no space is needed) and the
    manifest last.

    Raises
    ------
    OSError
        If the manifest cannot be written; ``out`` is then unchanged.
    """
    out, manifest = Path(out), Path(manifest) if manifest else Path(out) / "manifest.json"

    def moved(file: PackagedFile) -> PackagedFile:
        return dataclasses.replace(file, path=out / file.path.name)

    final = [dataclasses.replace(item, **{key: moved(getattr(item, key)) for key in ("csv", "zip", "netcdf")
                                          if hasattr(item, key)}) for item in items]
    previous = read_manifest(manifest) if manifest.is_file() else []
    new_keys = {(type(i).__name__, i.identifier) for i in final}
    entries = [i for i in previous if (type(i).__name__, i.identifier) not in new_keys] + final
    with _atomic_path(manifest) as tmp:
        Path(tmp).write_text(manifest_text(manifest, entries))
        for item in items:
            for file in item.files:
                os.replace(file.path, out / file.path.name)
    return final


# ---- manifests ---------------------------------------------------------------------------------
def manifest_text(path: str | Path, packaged: list[Packaged]) -> str:
    """The JSON text of a manifest at ``path`` describing ``packaged`` (file paths relative to its folder when they
    lie inside it)."""
    path = Path(path)
    entries = []
    for item in packaged:
        entry = item.to_dict()
        for key in ("csv", "zip", "netcdf"):
            if key in entry:
                file_path = Path(entry[key]["path"]).resolve()
                try:
                    entry[key]["path"] = str(file_path.relative_to(path.parent.resolve()))
                except ValueError:
                    entry[key]["path"] = str(file_path)
        entries.append(entry)
    return json.dumps({"packaged": entries}, indent=2) + "\n"


def write_manifest(path: str | Path, *packaged: Packaged) -> Path:
    """Write a JSON description of packaged files (what ``brainscore data publish`` reads).

    File paths are stored relative to the manifest's folder when they lie inside it.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _atomic_path(path) as tmp:
        Path(tmp).write_text(manifest_text(path, list(packaged)))
    return path


def read_manifest(path: str | Path) -> list[Packaged]:
    """Read a manifest written by :func:`write_manifest`, checking everything in it that code is made from.

    A manifest comes from outside (a colleague, a download): its identifiers, assembly class,
    hashes and sizes are checked here, before anything uses them (:mod:`brainscore.data.publish`
    writes plugin code from them).

    Raises
    ------
    DataNotFoundError
        If the manifest does not exist or cannot be read.
    ValidationError
        If the manifest is malformed, or an identifier, class, hash or size in it is not valid.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataNotFoundError(f"manifest {path} does not exist; write one with `brainscore data package "
                                f"... --out FOLDER` (it writes FOLDER/manifest.json)") from None
    except (OSError, UnicodeDecodeError) as error:
        raise DataNotFoundError(f"manifest {path} cannot be read ({type(error).__name__}: {error}); give the "
                                f"manifest.json written by `brainscore data package`") from None
    try:
        entries = json.loads(text)["packaged"]
        if not isinstance(entries, list):
            raise TypeError(f"'packaged' is a {type(entries).__name__}, not a list")
    except (KeyError, json.JSONDecodeError, TypeError) as error:
        raise ValidationError(f"{path} is not a packaging manifest ({error}); write one with "
                              f"`brainscore data package`") from None

    def file(entry, key: str) -> PackagedFile:
        if not isinstance(entry, dict):
            raise ValidationError(f"{path}: entry {key!r} is not an object")
        file_path = Path(str(entry["path"]))
        file_path = file_path if file_path.is_absolute() else path.parent / file_path
        for name in ("sha256", "sha1"):
            digest = entry[name]
            length = 64 if name == "sha256" else 40
            if not isinstance(digest, str) or len(digest) != length or any(c not in "0123456789abcdef" for c in digest):
                raise ValidationError(f"{path}: the {name} of {file_path.name!r} is {digest!r}, not {length} lowercase "
                                      f"hex digits; package the data again")
        size = entry["size"]
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValidationError(f"{path}: the size of {file_path.name!r} is {size!r}, not a byte count")
        return PackagedFile(file_path, entry["sha256"], entry["sha1"], size)

    def identifier(value, what: str) -> str:
        _validation.validate_identifier(value, what).raise_if_failed()
        return value

    items: list[Packaged] = []
    for k, entry in enumerate(entries):
        try:
            if not isinstance(entry, dict):
                raise ValidationError(f"{path}: entry {k} is not an object")
            if entry.get("kind") == "stimulus_set":
                n_stimuli = entry.get("n_stimuli", 0)
                if isinstance(n_stimuli, bool) or not isinstance(n_stimuli, int) or n_stimuli < 0:
                    raise ValidationError(f"{path}: entry {k}: n_stimuli {n_stimuli!r} is not a count")
                items.append(PackagedStimulusSet(identifier(entry["identifier"], "stimulus set identifier"),
                                                 file(entry["csv"], "csv"), file(entry["zip"], "zip"), n_stimuli))
            elif entry.get("kind") == "assembly":
                stimulus_set_identifier = entry.get("stimulus_set_identifier")
                if stimulus_set_identifier is not None:
                    identifier(stimulus_set_identifier, "stimulus set identifier")
                assembly_class = entry.get("assembly_class", "DataAssembly")
                if not isinstance(assembly_class, str) or assembly_class not in ASSEMBLY_CLASSES:
                    raise ValidationError(f"{path}: entry {k}: assembly class {assembly_class!r} is not one of "
                                          f"{sorted(ASSEMBLY_CLASSES)}")
                shape = entry.get("shape", {})
                if not isinstance(shape, dict) or not all(
                        isinstance(d, str) and d.isidentifier() and isinstance(n, int) and not isinstance(n, bool)
                        and n >= 0 for d, n in shape.items()):
                    raise ValidationError(f"{path}: entry {k}: shape {shape!r} is not dimension name -> length")
                items.append(PackagedAssembly(identifier(entry["identifier"], "assembly identifier"),
                                              stimulus_set_identifier, assembly_class, file(entry["netcdf"], "netcdf"),
                                              dict(shape)))
            else:
                raise ValidationError(f"{path}: unknown entry kind {entry.get('kind')!r}")
        except KeyError as error:
            raise ValidationError(f"{path}: entry {k} lacks {error}; write the manifest with "
                                  f"`brainscore data package`") from None
        except ValidationError as error:
            raise ValidationError(f"{path}: {error}" if str(path) not in str(error) else str(error)) from None
    return items


# ---- loading -----------------------------------------------------------------------------------
def merge_stimulus_set(assembly: DataAssembly, stimulus_set: pd.DataFrame,
                       stimulus_set_identifier: str | None = None) -> DataAssembly:
    """Attach a stimulus set to an assembly the way the reference's loader does.

    Every stimulus-set column is left-merged onto ``presentation`` by ``stimulus_id``: each
    presentation gets the row of its stimulus (missing rows give NaN); a column named like an
    existing presentation coordinate replaces it, except ``stimulus_id``. Assemblies without a
    ``presentation`` dim are returned with only the attrs set.

    Parameters
    ----------
    assembly : DataAssembly
    stimulus_set : StimulusSet
    stimulus_set_identifier : str, optional
        Default: ``stimulus_set.identifier``.

    Returns
    -------
    DataAssembly
        Same type, with attrs ``stimulus_set_identifier`` and ``stimulus_set``.
    """
    identifier = stimulus_set_identifier or getattr(stimulus_set, "identifier", None)
    result = assembly
    if "presentation" in assembly.dims and "stimulus_id" in assembly.coords:
        frame = pd.DataFrame(stimulus_set)
        keys = frame["stimulus_id"].astype(str)
        frame = frame.assign(_key=keys).drop_duplicates("_key").set_index("_key")
        rows = frame.reindex(pd.Index(pd.Series(assembly["stimulus_id"].values).astype(str)))
        columns = [c for c in frame.columns if c != "stimulus_id"]
        multi = [n for n, index in result.indexes.items() if isinstance(index, pd.MultiIndex)]
        if multi:
            result = result.reset_index(multi)
        result = result.drop_vars([c for c in columns if c in result.coords])
        result = result.assign_coords({c: ("presentation", _coord_values(rows[c])) for c in columns})
    result.attrs["stimulus_set_identifier"] = identifier
    result.attrs["stimulus_set"] = stimulus_set
    return result


def _coord_values(column: pd.Series) -> np.ndarray:
    values = column.to_numpy()
    if values.dtype == object:  # strings, or nullable types: missing entries become NaN
        values = np.array([np.nan if v is None or v is pd.NA else v for v in values], dtype=object)
    return values


def load_packaged_assembly(path: str | Path, *, stimulus_set: pd.DataFrame | None = None,
                           cls: Type[DataAssembly] | str = NeuroidAssembly,
                           stimulus_set_identifier: str | None = None) -> DataAssembly:
    """Load an assembly packaged here or by the reference, and merge its stimulus set onto it.

    Parameters
    ----------
    path : path
        A ``.nc`` file with variable ``data`` (legacy ``image_id`` coordinates become ``stimulus_id``).
    stimulus_set : StimulusSet, optional
        Merged onto presentations as :func:`merge_stimulus_set` describes.
    cls : type or str
        Assembly class, e.g. ``NeuroidAssembly`` or ``"BehavioralAssembly"``.
    stimulus_set_identifier : str, optional
        Recorded in ``attrs`` (default: the stimulus set's identifier or the file's attribute).

    Returns
    -------
    DataAssembly
    """
    cls = ASSEMBLY_CLASSES[cls] if isinstance(cls, str) else cls
    assembly = read_netcdf(path, cls=cls)
    if stimulus_set is not None:
        assembly = merge_stimulus_set(assembly, stimulus_set,
                                      stimulus_set_identifier or getattr(stimulus_set, "identifier", None))
    return assembly


def fetch_stimulus_set(identifier: str, csv: Source, zip: Source) -> StimulusSet:
    """Fetch (mirror, store or download), verify and load a packaged stimulus set.

    Data plugins call this from their registered factory.

    Parameters
    ----------
    identifier : str
    csv, zip : Source
        The packaged CSV and zip (see :func:`package_stimulus_set`).

    Returns
    -------
    StimulusSet
        Its files extracted once under ``$BRAINSCORE_HOME/extracted/<zip sha256>/``.

    Raises
    ------
    DataNotFoundError, NetworkError, PermissionDeniedError, HashMismatchError
        From :func:`brainscore.data.store.fetch`.
    """
    with stage(f"loading stimulus set {identifier}"):
        csv_path = fetch(csv)
        folder = extract_zip(fetch(zip), zip.sha256)
        return load_packaged_stimulus_set(csv_path, folder, identifier=identifier)


def fetch_assembly(source: Source, *, cls: Type[DataAssembly] | str = NeuroidAssembly,
                   stimulus_set: pd.DataFrame | None = None) -> DataAssembly:
    """Fetch (mirror, store or download), verify and load a packaged assembly, merging its stimulus set.

    Data plugins call this from their registered factory.

    Parameters
    ----------
    source : Source
        The packaged ``.nc`` file.
    cls : type or str
        Assembly class.
    stimulus_set : StimulusSet, optional
        Merged onto presentations (see :func:`merge_stimulus_set`).

    Raises
    ------
    DataNotFoundError, NetworkError, PermissionDeniedError, HashMismatchError
        From :func:`brainscore.data.store.fetch`.
    """
    with stage(f"loading assembly {Path(source.path).name}"):
        return load_packaged_assembly(fetch(source), stimulus_set=stimulus_set, cls=cls)
