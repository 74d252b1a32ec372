"""The local store: declared source files, found in a mirror or fetched once, verified once.

A :class:`Source` declares one raw file by its path in the public repository it comes from, its
sha256 and its public URL. :func:`fetch` returns a local path to a verified copy:

1. each mirror directory of the ``data_mirror`` setting (``$BRAINSCORE_DATA_MIRROR`` or the
   user's config file, see :mod:`brainscore.config`) is searched for ``source.path``;
2. else the store under ``$BRAINSCORE_HOME/sources`` is searched (earlier downloads);
3. else the file is downloaded from ``source.url`` (unless ``$BRAINSCORE_OFFLINE=1``): HTTP with
   :mod:`pooch`, ``s3://`` anonymously with :mod:`s3fs`, see :mod:`brainscore.data.remote`.

A file's hash is computed once and remembered in ``$BRAINSCORE_HOME/verified.json``, keyed by its
path, device, inode, size, modification time and change time (ns): any write to the file, even one
that keeps its size and restores its mtime, changes the ctime, so the file is hashed again before
it is used; later loads of an unchanged file do not re-read it. A mismatch raises
:class:`~brainscore.errors.HashMismatchError` naming the file, both hashes and the fix.
"""
from __future__ import annotations

import contextlib
import contextvars
import json
import shutil
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path

from brainscore import caching, config
from brainscore.caching.atomic import atomic_write_bytes, atomic_write_text  # noqa: F401 (re-exported)
from brainscore.caching.atomic import atomic_directory
from brainscore.data import locator, remote
from brainscore.data.stimuli import file_sha256
from brainscore.errors import DataNotFoundError, HashMismatchError


@dataclass(frozen=True)
class Source:
    """A raw data file declared by a data plugin.

    Parameters
    ----------
    path : str
        Relative path, the same in every mirror and in the store (e.g.
        ``"cowley2026_v4/responses_raw/responses_210325.npy"``).
    sha256 : str
        Hex digest of the file's bytes.
    url : str, optional
        Public URL to download from when no mirror holds the file.
    """

    path: str
    sha256: str
    url: str | None = None

    @property
    def name(self) -> str:
        return Path(self.path).name


_lock = threading.Lock()
_DECLARED: dict[str, list[Source]] = {}


def declare(dataset: str, *sources: Source) -> tuple[Source, ...]:
    """Record that ``dataset`` (an identifier prefix, e.g. ``"Cowley2026"``) uses ``sources``.

    Data plugins call this at import time so that ``brainscore data list|fetch|verify`` can find
    every declared file. Returns ``sources`` unchanged.
    """
    known = _DECLARED.setdefault(dataset, [])
    known.extend(s for s in sources if s not in known)
    return sources


def declared() -> dict[str, list[Source]]:
    """Sources declared so far by imported data plugins: dataset -> sources."""
    return {k: list(v) for k, v in _DECLARED.items()}


def _verified_file() -> Path:
    return config.home() / "verified.json"


def _load_verified() -> dict[str, str]:
    try:
        return json.loads(_verified_file().read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def _stat_key(path: Path) -> str:
    """The key of ``verified.json``: :func:`brainscore.caching.file_state_text` (see there why ``stat`` suffices)."""
    return caching.file_state_text(path)


def verify(path: Path, sha256: str, *, what: str = "file", force: bool = False) -> Path:
    """Check that ``path`` has content hash ``sha256``; remembered once verified.

    Parameters
    ----------
    force : bool
        Re-read and re-hash the file even if it was verified before (``brainscore data verify``).

    Raises
    ------
    HashMismatchError
        If the hashes differ; the message names the file, both hashes and how to fix it.
    """
    path = Path(path)
    key = _stat_key(path)
    if not force:
        with _lock:
            verified = _load_verified()
            if verified.get(key) == sha256:
                return path
    from brainscore.progress import stage

    with stage(f"verifying {what}", total=path.stat().st_size, unit="B") as step:
        # force: read the bytes again
        actual = (caching.file_sha256 if force else file_sha256)(path, progress=step.update)
    if actual != sha256:
        raise HashMismatchError(
            f"{what} {path} is corrupt or not the expected file: its sha256 is {actual}, expected {sha256}. "
            f"Delete it and fetch it again (`brainscore data fetch`), or replace it with the original file.")
    _remember(path, sha256)
    return path


def _remember(path: Path, sha256: str) -> None:
    """Record in ``verified.json`` that ``path`` (at its current size and mtime) has hash ``sha256``.

    The read-modify-write holds the file's inter-process lock (``verified.json.lock``), so two
    processes verifying at once both keep their entries; under it, the ``.part`` file of a process
    killed mid-write is removed.
    """
    key = _stat_key(Path(path))
    target = _verified_file()
    with _lock, caching.entry_lock(target):
        caching.remove_stale_parts(target.parent, target, held=True)  # every writer holds this lock
        verified = _load_verified()
        verified[key] = sha256
        atomic_write_text(target, json.dumps(verified, indent=0, sort_keys=True))


def store_path(source: Source) -> Path:
    """Where a download of ``source`` is kept: ``$BRAINSCORE_HOME/sources/<source.path>``."""
    return config.home() / "sources" / source.path


def locate(source: Source) -> Path | None:
    """The local copy of ``source`` that :func:`fetch` would use (first mirror, then the store), unverified.

    Returns ``None`` if there is none (it would have to be downloaded).
    """
    return locator.sources_locator().first([source.path])


_RECORDERS: contextvars.ContextVar[tuple[dict[str, str], ...]] = contextvars.ContextVar("brainscore_resolved_files",
                                                                                         default=())


@contextlib.contextmanager
def recording_files():
    """Collect ``{source.path: sha256}`` of every file :func:`fetch` resolves inside the ``with`` block.

    The hashes are the declared ones :func:`fetch` verifies the files against (nothing is re-hashed).
    Provenance uses this to name the data a score was computed from. Nested blocks each see the
    files resolved inside them.

    Examples
    --------
    >>> with recording_files() as files:   # doctest: +SKIP
    ...     brainscore.load_dataset("Cowley2026.210325")
    >>> sorted(files)                       # doctest: +SKIP
    ['cowley2026_v4/images/images_210325.zip', 'cowley2026_v4/responses_raw/responses_210325.npy']
    """
    files: dict[str, str] = {}
    token = _RECORDERS.set(_RECORDERS.get() + (files,))
    try:
        yield files
    finally:
        _RECORDERS.reset(token)


def used(*sources: Source) -> None:
    """Note that the current computation depends on ``sources`` without fetching them.

    For data loaded from a cache keyed by the sources' hashes (packaged assemblies): the provenance
    (:func:`recording_files`) must name the files whether or not they were read this time.
    """
    for files in _RECORDERS.get():
        for source in sources:
            files[source.path] = source.sha256


def fetch(source: Source) -> Path:
    """Local, verified path of ``source``: from a mirror, the store, or a download.

    Raises
    ------
    DataNotFoundError
        If no mirror holds the file and it cannot be downloaded (offline, or no URL).
    HashMismatchError
        If the file found has another content hash.
    NetworkError, PermissionDeniedError
        If the download fails for that reason.
    """
    used(source)  # provenance: the data a computation used (see recording_files)
    found = locate(source)
    if found is not None:
        kind = "stored copy" if found == store_path(source) else "mirror file"
        return locator.note(source.path, verify(found, source.sha256, what=f"{kind} of {source.path}"))
    stored = store_path(source)
    mirrors = ", ".join(str(m) for m in config.data_mirrors()) or "none set"
    how = (f"Put the file at <mirror>/{source.path} and run `brainscore config set data_mirror <mirror>` "
           f"(or set BRAINSCORE_DATA_MIRROR=<mirror>) "
           f"(mirrors searched: {mirrors}; settings read from the environment and {config.config_file()})")
    if source.url is not None:
        locator.probe_download(source.url, what=f"data file {source.path}")
    if source.url is None or config.offline():
        reason = "no URL is declared" if source.url is None else "BRAINSCORE_OFFLINE=1 forbids downloads"
        raise DataNotFoundError(f"data file {source.path} (sha256 {source.sha256}) was not found and {reason}. "
                                f"{how}.")
    return locator.note(source.path, _download(source, stored, how))


def _download(source: Source, target: Path, how: str) -> Path:
    """Download ``source`` to ``target`` (see :mod:`brainscore.data.remote`) and remember it as verified."""
    import sys

    from brainscore.progress import stage

    with stage(f"downloading {source.path}"):  # pooch draws the bar in a terminal; one line otherwise
        remote.download(source.url, target, source.sha256, what=source.path, hint=f"Or, to work offline: {how}.",
                        progressbar=sys.stderr.isatty())
    _remember(target, source.sha256)
    return target


#: Limits of :func:`safe_extract` (a zip bomb expands a few MB into GB): total uncompressed bytes,
#: entries, and the compression ratio of any entry larger than :data:`ZIP_RATIO_MIN_BYTES`.
ZIP_MAX_TOTAL_BYTES = 4 << 30
ZIP_MAX_ENTRIES = 100_000
ZIP_MAX_RATIO = 100
ZIP_RATIO_MIN_BYTES = 1 << 20


def safe_extract(archive: Path, target: Path, max_total_bytes: int = ZIP_MAX_TOTAL_BYTES,
                 max_entries: int = ZIP_MAX_ENTRIES, max_ratio: float = ZIP_MAX_RATIO) -> list[Path]:
    """Extract a zip archive into ``target``, refusing zip bombs and unsafe names.

    The declared sizes are checked first and the bytes actually written are counted while
    extracting (declared sizes can lie), so nothing larger than the limits is ever written.

    Parameters
    ----------
    archive : Path
    target : Path
        Folder to extract into (created).
    max_total_bytes : int
        Total uncompressed size allowed (default 4 GiB).
    max_entries : int
        Number of entries allowed (default 100,000).
    max_ratio : float
        Largest compression ratio (uncompressed / compressed) of an entry over 1 MiB (default 100;
        images compress far less).

    Returns
    -------
    list of Path
        The extracted files.

    Raises
    ------
    ValidationError
        For a file that is not a zip archive, too many entries, too large a total, too high a
        ratio, an absolute or ``..`` member name, or a symbolic link; the message names the limit
        and the member.
    """
    from brainscore.errors import ValidationError

    archive, target = Path(archive), Path(target)
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as error:
        raise ValidationError(f"{archive} is not a readable zip archive ({error})") from error
    with zf:
        members = zf.infolist()
        if len(members) > max_entries:
            raise ValidationError(f"{archive} has {len(members)} entries, more than the {max_entries} allowed "
                                  f"(a zip bomb?); split it, or raise the limit if it is genuine")
        declared = sum(m.file_size for m in members)
        if declared > max_total_bytes:
            raise ValidationError(f"{archive} would expand to {declared / 2**30:.2f} GiB, more than the "
                                  f"{max_total_bytes / 2**30:.2f} GiB allowed (a zip bomb?)")
        for member in members:
            name = member.filename
            parts = Path(name).parts
            if name.startswith(("/", "\\")) or ".." in parts or (parts and ":" in parts[0]):
                raise ValidationError(f"{archive} member {name!r} would be written outside the target folder")
            if (member.external_attr >> 16) & 0o170000 == 0o120000:
                raise ValidationError(f"{archive} member {name!r} is a symbolic link; archives of stimuli must "
                                      f"hold plain files")
            if member.file_size > ZIP_RATIO_MIN_BYTES and member.file_size > max_ratio * max(member.compress_size, 1):
                raise ValidationError(f"{archive} member {name!r} expands {member.file_size / max(member.compress_size, 1):.0f}"
                                      f"-fold ({member.compress_size} -> {member.file_size} bytes), more than the "
                                      f"{max_ratio:g}-fold allowed (a zip bomb?)")
        written, files = 0, []
        target.mkdir(parents=True, exist_ok=True)
        for member in members:
            destination = target / member.filename
            if member.is_dir():
                destination.mkdir(parents=True, exist_ok=True)
                continue
            destination.parent.mkdir(parents=True, exist_ok=True)
            size = 0
            with zf.open(member) as source, open(destination, "wb") as out:
                for chunk in iter(lambda: source.read(1 << 20), b""):
                    size += len(chunk)
                    written += len(chunk)
                    if size > member.file_size or written > max_total_bytes:
                        raise ValidationError(f"{archive} member {member.filename!r} expands beyond its declared "
                                              f"size or the {max_total_bytes / 2**30:.2f} GiB total allowed "
                                              f"(a zip bomb?)")
                    out.write(chunk)
            files.append(destination)
    return files


def extract_zip(archive: Path, sha256: str) -> Path:
    """Extract ``archive`` once into ``$BRAINSCORE_HOME/extracted/<sha256>/`` and return that folder.

    Extraction (:func:`safe_extract`, with zip-bomb limits) goes to a temporary folder that gets a
    checksum manifest and is renamed into place, under an inter-process lock. Every call verifies
    the files against the manifest (once per file state per process); a damaged folder is reported,
    deleted and extracted again.
    """
    import warnings

    from brainscore.caching import CacheWarning, verify_manifest, write_manifest
    from brainscore.progress import stage

    target = config.home() / "extracted" / sha256

    def complete(target: Path) -> bool:
        if not target.is_dir():
            return False
        with stage(f"verifying the files extracted from {archive.name}"):
            reason = verify_manifest(target)
        if reason is None:
            return True
        warnings.warn(f"extracted archive {target} failed verification: {reason}; it is extracted again",
                      CacheWarning, stacklevel=3)
        shutil.rmtree(target, ignore_errors=True)
        return False

    def fill(tmp: Path) -> None:
        with stage(f"extracting {archive.name}"):
            safe_extract(archive, tmp)
            write_manifest(tmp)

    return atomic_directory(target, fill, complete=complete)
