"""The submission queue: submissions are scored on a Dask cluster, each pair across the boundary.

State lives in the database (:class:`~brainscore.results.schema.SubmissionTask`, :mod:`brainscore.web.tasks`), so the
pages read it from there: ``queued`` (with its place), ``running`` (benchmark k of n), ``done``, ``failed`` (with the
log), or ``rejected`` (its checks failed, with the reasons).

The :class:`Dispatcher` (a thread of the web server) hands the (model, benchmark) pairs of queued
submissions to a Dask cluster: by default a :class:`distributed.LocalCluster` of worker
*processes* that ``brainscore serve`` starts (``--workers N``), or an existing scheduler
(``--scheduler ADDR``, :func:`brainscore.runner.clusters.connect`). It is fair between users and first come
first served for each user: a submission's pairs form a chain (its next pair is handed over when the previous one
ends), at most as many submissions are in flight as the cluster has worker threads, and a worker that frees goes
to the user with the fewest pairs in flight, among equals the one served longest ago (round-robin over the users
with waiting pairs), then to that user's oldest submission: one user's many or slow pairs never hold back another
user's submission for longer than one pair. Each task carries the Dask priority ``-id`` of its submission task.
What one user may hold in the queue at all is bounded at upload (:class:`~brainscore.web.tasks.Quotas`).

Each Dask task is :func:`brainscore.web.pairs.run_pair`: the submission's model runs in a sandboxed model server, the
benchmark, its data, metric and ceiling in a trusted scorer of the server's own, and only the scorer's outcome is
recorded (see :mod:`brainscore.web.pairs` and :mod:`brainscore.boundary`). Neither the web process nor the Dask
workers import torch or run a model. A server restart queues the submission tasks it left running again; the pairs
they had finished are kept.
"""
from __future__ import annotations

import itertools
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from brainscore.boundary.process import (CPU_LIMIT_S, DISK_LIMIT_BYTES, LOG_LIMIT_BYTES, MEMORY_LIMIT_BYTES,
                                         PROCESS_LIMIT, WALL_LIMIT_S, Limits)
from brainscore.results import Database
from brainscore.web import notices, watchdog
from brainscore.web.pairs import run_pair
from brainscore.web.tasks import (Quotas, SubmissionTask, log_of, now, place_in_queue, record_pair_failure, shorten,
                                  update_task, write_entry_point)

__all__ = ["SubmissionTask", "Limits", "Quotas", "Dispatcher", "run_pair", "place_in_queue", "write_entry_point",
           "shorten",
           "MEMORY_LIMIT_BYTES", "CPU_LIMIT_S", "WALL_LIMIT_S", "DISK_LIMIT_BYTES", "LOG_LIMIT_BYTES",
           "PROCESS_LIMIT", "PREPARING_S"]

PREPARING_S = 60
"""Seconds a submission may stay ``preparing`` (unpacked after its checks passed) and still hold back the newer
ones behind it in the queue."""


# ------------------------------------------------------------------------------ the dispatcher
class Dispatcher:
    """The web server's thread that hands queued submissions to a Dask cluster, first come first served.

    Parameters
    ----------
    engine : Engine
        The results database's engine (the web tables are there).
    store : Database
        The results database (failures and submissions are recorded there).
    db_url : str
        Passed to the tasks, which open the database in their worker process.
    root : Path
        Folder of the submissions (``root/<task id>/site`` holds the plugin, ``root/<task id>/run`` is
        the child's working directory); an existing cluster's workers must see the same paths.
    memory_limit, cpu_limit, wall_limit, disk_limit : int
        Per-child limits (bytes, seconds, seconds, bytes written).
    readable : tuple of str
        Further server folders a child sees read-only (``brainscore serve --weights-dir``).
    workers : int, optional
        Worker processes of the LocalCluster it starts (default
        :func:`brainscore.runner.clusters.default_workers`).
    scheduler : str, optional
        Address of an existing Dask scheduler to use instead (``tcp://host:8786``).
    client : distributed.Client, optional
        A client to use as is (tests); the dispatcher then neither starts nor closes a cluster.
    mailer : Mailer, optional
        Mails each finished or failed submission's result to its owner (:func:`brainscore.web.notices.send_result`,
        in a thread of its own: a slow or broken mail server never holds up the queue or loses a score).
        None: no mail.
    quotas : Quotas, optional
        What one user may hold in the queue (checked at upload, :func:`~brainscore.web.tasks.check_quotas`).
    """

    def __init__(self, engine: Engine, store: Database, db_url: str, root: Path,
                 memory_limit: int = MEMORY_LIMIT_BYTES, cpu_limit: int = CPU_LIMIT_S, wall_limit: int = WALL_LIMIT_S,
                 workers: int | None = None, scheduler: str | None = None, client=None, mailer=None,
                 disk_limit: int = DISK_LIMIT_BYTES, readable: tuple = (), quotas: Quotas | None = None):
        self.engine, self.store, self.db_url, self.root = engine, store, db_url, Path(root)
        self.quotas = quotas or Quotas()
        self._served: dict[str, int] = {}  # user -> when (a counter) a pair of theirs was last handed out
        self._turn = itertools.count()
        self.mailer = mailer
        self.mails: list[threading.Thread] = []  # the threads sending results (tests join them)
        self.limits = Limits(memory=memory_limit, cpu=cpu_limit, wall=wall_limit, disk=disk_limit,
                             readable=tuple(str(path) for path in readable))
        self.workers, self.scheduler = workers, scheduler
        self.client, self._own_client, self.cluster = client, client is None, None
        self.problem: str | None = None  # why no cluster could be reached (shown on the pages)
        self._active: dict[int, tuple] = {}  # submission task id -> (future, k, model, benchmark)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def command(self, model: str, benchmark: str, submission_id: int | None) -> list[str] | None:
        """The model server's command for a pair (None: the standard one, built on the worker; tests give theirs)."""
        return None

    def scorer(self, model: str, benchmark: str, submission_id: int | None) -> list[str] | None:
        """The trusted scorer's command for a pair (None: :func:`brainscore.web.pairs.scorer_command`)."""
        return None

    def requeue_running(self) -> int:
        """Queue again the submission tasks a previous server left ``running`` (their finished pairs are kept),
        first ending the processes of their pair that are still alive (:func:`brainscore.web.watchdog.reap_recorded`:
        the pair's watchdog normally ended them when the previous server's worker died); returns how many."""
        with Session(self.engine) as session:
            tasks = session.scalars(select(SubmissionTask).where(SubmissionTask.status == "running")).all()
            for task in tasks:
                reaped = watchdog.reap_recorded(task.folder) if task.folder else None
                task.status = "queued"
                task.log = ((task.log or "") + "\n[server restarted; queued again" + (f"; {reaped}" if reaped else "")
                            + "]\n")
            session.commit()
            return len(tasks)

    def start(self) -> None:
        """Queue again what a previous server left running, then start the thread (which connects to Dask)."""
        self.requeue_running()
        self._thread = threading.Thread(target=self._loop, name="brainscore-submissions", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop handing out work and close the cluster this dispatcher started (running children are killed with it)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def notify(self) -> None:
        """A submission task was queued."""
        self._wake.set()

    # ---- the thread
    def _connect(self) -> None:
        from brainscore.runner import clusters

        if self.client is None:
            # every submission alike: no worker set apart for forward passes (each Dask task is a whole scoring child)
            self.client, self.cluster = clusters.connect(scheduler=self.scheduler, workers=self.workers,
                                                         model_slot=False)
        self.problem = None

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                if self.client is None:
                    self._connect()
                self._collect()
                self._dispatch()
            except Exception as error:  # never let the queue die silently: show it and try again
                self.problem = f"the scoring cluster is not available: {type(error).__name__}: {error}"
                print(f"brainscore serve: {self.problem}", file=sys.stderr, flush=True)
                self._wake.wait(timeout=10)
            self._wake.wait(timeout=0.5)
            self._wake.clear()
        self._close()

    def _close(self) -> None:
        if self._own_client and self.client is not None:
            try:
                self.client.close()
            finally:
                if self.cluster is not None:
                    self.cluster.close()
            self.client = self.cluster = None

    def capacity(self) -> int:
        """Submissions in flight at once: the cluster's worker threads (at least 1)."""
        if self.client is None:
            return 1
        workers = self.client.scheduler_info().get("workers", {})
        return max(1, sum(int(w.get("nthreads", 1)) for w in workers.values()))

    def _dispatch(self) -> None:
        """Hand the next pair of waiting submissions to Dask, up to :meth:`capacity` submissions in flight, fairly.

        Each free place goes to the user with the fewest submissions in flight, among equals the one whose
        pair was handed out longest ago (never: first), and then to that user's oldest submission without a pair
        in flight. So users take turns as workers free, and one user's submissions run in the order they were
        accepted (their id, given when their checks passed); among users who have not been served yet the
        oldest submission goes first. A submission that is still ``preparing`` (being unpacked, for at most
        :data:`PREPARING_S`) holds back every newer one, so that a later upload unpacked sooner never overtakes
        it; one preparing for longer (its server died while unpacking) is passed over.
        """
        capacity = self.capacity()
        with Session(self.engine) as session:
            tasks = [(task.id, task.owner, task.status, task.created, task.pairs, dict(task.results or {}),
                      task.submission_id)
                     for task in session.scalars(
                         select(SubmissionTask).where(SubmissionTask.status.in_(("preparing", "queued", "running")))
                         .order_by(SubmissionTask.id))]
        current = now()
        owners = {task_id: owner for task_id, owner, *_ in tasks}
        waiting = []  # (task id, owner, next pair, submission id), oldest first
        for task_id, owner, status, created, pairs, results, submission_id in tasks:
            if status == "preparing":
                if created is not None and (current - created).total_seconds() < PREPARING_S:
                    break  # the next in line is being unpacked: nothing newer goes before it
                continue
            if task_id in self._active:
                continue
            remaining = [(k, m, b) for k, (m, b) in enumerate(pairs, start=1) if f"{m}|{b}" not in results]
            if not remaining:
                self._finish(task_id)
                continue
            waiting.append((task_id, owner, remaining[0], submission_id))
        in_flight = Counter(owners.get(task_id, "") for task_id in self._active)
        while waiting and len(self._active) < capacity:
            chosen = min(waiting, key=lambda w: (in_flight[w[1]], self._served.get(w[1], -1), w[0]))
            waiting.remove(chosen)
            task_id, owner, (k, model, benchmark), submission_id = chosen
            future = self.client.submit(run_pair, self.db_url, task_id, k, model, benchmark, self.limits,
                                        self.command(model, benchmark, submission_id),
                                        self.scorer(model, benchmark, submission_id),
                                        key=f"web-task-{task_id}-{k}-{time.time_ns()}", priority=-task_id,
                                        pure=False, retries=0)
            self._active[task_id] = (future, k, model, benchmark)
            in_flight[owner] += 1
            self._served[owner] = next(self._turn)

    def _collect(self) -> None:
        """Take in the pairs that ended; a task that Dask lost (a worker died) is a failure of that pair."""
        for task_id, (future, k, model, benchmark) in list(self._active.items()):
            if future.status == "pending":
                continue
            del self._active[task_id]
            if future.status != "finished":
                try:
                    error = future.exception(timeout=5)
                except Exception as lost:  # cancelled, or the scheduler is gone
                    error = lost
                with Session(self.engine) as session:
                    submission_id = session.get(SubmissionTask, task_id).submission_id
                message = f"the scoring task was lost: {type(error).__name__}: {error}"
                update_task(self.engine, task_id, log_append=f"\n[{message}]\n")
                record_pair_failure(self.store, task_id, submission_id, model, benchmark, message)
            self._wake.set()  # its next pair, or the next submission task

    def _finish(self, task_id: int) -> None:
        with Session(self.engine) as session:
            task = session.get(SubmissionTask, task_id)
            failed = any(r.get("status") == "failed" for r in (task.results or {}).values())
            submission_id = task.submission_id
        update_task(self.engine, task_id, status="failed" if failed else "done", finished=now(),
                   failure="one or more benchmarks failed; see the log" if failed else "")
        if submission_id is not None:
            self.store.update_submission(submission_id, status="failed" if failed else "done",
                                         log_append=log_of(self.engine, task_id))
        if self.mailer is not None:
            thread = threading.Thread(target=notices.send_result, args=(self.engine, self.mailer, task_id),
                                      name=f"brainscore-mail-{task_id}", daemon=True)
            thread.start()
            self.mails = [t for t in self.mails if t.is_alive()] + [thread]
