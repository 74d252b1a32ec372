"""Atomic file writes: a temporary file in the same folder, then an atomic rename.

A reader never sees a half-written file: it sees the old file, the new one, or none. A process killed
mid-write leaves a ``.part`` file beside the target, never a truncated target.
"""
from __future__ import annotations

import glob
import os
import tempfile
from pathlib import Path


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and an atomic rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_copy(source: Path, path: Path) -> None:
    """Copy the file ``source`` to ``path`` through a temporary file and an atomic rename (a large file streamed)."""
    import shutil

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as target, open(source, "rb") as origin:
            shutil.copyfileobj(origin, target, 1 << 20)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Text version of :func:`atomic_write_bytes` (UTF-8)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_directory(folder: Path, fill, complete=None) -> Path:
    """Create ``folder`` by ``fill(tmp)`` in a temporary sibling folder, then an atomic rename; once.

    If ``folder`` is complete it is returned unchanged (``fill`` is not called). The filling holds
    an inter-process lock (``<folder>.lock``, :mod:`filelock`): a second process waits, then finds
    the first one's folder. A process killed while filling leaves only a ``.partial-<name>-*``
    sibling, never a half-filled ``folder``; the next filling removes it under the lock.

    Parameters
    ----------
    folder : Path
    fill : callable (Path) -> None
        Writes the folder's files into the given temporary folder.
    complete : callable (Path) -> bool, optional
        Whether ``folder`` is there and whole; asked before and again under the lock. One that
        finds a damaged folder deletes it and returns False. Default: ``folder`` is a directory.

    Returns
    -------
    Path
        ``folder``.
    """
    import shutil

    from brainscore.caching.cache import entry_lock

    folder = Path(folder)
    complete = complete or Path.is_dir
    if complete(folder):
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with entry_lock(folder):
        if complete(folder):  # another process filled it while this one waited
            return folder
        prefix = f".partial-{folder.name}-"
        for stale in folder.parent.glob(f"{glob.escape(prefix)}*"):  # every filler holds the lock: a dead one's
            shutil.rmtree(stale, ignore_errors=True)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=prefix))
        try:
            fill(tmp)
            try:
                os.rename(tmp, folder)
            except OSError:
                if not folder.is_dir():  # filled meanwhile by a process that does not take the lock
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return folder
