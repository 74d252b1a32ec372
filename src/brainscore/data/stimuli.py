"""Stimulus sets: a table of stimuli with their files.

A :class:`StimulusSet` is a :class:`pandas.DataFrame` with one row per stimulus, a unique
``stimulus_id`` column, any number of metadata columns (``object_name``, ``image_label``, ...), an
``identifier`` and a mapping ``stimulus_paths`` from stimulus id to the image file on disk.
This is the data standard of Brain-Score (Schrimpf et al. 2018, 2020).
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterable, Mapping

import pandas as pd

from brainscore import caching
from brainscore.errors import ValidationError


class StimulusSet(pd.DataFrame):
    """A table of stimuli, one row per stimulus, with the file of each.

    Parameters
    ----------
    data
        Anything :class:`pandas.DataFrame` accepts; must contain a ``stimulus_id`` column.
    identifier : str, optional
        Name of the stimulus set, e.g. ``"Cowley2026.210325"``.
    stimulus_paths : mapping of str to path, optional
        ``stimulus_id -> image file``. If omitted and the table has a ``stimulus_path`` (or
        ``filepath``) column, that column is used.

    Raises
    ------
    ValidationError
        From :meth:`validate` (not from the constructor, which pandas calls internally).
    """

    _metadata = ["identifier", "stimulus_paths"]

    def __init__(self, *args, identifier: str | None = None,
                 stimulus_paths: Mapping[str, str | Path] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        if identifier is not None or not hasattr(self, "identifier"):
            self.identifier = identifier
        if stimulus_paths is not None:
            self.stimulus_paths = {str(k): Path(v) for k, v in stimulus_paths.items()}
        elif getattr(self, "stimulus_paths", None) is None:
            column = next((c for c in ("stimulus_path", "filepath") if c in self.columns), None)
            self.stimulus_paths = ({str(i): Path(p) for i, p in zip(self["stimulus_id"], self[column])}
                                   if column and "stimulus_id" in self.columns else {})

    @property
    def _constructor(self):
        return StimulusSet

    def get_stimulus(self, stimulus_id: str) -> Path:
        """Path of the file of ``stimulus_id``.

        Raises
        ------
        KeyError
            If the stimulus set has no such stimulus.
        """
        try:
            return self.stimulus_paths[str(stimulus_id)]
        except KeyError:
            raise KeyError(f"stimulus set {self.identifier!r} has no stimulus {stimulus_id!r}") from None

    def paths(self, stimulus_ids: Iterable[str] | None = None) -> list[Path]:
        """Files of ``stimulus_ids`` (default: every row, in row order)."""
        ids = self["stimulus_id"] if stimulus_ids is None else stimulus_ids
        return [self.get_stimulus(i) for i in ids]

    def restricted_to(self, stimulus_ids: Iterable[str]) -> "StimulusSet":
        """The rows whose ``stimulus_id`` is in ``stimulus_ids`` (in this set's order), same identifier."""
        subset = self[self["stimulus_id"].isin(set(stimulus_ids))]
        return StimulusSet(subset, identifier=self.identifier, stimulus_paths=self.stimulus_paths)

    def validate(self, check_files: bool = True) -> "StimulusSet":
        """Check the data standard: unique ``stimulus_id`` values, and every file exists.

        Returns
        -------
        StimulusSet
            ``self``, so calls can be chained.

        Raises
        ------
        ValidationError
            Naming the duplicated ids or the missing files (first ten of each).
        """
        if "stimulus_id" not in self.columns:
            raise ValidationError(f"stimulus set {self.identifier!r} has no 'stimulus_id' column; "
                                  f"columns are {list(self.columns)}")
        duplicated = self["stimulus_id"][self["stimulus_id"].duplicated()].unique()
        if len(duplicated):
            raise ValidationError(f"stimulus set {self.identifier!r} repeats stimulus ids "
                                  f"{list(duplicated[:10])}: each stimulus must have one row")
        missing_path = [i for i in self["stimulus_id"] if str(i) not in self.stimulus_paths]
        if missing_path:
            raise ValidationError(f"stimulus set {self.identifier!r} has no file for stimulus ids "
                                  f"{missing_path[:10]} ({len(missing_path)} in all)")
        if check_files:
            missing = [str(p) for p in self.paths() if not Path(p).is_file()]
            if missing:
                raise ValidationError(f"stimulus set {self.identifier!r}: {len(missing)} files do not exist, "
                                      f"e.g. {missing[:5]}")
        return self

    def content_hash(self) -> str:
        """sha256 over the stimulus ids and the bytes of their files, in stimulus-id order.

        Used to key caches by content: two stimulus sets with the same ids and the same image bytes
        share cached activations, whatever their names or paths.
        """
        digest = hashlib.sha256()
        for stimulus_id in sorted(map(str, self["stimulus_id"])):
            digest.update(stimulus_id.encode() + b"\0")
            digest.update(file_sha256(self.get_stimulus(stimulus_id)).encode())
        return digest.hexdigest()


def stimulus_set_of_files(paths: Iterable[str | Path]) -> StimulusSet:
    """A stimulus set of image files given by path: one row per distinct file, in the order first listed, its
    ``stimulus_id`` and ``stimulus_path`` the path as a string (the reference's models take lists of paths)."""
    unique = list(dict.fromkeys(str(path) for path in paths))
    return StimulusSet({"stimulus_id": unique, "stimulus_path": unique}, stimulus_paths={p: p for p in unique})


def file_sha256(path: str | Path, chunk_size: int = 1 << 20, progress=None) -> str:
    """sha256 hex digest of a file, memoised within the process per file state.

    :func:`brainscore.caching.file_hashes` (the one hash memo, keyed by
    :func:`brainscore.caching.file_state`): a file rewritten in place gets a new state, so it is read
    again. ``progress``: called with each chunk's byte count when the file is read.
    """
    return caching.file_hashes(path, ("sha256",), chunk_size=chunk_size, progress=progress)["sha256"]
