"""Stand-in for the results database and leaderboard aggregation until ``brainscore.results`` lands.

The web app codes against the results API (``brainscore.results.Database`` and
``brainscore.leaderboard.aggregate.leaderboard_records``). When those modules exist they are used;
otherwise this module supplies a minimal implementation of the same calls so the site runs and is
tested now. Delete this module (and keep only the imports) once the results package is merged.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

try:  # the real API (results engineer, issue 11)
    from brainscore.results import Database  # noqa: F401
    from brainscore.leaderboard.aggregate import leaderboard_records  # noqa: F401
    STAND_IN = False
except ImportError:  # pragma: no cover - replaced when the results package is merged
    STAND_IN = True

if STAND_IN:
    from sqlalchemy import JSON, DateTime, Float, Integer, String, Text, create_engine, select
    from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

    def default_url() -> str:
        """``$BRAINSCORE_DB_URL``, else ``sqlite:///$BRAINSCORE_HOME/results.sqlite``."""
        if os.environ.get("BRAINSCORE_DB_URL"):
            return os.environ["BRAINSCORE_DB_URL"]
        home = Path(os.environ.get("BRAINSCORE_HOME", Path.home() / ".brainscore"))
        home.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{home / 'results.sqlite'}"

    class _Base(DeclarativeBase):
        pass

    class _ScoreRow(_Base):
        __tablename__ = "standin_scores"
        id: Mapped[int] = mapped_column(Integer, primary_key=True)
        model: Mapped[str] = mapped_column(String(200), index=True)
        benchmark: Mapped[str] = mapped_column(String(200), index=True)
        score: Mapped[float | None] = mapped_column(Float, nullable=True)
        raw: Mapped[float | None] = mapped_column(Float, nullable=True)
        ceiling: Mapped[float | None] = mapped_column(Float, nullable=True)
        error: Mapped[float | None] = mapped_column(Float, nullable=True)
        ci_lo: Mapped[float | None] = mapped_column(Float, nullable=True)
        ci_hi: Mapped[float | None] = mapped_column(Float, nullable=True)
        layers: Mapped[dict | None] = mapped_column(JSON, nullable=True)
        provenance: Mapped[dict | None] = mapped_column(JSON, nullable=True)
        status: Mapped[str] = mapped_column(String(10), default="done")
        comment: Mapped[str] = mapped_column(Text, default="")
        submission_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
        end: Mapped[datetime] = mapped_column(DateTime, default=lambda: datetime.now(timezone.utc))

    class _ModelRow(_Base):
        __tablename__ = "standin_models"
        identifier: Mapped[str] = mapped_column(String(200), primary_key=True)
        owner: Mapped[str | None] = mapped_column(String(200), nullable=True)
        public: Mapped[bool] = mapped_column(default=True)

    @dataclass
    class ScoreRecord:
        """One stored score (the fields of ``brainscore.results.ScoreRecord`` the site reads)."""

        model: str
        benchmark: str
        score: float | None
        raw: float | None = None
        ceiling: float | None = None
        error: float | None = None
        ci95: tuple | None = None
        provenance: dict = field(default_factory=dict)
        layers: dict | None = None
        end: datetime | None = None
        status: str = "done"
        comment: str = ""
        benchmark_version: Any = None
        submission_id: int | None = None

    def _num(value) -> float | None:
        if value is None:
            return None
        value = float(value)
        return None if math.isnan(value) else value

    class Database:
        """Minimal stand-in of ``brainscore.results.Database`` (scores, failures, model ownership)."""

        def __init__(self, url: str | None = None):
            self.url = url or default_url()
            self.engine = create_engine(self.url)
            _Base.metadata.create_all(self.engine)

        def record_score(self, score, submission_id=None) -> int:
            attrs = score.attrs
            ci = attrs.get("ci95")
            row = _ScoreRow(model=attrs["model_identifier"], benchmark=attrs["benchmark_identifier"],
                            score=_num(score), raw=_num(attrs.get("raw")), ceiling=_num(attrs.get("ceiling")),
                            error=_num(attrs.get("error")), ci_lo=_num(ci[0]) if ci is not None else None,
                            ci_hi=_num(ci[1]) if ci is not None else None, layers=attrs.get("layers"),
                            provenance=json.loads(json.dumps(attrs.get("provenance") or {}, default=str)),
                            submission_id=submission_id)
            with Session(self.engine) as session:
                session.add(row)
                session.commit()
                return row.id

        def record_failure(self, model_identifier, benchmark_identifier, error: str, log: str = "",
                           provenance=None, submission_id=None) -> int:
            row = _ScoreRow(model=model_identifier, benchmark=benchmark_identifier, score=None, status="failed",
                            comment=error, provenance=provenance or {}, submission_id=submission_id)
            with Session(self.engine) as session:
                session.add(row)
                session.commit()
                return row.id

        def scores(self, model_identifier=None, benchmark_identifier=None, include_failed=False) -> list:
            query = select(_ScoreRow).order_by(_ScoreRow.id)
            if model_identifier:
                query = query.where(_ScoreRow.model == model_identifier)
            if benchmark_identifier:
                query = query.where(_ScoreRow.benchmark == benchmark_identifier)
            if not include_failed:
                query = query.where(_ScoreRow.status == "done")
            with Session(self.engine) as session:
                rows = session.scalars(query).all()
            latest = {}
            for r in rows:  # latest per (model, benchmark, status)
                latest[(r.model, r.benchmark, r.status)] = ScoreRecord(
                    r.model, r.benchmark, r.score, r.raw, r.ceiling, r.error,
                    (r.ci_lo, r.ci_hi) if r.ci_lo is not None else None, r.provenance or {}, r.layers, r.end,
                    r.status, r.comment, None, r.submission_id)
            return list(latest.values())

        def find_score(self, model_identifier, benchmark_identifier, provenance_key=None):
            found = self.scores(model_identifier, benchmark_identifier)
            return found[-1] if found else None

        def add_model(self, identifier, owner=None, public=True, weights_hash=None, visual_degrees=None):
            with Session(self.engine) as session:
                row = session.get(_ModelRow, identifier) or _ModelRow(identifier=identifier)
                row.owner, row.public = owner, public
                session.add(row)
                session.commit()

        def model(self, identifier):
            with Session(self.engine) as session:
                row = session.get(_ModelRow, identifier)
                if row is not None:
                    session.expunge(row)
                return row

        def models(self) -> list:
            with Session(self.engine) as session:
                rows = session.scalars(select(_ModelRow)).all()
                for row in rows:
                    session.expunge(row)
                return list(rows)

    def leaderboard_records(db=None, benchmarks=None) -> list[dict]:
        """``{"model", "scores": {node: value|None}, "missing": {node: count}}`` per model.

        A node's value is the mean of its children (a missing child counts as 0, as in Brain-Score),
        None when all its leaves are missing; ``missing`` counts the missing leaves under each node.
        """
        from brainscore.leaderboard import tree

        db = db or Database()
        parents = tree.benchmark_parents()
        if benchmarks is not None:
            parents = {b: p for b, p in parents.items() if b in benchmarks}
        inner = tree.inner_nodes()
        full = {**inner, **parents}
        kids: dict[str, list[str]] = {}
        for child, parent in full.items():
            kids.setdefault(parent, []).append(child)
        by_model: dict[str, dict[str, float]] = {}
        for record in db.scores():
            if record.benchmark in parents and record.score is not None:
                by_model.setdefault(record.model, {})[record.benchmark] = record.score
        records = []
        for model, leaves in sorted(by_model.items()):
            scores, missing = {}, {}

            def value(node):
                if node in parents:
                    v = leaves.get(node)
                    scores[node], missing[node] = v, int(v is None)
                    return v, int(v is None), 1
                parts = [value(c) for c in sorted(kids.get(node, []))]
                n_leaves = sum(p[2] for p in parts)
                if n_leaves == 0:
                    return None, 0, 0
                miss = sum(p[1] for p in parts)
                present = [p for p in parts if p[2]]
                v = None if miss == n_leaves else sum(p[0] or 0.0 for p in present) / len(present)
                scores[node], missing[node] = v, miss
                return v, miss, n_leaves

            for root in tree.ROOTS:
                value(root)
            records.append({"model": model, "scores": scores, "missing": missing})
        return records
