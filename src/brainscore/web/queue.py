"""The submission queue: submissions are scored on a Dask cluster, each pair in a sandboxed child process.

State lives in the database (:class:`~brainscore.results.schema.SubmissionTask`), so the pages read it from
there: ``queued`` (with its place), ``running`` (benchmark k of n), ``done``, ``failed`` (with the
log), or ``rejected`` (its checks failed, with the reasons).

The :class:`Dispatcher` (a thread of the web server) hands the (model, benchmark) pairs of queued
submissions to a Dask cluster: by default a :class:`distributed.LocalCluster` of worker
*processes* that ``brainscore serve`` starts (``--workers N``), or an existing scheduler
(``--scheduler ADDR``, :func:`brainscore.runner.clusters.connect`). It is fair, first come first
served: a submission's pairs form a chain (its next pair is handed over when the previous one
ends), at most as many submissions are in flight as the cluster has worker threads, the oldest
queued submission goes first, and each task carries the Dask priority ``-id`` of its submission task (older first).

Each Dask task is :func:`run_pair`, which runs one pair as its own OS process
(:mod:`brainscore.web.child`) with

- its own working directory under the submission's folder,
- the submission's plugin importable only there (``PYTHONPATH`` plus a ``brainscore.plugins``
  entry point in a ``.dist-info`` folder next to it; a plugin folder written for the reference
  Brain-Score is added to ``BRAINSCORE_PLUGIN_DIRS`` instead),
- the interpreter of the environment its requirements need (the server's own, or the virtual
  environment :mod:`brainscore.web.environments` prepared when the submission was queued),
- a memory limit (``RLIMIT_AS``) and a CPU-time limit (``RLIMIT_CPU``), set by ``prlimit`` (or
  in the child before it executes, where ``prlimit`` is missing), and a wall-clock limit enforced
  by the task,
- no network: started under ``unshare --net`` (a fresh network namespace without interfaces) when
  the worker may do so (root, ``unshare`` present); otherwise :func:`network_isolation` is empty
  and ``BRAINSCORE_OFFLINE=1`` is all that keeps the data store from downloading.

Everything the child prints is appended by the Dask task to the submission task's log in the database as it comes;
a child that fails, is killed or runs out of time is recorded as a failure of that benchmark in the
results database, with its log. Neither the web process nor the Dask workers import torch or run
a model: only the child does. A server restart queues the submission tasks it left running again; the pairs
they had finished are kept.
"""
from __future__ import annotations

import functools
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from brainscore import config
from brainscore.registry import plugin_dirs
from brainscore.results import Database, record
from brainscore.results.schema import SubmissionTask
from brainscore.scoring.outcome import Outcome
from brainscore.web import environments, notices
from brainscore.web.checks import SubmissionRejected, reference_plugin_dir

__all__ = ["SubmissionTask", "Limits", "Dispatcher", "run_pair", "place_in_queue", "write_entry_point",
           "network_isolation",
           "MEMORY_LIMIT_BYTES", "CPU_LIMIT_S", "WALL_LIMIT_S"]

MEMORY_LIMIT_BYTES = 8 * 1024**3
CPU_LIMIT_S = 3600
WALL_LIMIT_S = 3600
MAX_LOG_CHARS = 2_000_000
MAX_FAILURE_CHARS = 4000
"""Longest failure message kept in a pair's result (the whole log is kept apart)."""
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding this brainscore package
_CHILD_ENV = ("PATH", "HOME", "LANG", "XDG_CONFIG_HOME", "BRAINSCORE_CACHE", "BRAINSCORE_PLUGIN_DIRS",
              "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
              *(setting.env for setting in config.SETTINGS.values() if setting.child))
"""Environment variables a scoring child inherits: the settings' variables and where the settings file is
(``XDG_CONFIG_HOME``), so a child finds the data mirrors and weights the server's user configured. Not the
website's own settings (mail server and password, :data:`brainscore.config.Setting.child`): a submission's
code never sees them."""


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


@functools.lru_cache(maxsize=None)
def network_isolation() -> tuple[str, ...]:
    """The command prefix that cuts a child off the network (``unshare --net``), empty where this process
    may not create a network namespace (not root, or no ``unshare``): then the child runs offline only."""
    unshare = shutil.which("unshare")
    if unshare and os.geteuid() == 0:
        try:
            if subprocess.run([unshare, "--net", "true"], capture_output=True, timeout=10).returncode == 0:
                return (unshare, "--net")
        except (OSError, subprocess.TimeoutExpired):
            pass
    return ()


@dataclass(frozen=True)
class Limits:
    """Limits of one scoring child: address space in bytes, CPU time and wall-clock time in seconds."""

    memory: int = MEMORY_LIMIT_BYTES
    cpu: int = CPU_LIMIT_S
    wall: int = WALL_LIMIT_S

    def prefix(self) -> list[str]:
        """``prlimit --as=... --cpu=... --`` (empty where ``prlimit`` is missing: :meth:`preexec` sets them)."""
        prlimit = shutil.which("prlimit")
        return [prlimit, f"--as={self.memory}", f"--cpu={self.cpu}", "--"] if prlimit else []

    def preexec(self):
        """A ``preexec_fn`` that sets the limits in the child (only used without ``prlimit``)."""
        memory, cpu = self.memory, self.cpu

        def apply():  # between fork and exec: C calls only
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        return apply


def place_in_queue(engine: Engine, task: SubmissionTask) -> int | None:
    """1 for the next queued task, 2 for the one after, ...; None unless ``task`` is queued."""
    if task.status != "queued":
        return None
    with Session(engine) as session:
        ahead = session.scalars(select(SubmissionTask.id).where(SubmissionTask.status == "queued",
                                                                SubmissionTask.id < task.id)).all()
    return len(ahead) + 1


def write_entry_point(site: Path, package: str, task_id: int) -> None:
    """Make ``package`` (a folder in ``site``) a ``brainscore.plugins`` entry point for processes that put
    ``site`` on their path (importlib.metadata reads ``.dist-info`` folders on ``sys.path``)."""
    info = site / f"brainscore_submission_{task_id}-0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: brainscore-submission-{task_id}\nVersion: 0\n")
    (info / "entry_points.txt").write_text(f"[brainscore.plugins]\nsubmission = {package}\n")


def child_command(model: str, benchmark: str, db_url: str, submission_id: int | None) -> list[str]:
    """The scoring child's command line (``submission_id``: the results database's submission of the score)."""
    link = ["--submission", str(submission_id)] if submission_id is not None else []
    return [sys.executable, "-m", "brainscore.web.child", "--model", model, "--benchmark", benchmark,
            "--db", db_url] + link


# ------------------------------------------------------------------------------ the submission tasks' rows
@functools.lru_cache(maxsize=8)
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


def _set_result(engine: Engine, task_id: int, key: str, result: dict) -> None:
    with Session(engine) as session:
        task = session.get(SubmissionTask, task_id)
        task.results = {**(task.results or {}), key: result}
        session.commit()


def _log_of(engine: Engine, task_id: int) -> str:
    with Session(engine) as session:
        return session.get(SubmissionTask, task_id).log or ""


def record_pair_failure(store: Database, task_id: int, submission_id: int | None, model: str, benchmark: str,
                        failure: str) -> dict:
    """Record that ``model`` failed on ``benchmark`` in submission task ``task_id``: in its results and, with the
    task's log, in the results database. Returns the task's result entry (``results["model|benchmark"]``)."""
    result = {"status": "failed", "failure": failure}
    _set_result(store.engine, task_id, f"{model}|{benchmark}", result)
    record(Outcome.from_failure(model, benchmark, failure, log=_log_of(store.engine, task_id)[-20000:]), store,
           submission_id=submission_id)
    return result


# ------------------------------------------------------------------------------ the Dask task
def run_pair(db_url: str, task_id: int, k: int, model: str, benchmark: str, limits: Limits = Limits(),
             command: list[str] | None = None) -> dict:
    """Score one (model, benchmark) pair of submission task ``task_id`` in a sandboxed child process: the Dask task.

    Marks the submission task ``running`` at pair ``k``, runs the child (its working directory
    ``<task folder>/run``, the plugin in ``<task folder>/site``, ``limits``, no network), appends what it
    prints to the task's log as it comes, and records the outcome in the task's results (a failure also in
    the results database, with the log; a score the child records itself).

    Parameters
    ----------
    db_url : str
        The results database (which holds the web tables).
    task_id, k : int
        The submission task and the 1-based index of the pair among its
        :attr:`~brainscore.results.schema.SubmissionTask.pairs`.
    limits : Limits
    command : list of str, optional
        The child's command (default :func:`child_command`); the network and limit prefixes are added.

    Returns
    -------
    dict
        ``{"status": "done", "score": float}`` or ``{"status": "failed", "failure": str}``.
    """
    store = Database(db_url)  # opened per task: a Dask worker runs tasks in threads of its own
    engine = store.engine
    with Session(engine) as session:
        task = session.get(SubmissionTask, task_id)
        folder, submission_id, total, started = Path(task.folder), task.submission_id, task.total, task.started
        requirements = list(task.requirements or [])
    fields = {"status": "running", "current": k, "failure": ""}
    if started is None:
        fields["started"] = _now()
    update_task(engine, task_id, log_append=f"\n=== [{k}/{total}] {model} on {benchmark}{_where()}\n", **fields)
    if submission_id is not None:
        store.update_submission(submission_id, status="running")
    site, workdir = folder / "site", folder / "run"
    workdir.mkdir(parents=True, exist_ok=True)
    env = {name: value for name, value in os.environ.items() if name in _CHILD_ENV}
    env.update(BRAINSCORE_OFFLINE="1", PYTHONUNBUFFERED="1",
               PYTHONPATH=os.pathsep.join([str(site), str(_PACKAGE_ROOT)]))
    reference = reference_plugin_dir(site)  # a plugin folder written for the reference Brain-Score
    folders = ([str(reference)] if reference is not None else []) + [str(p) for p in plugin_dirs()]
    if folders:  # the server's plugin folders (its environment or its config file) and the submission's
        env["BRAINSCORE_PLUGIN_DIRS"] = os.pathsep.join(folders)
    argv = command or child_command(model, benchmark, db_url, submission_id)
    if command is None:
        try:  # the environment its requirements.txt needs, prepared when it was queued
            argv[0] = environments.python_for(requirements, folder.parent / "environments")
        except SubmissionRejected as missing:
            return record_pair_failure(store, task_id, submission_id, model, benchmark, "; ".join(missing.problems))
    ok, error, value = _run_child(engine, task_id, list(network_isolation()) + limits.prefix() + argv, env, workdir,
                                  limits)
    if ok:
        result = {"status": "done", "score": value}
        _set_result(engine, task_id, f"{model}|{benchmark}", result)
        return result
    return record_pair_failure(store, task_id, submission_id, model, benchmark, error)


def _where() -> str:
    """`` (Dask worker ADDRESS)`` inside a Dask task, else empty."""
    try:
        from distributed import get_worker

        return f" (Dask worker {get_worker().address})"
    except (ImportError, ValueError):
        return ""


def _run_child(engine: Engine, task_id: int, argv: list[str], env: dict, workdir: Path,
               limits: Limits) -> tuple[bool, str, float | None]:
    preexec = None if argv[len(network_isolation())].endswith("prlimit") else limits.preexec()
    process = subprocess.Popen(argv, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, errors="replace", start_new_session=True, preexec_fn=preexec)

    def kill_group():  # the child and anything it started (its own session)
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(limits.wall, kill_group)
    timer.start()
    value, pending, flushed = None, [], time.monotonic()
    try:
        for line in process.stdout:
            pending.append(line)
            if time.monotonic() - flushed > 0.5:  # one write per half second, not per line
                update_task(engine, task_id, log_append="".join(pending))
                pending, flushed = [], time.monotonic()
            if line.startswith("{"):
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if event.get("event") == "done":
                    value = event.get("score")
        code = process.wait()
    finally:
        timer.cancel()
        if pending:
            update_task(engine, task_id, log_append="".join(pending))
    if code == 0 and value is not None:
        return True, "", value
    if code < 0:
        reason = {9: f"killed (time limit of {limits.wall} s or memory)",
                  24: f"CPU-time limit of {limits.cpu} s exceeded"}.get(-code, f"killed by signal {-code}")
    else:
        reason = f"exited with code {code}"
    tail = [line for line in _log_of(engine, task_id).splitlines() if line.strip()][-1:] or [""]
    return False, f"{reason}: {shorten(tail[0].strip(), MAX_FAILURE_CHARS)}", None


def shorten(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters, else cut at the last word boundary before ``limit`` with
    `` …`` appended (a failure message is never cut inside a word)."""
    if len(text) <= limit:
        return text
    cut = text[:limit - 2]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + " …"


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
    memory_limit, cpu_limit, wall_limit : int
        Per-child limits (bytes, seconds, seconds).
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
    """

    def __init__(self, engine: Engine, store: Database, db_url: str, root: Path,
                 memory_limit: int = MEMORY_LIMIT_BYTES, cpu_limit: int = CPU_LIMIT_S, wall_limit: int = WALL_LIMIT_S,
                 workers: int | None = None, scheduler: str | None = None, client=None, mailer=None):
        self.engine, self.store, self.db_url, self.root = engine, store, db_url, Path(root)
        self.mailer = mailer
        self.mails: list[threading.Thread] = []  # the threads sending results (tests join them)
        self.limits = Limits(memory=memory_limit, cpu=cpu_limit, wall=wall_limit)
        self.workers, self.scheduler = workers, scheduler
        self.client, self._own_client, self.cluster = client, client is None, None
        self.problem: str | None = None  # why no cluster could be reached (shown on the pages)
        self._active: dict[int, tuple] = {}  # submission task id -> (future, k, model, benchmark)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def command(self, model: str, benchmark: str, submission_id: int | None) -> list[str] | None:
        """The child's command for a pair (None: :func:`child_command`, built on the worker)."""
        return None

    def requeue_running(self) -> int:
        """Queue again the submission tasks a previous server left ``running`` (their finished pairs are kept);
        returns how many."""
        with Session(self.engine) as session:
            tasks = session.scalars(select(SubmissionTask).where(SubmissionTask.status == "running")).all()
            for task in tasks:
                task.status, task.log = "queued", (task.log or "") + "\n[server restarted; queued again]\n"
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
        """Hand the next pair of the oldest submissions without one in flight to Dask, up to :meth:`capacity`."""
        capacity = self.capacity()
        with Session(self.engine) as session:
            tasks = [(task.id, task.pairs, dict(task.results or {}), task.submission_id) for task in session.scalars(
                select(SubmissionTask).where(SubmissionTask.status.in_(("queued", "running")))
                .order_by(SubmissionTask.id))]
        for task_id, pairs, results, submission_id in tasks:
            if len(self._active) >= capacity:
                return
            if task_id in self._active:
                continue
            remaining = [(k, m, b) for k, (m, b) in enumerate(pairs, start=1) if f"{m}|{b}" not in results]
            if not remaining:
                self._finish(task_id)
                continue
            k, model, benchmark = remaining[0]
            future = self.client.submit(run_pair, self.db_url, task_id, k, model, benchmark, self.limits,
                                        self.command(model, benchmark, submission_id),
                                        key=f"web-task-{task_id}-{k}-{time.time_ns()}", priority=-task_id,
                                        pure=False, retries=0)
            self._active[task_id] = (future, k, model, benchmark)

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
        update_task(self.engine, task_id, status="failed" if failed else "done", finished=_now(),
                   failure="one or more benchmarks failed; see the log" if failed else "")
        if submission_id is not None:
            self.store.update_submission(submission_id, status="failed" if failed else "done",
                                         log_append=_log_of(self.engine, task_id))
        if self.mailer is not None:
            thread = threading.Thread(target=notices.send_result, args=(self.engine, self.mailer, task_id),
                                      name=f"brainscore-mail-{task_id}", daemon=True)
            thread.start()
            self.mails = [t for t in self.mails if t.is_alive()] + [thread]
