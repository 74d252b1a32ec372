"""The results database's tables (SQLAlchemy 2 ORM), after Brain-Score's schema.

Brain-Score keeps its leaderboard in PostgreSQL (``brainscore_core/submission/database_models.py``,
peewee): references, a tree of benchmark types, versioned benchmark instances, models, submissions
and scores. These tables follow it, with what the reference lacks: a confidence interval, the
provenance (JSON) and its key on every score, and failed scores with their failure message. The website's
own tables (accounts, API tokens, log-in attempts and the submission queue, ``web_*``) live here
too, so that one ``alembic upgrade head`` makes every table (migration ``0002``);
``submissions.owner`` and ``models.owner`` hold the user name.

The schema is created and upgraded by the Alembic migrations in ``brainscore/results/migrations``;
never by ``metadata.create_all``.
"""
from __future__ import annotations

import datetime as dt
import secrets

from sqlalchemy import (JSON, BigInteger, Boolean, DateTime, Float, ForeignKey, Integer, String, Text, UniqueConstraint)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

__all__ = ["Base", "Reference", "BenchmarkType", "BenchmarkInstance", "Model", "Submission", "ScoreRow",
           "DeletedModel", "ResultsVersion", "User", "Administrator", "ApiToken", "LoginAttempt", "SubmissionTask"]


class Base(DeclarativeBase):
    """Declarative base of the results tables."""


class Reference(Base):
    """A paper: ``author``, ``year``, ``url`` and its BibTeX entry."""

    __tablename__ = "references"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    author: Mapped[str | None] = mapped_column(String(500))
    year: Mapped[int | None] = mapped_column(Integer)
    url: Mapped[str | None] = mapped_column(String(1000))
    bibtex: Mapped[str] = mapped_column(Text, unique=False)


class BenchmarkType(Base):
    """A node of the leaderboard tree: a benchmark (leaf) or an aggregate (``V4``, ``average_vision``).

    ``parent`` is the node it is averaged into (None for a root); ``order`` sorts siblings;
    ``engineering`` marks the engineering subtree (leaves use the raw score); ``visible`` hides a
    node from the leaderboard without deleting its scores.
    """

    __tablename__ = "benchmark_types"
    identifier: Mapped[str] = mapped_column(String(300), primary_key=True)
    parent_id: Mapped[str | None] = mapped_column(ForeignKey("benchmark_types.identifier"), index=True)
    reference_id: Mapped[int | None] = mapped_column(ForeignKey("references.id"))
    order: Mapped[int] = mapped_column(Integer, default=0)
    visible: Mapped[bool] = mapped_column(Boolean, default=True)
    engineering: Mapped[bool] = mapped_column(Boolean, default=False)
    domain: Mapped[str] = mapped_column(String(50), default="vision")

    parent: Mapped["BenchmarkType | None"] = relationship(remote_side=[identifier])
    reference: Mapped[Reference | None] = relationship()


class BenchmarkInstance(Base):
    """One version of a benchmark, with the ceiling (and its error) that version normalises by."""

    __tablename__ = "benchmark_instances"
    __table_args__ = (UniqueConstraint("benchmark_type_id", "version", name="uq_benchmark_version"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    benchmark_type_id: Mapped[str] = mapped_column(ForeignKey("benchmark_types.identifier"), index=True)
    version: Mapped[int] = mapped_column(Integer)
    ceiling: Mapped[float | None] = mapped_column(Float)
    ceiling_error: Mapped[float | None] = mapped_column(Float)
    meta: Mapped[dict | None] = mapped_column(JSON)

    benchmark_type: Mapped[BenchmarkType] = relationship()


class Submission(Base):
    """A request to score models on benchmarks: who, when, what, its status and its log."""

    __tablename__ = "submissions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    owner: Mapped[str | None] = mapped_column(String(300), index=True)
    created: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    updated: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    status: Mapped[str] = mapped_column(String(50), default="pending")
    models: Mapped[list | None] = mapped_column(JSON)
    benchmarks: Mapped[list | None] = mapped_column(JSON)
    log: Mapped[str] = mapped_column(Text, default="")
    meta: Mapped[dict | None] = mapped_column(JSON)


class Model(Base):
    """A scored model: identifier, weights sha256, owner, public or not, visual degrees."""

    __tablename__ = "models"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    identifier: Mapped[str] = mapped_column(String(300), unique=True)
    weights_hash: Mapped[str | None] = mapped_column(String(64))
    owner: Mapped[str | None] = mapped_column(String(300))
    public: Mapped[bool] = mapped_column(Boolean, default=True)
    visual_degrees: Mapped[float | None] = mapped_column(Float)
    domain: Mapped[str] = mapped_column(String(50), default="vision")
    reference_id: Mapped[int | None] = mapped_column(ForeignKey("references.id"))
    submission_id: Mapped[int | None] = mapped_column(ForeignKey("submissions.id"))


class ScoreRow(Base):
    """One score (or one failure) of a model on a benchmark instance.

    ``score_ceiled`` is the leaderboard value, ``score_raw`` the unceiled one; ``error`` the
    bootstrap standard error and ``ci95_low``/``ci95_high`` the bootstrap 95% interval of the ceiled
    score; ``provenance`` the JSON of ``score.attrs["provenance"]`` and ``provenance_key`` its key.
    ``status`` is ``"done"`` or ``"failed"``; a failure keeps its message in ``failure`` (the
    column was ``comment`` before migration ``0003``) and its traceback/log in ``log``.
    """

    __tablename__ = "scores"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    benchmark_instance_id: Mapped[int] = mapped_column(ForeignKey("benchmark_instances.id"), index=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id"), index=True)
    submission_id: Mapped[int | None] = mapped_column(ForeignKey("submissions.id"))
    status: Mapped[str] = mapped_column(String(20), default="done")
    score_raw: Mapped[float | None] = mapped_column(Float)
    score_ceiled: Mapped[float | None] = mapped_column(Float)
    error: Mapped[float | None] = mapped_column(Float)
    ci95_low: Mapped[float | None] = mapped_column(Float)
    ci95_high: Mapped[float | None] = mapped_column(Float)
    layers: Mapped[dict | None] = mapped_column(JSON)
    provenance: Mapped[dict | None] = mapped_column(JSON)
    provenance_key: Mapped[str | None] = mapped_column(String(64), index=True)
    start_timestamp: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    end_timestamp: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    failure: Mapped[str | None] = mapped_column(Text)
    log: Mapped[str | None] = mapped_column(Text)

    benchmark_instance: Mapped[BenchmarkInstance] = relationship()
    model: Mapped[Model] = relationship()


class DeletedModel(Base):
    """A model its owner deleted, with its scores (migration ``0005``): who, when, how many score rows went.

    (The results version changes with the deletion through the triggers of :class:`ResultsVersion`.)
    """

    __tablename__ = "deleted_models"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    identifier: Mapped[str] = mapped_column(String(300), index=True)
    owner: Mapped[str | None] = mapped_column(String(300))
    scores: Mapped[int] = mapped_column(Integer, default=0)
    at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))


class ResultsVersion(Base):
    """One row (``id`` 1): a counter the database's triggers bump whenever a score changes, a model is
    updated or deleted, or a private model is added (migration ``0006``); the website caches what it
    computes from the results under it (:meth:`brainscore.results.Database.results_version`).

    ``rewrites`` counts the changes that are not a new score (a score updated or deleted, a model
    renamed or deleted, a benchmark instance changed; migration ``0008``): while it stays, the scores
    added since a known row id are all that changed (:meth:`brainscore.results.Database.scores_after`)."""

    __tablename__ = "results_version"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    version: Mapped[int] = mapped_column(BigInteger, nullable=False)
    rewrites: Mapped[int] = mapped_column(BigInteger, nullable=False, server_default="0")


# ------------------------------------------------------------------------------------ the website
def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _iso_utc(when: dt.datetime | None) -> str | None:
    """``when`` (UTC; naive columns hold UTC) as ISO 8601 with its zone, ``...+00:00`` (issue 36: times without a
    zone); None stays None."""
    if when is None:
        return None
    return (when if when.tzinfo is not None else when.replace(tzinfo=dt.timezone.utc)).isoformat()


def new_task_key() -> str:
    """A submission task's public identifier: 22 random URL-safe characters (128 bits), the only identifier
    its pages and API use, so that nobody can walk the submissions by counting (revision ``0007``)."""
    return secrets.token_urlsafe(16)


class User(Base):
    """A website account: a unique user name, the argon2 hash of its password, and its e-mail address.

    ``email`` is the address as :mod:`email_validator` normalises it (unique; None for accounts made
    before migration ``0005`` or by :func:`brainscore.web.accounts.register` without one);
    ``email_verified`` is when the address was verified by its link (None: not verified); ``display_name`` is the
    name the website shows for the account (None: its user name; migration ``0009``).
    """

    __tablename__ = "web_users"
    __table_args__ = (UniqueConstraint("email", name="uq_web_users_email"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(40), unique=True, index=True)
    password_hash: Mapped[str] = mapped_column(String(200))
    created: Mapped[dt.datetime] = mapped_column(DateTime, default=_utcnow)
    email: Mapped[str | None] = mapped_column(String(320), nullable=True)
    email_verified: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    display_name: Mapped[str | None] = mapped_column(String(80), nullable=True)


class Administrator(Base):
    """An account that administers the website: it approves and withdraws submissions that hold benchmark, data or
    metric plugins and sees every submission (revision ``0010``).

    Rows are made by the server's command line only (``brainscore admin add NAME``; ``added_by`` says so), never
    through the website: a user name alone never makes an administrator, so registering one first gains nothing.
    """

    __tablename__ = "web_administrators"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("web_users.id"), unique=True, index=True)
    added: Mapped[dt.datetime] = mapped_column(DateTime, default=_utcnow)
    added_by: Mapped[str] = mapped_column(String(200), default="command line")


class ApiToken(Base):
    """An API token of a user (for ``brainscore submit``); only its sha256 is stored."""

    __tablename__ = "web_tokens"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("web_users.id"), index=True)
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    created: Mapped[dt.datetime] = mapped_column(DateTime, default=_utcnow)


class WebSession(Base):
    """A logged-in browser session: the sha256 of the random session id its cookie carries.

    The session cookie alone never authenticates: its ``sid`` must name a row here that has not expired.
    Logging in makes a new row (a session id from before the log-in is worth nothing after it: no
    fixation); logging out deletes it, so a copied cookie stops working at once (revision ``0007``).
    """

    __tablename__ = "web_sessions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("web_users.id"), index=True)
    sid_sha256: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    created: Mapped[dt.datetime] = mapped_column(DateTime, default=_utcnow)
    expires: Mapped[dt.datetime] = mapped_column(DateTime, index=True)


class LoginAttempt(Base):
    """One log-in attempt, kept for rate limiting."""

    __tablename__ = "web_login_attempts"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(200), index=True)
    address: Mapped[str] = mapped_column(String(100), index=True)
    success: Mapped[bool] = mapped_column(default=False)
    at: Mapped[dt.datetime] = mapped_column(DateTime, default=_utcnow, index=True)


class SubmissionTask(Base):
    """One website submission (or one re-run of a failed benchmark) waiting in or going through the queue.

    (Its table keeps its first name, ``web_jobs``; "job" is the scoring module's word.)

    ``status``: ``preparing`` -> ``queued`` -> ``running`` -> ``done`` | ``failed``. ``current`` is
    the number of (model, benchmark) pairs started so far (``k`` of :attr:`total`), ``results``
    maps ``"model|benchmark"`` to ``{"status": "done", "score": float}`` or ``{"status":
    "failed", "failure": str}``, ``failure`` says why the task failed (both were ``error`` before
    migration ``0004``), ``log`` is everything the scoring processes printed.
    ``submission_id`` is the row of :class:`Submission` its scores are recorded under.
    """

    __tablename__ = "web_jobs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(32), unique=True, index=True, default=new_task_key)
    owner: Mapped[str] = mapped_column(String(40), index=True)
    package: Mapped[str] = mapped_column(String(200), default="")
    filename: Mapped[str] = mapped_column(String(300), default="")
    models: Mapped[list] = mapped_column(JSON, default=list)
    benchmarks: Mapped[list] = mapped_column(JSON, default=list)
    requirements: Mapped[list] = mapped_column(JSON, default=list)
    public: Mapped[bool] = mapped_column(default=True)
    status: Mapped[str] = mapped_column(String(20), default="queued", index=True)
    current: Mapped[int] = mapped_column(Integer, default=0)
    results: Mapped[dict] = mapped_column(JSON, default=dict)
    failure: Mapped[str] = mapped_column(Text, default="")
    log: Mapped[str] = mapped_column(Text, default="")
    folder: Mapped[str] = mapped_column(String(500), default="")
    rerun_of: Mapped[int | None] = mapped_column(Integer, nullable=True)
    submission_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created: Mapped[dt.datetime] = mapped_column(DateTime, default=_utcnow)
    started: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    finished: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """The (model, benchmark) pairs of the submission task, in the order they run."""
        return [(model, benchmark) for model in self.models for benchmark in self.benchmarks]

    @property
    def total(self) -> int:
        """Number of (model, benchmark) runs."""
        return len(self.models) * len(self.benchmarks)

    def as_dict(self, place: int | None = None) -> dict:
        """The JSON form of ``GET /api/submissions/{key}`` (``place``: its place in the queue, if queued).

        ``id`` is the public :attr:`key`, never the row number; ``rerun_of`` is the row number of the task it
        re-runs (the website shows that task's key instead).
        """
        return {"id": self.key, "owner": self.owner, "status": self.status, "place": place,
                "models": self.models, "benchmarks": self.benchmarks, "public": self.public,
                "progress": {"current": self.current, "total": self.total}, "results": self.results,
                "requirements": self.requirements, "failure": self.failure, "log": self.log,
                "rerun_of": self.rerun_of, "submission_id": self.submission_id,
                "created": _iso_utc(self.created), "finished": _iso_utc(self.finished)}
