"""A new benchmark, every model: registering a new benchmark (or a new version of one) queues it for every
public model, as the reference's "score new plugins" flow does (brain-score/vision
``.github/workflows/score_new_plugins.yml``: a merged benchmark plugin is scored against ``ALL_PUBLIC`` models).

Each public model gets one submission task of its own (:class:`~brainscore.results.schema.SubmissionTask`) on
the new benchmark, in the folder of the model's newest submission (its plugin and prepared environment; a built-in
model gets an empty one), so the ordinary queue (:mod:`brainscore.web.queue`) scores it like any submission.
The task's ``filename`` marks it as this flow's (:func:`marker`), so queueing again queues nothing twice: a model
is skipped when it already has a score on that benchmark version, a task of this flow for that version (whatever
its state), or a submission task of its own still waiting to score that benchmark. Private models are never
queued.

:func:`progress` is what the benchmark's page shows: n of m models scored, queued, running, failed.
"""
from __future__ import annotations

from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from brainscore import registry
from brainscore.errors import BrainScoreError
from brainscore.leaderboard import tree
from brainscore.web.queue import SubmissionTask

__all__ = ["marker", "registered_version", "queue_for_public_models", "new_benchmark_versions",
           "queue_new_benchmarks", "progress", "tasks_of"]

PENDING = ("preparing", "queued", "running")


def marker(benchmark: str, version: int) -> str:
    """The ``filename`` of this flow's submission tasks for ``benchmark`` at ``version``."""
    return f"new benchmark {benchmark} v{version}"


def tasks_of(session: Session, benchmark: str) -> list[tuple[int, SubmissionTask]]:
    """``[(version, task), ...]``: this flow's submission tasks for ``benchmark`` (every version), oldest first.

    One indexed-prefix query of the queue (the benchmark page asks at every build; the queue grows).
    """
    prefix = marker(benchmark, 0)[:-1]
    named = session.scalars(select(SubmissionTask).where(SubmissionTask.filename.startswith(prefix, autoescape=True))
                            .order_by(SubmissionTask.id))
    return [(int(t.filename[len(prefix):]), t) for t in named if t.filename[len(prefix):].isdigit()]


def registered_version(benchmark: str) -> int:
    """The version of ``benchmark`` its plugin registers (the benchmark object is built; no data is loaded).

    Raises
    ------
    BrainScoreError
        If ``benchmark`` is not a leaderboard benchmark, or its object declares no whole-number version.
    """
    if benchmark not in tree.benchmark_parents():
        raise BrainScoreError(f"{benchmark!r} is not a leaderboard benchmark (see GET /api/benchmarks); "
                              f"selection-only and unknown benchmarks are not queued for every model")
    version = getattr(registry.load_benchmark(benchmark), "version", None)
    try:
        return int(version)
    except (TypeError, ValueError):
        raise BrainScoreError(f"benchmark {benchmark!r} declares no version (got {version!r}); its plugin must set "
                              f"one so that its scores can be told from a later version's") from None


def _tasks(session: Session) -> list[SubmissionTask]:
    return list(session.scalars(select(SubmissionTask).order_by(SubmissionTask.id)))


def queue_for_public_models(site, benchmark: str, version: int | None = None) -> list[int]:
    """Queue ``benchmark`` for every public model that needs it; returns the new submission tasks' ids.

    Parameters
    ----------
    site : Site
        The website (:class:`brainscore.web.site.Site`): its database, submissions folder and dispatcher.
    benchmark : str
        A leaderboard benchmark.
    version : int, optional
        Its version (default: the one its plugin registers, :func:`registered_version`).

    Raises
    ------
    BrainScoreError
        As :func:`registered_version`.
    """
    version = registered_version(benchmark) if version is None else int(version)
    label = marker(benchmark, version)
    scored = {r.model for r in site.store.scores(benchmark_identifier=benchmark) if r.benchmark_version == version}
    queued: list[int] = []
    with Session(site.engine, expire_on_commit=False) as session:
        tasks = _tasks(session)
    covered = set(scored)
    newest: dict[str, SubmissionTask] = {}
    for task in tasks:
        for model in task.models or []:
            if task.filename == label or (task.status in PENDING and benchmark in (task.benchmarks or [])):
                covered.add(model)
            if not task.filename.startswith("new benchmark ") and task.folder:
                newest[model] = task  # the model's newest own submission: its plugin and environment
    for model in [m for m in site.store.models() if m.public and m.identifier not in covered]:
        own = newest.get(model.identifier)
        with Session(site.engine, expire_on_commit=False) as session:  # committed before the next write opens
            task = SubmissionTask(owner=model.owner or "", package=own.package if own else "", filename=label,
                                  models=[model.identifier], benchmarks=[benchmark],
                                  requirements=list(own.requirements or []) if own else [], public=True,
                                  status="preparing", folder=own.folder if own else "",
                                  log=f"{label}: queued for every public model\n")
            session.add(task)
            session.commit()
            if own is None:  # a built-in (or command-line scored) model: an empty plugin folder of its own
                folder = Path(site.root) / str(task.id)
                (folder / "site").mkdir(parents=True, exist_ok=True)
                task.folder = str(folder)
            submission = site.store.create_submission(
                model.owner, [model.identifier], [benchmark], status="queued",
                meta={"web_job": task.id, "new_benchmark": benchmark, "version": version})
            task.submission_id, task.status = submission, "queued"
            session.commit()
            queued.append(task.id)
    if queued:
        site.dispatcher.notify()
    return queued


def new_benchmark_versions(site, benchmarks: list[str] | None = None) -> list[tuple[str, int]]:
    """The leaderboard benchmarks whose registered version is newer than any recorded and not yet queued by
    this flow: ``[(benchmark, version), ...]`` (a benchmark whose plugin cannot be built is skipped).

    A benchmark no model was ever scored on counts as new. ``benchmarks``: look at these only (default: all).
    """
    recorded = site.store.benchmark_versions()
    with Session(site.engine) as session:
        labels = {task.filename for task in _tasks(session)}
    found = []
    for benchmark in sorted(tree.benchmark_parents()):
        if benchmarks is not None and benchmark not in benchmarks:
            continue
        try:
            version = registered_version(benchmark)
        except (BrainScoreError, ImportError):
            continue
        if version > recorded.get(benchmark, 0) and marker(benchmark, version) not in labels:
            found.append((benchmark, version))
    return found


def queue_new_benchmarks(site, benchmarks: list[str] | None = None) -> dict[str, list[int]]:
    """Queue every new benchmark version (:func:`new_benchmark_versions`, of ``benchmarks`` if given) for every
    public model; returns benchmark -> the queued submission tasks' ids, for the benchmarks that queued any (what
    ``brainscore serve --score-new-benchmarks`` does at start)."""
    queued = {benchmark: queue_for_public_models(site, benchmark, version)
              for benchmark, version in new_benchmark_versions(site, benchmarks)}
    return {benchmark: ids for benchmark, ids in queued.items() if ids}


def progress(site, benchmark: str, hidden: set[str] | frozenset = frozenset()) -> dict | None:
    """How far ``benchmark``'s newest version queued for every public model has come, or None if it never was.

    Returns
    -------
    dict or None
        ``{"version", "total", "scored", "queued", "running", "failed", "models": {model: state}}``: ``total``
        counts the models queued and the public models already scored on that version when it was queued; a
        model is ``scored`` once a score of that version is recorded, else ``failed``, ``running`` or
        ``queued`` as its task is. Models in ``hidden`` are counted but not named.
    """
    with Session(site.engine) as session:
        mine = tasks_of(session, benchmark)
        if not mine:
            return None
        version = max(v for v, _ in mine)
        mine = [t for v, t in mine if v == version]
        states = {}
        for task in mine:
            for model in task.models or []:
                result = (task.results or {}).get(f"{model}|{benchmark}") or {}
                states[model] = ("failed" if result.get("status") == "failed" or task.status == "failed"
                                 else "running" if task.status == "running" else "queued")
    private = site.store.private_models()
    for record in site.store.scores(benchmark_identifier=benchmark):  # scored before (not queued) or since
        if record.benchmark_version == version and (record.model in states or record.model not in private):
            states[record.model] = "scored"
    counts = {state: sum(1 for s in states.values() if s == state) for state in ("scored", "queued", "running",
                                                                              "failed")}
    return {"version": version, "total": len(states), **counts,
            "models": {m: s for m, s in sorted(states.items()) if m not in hidden}}
