"""The local store: declared source files, found in a mirror or fetched once, verified once.

A :class:`Source` declares one raw file by its path in the public repository it comes from, its
sha256 and its public URL. :func:`fetch` returns a local path to a verified copy:

1. each mirror directory of the ``data_mirror`` setting (``$BRAINSCORE_DATA_MIRROR`` or the
   user's config file, see :mod:`brainscore.config`) is searched for ``source.path``;
2. else the store under ``$BRAINSCORE_HOME/sources`` is searched (earlier downloads);
3. else the file is downloaded from ``source.url`` (unless ``$BRAINSCORE_OFFLINE=1``): HTTP with
   :mod:`pooch`, ``s3://`` anonymously with :mod:`s3fs`, see :mod:`brainscore.data.remote`.

A file's hash is computed once and remembered (keyed by path, size and modification time) in
``$BRAINSCORE_HOME/verified.json``, so later loads do not re-read large files. A mismatch raises
:class:`~brainscore.errors.HashMismatchError` naming the file, both hashes and the fix.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path

from brainscore import config
from brainscore.caching.atomic import atomic_write_bytes, atomic_write_text  # noqa: F401 (re-exported)
from brainscore.data import remote
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
    stat = path.stat()
    return f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"


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
    actual = remote.sha256_of(path) if force else file_sha256(path)
    if actual != sha256:
        raise HashMismatchError(
            f"{what} {path} is corrupt or not the expected file: its sha256 is {actual}, expected {sha256}. "
            f"Delete it and fetch it again (`brainscore data fetch`), or replace it with the original file.")
    _remember(path, sha256)
    return path


def _remember(path: Path, sha256: str) -> None:
    """Record in ``verified.json`` that ``path`` (at its current size and mtime) has hash ``sha256``."""
    key = _stat_key(Path(path))
    with _lock:
        verified = _load_verified()
        verified[key] = sha256
        atomic_write_text(_verified_file(), json.dumps(verified, indent=0, sort_keys=True))


def store_path(source: Source) -> Path:
    """Where a download of ``source`` is kept: ``$BRAINSCORE_HOME/sources/<source.path>``."""
    return config.home() / "sources" / source.path


def locate(source: Source) -> Path | None:
    """The local copy of ``source`` that :func:`fetch` would use (first mirror, then the store), unverified.

    Returns ``None`` if there is none (it would have to be downloaded).
    """
    for mirror in config.data_mirrors():
        candidate = mirror / source.path
        if candidate.is_file():
            return candidate
    stored = store_path(source)
    return stored if stored.is_file() else None


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
    for mirror in config.data_mirrors():
        candidate = mirror / source.path
        if candidate.is_file():
            return verify(candidate, source.sha256, what=f"mirror file of {source.path}")
    stored = config.home() / "sources" / source.path
    if stored.is_file():
        return verify(stored, source.sha256, what=f"stored copy of {source.path}")
    mirrors = ", ".join(str(m) for m in config.data_mirrors()) or "none set"
    how = (f"Put the file at <mirror>/{source.path} and run `brainscore config set data_mirror <mirror>` "
           f"(or set BRAINSCORE_DATA_MIRROR=<mirror>) "
           f"(mirrors searched: {mirrors})")
    if source.url is None or config.offline():
        reason = "no URL is declared" if source.url is None else "BRAINSCORE_OFFLINE=1 forbids downloads"
        raise DataNotFoundError(f"data file {source.path} (sha256 {source.sha256}) was not found and {reason}. "
                                f"{how}.")
    return _download(source, stored, how)


def _download(source: Source, target: Path, how: str) -> Path:
    """Download ``source`` to ``target`` (see :mod:`brainscore.data.remote`) and remember it as verified."""
    import sys

    from brainscore.progress import stage

    with stage(f"downloading {source.path}"):  # pooch draws the bar in a terminal; one line otherwise
        remote.download(source.url, target, source.sha256, what=source.path, hint=f"Or, to work offline: {how}.",
                        progressbar=sys.stderr.isatty())
    _remember(target, source.sha256)
    return target


def extract_zip(archive: Path, sha256: str) -> Path:
    """Extract ``archive`` once into ``$BRAINSCORE_HOME/extracted/<sha256>/`` and return that folder.

    Extraction goes to a temporary folder that is renamed into place, so an interrupted run never
    leaves a half-extracted folder behind.
    """
    target = config.home() / "extracted" / sha256
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=".partial-"))
    try:
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(tmp)
        try:
            os.rename(tmp, target)
        except OSError:  # another process finished first
            if not target.is_dir():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target
