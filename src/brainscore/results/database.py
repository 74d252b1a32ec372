"""The results database: every score (and every failure) as a row, with its provenance.

:class:`Database` opens any SQLAlchemy URL (SQLite by default, PostgreSQL for a shared server),
creates or upgrades the schema with the Alembic migrations shipped in this package, and records
scores as ``brainscore.score`` returns them. The leaderboard (:mod:`brainscore.leaderboard`) is
computed from these rows, never typed in.

Where the database is
    ``Database(url)``; else ``$BRAINSCORE_DB_URL``; else ``sqlite:///$BRAINSCORE_HOME/results.sqlite``.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable

from sqlalchemy import create_engine, delete, event, func, select
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from brainscore.caching import jsonable
from brainscore.results import journal
# what opening a database and reading its rows need, kept importable from here
from brainscore.results.connection import (BUSY_TIMEOUT_MS, MIGRATIONS, DatabaseError, DatabaseUnavailable,  # noqa: F401
                                           _migration_heads, _sqlite_pragmas, default_url, explain, identity_of,
                                           prepare_sqlite_file, upgrade)
from brainscore.results.schema import BenchmarkInstance, BenchmarkType, DeletedModel, Model, ScoreRow, Submission
from brainscore.results.stored import ScoresRead, StoredModel, StoredScore, StoredSubmission, _now, _utc
from brainscore.scoring.outcome import Outcome, number as _float

__all__ = ["Database", "StoredScore", "ScoresRead", "StoredModel", "StoredSubmission", "default_url", "DatabaseError",
           "DatabaseUnavailable", "identity_of", "explain"]

_STATE_QUERY = "SELECT version, rewrites FROM results_version WHERE id = 1"


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
        If the URL is malformed or the server cannot be reached, or a SQLite file is another application's
        database; the message names the URL (without its password) and how to fix it.
    DatabaseUnavailable
        If a SQLite file's folder does not exist (made only for the default database), the file is not a
        SQLite database (it is left untouched), or it cannot be opened or upgraded now.

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
        self.sqlite_file: Path | None = None
        kwargs: dict[str, Any] = {}
        if parsed.get_backend_name() == "sqlite":
            if parsed.database and parsed.database != ":memory:":
                self.sqlite_file = Path(parsed.database).expanduser().absolute()
                # a folder is made for the default database only (in BRAINSCORE_HOME); one named by --db must exist
                prepare_sqlite_file(self.sqlite_file, make_folder=url is None and not os.environ.get(
                    "BRAINSCORE_DB_URL", "").strip())
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
        in_memory = parsed.get_backend_name() == "sqlite" and self.sqlite_file is None
        #: Outcomes kept in the journal while this database could not take them, recorded now.
        self.replayed = 0 if in_memory else journal.replay(self.identity, self._replay)

    def __repr__(self) -> str:
        return f"<Database {self._shown_url}>"

    @property
    def identity(self) -> str:
        """The database's URL without its password, a SQLite file's path made absolute: what the journal names."""
        return identity_of(self.url)

    def _replay(self, outcome: dict, submission_id: int | None) -> None:
        self.record(Outcome.from_json(outcome), submission_id=submission_id)

    def _fail(self, error: BaseException) -> DatabaseUnavailable:
        return DatabaseUnavailable(explain(error, self._shown_url, self.sqlite_file))

    def upgrade(self) -> None:
        """Bring the schema to the newest migration (a no-op when it is current; :func:`connection.upgrade`)."""
        upgrade(self.engine, self._fail)

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

    # ---------------------------------------------------------------------------------- public API
    def record(self, outcome: Outcome, submission_id: int | None = None) -> int:
        """Write ``outcome`` (a score or a failure) as a row; returns the row's id.

        Use :func:`brainscore.results.records.record`, which keeps the outcome in the journal when
        this fails; this method is the row-writing step under it.

        A score's row holds the ceiled and raw score, the bootstrap ``error`` and ``ci95``, the
        layers and the provenance with its key; the benchmark's instance row the ceiling (with the
        bootstrap ceiling error, else the ceiling's own). An unceiled benchmark's raw score is its
        score. A failure's row holds its ``failure`` message and ``log``; the leaderboard counts it
        as 0 and as a missing leaf (as the reference does).

        Parameters
        ----------
        outcome : Outcome
            As :meth:`~brainscore.scoring.outcome.Outcome.from_score` or ``from_failure`` built it.
        submission_id : int, optional
            The submission it belongs to.

        Raises
        ------
        ValueError
            If ``outcome`` is neither done nor failed.
        DatabaseError
            If the benchmark's version is unknown (not registered, and neither the score's attrs nor its
            provenance name it), or the database cannot be written (the message says why and the fix).
        """
        if outcome.status not in ("done", "failed"):
            raise ValueError(f"only a done or failed outcome is recorded, not {outcome.status!r} "
                             f"({outcome.model} on {outcome.benchmark})")
        if outcome.benchmark_version is None:
            raise DatabaseError(f"cannot record a score of {outcome.benchmark!r}: its version is unknown (not "
                                f"registered, and neither attrs['benchmark_version'] nor provenance['benchmark']"
                                f"['version'] is set)")
        provenance = outcome.provenance or {}
        try:
            with self._session.begin() as session:
                if outcome.status == "done":
                    raw = outcome.raw if outcome.raw is not None or outcome.ceiling is not None else outcome.score
                    ceiling_error = (outcome.ceiling_error if outcome.ceiling_error is not None
                                     else outcome.ceiling_error_reference)  # bootstrap SE, else the ceiling's own
                    model_info = provenance.get("model") or {}
                    model_row = self._model_row(session, outcome.model, weights_hash=model_info.get("weights_sha256"),
                                                visual_degrees=outcome.visual_degrees)
                    instance = self._instance_row(session, outcome.benchmark, outcome.benchmark_version,
                                                  outcome.ceiling, ceiling_error, outcome.benchmark_parent)
                    low, high = outcome.ci95 if outcome.ci95 is not None else (None, None)
                    row = ScoreRow(benchmark_instance_id=instance.id, model_id=model_row.id,
                                   submission_id=submission_id, status="done", score_raw=raw,
                                   score_ceiled=outcome.score, error=outcome.error, ci95_low=low, ci95_high=high,
                                   layers=outcome.layers, provenance=provenance, provenance_key=outcome.provenance_key,
                                   start_timestamp=_utc(provenance.get("start")),
                                   end_timestamp=_utc(provenance.get("end")), failure=None)
                else:
                    model_row = self._model_row(session, outcome.model)
                    instance = self._instance_row(session, outcome.benchmark, outcome.benchmark_version,
                                                  parent=outcome.benchmark_parent)
                    row = ScoreRow(benchmark_instance_id=instance.id, model_id=model_row.id,
                                   submission_id=submission_id, status="failed", failure=outcome.failure or "",
                                   log=outcome.log or None, provenance=provenance or None,
                                   provenance_key=outcome.provenance_key,
                                   start_timestamp=_utc(provenance.get("start")),
                                   end_timestamp=_utc(provenance.get("end")) or _now())
                session.add(row)
                session.flush()
                return row.id
        except (SQLAlchemyError, OSError) as error:
            raise self._fail(error) from None

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
    def _stored(row: ScoreRow, model: str, benchmark: str, version: int, ceiling: float | None) -> StoredScore:
        ci95 = (row.ci95_low, row.ci95_high) if row.ci95_low is not None and row.ci95_high is not None else None
        provenance = row.provenance or {}
        row_ceiling = _float((provenance.get("ceiling") or {}).get("value")) if provenance else None
        return StoredScore(model=model, benchmark=benchmark, benchmark_version=version, score=row.score_ceiled,
                           raw=row.score_raw, ceiling=row_ceiling if row_ceiling is not None else ceiling,
                           error=row.error, ci95=ci95, provenance=provenance, layers=row.layers,
                           start=_utc(row.start_timestamp), end=_utc(row.end_timestamp), status=row.status,
                           failure=row.failure, id=row.id, provenance_key=row.provenance_key,
                           submission_id=row.submission_id, log=row.log)

    def find_score(self, model_identifier: str, benchmark_identifier: str,
                   provenance_key: str | None = None) -> StoredScore | None:
        """The latest successful score of the model on the benchmark (with that provenance key, if given).

        Returns
        -------
        StoredScore or None
            None when no such score was recorded.
        """
        query = self._query(model_identifier, benchmark_identifier, ["done"])
        if provenance_key is not None:
            query = query.where(ScoreRow.provenance_key == provenance_key)
        with self._session() as session:
            found = session.execute(query.order_by(None).order_by(ScoreRow.id.desc()).limit(1)).first()
            return self._stored(*found) if found else None

    def score_by_id(self, score_id: int) -> StoredScore | None:
        """The score (or failure) recorded as row ``score_id`` (the ``#N`` of ``recorded as #N``), or None.

        Raises
        ------
        DatabaseUnavailable
            If the database cannot be read (the message says why and the fix).
        """
        if not 0 < int(score_id) < 2 ** 63:  # no row has it, and SQLite cannot even compare it
            return None
        query = self._query(None, None, ["done", "failed"]).where(ScoreRow.id == int(score_id))
        try:
            with self._session() as session:
                found = session.execute(query).first()
        except (SQLAlchemyError, OSError) as error:
            raise self._fail(error) from None
        return self._stored(*found) if found else None

    def scores(self, model_identifier: str | None = None, benchmark_identifier: str | None = None,
               include_failed: bool = False) -> list[StoredScore]:
        """Every recorded score (oldest first), optionally of one model and/or one benchmark.

        Parameters
        ----------
        include_failed : bool
            Also return failures (``status == "failed"``).
        """
        statuses = ["done", "failed"] if include_failed else ["done"]
        with self._session() as session:
            return [self._stored(*row) for row in session.execute(self._query(model_identifier, benchmark_identifier,
                                                                              statuses)).all()]

    def scores_after(self, after_id: int = 0, attempts: int = 3) -> ScoresRead | None:
        """Every score and failure whose row id is above ``after_id`` (oldest first), with the results
        version, the ``rewrites`` counter (migration ``0008``) and the table's row count they were read at.

        A cache that holds the rows up to ``after_id`` (``n`` of them) read at ``rewrites`` ``r`` brings
        itself up to date with the rows returned when ``rewrites`` is still ``r`` and ``count`` is
        ``n + len(scores)``; otherwise something else changed (a row updated or deleted, or a row with
        a smaller id committed late, as PostgreSQL's sequences allow) and it must read everything.

        The state is read before and after the rows; when a writer committed in between, the read is
        repeated (``attempts`` times in all), so the figures and the rows are of one moment.

        Returns
        -------
        ScoresRead or None
            None if every attempt saw a write in between (the caller reads everything instead).

        Raises
        ------
        DatabaseUnavailable
            If the database cannot be read (the message says why and the fix).
        """
        from sqlalchemy import func

        # every row names its model and instance (foreign keys): the joins the rows are read with drop none, so the
        # table's own count (an index scan) is theirs; a row that did not join would only make the counts
        # disagree, and the caller read everything
        counted = select(func.count()).select_from(ScoreRow).where(ScoreRow.status.in_(["done", "failed"]))
        try:
            for _ in range(attempts):
                with self._session() as session:
                    before = tuple(session.connection().exec_driver_sql(_STATE_QUERY).one())
                    rows = session.execute(self._query(None, None, ["done", "failed"])
                                           .where(ScoreRow.id > int(after_id))).all()
                    count = int(session.execute(counted).scalar_one())
                    after = tuple(session.connection().exec_driver_sql(_STATE_QUERY).one())
                if before == after:
                    return ScoresRead([self._stored(*row) for row in rows], int(after[0]), int(after[1]), count)
        except (SQLAlchemyError, OSError) as error:
            raise self._fail(error) from None
        return None

    @contextmanager
    def _writing(self, session: Session | None):
        """``session`` as it is (its caller commits), or a new session committed at the end of the block."""
        if session is not None:
            yield session
            return
        with self._session.begin() as own:
            yield own

    def add_model(self, identifier: str, owner: str | None = None, public: bool = True,
                  weights_hash: str | None = None, visual_degrees: float | None = None, *,
                  session: Session | None = None) -> StoredModel:
        """Create the model row, or update the given fields of an existing one; returns it.

        ``session``: write within that session's transaction (bound to this database's engine; its
        caller commits), so that the row is committed with the caller's other rows; default: committed now.
        """
        with self._writing(session) as session:
            row = self._model_row(session, identifier, owner=owner, weights_hash=weights_hash,
                                  visual_degrees=visual_degrees)
            row.public = bool(public)
            session.flush()
            return StoredModel(row.identifier, row.owner, row.public, row.weights_hash, row.visual_degrees, row.id)

    def model(self, identifier: str) -> StoredModel | None:
        """The model row of ``identifier``, or None."""
        with self._session() as session:
            row = session.scalar(select(Model).where(Model.identifier == identifier))
            return None if row is None else StoredModel(row.identifier, row.owner, row.public, row.weights_hash,
                                                        row.visual_degrees, row.id)

    def models(self) -> list[StoredModel]:
        """Every model row, by identifier."""
        with self._session() as session:  # columns, not ORM objects: read once per results version by the website
            return [StoredModel(*row) for row in session.execute(
                select(Model.identifier, Model.owner, Model.public, Model.weights_hash, Model.visual_degrees, Model.id)
                .order_by(Model.identifier))]

    def create_submission(self, owner: str | None, models: list[str], benchmarks: list[str],
                          status: str = "pending", meta: dict | None = None, *,
                          session: Session | None = None) -> int:
        """Record a submission (who asked to score which models on which benchmarks); returns its id.

        ``session``: write within that session's transaction (as in :meth:`add_model`); default: committed now.
        """
        now = _now()
        with self._writing(session) as session:
            row = Submission(owner=owner, created=now, updated=now, status=status, models=list(models),
                             benchmarks=list(benchmarks), log="", meta=jsonable(meta or {}))
            session.add(row)
            session.flush()
            return row.id

    def submission(self, submission_id: int) -> StoredSubmission:
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
            return StoredSubmission(row.id, row.owner, list(row.models or []), list(row.benchmarks or []), row.status,
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
        """A number that changes whenever what the leaderboard shows may have changed.

        The database bumps it (triggers of migration ``0006``, in the writer's transaction) on any
        insert, update or delete of a score, any update or delete of a model, and the insert of a
        private model, whichever process or tool writes them; a new public model without scores
        leaves it. What is computed from the scores and the models' visibility (the leaderboard,
        the pages anonymous visitors see) is cached under this number in every process and
        computed again only when it changes. Reading it is one primary-key lookup on a pooled
        connection (no ORM session).
        """
        return self.results_state()[0]

    def results_state(self) -> tuple[int, int]:
        """``(version, rewrites)``: :meth:`results_version` and the count of the changes among them that were
        not a new score (migration ``0008``), in one primary-key lookup.

        Raises
        ------
        DatabaseUnavailable
            If the database cannot be read (the message says why and the fix).
        """
        try:
            with self.engine.connect() as connection:
                version, rewrites = connection.exec_driver_sql(_STATE_QUERY).one()
                return int(version), int(rewrites)
        except SQLAlchemyError as error:
            raise self._fail(error) from None

    def set_public(self, identifier: str, public: bool) -> None:
        """Make model ``identifier`` public or private (who may see it on the website).

        Raises
        ------
        DatabaseError
            If there is no such model.
        """
        with self._session.begin() as session:
            row = session.scalar(select(Model).where(Model.identifier == identifier))
            if row is None:
                raise DatabaseError(f"no model {identifier!r} in {self._shown_url}")
            row.public = bool(public)

    def delete_model(self, identifier: str) -> int:
        """Delete model ``identifier`` and all its scores and failures (its owner's "delete my model"); returns how
        many score rows went. A ``deleted_models`` row records who, when and how many.

        Raises
        ------
        DatabaseError
            If there is no such model.
        """
        with self._session.begin() as session:
            row = session.scalar(select(Model).where(Model.identifier == identifier).with_for_update())
            if row is None:
                raise DatabaseError(f"no model {identifier!r} in {self._shown_url}")
            gone = session.execute(delete(ScoreRow).where(ScoreRow.model_id == row.id)).rowcount
            session.add(DeletedModel(identifier=identifier, owner=row.owner, scores=int(gone or 0), at=_now()))
            session.delete(row)
            return int(gone or 0)

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

