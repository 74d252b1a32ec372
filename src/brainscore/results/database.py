"""The results database: every score (and every failure) as a row, with its provenance.

:class:`Database` opens any SQLAlchemy URL (SQLite by default, PostgreSQL for a shared server),
creates or upgrades the schema with the Alembic migrations shipped in this package, and records
scores as ``brainscore.score`` returns them. The leaderboard (:mod:`brainscore.leaderboard`) is
computed from these rows, never typed in.

Where the database is
    ``Database(url)``; else ``$BRAINSCORE_DB_URL``; else ``sqlite:///$BRAINSCORE_HOME/results.sqlite``.
"""
from __future__ import annotations

import datetime as dt
import math
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from sqlalchemy import create_engine, event, func, select
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from brainscore import config
from brainscore.errors import BrainScoreError
from brainscore.results.schema import BenchmarkInstance, BenchmarkType, Model, ScoreRow, Submission
from brainscore.scoring.provenance import jsonable, provenance_key as _provenance_key

__all__ = ["Database", "ScoreRecord", "ModelRecord", "SubmissionRecord", "default_url", "DatabaseError"]

MIGRATIONS = Path(__file__).parent / "migrations"


class DatabaseError(BrainScoreError):
    """The results database cannot be opened or does not hold what was asked for."""


def default_url() -> str:
    """``$BRAINSCORE_DB_URL``, else ``sqlite:///$BRAINSCORE_HOME/results.sqlite``."""
    url = os.environ.get("BRAINSCORE_DB_URL", "").strip()
    return url or f"sqlite:///{config.home() / 'results.sqlite'}"


@dataclass
class ScoreRecord:
    """One recorded score (or failure), as plain Python values.

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
    comment : str or None
        The error of a failure.
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
    comment: str | None
    id: int = 0
    provenance_key: str | None = None
    submission_id: int | None = None
    log: str | None = None


@dataclass
class ModelRecord:
    """A model row: identifier, owner, public, weights sha256, visual degrees."""

    identifier: str
    owner: str | None
    public: bool
    weights_hash: str | None
    visual_degrees: float | None
    id: int = 0


@dataclass
class SubmissionRecord:
    """A submission row: owner, models and benchmarks asked for, status and log."""

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


def _float(value: Any) -> float | None:
    """``value`` as a float, or None where it is absent, not a scalar, or NaN."""
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")  # several scoring processes may write at once
    cursor.close()


_REVISION = re.compile(r"^(revision|down_revision)\s*(?::[^=\n]*)?=\s*(.+?)\s*$", re.MULTILINE)


@lru_cache(maxsize=1)
def _migration_heads() -> frozenset[str] | None:
    """Head revisions of the migration scripts, read from their ``revision``/``down_revision`` lines.

    None when a script cannot be read so (then Alembic decides). Heads are the revisions no other
    script names as its ``down_revision``.
    """
    import ast

    revisions: set[str] = set()
    parents: set[str] = set()
    for script in sorted((MIGRATIONS / "versions").glob("*.py")):
        found = dict(_REVISION.findall(script.read_text(encoding="utf-8")))
        try:
            revision, down = ast.literal_eval(found["revision"]), ast.literal_eval(found["down_revision"])
        except (KeyError, ValueError, SyntaxError):
            return None
        if not isinstance(revision, str):
            return None
        revisions.add(revision)
        for parent in (down if isinstance(down, (tuple, list)) else [down]):
            if parent is not None:
                parents.add(str(parent))
    return frozenset(revisions - parents) or None


class Database:
    """The results database at ``url``; its schema is created or upgraded (Alembic) on open.

    Parameters
    ----------
    url : str, optional
        Any SQLAlchemy URL (``sqlite:///path``, ``postgresql+psycopg://user@host:port/db``). Default:
        ``$BRAINSCORE_DB_URL``, else ``sqlite:///$BRAINSCORE_HOME/results.sqlite``.

    Raises
    ------
    DatabaseError
        If the URL is malformed or the server cannot be reached; the message names the URL (without
        its password) and how to fix it.

    Examples
    --------
    >>> db = Database("sqlite://")                        # in memory
    >>> db.scores()
    []
    """

    def __init__(self, url: str | None = None):
        self.url = url or default_url()
        try:
            parsed = make_url(self.url)
        except ArgumentError as error:
            raise DatabaseError(f"results database URL {self.url!r} is not a SQLAlchemy URL ({error}); "
                                f"use e.g. sqlite:///results.sqlite or postgresql+psycopg://user@host/db") from None
        self._shown_url = parsed.render_as_string(hide_password=True)
        kwargs: dict[str, Any] = {}
        if parsed.get_backend_name() == "sqlite":
            if parsed.database and parsed.database != ":memory:":
                Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
            else:
                from sqlalchemy.pool import StaticPool
                kwargs = {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}}
        try:
            self.engine: Engine = create_engine(parsed, future=True, **kwargs)
        except ImportError as error:
            raise DatabaseError(f"the driver for {self._shown_url} is not installed ({error}); for PostgreSQL "
                                f"install psycopg: pip install 'psycopg[binary]'") from None
        if parsed.get_backend_name() == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self._session = sessionmaker(self.engine, expire_on_commit=False)
        self.upgrade()

    def __repr__(self) -> str:
        return f"<Database {self._shown_url}>"

    def upgrade(self) -> None:
        """Bring the schema to the newest migration (a no-op when it is current).

        A database already at the newest revision is recognised by reading its ``alembic_version``
        table against the revisions declared in the migration files, without importing Alembic
        (0.3 s of every ``brainscore score``); anything else goes through Alembic.
        """
        heads = _migration_heads()
        if heads is not None:
            from sqlalchemy import text
            from sqlalchemy.exc import SQLAlchemyError

            try:
                with self.engine.connect() as connection:
                    current = {row[0] for row in connection.execute(text("SELECT version_num FROM alembic_version"))}
                if current == heads:
                    return
            except SQLAlchemyError:  # no version table yet, or cannot connect: Alembic says which
                pass
        from alembic import command
        from alembic.config import Config
        from alembic.runtime.migration import MigrationContext
        from alembic.script import ScriptDirectory

        alembic_config = Config()
        alembic_config.set_main_option("script_location", str(MIGRATIONS))
        heads = set(ScriptDirectory.from_config(alembic_config).get_heads())
        try:
            with self.engine.begin() as connection:
                if set(MigrationContext.configure(connection).get_current_heads()) == heads:
                    return
                alembic_config.attributes["connection"] = connection
                command.upgrade(alembic_config, "head")
        except OperationalError as error:
            raise DatabaseError(f"cannot open the results database {self._shown_url}: {error.orig}. Check the URL "
                                f"(--db or BRAINSCORE_DB_URL) and that the server is running.") from None

    def close(self) -> None:
        """Release the engine's connections."""
        self.engine.dispose()

    def __enter__(self) -> "Database":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ----------------------------------------------------------------------------------------- rows
    def _model_row(self, session: Session, identifier: str, **fields: Any) -> Model:
        row = session.scalar(select(Model).where(Model.identifier == identifier))
        if row is None:
            row = Model(identifier=identifier, public=True, domain="vision")
            session.add(row)
        for name, value in fields.items():
            if value is not None:
                setattr(row, name, value)
        session.flush()
        return row

    def _type_row(self, session: Session, identifier: str, parent: str | None = None, **fields: Any) -> BenchmarkType:
        row = session.get(BenchmarkType, identifier)
        if row is None:
            row = BenchmarkType(identifier=identifier, order=0, visible=True, engineering=False, domain="vision")
            session.add(row)
        if parent is not None:
            if parent != identifier and session.get(BenchmarkType, parent) is None:
                self._type_row(session, parent)
            row.parent_id = parent
        for name, value in fields.items():
            if value is not None:
                setattr(row, name, value)
        session.flush()
        return row

    def _instance_row(self, session: Session, benchmark: str, version: int, ceiling: float | None = None,
                      ceiling_error: float | None = None, parent: str | None = None) -> BenchmarkInstance:
        self._type_row(session, benchmark, parent=parent)
        row = session.scalar(select(BenchmarkInstance).where(BenchmarkInstance.benchmark_type_id == benchmark,
                                                             BenchmarkInstance.version == version))
        if row is None:
            row = BenchmarkInstance(benchmark_type_id=benchmark, version=version)
            session.add(row)
        if ceiling is not None:
            row.ceiling, row.ceiling_error = ceiling, ceiling_error
        session.flush()
        return row

    @staticmethod
    def _benchmark_version(benchmark: str, attrs: dict, provenance: dict | None) -> tuple[int, str | None]:
        """The benchmark's version (attrs, provenance, else the registry) and its declared parent."""
        version = attrs.get("benchmark_version")
        if version is None and provenance:
            version = (provenance.get("benchmark") or {}).get("version")
        parent = None
        from brainscore import registry
        try:
            parent = registry.benchmarks.metadata(benchmark).get("parent")
            if version is None:
                version = registry.load_benchmark(benchmark).version
        except BrainScoreError:
            pass
        if version is None:
            raise DatabaseError(f"cannot record a score of {benchmark!r}: its version is unknown (not registered, and "
                                f"neither attrs['benchmark_version'] nor provenance['benchmark']['version'] is set)")
        return int(version), parent

    def _insert(self, row: ScoreRow) -> int:
        with self._session.begin() as session:
            session.add(row)
            session.flush()
            return row.id

    # ---------------------------------------------------------------------------------- public API
    def record_score(self, score, submission_id: int | None = None) -> int:
        """Record a score as :func:`brainscore.score` returns it; returns the new row's id.

        Parameters
        ----------
        score : Score
            Scalar, with attrs ``model_identifier``, ``benchmark_identifier`` and, where present,
            ``raw``, ``ceiling``, ``error``, ``ci95``, ``provenance``, ``layers``, ``benchmark_version``.
        submission_id : int, optional
            The submission this score belongs to.

        Raises
        ------
        ValueError
            If ``score`` is not scalar or lacks the model or benchmark identifier.
        DatabaseError
            If the benchmark's version cannot be determined.
        """
        attrs = dict(getattr(score, "attrs", {}))
        model, benchmark = attrs.get("model_identifier"), attrs.get("benchmark_identifier")
        if not model or not benchmark:
            raise ValueError("record_score needs a Score with attrs['model_identifier'] and attrs['benchmark_identifier'] "
                             "(as brainscore.score() returns it)")
        if getattr(score, "ndim", 0) != 0:
            raise ValueError(f"record_score needs a scalar score; got dims {getattr(score, 'dims', None)} for "
                             f"{model} on {benchmark}: reduce it to the benchmark's single value first")
        provenance = jsonable(attrs.get("provenance") or {})
        version, parent = self._benchmark_version(benchmark, attrs, provenance)
        ceiled = _float(score)
        raw = _float(attrs.get("raw"))
        ceiling_score = attrs.get("ceiling")
        ceiling = _float(ceiling_score)
        ceiling_error = _float(attrs.get("ceiling_error"))  # bootstrap SE; else the ceiling's own error
        if ceiling_error is None and ceiling_score is not None:
            ceiling_error = _float(getattr(ceiling_score, "attrs", {}).get("error"))
        if raw is None and ceiling is None:
            raw = ceiled  # an unceiled benchmark: its score is its raw score
        ci95 = attrs.get("ci95")
        low, high = (_float(ci95[0]), _float(ci95[1])) if ci95 is not None else (None, None)
        model_info = provenance.get("model") or {}
        with self._session.begin() as session:
            model_row = self._model_row(session, model, weights_hash=model_info.get("weights_sha256"),
                                        visual_degrees=_float(attrs.get("visual_degrees")))
            instance = self._instance_row(session, benchmark, version, ceiling, ceiling_error, parent)
            row = ScoreRow(benchmark_instance_id=instance.id, model_id=model_row.id, submission_id=submission_id,
                           status="done", score_raw=raw, score_ceiled=ceiled, error=_float(attrs.get("error")),
                           ci95_low=low, ci95_high=high, layers=jsonable(attrs.get("layers")), provenance=provenance,
                           provenance_key=_provenance_key(provenance) if provenance else None,
                           start_timestamp=_utc(provenance.get("start")), end_timestamp=_utc(provenance.get("end")),
                           comment=None)
            session.add(row)
            session.flush()
            return row.id

    def record_failure(self, model_identifier: str, benchmark_identifier: str, error: str, log: str = "",
                       provenance: dict | None = None, submission_id: int | None = None) -> int:
        """Record that scoring ``model_identifier`` on ``benchmark_identifier`` failed; returns the row's id.

        The leaderboard counts a failed score as 0 and as a missing leaf (as the reference does).

        Parameters
        ----------
        error : str
            One line: what went wrong (kept as the row's ``comment``).
        log : str
            The traceback or log.
        provenance : dict, optional
            What was known when it failed (``benchmark.version`` is read from it if present).
        """
        provenance = jsonable(provenance or {})
        version, parent = self._benchmark_version(benchmark_identifier, {}, provenance)
        with self._session.begin() as session:
            model_row = self._model_row(session, model_identifier)
            instance = self._instance_row(session, benchmark_identifier, version, parent=parent)
            row = ScoreRow(benchmark_instance_id=instance.id, model_id=model_row.id, submission_id=submission_id,
                           status="failed", comment=str(error), log=log or None, provenance=provenance or None,
                           provenance_key=_provenance_key(provenance) if provenance else None,
                           start_timestamp=_utc(provenance.get("start")),
                           end_timestamp=_utc(provenance.get("end")) or _now())
            session.add(row)
            session.flush()
            return row.id

    def _query(self, model: str | None, benchmark: str | None, statuses: Iterable[str]):
        query = (select(ScoreRow, Model.identifier, BenchmarkInstance.benchmark_type_id, BenchmarkInstance.version,
                        BenchmarkInstance.ceiling)
                 .join(Model, ScoreRow.model_id == Model.id)
                 .join(BenchmarkInstance, ScoreRow.benchmark_instance_id == BenchmarkInstance.id)
                 .where(ScoreRow.status.in_(list(statuses))))
        if model is not None:
            query = query.where(Model.identifier == model)
        if benchmark is not None:
            query = query.where(BenchmarkInstance.benchmark_type_id == benchmark)
        return query.order_by(ScoreRow.id)

    @staticmethod
    def _record(row: ScoreRow, model: str, benchmark: str, version: int, ceiling: float | None) -> ScoreRecord:
        ci95 = (row.ci95_low, row.ci95_high) if row.ci95_low is not None and row.ci95_high is not None else None
        provenance = row.provenance or {}
        row_ceiling = _float((provenance.get("ceiling") or {}).get("value")) if provenance else None
        return ScoreRecord(model=model, benchmark=benchmark, benchmark_version=version, score=row.score_ceiled,
                           raw=row.score_raw, ceiling=row_ceiling if row_ceiling is not None else ceiling,
                           error=row.error, ci95=ci95, provenance=provenance, layers=row.layers,
                           start=_utc(row.start_timestamp), end=_utc(row.end_timestamp), status=row.status,
                           comment=row.comment, id=row.id, provenance_key=row.provenance_key,
                           submission_id=row.submission_id, log=row.log)

    def find_score(self, model_identifier: str, benchmark_identifier: str,
                   provenance_key: str | None = None) -> ScoreRecord | None:
        """The latest successful score of the model on the benchmark (with that provenance key, if given).

        Returns
        -------
        ScoreRecord or None
            None when no such score was recorded.
        """
        query = self._query(model_identifier, benchmark_identifier, ["done"])
        if provenance_key is not None:
            query = query.where(ScoreRow.provenance_key == provenance_key)
        with self._session() as session:
            found = session.execute(query.order_by(None).order_by(ScoreRow.id.desc()).limit(1)).first()
            return self._record(*found) if found else None

    def scores(self, model_identifier: str | None = None, benchmark_identifier: str | None = None,
               include_failed: bool = False) -> list[ScoreRecord]:
        """Every recorded score (oldest first), optionally of one model and/or one benchmark.

        Parameters
        ----------
        include_failed : bool
            Also return failures (``status == "failed"``).
        """
        statuses = ["done", "failed"] if include_failed else ["done"]
        with self._session() as session:
            return [self._record(*row) for row in session.execute(self._query(model_identifier, benchmark_identifier,
                                                                              statuses)).all()]

    def add_model(self, identifier: str, owner: str | None = None, public: bool = True,
                  weights_hash: str | None = None, visual_degrees: float | None = None) -> ModelRecord:
        """Create the model row, or update the given fields of an existing one; returns it."""
        with self._session.begin() as session:
            row = self._model_row(session, identifier, owner=owner, weights_hash=weights_hash,
                                  visual_degrees=visual_degrees)
            row.public = bool(public)
            session.flush()
            return ModelRecord(row.identifier, row.owner, row.public, row.weights_hash, row.visual_degrees, row.id)

    def model(self, identifier: str) -> ModelRecord | None:
        """The model row of ``identifier``, or None."""
        with self._session() as session:
            row = session.scalar(select(Model).where(Model.identifier == identifier))
            return None if row is None else ModelRecord(row.identifier, row.owner, row.public, row.weights_hash,
                                                        row.visual_degrees, row.id)

    def models(self) -> list[ModelRecord]:
        """Every model row, by identifier."""
        with self._session() as session:
            return [ModelRecord(r.identifier, r.owner, r.public, r.weights_hash, r.visual_degrees, r.id)
                    for r in session.scalars(select(Model).order_by(Model.identifier))]

    def create_submission(self, owner: str | None, models: list[str], benchmarks: list[str],
                          status: str = "pending", meta: dict | None = None) -> int:
        """Record a submission (who asked to score which models on which benchmarks); returns its id."""
        now = _now()
        with self._session.begin() as session:
            row = Submission(owner=owner, created=now, updated=now, status=status, models=list(models),
                             benchmarks=list(benchmarks), log="", meta=jsonable(meta or {}))
            session.add(row)
            session.flush()
            return row.id

    def submission(self, submission_id: int) -> SubmissionRecord:
        """The submission ``submission_id``.

        Raises
        ------
        DatabaseError
            If there is none.
        """
        with self._session() as session:
            row = session.get(Submission, submission_id)
            if row is None:
                raise DatabaseError(f"no submission {submission_id} in {self._shown_url}")
            return SubmissionRecord(row.id, row.owner, list(row.models or []), list(row.benchmarks or []), row.status,
                                    row.log or "", _utc(row.created), _utc(row.updated), dict(row.meta or {}))

    def update_submission(self, submission_id: int, status: str | None = None, log_append: str | None = None) -> None:
        """Set the submission's ``status`` and/or append ``log_append`` (a newline is added) to its log.

        Raises
        ------
        DatabaseError
            If there is no such submission.
        """
        with self._session.begin() as session:
            row = session.get(Submission, submission_id, with_for_update=True)
            if row is None:
                raise DatabaseError(f"no submission {submission_id} in {self._shown_url}")
            if status is not None:
                row.status = status
            if log_append:
                row.log = (row.log or "") + log_append + ("" if log_append.endswith("\n") else "\n")
            row.updated = _now()

    def sync_tree(self, parents: dict[str, str | None], engineering: Iterable[str] = (),
                  order: dict[str, int] | None = None) -> None:
        """Write the leaderboard tree into ``benchmark_types``: node -> parent (None for a root).

        Parameters
        ----------
        engineering : iterable of str
            Nodes of the engineering subtree.
        order : dict, optional
            Node -> position among its siblings.
        """
        engineering, order = set(engineering), order or {}
        with self._session.begin() as session:
            for node in sorted(parents, key=lambda n: parents[n] is not None):
                self._type_row(session, node)
            for node, parent in parents.items():
                row = self._type_row(session, node, parent=parent, order=order.get(node))
                row.engineering = node in engineering

    def results_version(self) -> int:
        """The largest score row id: it changes whenever a score or failure is recorded (0 when there is none).

        One lookup in the primary key's index. Score rows are only ever added (never updated or
        deleted), so what is computed from the scores (the leaderboard) is cached under this number
        and computed again only when it changes, in every process that reads the database.
        """
        with self._session() as session:
            return int(session.execute(select(func.max(ScoreRow.id))).scalar() or 0)

    def private_models(self) -> dict[str, str | None]:
        """Identifier -> owner of every model that is not public (one query; the website hides these)."""
        with self._session() as session:
            return {identifier: owner for identifier, owner in
                    session.execute(select(Model.identifier, Model.owner).where(Model.public.is_(False)))}

    def benchmark_versions(self) -> dict[str, int]:
        """Benchmark -> the newest version recorded."""
        with self._session() as session:
            versions: dict[str, int] = {}
            for benchmark, version in session.execute(select(BenchmarkInstance.benchmark_type_id,
                                                             BenchmarkInstance.version)):
                versions[benchmark] = max(version, versions.get(benchmark, version))
            return versions

