"""One cache, keyed by content and code, verified on every read, locked between processes.

Keys
    A key is the sha256 of a canonical JSON of everything the value depends on (weights hash,
    architecture fingerprint, preprocessing, stimulus file hashes, layers, metric parameters, ...;
    array parts by dtype, shape and bytes), the cache *namespace*, and the *code* that computes the
    value: :func:`brainscore.caching.code.code_hash` of the module that opened the namespace (and
    any further roots it names, e.g. a plugin's ceiling function), i.e. the source of every module
    in its import closure, plus the package's and numeric libraries' versions. Nothing is bumped
    by hand; an edited kernel changes the key. Never a name alone.

Entries
    Values live under ``$BRAINSCORE_HOME/cache/<namespace>/<key[:2]>/<key>.<ext>``. Each is written
    to a temporary ``.part`` file, its sha256 and size are written beside it
    (``<key>.<ext>.sha256``), then it is renamed into place. A reader checks the entry against that
    checksum (once per process per file state: inode, size, mtime and ctime); an entry that fails
    (zeroed, truncated, edited, or without a checksum) is reported with a warning that names the
    file, deleted and computed again.

Locks
    An entry is computed under an inter-process lock (:mod:`filelock`, ``<key>.<ext>.lock``); a
    second process asking for it waits and then reads the first one's result. Every write of an
    entry holds that lock too, so a ``.part`` file whose entry lock is free was left by a killed
    process; such files are removed when their entry is next locked, and once per process and
    namespace when the cache is opened.

Set ``BRAINSCORE_CACHE=0`` to disable reading and writing.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from brainscore import config
from brainscore.caching.code import code_hash
from brainscore.caching.files import file_state

#: Seconds a process waits for another one computing the same entry before giving up with an error.
LOCK_TIMEOUT_S = 6 * 3600
CHECKSUM_SUFFIX = ".sha256"
LOCK_SUFFIX = ".lock"

_VERIFIED: dict[tuple, str] = {}  # file (and checksum file) state -> verified sha256
_SWEPT: set[str] = set()
_HOLDING = threading.local()  # .paths: the entries whose inter-process lock this thread holds


def _held() -> set[str]:
    """The entries (as str paths) whose lock the calling thread holds through :func:`locked_entry`."""
    paths = getattr(_HOLDING, "paths", None)
    if paths is None:
        paths = _HOLDING.paths = set()
    return paths


class CacheWarning(UserWarning):
    """A cache entry failed verification and is recomputed."""


def enabled() -> bool:
    """False when ``$BRAINSCORE_CACHE`` is ``0``/``false``/``no``."""
    return os.environ.get("BRAINSCORE_CACHE", "1").lower() not in ("0", "false", "no")


def _canonical(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return {"numpy": value.dtype.str, "value": value.item()}
    if isinstance(value, np.ndarray):
        array = np.ascontiguousarray(value)
        body = array.tobytes() if array.dtype != object else repr(array.tolist()).encode()
        return {"array": array.dtype.str, "shape": list(array.shape), "sha256": hashlib.sha256(body).hexdigest()}
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, float) and not np.isfinite(value):
        return {"float": repr(value)}
    return value


def jsonable(value: Any) -> Any:
    """``value`` as JSON-serialisable plain data (numpy scalars -> Python, tuples -> lists, NaN -> None, else ``str``).

    What a score's provenance, layers and a submission's metadata become before they are stored.
    """
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return number if number == number else None  # NaN -> null


def content_key(**parts: Any) -> str:
    """sha256 hex key of ``parts``: JSON-serialisable values; numpy arrays by dtype, shape and bytes.

    This is the content half of a key; :class:`Cache` adds its namespace and the code hash.
    """
    payload = json.dumps(_canonical(parts), sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


def file_sha256(path: str | os.PathLike, chunk_size: int = 1 << 20,
                progress: Callable[[int], Any] | None = None) -> str:
    """sha256 hex digest of a file's bytes, read afresh in ``chunk_size`` chunks.

    The one file hash of the package: cache entries, downloads, the data store and published files
    use it (:func:`brainscore.data.file_sha256` memoises it per file state). ``progress``, when
    given, is called with the byte count of each chunk read (e.g. a progress stage's ``update``).

    Raises
    ------
    OSError
        If the file cannot be read (e.g. FileNotFoundError).
    """
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            digest.update(chunk)
            if progress is not None:
                progress(len(chunk))
    return digest.hexdigest()


def checksum_path(path: Path) -> Path:
    """The file holding ``path``'s sha256 and size."""
    return path.with_name(path.name + CHECKSUM_SUFFIX)


def write_checksum(path: Path, sha256: str, size: int) -> None:
    """Write the checksum file of ``path`` (atomically)."""
    target = checksum_path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump({"sha256": sha256, "size": int(size)}, f)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def commit_file(tmp: Path, path: Path, sha256: str | None = None) -> Path:
    """Move a completely written temporary file into place as a verified entry.

    The checksum (``sha256`` if the writer computed it while writing, else read from ``tmp``) is
    written first, then ``tmp`` is renamed to ``path``: a reader never sees an entry without its
    checksum, and a process killed between the two leaves only a checksum without an entry.
    """
    tmp, path = Path(tmp), Path(path)
    digest = sha256 or file_sha256(tmp)
    write_checksum(path, digest, tmp.stat().st_size)
    os.replace(tmp, path)
    with contextlib.suppress(OSError):
        sidecar = checksum_path(path).stat()
        _VERIFIED[(*file_state(path), sidecar.st_ino, sidecar.st_mtime_ns, sidecar.st_ctime_ns)] = digest
    return path


def verify_file(path: Path) -> str | None:
    """Why ``path`` does not match its checksum file (a sentence), or None when it does.

    Memoised within the process by (path, inode, size, mtime_ns, ctime_ns): any write to the file,
    even one that restores its size and modification time, changes its ctime.
    """
    path = Path(path)
    try:
        key = file_state(path)
    except OSError as error:
        return f"it cannot be read ({error})"
    try:
        sidecar = checksum_path(path).stat()
        memo = (*key, sidecar.st_ino, sidecar.st_mtime_ns, sidecar.st_ctime_ns)
    except OSError:
        memo = None
    if memo is not None and memo in _VERIFIED:
        return None
    try:
        recorded = json.loads(checksum_path(path).read_text())
        expected, size = str(recorded["sha256"]), int(recorded["size"])
    except FileNotFoundError:
        return "it has no checksum file (written by an older version or by a process that was killed)"
    except (OSError, ValueError, KeyError, TypeError) as error:
        return f"its checksum file is unreadable ({error})"
    if key.size != size:
        return f"it has {key.size} bytes, its checksum file says {size} (truncated or overwritten)"
    actual = file_sha256(path)
    if actual != expected:
        return f"its sha256 is {actual}, its checksum file says {expected} (the bytes were changed)"
    if memo is not None:
        _VERIFIED[memo] = actual
    return None


MANIFEST_NAME = ".checksums.json"


def write_manifest(folder: Path) -> None:
    """Write ``folder/.checksums.json``: sha256 and size of every file under ``folder`` (relative paths)."""
    folder = Path(folder)
    entries = {p.relative_to(folder).as_posix(): {"sha256": file_sha256(p), "size": p.stat().st_size}
               for p in sorted(folder.rglob("*")) if p.is_file() and p.name != MANIFEST_NAME}
    (folder / MANIFEST_NAME).write_text(json.dumps(entries, sort_keys=True))


def verify_manifest(folder: Path, names: Sequence[str] | None = None) -> str | None:
    """Why the files of ``folder`` do not match its manifest (naming the file), or None when they do.

    ``names``: the files that must be present (default: those in the manifest). Memoised per file
    state within the process, as :func:`verify_file`.
    """
    folder = Path(folder)
    try:
        manifest = json.loads((folder / MANIFEST_NAME).read_text())
    except FileNotFoundError:
        return f"{folder} has no checksum manifest ({MANIFEST_NAME})"
    except (OSError, ValueError) as error:
        return f"its manifest {folder / MANIFEST_NAME} is unreadable ({error})"
    for name in (names if names is not None else manifest):
        path = folder / name
        if name not in manifest:
            return f"{path} is not in the manifest"
        try:
            key = file_state(path)
        except OSError:
            return f"{path} is missing"
        if key in _VERIFIED:
            continue
        if key.size != manifest[name]["size"]:
            return f"{path} has {key.size} bytes, the manifest says {manifest[name]['size']} (truncated or overwritten)"
        if file_sha256(path) != manifest[name]["sha256"]:
            return f"{path} does not match its sha256 in the manifest (the bytes were changed)"
        _VERIFIED[key] = manifest[name]["sha256"]
    return None


def discard(path: Path, reason: str) -> None:
    """Warn that cache entry ``path`` is bad (``reason``) and delete it with its checksum file."""
    warnings.warn(f"cache entry {path} failed verification: {reason}; it is deleted and computed again",
                  CacheWarning, stacklevel=3)
    Path(path).unlink(missing_ok=True)
    checksum_path(Path(path)).unlink(missing_ok=True)


def verified(path: Path) -> bool:
    """True when the entry ``path`` exists and matches its checksum; a bad entry is discarded (warned)."""
    path = Path(path)
    if not path.is_file():
        return False
    reason = verify_file(path)
    if reason is None:
        return True
    discard(path, reason)
    return False


def entry_lock(path: Path, timeout: float = LOCK_TIMEOUT_S):
    """An inter-process lock (:class:`filelock.FileLock`) for the cache entry ``path``."""
    from filelock import FileLock

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path.with_name(path.name + LOCK_SUFFIX)), timeout=timeout)


def _entry_of_part(part: Path) -> Path | None:
    """The entry a ``.<entry>.<random>.part`` file was being written for.

    A writer that itself writes through a temporary file (``write_netcdf`` into the ``.part`` file
    of :meth:`Cache.write`) leaves ``..<entry>.<random>.part.<random>.part``: the entry is that of
    the outer ``.part`` file, whose lock the writer holds.
    """
    name = part.name
    if not (name.startswith(".") and name.endswith(".part")):
        return None
    stem = name[1:-len(".part")]
    entry = stem.rsplit(".", 1)[0] if "." in stem else stem
    if entry.startswith(".") and entry.endswith(".part"):  # the temporary file of a temporary file
        return _entry_of_part(part.with_name(entry))
    if entry.endswith(CHECKSUM_SUFFIX):
        entry = entry[:-len(CHECKSUM_SUFFIX)]
    for suffix in (".unique.npy",):  # the extractor's intermediate file of unique images
        if entry.endswith(suffix):
            entry = entry[:-len(suffix)] + ".npy"
    return part.with_name(entry)


def remove_stale_parts(folder: Path, entry: Path | None = None, *, held: bool = False) -> int:
    """Delete ``.part`` files in ``folder`` (only ``entry``'s, if given) whose entry lock is free.

    A process writing an entry holds its lock, so a ``.part`` file whose entry lock can be taken at
    once was left by a process that was killed. ``held=True`` (with ``entry``): the caller has just
    taken ``entry``'s lock and written nothing yet, so every ``.part`` file of ``entry`` is stale.
    Entries whose lock the calling thread holds are otherwise left alone (their ``.part`` file may
    be its own, being written). Returns the number of files removed.
    """
    from filelock import Timeout

    removed = 0
    mine = _held()
    parts = (folder.glob(f".{entry.name.split('.')[0]}*.part") if entry is not None else folder.rglob(".*.part"))
    for part in list(parts):
        if not part.name.endswith(".part"):
            continue
        if entry is not None and _entry_of_part(part) != entry:
            continue
        target = _entry_of_part(part)
        if target is None:
            continue
        if held and entry is not None:
            part.unlink(missing_ok=True)
            removed += 1
            continue
        if str(target) in mine:
            continue  # this thread holds the lock: maybe its own write in progress
        lock = entry_lock(target, timeout=0)
        try:
            with lock:
                part.unlink(missing_ok=True)
                removed += 1
        except Timeout:
            continue  # being written right now
    return removed


@contextlib.contextmanager
def locked_entry(path: Path) -> Iterator[Path]:
    """Hold the inter-process lock of the entry ``path`` and remove its stale ``.part`` files; yields ``path``.

    Re-entrant within a thread: a thread that holds the lock already just yields. A no-op when
    caching is disabled.
    """
    path = Path(path)
    held = _held()
    if not enabled() or str(path) in held:
        yield path
        return
    with entry_lock(path):
        held.add(str(path))
        try:
            remove_stale_parts(path.parent, path, held=True)
            yield path
        finally:
            held.discard(str(path))


@contextlib.contextmanager
def _kept_on_full_disk(path: Path) -> Iterator[None]:
    """Turn a full disk while writing the cache entry ``path`` into a :class:`CacheWarning` (the caller keeps the
    value it computed; the entry's temporary file is already removed); any other error passes."""
    import errno

    try:
        yield
    except OSError as error:
        if error.errno not in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
            raise
        warnings.warn(f"the cache entry {path.name} was not stored: the disk holding {path.parent} is full "
                      f"({error.strerror or error}); the value computed is used all the same. Free space there "
                      f"(the caches under {path.parent.parent} may be deleted) to cache it", CacheWarning, stacklevel=4)


def check_home() -> Path:
    """``$BRAINSCORE_HOME`` as a writable directory (created if missing), checked before any work.

    Raises
    ------
    HomeUnusableError
        If it is a file, or cannot be created or written to; the message names it and the fix.
    """
    from brainscore.errors import HomeUnusableError

    home = config.home()
    fix = "set BRAINSCORE_HOME to a writable folder (e.g. export BRAINSCORE_HOME=$HOME/.brainscore)"
    if home.exists() and not home.is_dir():
        raise HomeUnusableError(f"BRAINSCORE_HOME={home} is a file, not a directory; {fix}")
    try:
        home.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=home):
            pass
    except OSError as error:
        raise HomeUnusableError(f"BRAINSCORE_HOME={home} is not a writable directory ({error.strerror or error}); "
                              f"{fix}") from error
    return home


def _caller_module(depth: int = 2) -> str:
    frame = sys._getframe(depth)
    return str(frame.f_globals.get("__name__", "__main__"))


class _HashingWriter:
    """A binary file's ``write`` that also feeds what is written to a sha256 (``digest``)."""

    def __init__(self, file: Any):
        self.file, self.digest = file, hashlib.sha256()

    def write(self, data: Any) -> int:
        self.digest.update(data)
        return self.file.write(data)


class Cache:
    """A namespace of the content-keyed cache (e.g. ``"activations"``, ``"ceilings"``, ``"packaged"``).

    Parameters
    ----------
    namespace : str
        Sub-folder name.
    code : sequence of str, module or callable, optional
        Further code that computes the values, besides the module that creates the cache (which is
        always included): e.g. a plugin's ceiling function. Its import closure is hashed into every
        key (see :func:`brainscore.caching.code.code_hash`).

    Examples
    --------
    >>> cache = Cache("ceilings", code=[my_ceiling])               # doctest: +SKIP
    >>> cache.get_or_compute(content_key(data=sha), my_ceiling)   # doctest: +SKIP
    """

    def __init__(self, namespace: str, code: Sequence[Any] = ()):
        self.namespace = namespace
        self.code_roots = (_caller_module(), *code)
        self._code_hash: str | None = None

    @property
    def code_hash(self) -> str:
        """Hash of the code that computes this namespace's values (see :func:`code_hash`)."""
        if self._code_hash is None:
            self._code_hash = code_hash(*self.code_roots)
        return self._code_hash

    @property
    def root(self) -> Path:
        root = config.cache_dir(self.namespace)
        if str(root) not in _SWEPT:
            _SWEPT.add(str(root))
            remove_stale_parts(root)
        return root

    def path(self, key: str, ext: str) -> Path:
        """File that holds (or will hold) the entry of content key ``key``."""
        full = hashlib.sha256(f"{self.namespace}\0{key}\0{self.code_hash}".encode()).hexdigest()
        return self.root / full[:2] / f"{full}.{ext}"

    @contextlib.contextmanager
    def locked(self, key: str, ext: str) -> Iterator[Path]:
        """Hold the entry's inter-process lock (removing its stale ``.part`` files); yields its path."""
        with locked_entry(self.path(key, ext)) as path:
            yield path

    # --- files written and read by the caller's functions (e.g. netCDF assemblies) -------------
    def read(self, key: str, ext: str, reader: Callable[[Path], Any]) -> Any | None:
        """``reader(path)`` of the verified entry ``key``, or None when absent, bad (warned) or caching is off."""
        path = self.path(key, ext)
        if not enabled() or not verified(path):
            return None
        return reader(path)

    def write(self, key: str, ext: str, writer: Callable[[Path], Any]) -> Path:
        """Store an entry: ``writer(tmp)`` writes a temporary file, which is checksummed and renamed into place."""
        path = self.path(key, ext)
        if enabled():
            path.parent.mkdir(parents=True, exist_ok=True)
            with locked_entry(path):  # a writer holds the entry's lock: its .part file is never swept
                fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
                os.close(fd)
                try:
                    writer(Path(tmp))
                    commit_file(Path(tmp), path)
                except BaseException:
                    Path(tmp).unlink(missing_ok=True)
                    raise
        return path

    def read_or_write(self, key: str, ext: str, reader: Callable[[Path], Any], compute: Callable[[], Any],
                      writer: Callable[[Any, Path], Any]) -> Any:
        """The entry read with ``reader``; else, under the entry's lock, ``compute()`` written by ``writer(value, tmp)``
        (on a full disk the value is returned uncached, with a :class:`CacheWarning`)."""
        value = self.read(key, ext, reader)
        if value is not None:
            return value
        with self.locked(key, ext):
            value = self.read(key, ext, reader)  # another process may have written it meanwhile
            if value is None:
                value = compute()
                with _kept_on_full_disk(self.path(key, ext)):
                    self.write(key, ext, lambda tmp: writer(value, tmp))
        return value

    # --- arbitrary Python objects (scores with their attributes) -------------------------------
    def load(self, key: str) -> Any | None:
        """The cached object under ``key``, or None (absent, or failed verification: warned and deleted)."""
        path = self.path(key, "pkl")
        if not enabled() or not verified(path):
            return None
        try:
            with open(path, "rb") as f:
                return pickle.load(f)
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, ModuleNotFoundError) as error:
            discard(path, f"it cannot be unpickled ({type(error).__name__}: {error})")
            return None

    def save(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key`` (pickle, checksummed, atomic).

        The pickle is streamed into the entry's temporary file and hashed as it is written, so storing a large
        array (a video model's layer) holds no second copy of it in memory.
        """
        if not enabled():
            return
        path = self.path(key, "pkl")
        path.parent.mkdir(parents=True, exist_ok=True)
        with locked_entry(path):  # a writer holds the entry's lock: its .part file is never swept
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
            try:
                with os.fdopen(fd, "wb") as f:
                    written = _HashingWriter(f)
                    pickle.dump(value, written, protocol=pickle.HIGHEST_PROTOCOL)
                commit_file(Path(tmp), path, written.digest.hexdigest())
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise

    def get_or_compute(self, key: str, compute: Callable[[], Any]) -> Any:
        """Cached value of ``key``; else, under the entry's lock, ``compute()``, stored, and returned (on a full
        disk returned without being stored, with a :class:`CacheWarning`: a computed value is never lost).

        A second process asking for the same key while the first computes it waits for the lock and
        then reads the first one's result.
        """
        value = self.load(key)
        if value is not None:
            return value
        with self.locked(key, "pkl"):
            value = self.load(key)
            if value is None:
                value = compute()
                with _kept_on_full_disk(self.path(key, "pkl")):
                    self.save(key, value)
        return value
