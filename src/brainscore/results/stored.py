"""Rows of the results database read back as plain Python values: a score or failure, a model, a submission, and
a batch of scores read with the state of the results they were read at."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ScoresRead", "StoredScore", "StoredModel", "StoredSubmission"]


@dataclass(frozen=True)
class ScoresRead:
    """Score rows read together with the state of the results they were read at.

    Attributes
    ----------
    scores : list of StoredScore
        The rows read (oldest first).
    version, rewrites : int
        ``results_version.version`` and ``.rewrites``, the same before and after the rows were read (no
        change was committed in between).
    count : int
        How many scores and failures the table held then (all of them, not only those read).
    """

    scores: list
    version: int
    rewrites: int
    count: int


@dataclass
class StoredScore:
    """One score (or failure) as the database holds it, read back as plain Python values (a row of ``scores``,
    :class:`~brainscore.results.schema.ScoreRow`, with its model, benchmark and version joined in).

    Attributes
    ----------
    model, benchmark : str
        Identifiers.
    benchmark_version : int
    score : float or None
        The ceiled score (the leaderboard value); None for a failure.
    raw, ceiling : float or None
        The unceiled score and the ceiling it was divided by.
    error : float or None
        Bootstrap standard error of ``score`` (see :mod:`brainscore.scoring.bootstrap`).
    ci95 : (float, float) or None
        Bootstrap 95% interval of ``score``.
    provenance : dict
        ``score.attrs["provenance"]``.
    layers : dict or None
        Region -> committed layer.
    start, end : datetime or None
        UTC.
    status : {"done", "failed"}
    failure : str or None
        The message of a failure (``"ExceptionType: message"``).
    id : int
    provenance_key : str or None
    submission_id : int or None
    log : str or None
    """

    model: str
    benchmark: str
    benchmark_version: int
    score: float | None
    raw: float | None
    ceiling: float | None
    error: float | None
    ci95: tuple[float, float] | None
    provenance: dict
    layers: dict | None
    start: dt.datetime | None
    end: dt.datetime | None
    status: str
    failure: str | None
    id: int = 0
    provenance_key: str | None = None
    submission_id: int | None = None
    log: str | None = None


@dataclass
class StoredModel:
    """A model as the database holds it (a row of ``models``): identifier, owner, public, weights sha256, visual degrees."""

    identifier: str
    owner: str | None
    public: bool
    weights_hash: str | None
    visual_degrees: float | None
    id: int = 0


@dataclass
class StoredSubmission:
    """A submission as the database holds it (a row of ``submissions``): owner, models and benchmarks asked for, status and log."""

    id: int
    owner: str | None
    models: list
    benchmarks: list
    status: str
    log: str
    created: dt.datetime | None
    updated: dt.datetime | None
    meta: dict = field(default_factory=dict)


def _utc(value: Any) -> dt.datetime | None:
    """A timezone-aware UTC datetime from a datetime or ISO string (naive values are taken as UTC)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    return value.astimezone(dt.timezone.utc)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)
