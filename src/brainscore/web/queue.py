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
(:mod:`brainscore.web.child`) under the launcher of :mod:`brainscore.web.sandbox`, with

- the submission's plugin importable only there (``PYTHONPATH`` plus a ``brainscore.plugins``
  entry point in a ``.dist-info`` folder next to it; a plugin folder written for the reference
  Brain-Score is added to ``BRAINSCORE_PLUGIN_DIRS`` instead),
- the interpreter of the environment its requirements need (the server's own, or the virtual
  environment :mod:`brainscore.web.environments` prepared when the submission was queued),
- where the server may create namespaces (root, or unprivileged user namespaces): a file system of
  its own holding only the system folders, the Python environment, the data mirrors and its own
  folder (read-only), a fresh size-limited tmpfs as its working directory, no network, its own PID
  namespace and (as root) a user id of its own per submission,
- :class:`Limits`: memory (``RLIMIT_AS``), CPU time, processes (``RLIMIT_NPROC``), bytes written,
  bytes of output (the log) and wall-clock time,
- the settings (data mirrors, weights) resolved by the server and passed as environment variables:
  the child never reads the server's configuration file, database or home.

The child does not write the results database: it prints its outcome as a JSON line, and the task
records it only if it is for the model and benchmark the task was given (with the submission the
server knows), so a submission cannot record a score under another model's or user's name.
The output is read in chunks with a cap (:attr:`Limits.log`): a child that prints more is killed.
A child that fails, breaks a limit, leaves processes behind or is killed is recorded as a failure
of that benchmark, with a reason that names the limit.

Everything the child prints is appended by the Dask task to the submission task's log in the database as it comes;
a child that fails, is killed or runs out of time is recorded as a failure of that benchmark in the
results database, with its log. Neither the web process nor the Dask workers import torch or run
a model: only the child does. A server restart queues the submission tasks it left running again; the pairs
they had finished are kept.
"""
from __future__ import annotations

import codecs
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy import func, make_url, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from brainscore import config
from brainscore.registry import plugin_dirs
from brainscore.errors import BrainScoreError
from brainscore.results import Database, record
from brainscore.results.records import NotRecorded
from brainscore.results.schema import SubmissionTask
from brainscore.scoring.outcome import Outcome
from brainscore.web import environments, notices, sandbox
from brainscore.web.checks import SubmissionRejected, reference_plugin_dir

__all__ = ["SubmissionTask", "Limits", "Dispatcher", "run_pair", "place_in_queue", "write_entry_point",
           "MEMORY_LIMIT_BYTES", "CPU_LIMIT_S", "WALL_LIMIT_S", "DISK_LIMIT_BYTES", "LOG_LIMIT_BYTES",
           "PROCESS_LIMIT"]

MEMORY_LIMIT_BYTES = 8 * 1024**3
CPU_LIMIT_S = 3600
WALL_LIMIT_S = 3600
DISK_LIMIT_BYTES = 2 * 1024**3
LOG_LIMIT_BYTES = 20 * 1024**2
PROCESS_LIMIT = 512
MAX_EVENT_BYTES = 8 * 1024**2
"""Longest JSON line of the child that is read as an event (its outcome); longer lines are log only."""
MAX_LOG_CHARS = 2_000_000
MAX_FAILURE_CHARS = 4000
"""Longest failure message kept in a pair's result (the whole log is kept apart)."""
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding this brainscore package
_CHILD_ENV = ("PATH", "HOME", "LANG", "BRAINSCORE_CACHE", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
              "OPENBLAS_NUM_THREADS")
"""Environment variables a scoring child inherits; the settings (data mirrors, weights) are added resolved by
:func:`child_settings`, so the child never needs the server's configuration file. Not the website's own
settings (mail server and password, :data:`brainscore.config.Setting.child`): a submission's code never sees them."""


PREPARING_S = 60
"""Seconds a submission may stay ``preparing`` (unpacked after its checks passed) and still hold back the newer
ones behind it in the queue."""


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


@dataclass(frozen=True)
class Limits:
    """Limits of one scoring child.

    Attributes
    ----------
    memory : int
        Address space in bytes (``RLIMIT_AS``).
    cpu, wall : int
        CPU time and wall-clock time in seconds.
    disk : int
        Bytes it may write (the size of its working directory's tmpfs; ``RLIMIT_FSIZE``).
    log : int
        Bytes of output (its log) it may print; a child that prints more is killed.
    processes : int
        Processes and threads of its user (``RLIMIT_NPROC``; with a user id of its own only).
    isolate : bool
        Run it in namespaces (own file system, no network, own PID namespace) where the server may create
        them (:func:`brainscore.web.sandbox.isolation`); False runs it with the limits only.
    readable : tuple of str
        Further host folders it sees read-only (the server's ``--weights-dir`` folders).
    """

    memory: int = MEMORY_LIMIT_BYTES
    cpu: int = CPU_LIMIT_S
    wall: int = WALL_LIMIT_S
    disk: int = DISK_LIMIT_BYTES
    log: int = LOG_LIMIT_BYTES
    processes: int = PROCESS_LIMIT
    isolate: bool = True
    readable: tuple = ()


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


def child_command(model: str, benchmark: str) -> list[str]:
    """The scoring child's command line (it gets no database: the task records what it reports)."""
    return [sys.executable, "-m", "brainscore.web.child", "--model", model, "--benchmark", benchmark]


def child_settings() -> dict[str, str]:
    """The server's settings other than ``home`` (data mirrors, weights, offline, threads), resolved from its
    environment and configuration file, as the environment variables a child reads them from."""
    values = {}
    for key, setting in config.SETTINGS.items():
        if key == "home" or not setting.child:
            continue
        try:
            value, _ = config.get(key)
        except BrainScoreError:
            continue  # a broken configuration file is the server's problem, reported where the server reads it
        if value is None:
            continue
        if isinstance(value, bool):
            value = "1" if value else "0"
        elif isinstance(value, list):
            value = os.pathsep.join(str(v) for v in value)
        values[setting.env] = str(value)
    return values


def visible_paths(python: str, site: Path, hidden: list[Path], extra: tuple = ()) -> tuple[str, ...]:
    """What a contained child sees, read-only: the system folders, the Python environment of ``python`` and of
    this process, the brainscore package, the data mirrors, weight and plugin folders, the server's locally
    packaged data (``config.local_packages_dir()``) and ``site``; never a folder that holds one of ``hidden``
    (the database, the submissions, the server's home and configuration), except the virtual environment
    prepared for the submission and the packaged data, which hold nothing secret.
    ``extra``: further folders to show (the server's weight folders).
    """
    paths = [*sandbox.SYSTEM_FOLDERS, sys.prefix, sys.base_prefix, sys.exec_prefix, str(_PACKAGE_ROOT), *extra]
    paths += [p for p in sys.path if os.path.isabs(p) and os.path.isdir(p)]
    interpreter = Path(python)
    prepared = []  # the virtual environment prepared for the submission's requirements.txt: built by the server
    if (interpreter.parent.parent / "pyvenv.cfg").exists():  # from named packages, so shown even though it lives
        prepared.append(str(interpreter.parent.parent))      # under the (hidden) submissions folder
    if config.local_packages_dir().is_dir():  # data packaged on the server (package_*_locally), under its home
        prepared.append(str(config.local_packages_dir()))
    for key in ("data_mirror", "weights_mirror", "torchvision_weights", "timm_weights", "plugin_dirs"):
        try:
            value, _ = config.get(key)
        except BrainScoreError:
            continue
        paths += [str(v) for v in (value if isinstance(value, list) else [value] if value else [])]
    secret = [Path(h).resolve() for h in hidden]

    def holds_secret(path: str) -> bool:
        resolved = Path(path).resolve()
        return any(h == resolved or resolved in h.parents for h in secret)
    return tuple(dict.fromkeys([*(p for p in paths if not holds_secret(p)), *prepared, str(site)]))


# ------------------------------------------------------------------------------ the submission tasks' rows
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
    try:
        record(Outcome.from_failure(model, benchmark, failure, log=_log_of(store.engine, task_id)[-20000:]), store,
               submission_id=submission_id)
    except NotRecorded as error:  # kept in the journal (or nowhere): say so, but the task itself ended as it did
        update_task(store.engine, task_id, log_append=f"\n[{error}]\n")
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
        The child's command (default :func:`child_command`); it is run under :mod:`brainscore.web.sandbox`.

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
    env.update(child_settings())
    env.update(BRAINSCORE_OFFLINE="1", PYTHONUNBUFFERED="1",
               PYTHONPATH=os.pathsep.join([str(site), str(_PACKAGE_ROOT)]))
    reference = reference_plugin_dir(site)  # a plugin folder written for the reference Brain-Score
    folders = ([str(reference)] if reference is not None else []) + [str(p) for p in plugin_dirs()]
    if folders:  # the server's plugin folders (its environment or its config file) and the submission's
        env["BRAINSCORE_PLUGIN_DIRS"] = os.pathsep.join(folders)
    argv = command or child_command(model, benchmark)
    if command is None:
        try:  # the environment its requirements.txt needs, prepared when it was queued
            argv[0] = environments.python_for(requirements, folder.parent / "environments")
        except SubmissionRejected as missing:
            return record_pair_failure(store, task_id, submission_id, model, benchmark, "; ".join(missing.problems))
    isolated = limits.isolate and sandbox.isolation() != "none"
    if isolated:  # its own home and caches, in its working directory's tmpfs
        env["BRAINSCORE_HOME"] = str(workdir / ".home" / "brainscore")
        if config.local_packages_dir().is_dir():  # the server's packaged data, searched as a mirror (read-only)
            mirrors = [m for m in env.get("BRAINSCORE_DATA_MIRROR", "").split(os.pathsep) if m]
            env["BRAINSCORE_DATA_MIRROR"] = os.pathsep.join([*mirrors, str(config.local_packages_dir())])
    hidden = [folder.parent, config.home(), config.config_file().parent, Path.home()]
    database = make_url(db_url)
    if database.drivername.startswith("sqlite") and database.database not in (None, "", ":memory:"):
        hidden.append(Path(database.database))
    uid = sandbox.UID_BASE + task_id % sandbox.UID_RANGE
    spec = sandbox.Spec(readable=visible_paths(argv[0], site, hidden, limits.readable), workdir=str(workdir), isolate=isolated,
                        uid=uid, gid=uid, memory=limits.memory, cpu=limits.cpu, processes=limits.processes,
                        disk=limits.disk)
    ended = _run_child(engine, task_id, spec, argv, env, workdir, limits)
    failure = ended.failure(limits)
    if failure is None:
        failure, outcome = _checked_outcome(ended.events, model, benchmark)
        if failure is None:
            try:
                record(outcome, store, submission_id=submission_id)
            except NotRecorded as error:
                if error.kept is None:
                    failure = f"its score could not be recorded: {error}"
                else:  # in the journal: recorded when the database next opens
                    update_task(engine, task_id, log_append=f"\n[{error}]\n")
            except BrainScoreError as error:
                failure = f"its score could not be recorded: {error}"
            if failure is None:
                result = {"status": "done", "score": outcome.score}
                _set_result(engine, task_id, f"{model}|{benchmark}", result)
                return result
    return record_pair_failure(store, task_id, submission_id, model, benchmark, failure)


def _checked_outcome(events: list[dict], model: str, benchmark: str) -> tuple[str | None, Outcome | None]:
    """The outcome the child reported, if it is one score of ``model`` on ``benchmark``: ``(None, outcome)``;
    else ``(why not, None)``. Identifiers are the task's, never the child's: an outcome for anything else is
    refused, so a submission cannot record a score under another model's (and so another user's) name."""
    done = [event for event in events if event.get("event") == "done"]
    if len(done) != 1:
        return (f"it ended without reporting a score (exit code 0, {len(done)} results instead of 1)", None)
    try:
        outcome = Outcome.from_json(done[0].get("outcome") or {})
    except (TypeError, ValueError) as error:
        return f"it reported a malformed result ({error}); nothing was recorded", None
    if (outcome.model, outcome.benchmark) != (model, benchmark):
        return (f"it reported a result for model {outcome.model!r} on {outcome.benchmark!r}, but it was run for "
                f"{model!r} on {benchmark!r}: a submission records scores of its own models only; nothing was "
                f"recorded", None)
    if outcome.status != "done" or not isinstance(outcome.score, (int, float)):
        return f"it reported a result that is not a score (status {outcome.status!r}); nothing was recorded", None
    return None, outcome


def _where() -> str:
    """`` (Dask worker ADDRESS)`` inside a Dask task, else empty."""
    try:
        from distributed import get_worker

        return f" (Dask worker {get_worker().address})"
    except (ImportError, ValueError):
        return ""


def _size(count: int) -> str:
    """``count`` bytes in words: ``1.0 GiB``, ``64 MiB``, ``512 KiB``."""
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if count >= size:
            return f"{count / size:.3g} {unit}"
    return f"{count} bytes"


@dataclass
class _Ended:
    """How a child ended: the sandbox's verdict, whether the task killed it and why, its events and last line."""

    verdict: dict
    killed_for: str | None
    events: list
    last_line: str

    def failure(self, limits: Limits) -> str | None:
        """Why the pair failed, naming the limit it broke (None: it exited 0 and left nothing running)."""
        line = shorten(self.last_line.strip(), MAX_FAILURE_CHARS)
        if self.killed_for is not None:
            return f"{self.killed_for}: {line}" if line else self.killed_for
        if "error" in self.verdict:
            return self.verdict["error"]
        left = self.verdict.get("left_behind", 0)
        code, number = self.verdict.get("exit"), self.verdict.get("signal")
        if code == 0 and not left:
            return None
        if number == signal.SIGXCPU:
            reason = f"exceeded the CPU-time limit of {limits.cpu} s (killed by SIGXCPU)"
        elif number is not None:
            reason = f"killed by signal {number} ({signal.Signals(number).name})"
        elif "MemoryError" in line or "can't allocate memory" in line or "Cannot allocate memory" in line:
            reason = f"ran out of memory: the memory limit of {_size(limits.memory)} (RLIMIT_AS) was reached"
        elif "Resource temporarily unavailable" in line and ("fork" in line.lower() or "BlockingIOError" in line):
            reason = f"the process limit of {limits.processes} processes and threads (RLIMIT_NPROC) was reached"
        elif "No space left on device" in line or "File too large" in line:
            reason = f"wrote more than the disk limit of {_size(limits.disk)} (its working directory's size)"
        elif "Network is unreachable" in line or "Temporary failure in name resolution" in line:
            reason = f"exited with code {code}; submissions have no network"
        elif "Read-only file system" in line or "No such file or directory" in line or "Permission denied" in line:
            reason = (f"exited with code {code}; a submission sees only its own folder (read-only), the Python "
                      f"environment and the data, and writes only in its working directory")
        elif code == 0:
            reason = (f"left {left} process{'es' if left != 1 else ''} running when it ended (killed): a "
                      f"submission's processes must end with it")
        else:
            reason = f"exited with code {code}"
        if left and code != 0:
            reason += f" (and left {left} process{'es' if left != 1 else ''} running, killed)"
        return f"{reason}: {line}" if line else reason


def _run_child(engine: Engine, task_id: int, spec: sandbox.Spec, argv: list[str], env: dict, workdir: Path,
               limits: Limits) -> _Ended:
    """Run ``argv`` under the sandbox; stream its output into the task's log, at most ``limits.log`` bytes."""
    report_read, report_write = os.pipe()
    spec = sandbox.Spec(**{**spec.__dict__, "report_fd": report_write})
    try:
        process = subprocess.Popen(sandbox.launcher_command(spec, argv), cwd=workdir, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, start_new_session=True, pass_fds=(report_write,))
    finally:
        os.close(report_write)
    killed_for: list[str] = []

    def kill(reason: str) -> None:  # the launcher, and with it its namespace (or its session)
        if not killed_for:
            killed_for.append(reason)
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(limits.wall, kill, [f"exceeded the wall-clock time limit of {limits.wall} s (killed)"])
    timer.start()
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    events, line, skipping, total, pending, flushed, last = [], b"", False, 0, [], time.monotonic(), ""
    try:
        while chunk := os.read(process.stdout.fileno(), 65536):
            total += len(chunk)
            if total > limits.log:  # keep what fits, drain the rest unread
                if not killed_for:
                    kept = chunk[:max(0, limits.log - (total - len(chunk)))]
                    pending.append(decoder.decode(kept, final=True))
                    pending.append(f"\n[... output beyond the log limit of {_size(limits.log)} left out ...]\n")
                    kill(f"printed more than the log limit of {_size(limits.log)} (killed)")
                continue
            pending.append(decoder.decode(chunk))
            parts = chunk.split(b"\n")  # the events: whole JSON lines of at most MAX_EVENT_BYTES
            for index, part in enumerate(parts):
                complete = index < len(parts) - 1
                if skipping:
                    skipping = not complete
                    continue
                line += part
                if len(line) > MAX_EVENT_BYTES:
                    line, skipping = b"", not complete
                    continue
                if complete:
                    if line.startswith(b'{"event"'):
                        try:
                            events.append(json.loads(line))
                        except ValueError:
                            pass
                    elif line.strip():  # the last line that is not an event: what a failure quotes
                        last = line[-MAX_FAILURE_CHARS * 2:].decode("utf-8", "replace")
                    line = b""
            if time.monotonic() - flushed > 0.5:  # one write per half second, not per chunk
                update_task(engine, task_id, log_append="".join(pending))
                pending, flushed = [], time.monotonic()
        process.wait()
    finally:
        timer.cancel()
        process.stdout.close()
        if pending:
            update_task(engine, task_id, log_append="".join(pending))
        with os.fdopen(report_read, "rb") as report:
            verdict_line = report.read(65536)
    if line.strip() and not killed_for:
        last = line[-MAX_FAILURE_CHARS * 2:].decode("utf-8", "replace")
    try:
        verdict = json.loads(verdict_line) if verdict_line.strip() else {}
    except ValueError:
        verdict = {}
    if not verdict and not killed_for:
        verdict = {"error": f"the sandbox ended without a verdict (exit code {process.returncode})"}
    return _Ended(verdict, killed_for[0] if killed_for else None, events, last)


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
    """

    def __init__(self, engine: Engine, store: Database, db_url: str, root: Path,
                 memory_limit: int = MEMORY_LIMIT_BYTES, cpu_limit: int = CPU_LIMIT_S, wall_limit: int = WALL_LIMIT_S,
                 workers: int | None = None, scheduler: str | None = None, client=None, mailer=None,
                 disk_limit: int = DISK_LIMIT_BYTES, readable: tuple = ()):
        self.engine, self.store, self.db_url, self.root = engine, store, db_url, Path(root)
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
        """Hand the next pair of the oldest submissions without one in flight to Dask, up to :meth:`capacity`.

        Submissions are taken in the order they were accepted (their id, given when their checks
        passed). One that is still ``preparing`` (being unpacked, for at most :data:`PREPARING_S`)
        holds back every newer one, so that a later upload unpacked sooner never overtakes it; one
        preparing for longer (its server died while unpacking) is passed over.
        """
        capacity = self.capacity()
        with Session(self.engine) as session:
            tasks = [(task.id, task.status, task.created, task.pairs, dict(task.results or {}), task.submission_id)
                     for task in session.scalars(
                         select(SubmissionTask).where(SubmissionTask.status.in_(("preparing", "queued", "running")))
                         .order_by(SubmissionTask.id))]
        now = _now()
        for task_id, status, created, pairs, results, submission_id in tasks:
            if status == "preparing":
                if created is not None and (now - created).total_seconds() < PREPARING_S:
                    return  # the next in line is being unpacked: nothing newer goes before it
                continue
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
