"""A file's state and its content hashes, computed once per state: the one file-state key of the package.

:func:`file_state` identifies a file's bytes without reading them: its resolved path, device,
inode, size, modification time and change time (ns). Any write to the file, even one that keeps
its size and restores its mtime with ``os.utime``, changes the ctime (which no unprivileged call
can set back), so a changed file gets a new state -- *once the clock has moved on*: the kernel
stamps files with a coarse clock (one tick, 1-10 ms on Linux; 1-2 s on FAT or HFS+), so two writes
of the same size within one tick leave the same state (git's "racy clean" problem). ``stat`` costs
microseconds; hashing the Geirhos 2019 files (1,641 files, 140 MB) costs ~0.5 s on a 2-core machine.

:func:`file_hashes` is the one hash memo: sha1 (what the reference's plugins register) and
sha256 (what ``brainscore`` records) of a file, remembered per state within the process, both
computed in one read when both are asked for. A state is remembered only when it is *settled*
(:func:`is_settled`: its mtime and ctime at least :data:`SETTLE_NS` before the read ended), so a
file rewritten in the same clock tick as it was hashed is read again, never served its old digest.
"""
from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path
from typing import Callable, Iterable, NamedTuple

__all__ = ["FileState", "file_state", "file_state_text", "file_hashes", "is_settled", "HASH_ALGORITHMS", "SETTLE_NS"]

HASH_ALGORITHMS = ("sha1", "sha256")
"""The content hashes :func:`file_hashes` knows."""

#: How long after its last write (mtime or ctime) a file's state identifies its bytes: longer than the coarsest
#: file-time granularity of common file systems (2 s on FAT), so a later write always changes the state.
SETTLE_NS = 3_000_000_000

_MEMO: dict[tuple, dict[str, str]] = {}
_lock = threading.Lock()


class FileState(NamedTuple):
    """What :func:`file_state` returns (a tuple, so usable as a dictionary key)."""

    path: str
    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int


def file_state(path: str | Path) -> FileState:
    """``(resolved path, device, inode, size, mtime_ns, ctime_ns)`` of ``path``: changes with any write to it.

    Raises
    ------
    OSError
        If the file cannot be ``stat``-ed (e.g. FileNotFoundError).
    """
    path = Path(path).expanduser()
    stat = path.stat()
    return FileState(str(path.resolve()), stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def is_settled(state: FileState, now_ns: int | None = None) -> bool:
    """Whether ``state`` (taken before a read that ended at ``now_ns``, default now) can stand for the bytes read:
    the file was last written at least :data:`SETTLE_NS` before, so any later write gets another mtime."""
    now = time.time_ns() if now_ns is None else now_ns
    return now - max(state.mtime_ns, state.ctime_ns) >= SETTLE_NS


def file_state_text(path: str | Path) -> str:
    """:func:`file_state` as one string (``path|dev|ino|size|mtime_ns|ctime_ns``), a key of JSON files on disk."""
    return "|".join(str(part) for part in file_state(path))


def file_hashes(path: str | Path, algorithms: Iterable[str] = ("sha256",), *, chunk_size: int = 1 << 20,
                progress: Callable[[int], object] | None = None, force: bool = False) -> dict[str, str]:
    """Hex digests of ``path``'s content, ``{algorithm: digest}``, remembered per :func:`file_state`.

    Parameters
    ----------
    algorithms : iterable of str
        Any of :data:`HASH_ALGORITHMS`; those not yet known for this state are computed in one read.
    progress : callable, optional
        Called with the byte count of each chunk read (e.g. a progress stage's ``update``).
    force : bool
        Read the bytes again even if the digests are remembered (``brainscore data verify``).

    Raises
    ------
    ValueError
        For an unknown algorithm.
    OSError
        If the file cannot be read.
    """
    wanted = tuple(dict.fromkeys(algorithms))
    unknown = [a for a in wanted if a not in HASH_ALGORITHMS]
    if unknown:
        raise ValueError(f"unknown hash algorithm(s) {unknown}; use {HASH_ALGORITHMS}")
    key = file_state(path)
    with _lock:
        known = {} if force else dict(_MEMO.get(key, {}))
    missing = [a for a in wanted if a not in known]
    if missing:
        digests = {a: hashlib.new(a) for a in missing}
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(chunk_size), b""):
                for digest in digests.values():
                    digest.update(chunk)
                if progress is not None:
                    progress(len(chunk))
        known.update({a: d.hexdigest() for a, d in digests.items()})
        if is_settled(key) and file_state(path) == key:  # else it may change within its state: read it again
            with _lock:
                _MEMO.setdefault(key, {}).update(known)
    return {a: known[a] for a in wanted}
