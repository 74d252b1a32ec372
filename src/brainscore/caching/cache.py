"""One cache, keyed by content.

A key is the sha256 of a canonical JSON of everything the value depends on: weights hash,
preprocessing settings, stimulus file hashes, layers, metric parameters and the code version
(:data:`CODE_VERSION`, bumped whenever cached numbers would change). Never a name alone.

Values live under ``$BRAINSCORE_HOME/cache/<namespace>/<key[:2]>/<key>.<ext>`` and are written
through a temporary file and an atomic rename, so two processes computing the same value at once
both leave a complete file, and an interrupted run leaves none. Set ``BRAINSCORE_CACHE=0`` to
disable reading and writing.
"""
from __future__ import annotations

import hashlib
import json
import os
import pickle
from pathlib import Path
from typing import Any, Callable

import numpy as np

from brainscore import config
from brainscore.caching.atomic import atomic_write_bytes

CODE_VERSION = "1"


def enabled() -> bool:
    """False when ``$BRAINSCORE_CACHE`` is ``0``/``false``/``no``."""
    return os.environ.get("BRAINSCORE_CACHE", "1").lower() not in ("0", "false", "no")


def _canonical(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    if isinstance(value, np.ndarray):
        return hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
    if isinstance(value, Path):
        return str(value)
    return value


def content_key(**parts: Any) -> str:
    """sha256 hex key of ``parts`` (JSON-serialisable values, numpy arrays hashed by bytes)."""
    payload = json.dumps({"code_version": CODE_VERSION, **_canonical(parts)}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


class Cache:
    """A namespace of the content-keyed cache (e.g. ``"activations"``, ``"ceilings"``, ``"scores"``).

    Parameters
    ----------
    namespace : str
        Sub-folder name.
    """

    def __init__(self, namespace: str):
        self.namespace = namespace

    @property
    def root(self) -> Path:
        return config.cache_dir(self.namespace)

    def path(self, key: str, ext: str) -> Path:
        """File that holds (or will hold) ``key``."""
        return self.root / key[:2] / f"{key}.{ext}"

    # --- files written and read by the caller's functions (e.g. netCDF assemblies) -------------
    def read(self, key: str, ext: str, reader: Callable[[Path], Any]) -> Any | None:
        """``reader(path)`` of the entry ``key`` with extension ``ext``, or None when absent or caching is off."""
        path = self.path(key, ext)
        if not enabled() or not path.is_file():
            return None
        return reader(path)

    def write(self, key: str, ext: str, writer: Callable[[Path], Any]) -> Path:
        """Store an entry by calling ``writer(path)``, which must write ``path`` atomically; returns the path."""
        path = self.path(key, ext)
        if enabled():
            writer(path)
        return path

    # --- arbitrary Python objects (scores with their attributes) -------------------------------
    def load(self, key: str) -> Any | None:
        """The cached object under ``key``, or None (also for an unreadable file)."""
        path = self.path(key, "pkl")
        if not enabled() or not path.is_file():
            return None
        try:
            with open(path, "rb") as f:
                return pickle.load(f)
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            return None  # stale or foreign file: recompute and overwrite

    def save(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key`` (pickle, atomic)."""
        if enabled():
            atomic_write_bytes(self.path(key, "pkl"), pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))

    def get_or_compute(self, key: str, compute: Callable[[], Any]) -> Any:
        """Cached value of ``key``; else ``compute()``, stored, and returned."""
        value = self.load(key)
        if value is None:
            value = compute()
            self.save(key, value)
        return value
