"""The submission tasks' rows: their place in the queue, their log and results, and a pair's failure.

A :class:`~brainscore.results.schema.SubmissionTask` is a submission's state in the database: the pages read it, the
queue (:mod:`brainscore.web.queue`) and its pairs (:mod:`brainscore.web.pairs`) write it through these functions.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from brainscore.results import Database, record
from brainscore.results.records import NotRecorded
from brainscore.results.schema import SubmissionTask
from brainscore.scoring.outcome import Outcome

__all__ = ["SubmissionTask", "place_in_queue", "write_entry_point", "update_task", "set_result", "log_of",
           "record_pair_failure", "shorten", "MAX_LOG_CHARS", "MAX_FAILURE_CHARS", "Quotas", "QuotaExceeded",
           "check_quotas", "WAITING_STATUSES"]

MAX_LOG_CHARS = 2_000_000
MAX_FAILURE_CHARS = 4000
"""Longest failure message kept in a pair's result (the whole log is kept apart)."""


WAITING_STATUSES = ("preparing", "awaiting approval", "queued", "running")
"""The states of a submission task that is not finished: it counts against its owner's quotas."""


@dataclass(frozen=True)
class Quotas:
    """What one user may have the queue hold at once (``brainscore serve --max-submissions-per-user`` and
    friends); every submission's pairs are bounded on top of that by the per-pair limits (time, memory, disk).

    Attributes
    ----------
    submissions : int
        Submissions of one user that are not finished (preparing, awaiting approval, queued or running).
    pairs_per_submission : int
        (model, benchmark) pairs of one submission (its models times its benchmarks).
    pairs_per_user : int
        Pairs not yet scored over all of one user's unfinished submissions.
    """

    submissions: int = 3
    pairs_per_submission: int = 100
    pairs_per_user: int = 200

    def __post_init__(self):
        for name in ("submissions", "pairs_per_submission", "pairs_per_user"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"quota {name} must be a whole number >= 1, got {value!r}")


class QuotaExceeded(ValueError):
    """A new submission would exceed one of its owner's :class:`Quotas`.

    ``problems`` names the quota, its value and what the user holds; ``status_code`` is 429 (wait for a
    submission to finish) or 400 (the submission itself is too large: split it)."""

    def __init__(self, problems: list[str], status_code: int = 429):
        self.problems, self.status_code = list(problems), status_code
        super().__init__("; ".join(self.problems))


def check_quotas(engine: Engine, owner: str, pairs: int, quotas: Quotas, session: Session | None = None) -> None:
    """Raise :class:`QuotaExceeded` if a new submission of ``owner`` with ``pairs`` (model, benchmark) pairs would
    exceed ``quotas``; ``session`` (optional) is the transaction that will queue it (its own rows are not counted).

    Raises
    ------
    QuotaExceeded
        400 when ``pairs`` alone exceeds :attr:`Quotas.pairs_per_submission`; 429 when the owner already holds
        :attr:`Quotas.submissions` unfinished submissions or their unscored pairs plus ``pairs`` exceed
        :attr:`Quotas.pairs_per_user`.
    """
    if pairs > quotas.pairs_per_submission:
        raise QuotaExceeded([f"this submission has {pairs} (model, benchmark) pairs, more than the quota of "
                             f"{quotas.pairs_per_submission} pairs per submission; submit fewer models or choose "
                             f"fewer benchmarks (split it into several submissions)"], status_code=400)
    own = session is None
    session = Session(engine) if own else session
    try:
        rows = session.execute(select(SubmissionTask.id, SubmissionTask.models, SubmissionTask.benchmarks,
                                      SubmissionTask.results)
                               .where(SubmissionTask.owner == owner, SubmissionTask.status.in_(WAITING_STATUSES))
                               ).all()
    finally:
        if own:
            session.close()
    if len(rows) >= quotas.submissions:
        raise QuotaExceeded([f"you have {len(rows)} submissions waiting or running, the quota of "
                             f"{quotas.submissions} unfinished submissions per user; submit again when one of them "
                             f"has finished"])
    waiting = sum(max(0, len(models or []) * len(benchmarks or []) - len(results or {}))
                  for _, models, benchmarks, results in rows)
    if waiting + pairs > quotas.pairs_per_user:
        raise QuotaExceeded([f"your unfinished submissions hold {waiting} (model, benchmark) pairs still to score; "
                             f"this one's {pairs} would exceed the quota of {quotas.pairs_per_user} pairs per user; "
                             f"submit again when some have been scored, or submit fewer pairs"])


def now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def place_in_queue(engine: Engine, task: SubmissionTask) -> int | None:
    """1 for the next queued task, 2 for the one after, ...; None unless ``task`` is queued."""
    if task.status != "queued":
        return None
    with Session(engine) as session:  # counted by the database: no row of the queue comes back
        ahead = session.scalar(select(func.count()).select_from(SubmissionTask)
                               .where(SubmissionTask.status == "queued", SubmissionTask.id < task.id))
    return ahead + 1


def write_entry_point(site: Path, package: str, task_id: int) -> None:
    """Make ``package`` (a folder in ``site``) a ``brainscore.plugins`` entry point for processes that put
    ``site`` on their path (importlib.metadata reads ``.dist-info`` folders on ``sys.path``)."""
    info = site / f"brainscore_submission_{task_id}-0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: brainscore-submission-{task_id}\nVersion: 0\n")
    (info / "entry_points.txt").write_text(f"[brainscore.plugins]\nsubmission = {package}\n")


def update_task(engine: Engine, task_id: int, log_append: str = "", **fields) -> None:
    """Set ``fields`` of submission task ``task_id`` and append ``log_append`` to its log (the log is capped at
    :data:`MAX_LOG_CHARS`, keeping its head and its tail)."""
    with Session(engine) as session:
        task = session.get(SubmissionTask, task_id)
        for key, value in fields.items():
            setattr(task, key, value)
        if log_append:
            log = (task.log or "") + log_append
            if len(log) > MAX_LOG_CHARS:  # keep the head (what ran) and the tail (how it ended)
                log = log[:10_000] + "\n[... log truncated ...]\n" + log[-(MAX_LOG_CHARS - 10_000):]
            task.log = log
        session.commit()


def set_result(engine: Engine, task_id: int, key: str, result: dict) -> None:
    """Set the result of pair ``key`` (``"model|benchmark"``) of submission task ``task_id``."""
    with Session(engine) as session:
        task = session.get(SubmissionTask, task_id)
        task.results = {**(task.results or {}), key: result}
        session.commit()


def log_of(engine: Engine, task_id: int) -> str:
    with Session(engine) as session:
        return session.get(SubmissionTask, task_id).log or ""


def record_pair_failure(store: Database, task_id: int, submission_id: int | None, model: str, benchmark: str,
                        failure: str) -> dict:
    """Record that ``model`` failed on ``benchmark`` in submission task ``task_id``: in its results and, with the
    task's log, in the results database. Returns the task's result entry (``results["model|benchmark"]``)."""
    result = {"status": "failed", "failure": failure}
    set_result(store.engine, task_id, f"{model}|{benchmark}", result)
    try:
        record(Outcome.from_failure(model, benchmark, failure, log=log_of(store.engine, task_id)[-20000:]), store,
               submission_id=submission_id)
    except NotRecorded as error:  # kept in the journal (or nowhere): say so, but the task itself ended as it did
        update_task(store.engine, task_id, log_append=f"\n[{error}]\n")
    return result


def shorten(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters, else cut at the last word boundary before ``limit`` with
    `` …`` appended (a failure message is never cut inside a word)."""
    if len(text) <= limit:
        return text
    cut = text[:limit - 2]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + " …"
