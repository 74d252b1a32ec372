"""The one locator: where a file is found, in ordered, pluggable sources, and fetched when none holds it.

Every lookup of a file in the package goes through a :class:`Locator`: a list of local
:class:`Folder` sources searched in order at the file's relative paths, and optionally a remote
source (:class:`S3Remote`) that downloads into the store when no folder holds the file. The kinds
of local source, each with the setting that configures it (named in error messages):

==================  ================================================  ===============================
kind                folder                                            setting
==================  ================================================  ===============================
``save path``       a folder the caller names (``save_path=``)        the call's argument
``home``            ``$BRAINSCORE_HOME`` (the reference's downloads)  ``home`` / ``BRAINSCORE_HOME``
``weights mirror``  each folder of :func:`brainscore.config.weights_mirrors`  ``weights_mirror``
``data mirror``     each folder of :func:`brainscore.config.data_mirrors`     ``data_mirror``
``store``           ``$BRAINSCORE_HOME/sources`` (fetched files)      ``home``
``local packages``  ``$BRAINSCORE_HOME/packages`` (``package_*_locally``)     ``home``
``hub cache``       ``torch.hub.get_dir()/checkpoints``               ``TORCH_HOME``
==================  ================================================  ===============================

Files are identified by :func:`brainscore.caching.file_state` and hashed once per state with
:func:`brainscore.caching.file_hashes` (sha1 and sha256 in one read); :meth:`Locator.by_sha1`
returns the first file whose sha1 is the registered one (the reference's files are named by their
BrainIO names and checked by sha1).

The remote source fetches ``s3://<bucket>/<key>`` (:func:`brainscore.data.remote.download_s3_object`:
anonymous, then the AWS credential chain; ``version_id``; resumable; sha1-checked before it is kept)
into the store at ``$BRAINSCORE_HOME/sources/<bucket>/<key>``, where later lookups (and other
processes, offline) find it. The ``offline`` setting forbids it: one line names the object and the
mirror setting.

Inside :func:`probing` nothing is downloaded: where a file would be fetched, :class:`FetchNeeded`
says from where and whether the object needs credentials (``brainscore list benchmarks --check``).
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from brainscore import config
from brainscore.caching import file_hashes
from brainscore.errors import DataNotFoundError

__all__ = ["Folder", "Locator", "S3Remote", "S3Object", "save_path", "home", "weights_mirrors", "data_mirrors",
           "store", "local_packages", "hub_cache", "sources_locator", "brainio_locator", "split_bucket", "recording", "note",
           "FetchNeeded", "probing", "probe_download"]

SETTINGS = {"save path": "the call's save_path", "home": "home (BRAINSCORE_HOME)",
            "weights mirror": "weights_mirror (BRAINSCORE_WEIGHTS_MIRROR)",
            "data mirror": "data_mirror (BRAINSCORE_DATA_MIRROR)", "store": "home (BRAINSCORE_HOME)",
            "local packages": "home (BRAINSCORE_HOME)", "hub cache": "TORCH_HOME"}
"""The setting that configures each kind of local source."""


@dataclass(frozen=True)
class Folder:
    """A local source: ``root``, searched at relative paths.

    Parameters
    ----------
    kind : str
        One of the kinds of :data:`SETTINGS` (named in messages).
    root : Path
    """

    kind: str
    root: Path

    def find(self, relative: str) -> Path | None:
        """``root / relative`` when that is a file (``relative`` may not leave ``root``), else None."""
        relative = str(relative).lstrip("/")
        if not relative or ".." in Path(relative).parts:
            return None
        candidate = self.root / relative
        return candidate if candidate.is_file() else None

    def find_dir(self, relative: str) -> Path | None:
        """``root / relative`` when that is a folder (``relative`` may not leave ``root``), else None: a checkout
        a mirror holds (torch hub's ``<owner>_<repo>_<ref>``)."""
        relative = str(relative).lstrip("/")
        if not relative or ".." in Path(relative).parts:
            return None
        candidate = self.root / relative
        return candidate if candidate.is_dir() else None

    def __str__(self) -> str:
        return f"{self.root} ({self.kind})"


def save_path(folder: str | Path) -> list[Folder]:
    """A folder the caller names, searched first."""
    return [Folder("save path", Path(folder).expanduser())]


def home() -> list[Folder]:
    """``$BRAINSCORE_HOME``, where the reference's own downloads put weights files."""
    return [Folder("home", config.home())]


def weights_mirrors() -> list[Folder]:
    """Each folder of the ``weights_mirror`` setting, in order."""
    return [Folder("weights mirror", m) for m in config.weights_mirrors()]


def data_mirrors() -> list[Folder]:
    """Each folder of the ``data_mirror`` setting, in order."""
    return [Folder("data mirror", m) for m in config.data_mirrors()]


def store() -> list[Folder]:
    """The store of fetched files, ``$BRAINSCORE_HOME/sources``."""
    return [Folder("store", config.home() / "sources")]


def local_packages() -> list[Folder]:
    """The folder of locally packaged files (``package_*_locally``), ``$BRAINSCORE_HOME/packages``."""
    return [Folder("local packages", config.local_packages_dir())]


def hub_cache() -> list[Folder]:
    """torch hub's checkpoint folder (``torch.hub.get_dir()/checkpoints``)."""
    import torch

    return [Folder("hub cache", Path(torch.hub.get_dir()) / "checkpoints")]


def split_bucket(bucket: str) -> tuple[str, str]:
    """The reference's ``bucket`` argument as ``(bucket name, key prefix)``.

    ``'brainscore-storage/brainio-brainscore'`` -> ``('brainscore-storage', 'brainio-brainscore')``.
    """
    name, _, prefix = bucket.strip("/").partition("/")
    return name, prefix.strip("/")


@dataclass(frozen=True)
class S3Object:
    """An object of an S3 bucket: ``s3://<bucket>/<key>`` at ``version_id`` (None: the latest)."""

    bucket: str
    key: str
    version_id: str | None = None

    def __post_init__(self):
        from brainscore.errors import ValidationError

        parts = Path(self.key).parts
        if (not self.bucket or "/" in self.bucket or self.bucket in (".", "..") or not parts
                or self.key.startswith("/") or ".." in parts or "\\" in self.key):
            raise ValidationError(f"s3://{self.bucket}/{self.key} is not a bucket name and a relative key inside it "
                                  f"(no '..', no leading '/'): the plugin's bucket, identifier or path is malformed")

    @property
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.key}"

    @property
    def store_relative(self) -> str:
        """Its path under the store: ``<bucket>/<key>``."""
        return f"{self.bucket}/{self.key}"


@dataclass(frozen=True)
class S3Remote:
    """The remote source: downloads an :class:`S3Object` into the store (see the module notes)."""

    def fetch(self, obj: S3Object, sha1: str | None, *, what: str, advice: str) -> tuple[Path, dict]:
        """Download ``obj`` into ``$BRAINSCORE_HOME/sources/<bucket>/<key>``; returns it and its hashes.

        Parameters
        ----------
        what : str
            How to name the file in messages (``'data file assy_X.nc'``).
        advice : str
            How to provide the file without S3 (a mirror and its setting), appended to messages.

        Raises
        ------
        DataNotFoundError
            When the ``offline`` setting forbids downloads (one line naming the object, its sha1 and
            ``advice``), or the object does not exist.
        PermissionDeniedError, NetworkError, HashMismatchError
            See :func:`brainscore.data.remote.download_s3_object`.
        """
        from brainscore.data import remote

        version = f" version {obj.version_id}" if obj.version_id else ""
        probe_download(f"{obj.url}{version}", what=what, s3_object=obj)  # inside probing(): says so, fetches nothing
        if config.offline():
            raise DataNotFoundError(
                f"{what}{f' (sha1 {sha1})' if sha1 else ''} is not here, and the offline setting (BRAINSCORE_OFFLINE) "
                f"forbids downloading it from {obj.url}{version}: {advice.rstrip('.')}; or run `brainscore fetch` "
                f"where you are online and copy the folder.")
        target = store()[0].root / obj.store_relative
        return remote.download_s3_object(obj.bucket, obj.key, target, version_id=obj.version_id, sha1=sha1,
                                         what=what, hint=f"To work without S3: {advice}")


@dataclass
class Locator:
    """Ordered local sources and an optional remote one (see the module notes).

    Parameters
    ----------
    folders : sequence of Folder
        Searched in order.
    remote : S3Remote, optional
        Asked for a file no folder holds.
    """

    folders: Sequence[Folder]
    remote: S3Remote | None = None

    def candidates(self, relatives: Iterable[str]) -> list[Path]:
        """Existing files at any of ``relatives``, folder by folder in order (unverified, no duplicates)."""
        relatives = list(dict.fromkeys(relatives))
        found = [path for folder in self.folders for rel in relatives if (path := folder.find(rel)) is not None]
        return list(dict.fromkeys(found))

    def first(self, relatives: Iterable[str]) -> Path | None:
        """The first existing file at any of ``relatives`` (unverified), or None."""
        relatives = list(dict.fromkeys(relatives))
        for folder in self.folders:
            for rel in relatives:
                path = folder.find(rel)
                if path is not None:
                    return path
        return None

    def first_dir(self, relatives: Iterable[str]) -> Path | None:
        """The first existing folder at any of ``relatives``, folder by folder in order, or None."""
        relatives = list(dict.fromkeys(relatives))
        return next((path for folder in self.folders for rel in relatives
                     if (path := folder.find_dir(rel)) is not None), None)

    def by_sha1(self, relatives: Iterable[str], sha1: str) -> tuple[Path | None, list[tuple[Path, str, str]]]:
        """The first file at ``relatives`` whose sha1 is ``sha1``, and every candidate as ``(path, sha1, sha256)``.

        Returns ``(None, candidates)`` when none has the sha1 (the caller decides: a stand-in, a
        mismatch error, or a fetch).
        """
        seen = []
        for path in self.candidates(relatives):
            hashes = file_hashes(path, ("sha1", "sha256"))
            seen.append((path, hashes["sha1"], hashes["sha256"]))
            if hashes["sha1"] == sha1:
                return path, seen
        return None, seen

    def describe(self) -> str:
        """The folders searched, for error messages."""
        return ", ".join(str(f) for f in self.folders) or "none"


def sources_locator() -> Locator:
    """Where a declared :class:`~brainscore.data.store.Source` is found: the data mirrors, then the store."""
    return Locator([*data_mirrors(), *store()])


def brainio_locator(weights: bool = False, first: Sequence[Folder] = (), online: bool = True) -> Locator:
    """Where the reference's S3 files are found: ``first``, (for weights: the weights mirrors,) the data mirrors,
    the store and the local packages; with ``online``, fetched from S3 when none holds them."""
    return Locator([*first, *(weights_mirrors() if weights else []), *data_mirrors(), *store(), *local_packages()],
                   S3Remote() if online else None)


_RESOLVED: contextvars.ContextVar[tuple[dict[str, Path], ...]] = contextvars.ContextVar("brainscore_located",
                                                                                       default=())


@contextlib.contextmanager
def recording() -> Iterator[dict[str, Path]]:
    """Collect ``{mirror-relative path: local file}`` of every file resolved inside the ``with`` block.

    The relative path is where a data or weights mirror holds the file (``Source.path``, or
    ``<bucket>/<key>`` of an S3 object): ``brainscore fetch`` copies each file there.
    """
    files: dict[str, Path] = {}
    token = _RESOLVED.set(_RESOLVED.get() + (files,))
    try:
        yield files
    finally:
        _RESOLVED.reset(token)


def note(relative: str, path: Path) -> Path:
    """Tell the open :func:`recording` blocks that ``relative`` resolved to ``path``; returns ``path``."""
    for files in _RESOLVED.get():
        files[relative] = Path(path)
    return Path(path)


class FetchNeeded(DataNotFoundError):
    """Raised inside :func:`probing` where a file would be downloaded; nothing was downloaded.

    Attributes
    ----------
    url : str
        Where the file would come from (``s3://bucket/key version V`` or an HTTP(S) URL).
    access : str
        ``'public'`` (an anonymous request may read it), ``'credentials'`` (only the AWS credential
        chain may; none found, or those found were refused), ``'granted'`` (the credentials found may
        read it) or ``'unchecked'`` (offline, not an S3 object, or the server did not answer).
    """

    def __init__(self, message: str, url: str, access: str):
        super().__init__(message)
        self.url, self.access = url, access


_PROBING: contextvars.ContextVar[bool] = contextvars.ContextVar("brainscore_probing", default=False)


@contextlib.contextmanager
def probing() -> Iterator[None]:
    """Inside the ``with`` block, every download raises :class:`FetchNeeded` instead of fetching.

    Files already in a mirror, the store or another local source are used as always; so a benchmark
    built inside the block either builds from local files ("runs here") or stops at its first missing
    file, which the exception names.
    """
    token = _PROBING.set(True)
    try:
        yield
    finally:
        _PROBING.reset(token)


def probe_download(url: str, *, what: str, s3_object: S3Object | None = None) -> None:
    """Inside :func:`probing`, raise :class:`FetchNeeded` for ``url``; outside, do nothing.

    For an S3 object, and where the ``offline`` setting allows requests, a HEAD request (anonymous,
    then with the AWS credential chain: :func:`brainscore.data.remote.s3_access`) tells whether it
    needs credentials; nothing is read.

    Raises
    ------
    FetchNeeded
        Always, inside :func:`probing`.
    DataNotFoundError
        If the S3 server says the object does not exist (the plugin's bucket, key or version is wrong).
    """
    if not _PROBING.get():
        return
    access = "unchecked"
    if s3_object is not None and not config.offline():
        from brainscore.data import remote

        access = remote.s3_access(s3_object.bucket, s3_object.key, s3_object.version_id, where=url)
    raise FetchNeeded(f"{what} would be fetched from {url} ({access})", url, access)
