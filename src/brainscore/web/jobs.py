"""The submission queue: one worker thread that runs each submission's scoring in child processes.

State lives in the database (:class:`Job`), so the status pages read it from there: ``queued``
(with its place), ``running`` (benchmark k of n), ``done``, ``failed`` (with the log), or
``rejected`` (its checks failed, with the reasons). Each (model, benchmark) pair runs as its own
OS process (:mod:`brainscore.web.child`) with

- its own working directory under the submission's folder,
- the submission's plugin importable only there (``PYTHONPATH`` plus a ``brainscore.plugins``
  entry point in a ``.dist-info`` folder next to it),
- a memory limit (``RLIMIT_AS``) and a CPU-time limit (``RLIMIT_CPU``) set in the child, and a
  wall-clock limit enforced by the worker,
- no network: started under ``unshare --net`` (a fresh network namespace without interfaces) when
  the server may do so (root, ``unshare`` present); otherwise :data:`NETWORK_ISOLATION` says so
  and ``BRAINSCORE_OFFLINE=1`` is all that keeps the data store from downloading.

Everything the child prints is appended to the job's log; a child that fails, is killed or runs
out of time is recorded as a failure of that benchmark in the results database, with its log.
"""
from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy import JSON, DateTime, Integer, String, Text, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Mapped, Session, mapped_column

from brainscore.web.accounts import Base

MEMORY_LIMIT_BYTES = 8 * 1024**3
CPU_LIMIT_S = 3600
WALL_LIMIT_S = 3600
MAX_LOG_CHARS = 2_000_000
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding this brainscore package


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _network_isolation() -> list[str]:
    unshare = shutil.which("unshare")
    if unshare and os.geteuid() == 0:
        try:
            if subprocess.run([unshare, "--net", "true"], capture_output=True, timeout=10).returncode == 0:
                return [unshare, "--net"]
        except (OSError, subprocess.TimeoutExpired):
            pass
    return []


NETWORK_ISOLATION = _network_isolation()
"""The command prefix that cuts a child off the network (empty where unavailable: offline env only)."""


class Job(Base):
    """One submission (or one re-run of a failed benchmark) and its state."""

    __tablename__ = "web_jobs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    owner: Mapped[str] = mapped_column(String(40), index=True)
    package: Mapped[str] = mapped_column(String(200), default="")
    filename: Mapped[str] = mapped_column(String(300), default="")
    models: Mapped[list] = mapped_column(JSON, default=list)
    benchmarks: Mapped[list] = mapped_column(JSON, default=list)
    requirements: Mapped[list] = mapped_column(JSON, default=list)
    public: Mapped[bool] = mapped_column(default=True)
    status: Mapped[str] = mapped_column(String(20), default="queued", index=True)
    current: Mapped[int] = mapped_column(Integer, default=0)
    results: Mapped[dict] = mapped_column(JSON, default=dict)  # "model|benchmark" -> {"status", "score"|"error"}
    error: Mapped[str] = mapped_column(Text, default="")
    log: Mapped[str] = mapped_column(Text, default="")
    folder: Mapped[str] = mapped_column(String(500), default="")
    rerun_of: Mapped[int | None] = mapped_column(Integer, nullable=True)
    submission_id: Mapped[int | None] = mapped_column(Integer, nullable=True)  # the results database's submission
    created: Mapped[datetime] = mapped_column(DateTime, default=_now)
    started: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    finished: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)

    @property
    def total(self) -> int:
        """Number of (model, benchmark) runs."""
        return len(self.models) * len(self.benchmarks)

    def as_dict(self, place: int | None = None) -> dict:
        """The JSON form of ``GET /api/submissions/{id}``."""
        return {"id": self.id, "owner": self.owner, "status": self.status, "place": place,
                "models": self.models, "benchmarks": self.benchmarks, "public": self.public,
                "progress": {"current": self.current, "total": self.total}, "results": self.results,
                "requirements": self.requirements, "error": self.error, "log": self.log,
                "rerun_of": self.rerun_of, "submission_id": self.submission_id,
                "created": self.created.isoformat() if self.created else None,
                "finished": self.finished.isoformat() if self.finished else None}


def place_in_queue(engine: Engine, job: Job) -> int | None:
    """1 for the next queued job, 2 for the one after, ...; None unless ``job`` is queued."""
    if job.status != "queued":
        return None
    with Session(engine) as session:
        ahead = session.scalars(select(Job.id).where(Job.status == "queued", Job.id < job.id)).all()
    return len(ahead) + 1


def write_entry_point(site: Path, package: str, job_id: int) -> None:
    """Make ``package`` (a folder in ``site``) a ``brainscore.plugins`` entry point for processes that put
    ``site`` on their path (importlib.metadata reads ``.dist-info`` folders on ``sys.path``)."""
    info = site / f"brainscore_submission_{job_id}-0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: brainscore-submission-{job_id}\nVersion: 0\n")
    (info / "entry_points.txt").write_text(f"[brainscore.plugins]\nsubmission = {package}\n")


class Worker:
    """One thread that runs queued jobs, one child process at a time.

    Parameters
    ----------
    engine : Engine
        The web tables.
    store : Database
        The results database (scores and failures are recorded there).
    db_url : str
        Passed to the child, which records its score.
    root : Path
        Folder of the submissions (``root/<job id>/site`` holds the plugin, ``root/<job id>/run`` is
        the child's working directory).
    """

    def __init__(self, engine: Engine, store, db_url: str, root: Path, memory_limit: int = MEMORY_LIMIT_BYTES,
                 cpu_limit: int = CPU_LIMIT_S, wall_limit: int = WALL_LIMIT_S):
        self.engine, self.store, self.db_url, self.root = engine, store, db_url, Path(root)
        self.memory_limit, self.cpu_limit, self.wall_limit = memory_limit, cpu_limit, wall_limit
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread (jobs left ``running`` by a previous server are queued again)."""
        with Session(self.engine) as session:
            for job in session.scalars(select(Job).where(Job.status == "running")):
                job.status, job.log = "queued", job.log + "\n[server restarted; queued again]\n"
            session.commit()
        self._thread = threading.Thread(target=self._loop, name="brainscore-submissions", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Ask the thread to finish after the current child."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def notify(self) -> None:
        """A job was queued."""
        self._wake.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            with Session(self.engine) as session:
                job_id = session.scalar(select(Job.id).where(Job.status == "queued").order_by(Job.id).limit(1))
            if job_id is None:
                self._wake.wait(timeout=2)
                self._wake.clear()
                continue
            try:
                self.run(job_id)
            except Exception as error:  # never let the queue die silently
                self._update(job_id, status="failed", error=f"internal error: {error!r}", finished=_now())

    def _update(self, job_id: int, log_append: str = "", **fields) -> None:
        with Session(self.engine) as session:
            job = session.get(Job, job_id)
            for key, value in fields.items():
                setattr(job, key, value)
            if log_append:
                log = (job.log or "") + log_append
                if len(log) > MAX_LOG_CHARS:  # keep the head (what ran) and the tail (how it ended)
                    log = log[:10_000] + "\n[... log truncated ...]\n" + log[-(MAX_LOG_CHARS - 10_000):]
                job.log = log
            session.commit()

    def _limits(self):
        memory, cpu = self.memory_limit, self.cpu_limit

        def apply():  # runs in the child between fork and exec: C calls only, no locks taken
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        return apply

    def command(self, model: str, benchmark: str, submission_id: int | None) -> list[str]:
        """The child's command line (``submission_id``: the results database's submission the score belongs to)."""
        link = ["--submission", str(submission_id)] if submission_id is not None else []
        return NETWORK_ISOLATION + [sys.executable, "-m", "brainscore.web.child", "--model", model,
                                    "--benchmark", benchmark, "--db", self.db_url] + link

    def run(self, job_id: int) -> None:
        """Run every (model, benchmark) of a job in its own child; record failures with their logs."""
        with Session(self.engine) as session:
            job = session.get(Job, job_id)
            models, benchmarks, folder = list(job.models), list(job.benchmarks), Path(job.folder)
            results, submission_id = dict(job.results or {}), job.submission_id
        self._update(job_id, status="running", started=_now(), current=0)
        if submission_id is not None:
            self.store.update_submission(submission_id, status="running")
        site, workdir = folder / "site", folder / "run"
        workdir.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "BRAINSCORE_HOME",
                                                              "BRAINSCORE_DATA_MIRROR", "BRAINSCORE_CACHE",
                                                              "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
        env["BRAINSCORE_OFFLINE"] = "1"
        env["PYTHONPATH"] = os.pathsep.join([str(site), str(_PACKAGE_ROOT)])
        env["PYTHONUNBUFFERED"] = "1"
        pairs = [(m, b) for m in models for b in benchmarks]
        failed = False
        for k, (model, benchmark) in enumerate(pairs, start=1):
            self._update(job_id, current=k, log_append=f"\n=== [{k}/{len(pairs)}] {model} on {benchmark}\n")
            ok, error, value = self._run_child(job_id, submission_id, model, benchmark, env, workdir)
            key = f"{model}|{benchmark}"
            if ok:
                results[key] = {"status": "done", "score": value}
            else:
                failed = True
                results[key] = {"status": "failed", "error": error}
                with Session(self.engine) as session:
                    log = session.get(Job, job_id).log
                self.store.record_failure(model, benchmark, error, log=log[-20000:], submission_id=submission_id)
            self._update(job_id, results=dict(results))
        self._update(job_id, status="failed" if failed else "done", finished=_now(),
                     error="one or more benchmarks failed; see the log" if failed else "")
        if submission_id is not None:
            self.store.update_submission(submission_id, status="failed" if failed else "done",
                                         log_append=self._log(job_id))

    def _run_child(self, job_id, submission_id, model, benchmark, env, workdir) -> tuple[bool, str, float | None]:
        process = subprocess.Popen(self.command(model, benchmark, submission_id), cwd=workdir, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   start_new_session=True, preexec_fn=self._limits())
        def kill_group():  # the child and anything it started (its own session)
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(self.wall_limit, kill_group)
        timer.start()
        value, pending, flushed = None, [], time.monotonic()
        try:
            for line in process.stdout:
                pending.append(line)
                if time.monotonic() - flushed > 0.5:  # one write per half second, not per line
                    self._update(job_id, log_append="".join(pending))
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
                self._update(job_id, log_append="".join(pending))
        if code == 0 and value is not None:
            return True, "", value
        if code < 0:
            reason = {9: "killed (time limit of %d s or memory)" % self.wall_limit,
                      24: "CPU-time limit of %d s exceeded" % self.cpu_limit}.get(-code, f"killed by signal {-code}")
        else:
            reason = f"exited with code {code}"
        tail = [line for line in self._log(job_id).splitlines() if line.strip()][-1:] or [""]
        return False, f"{reason}: {tail[0][:300]}", None

    def _log(self, job_id: int) -> str:
        with Session(self.engine) as session:
            return session.get(Job, job_id).log
