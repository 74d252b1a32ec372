"""One (model, benchmark) pair of a submission, scored across the boundary: the Dask task :func:`run_pair`.

Two processes per pair, started by the task and talking over one socket (:mod:`brainscore.boundary`):

- the **model server** (:mod:`brainscore.boundary.server`), the only process that runs the submission's code: under
  the launcher (:mod:`brainscore.boundary.launcher`) with :class:`~brainscore.boundary.Limits`, in the interpreter its
  requirements need (the server's, or the environment :mod:`brainscore.web.environments` prepared), with the plugin
  importable only there (``PYTHONPATH`` and a ``brainscore.plugins`` entry point in a ``.dist-info`` folder next to
  it; a plugin folder written for the reference Brain-Score is added to ``BRAINSCORE_PLUGIN_DIRS`` instead), seeing
  (where the server may create namespaces) only the system folders, the Python environment, the brainscore package
  without its benchmark, data and metric plugins, the weights, its own folder and the stimulus folder, all read-only,
  a fresh size-limited tmpfs as its working directory, no network, its own PID namespace and (as root) a user id of
  its own. It never sees the data mirrors, the server's packaged data, home, database or configuration;
- the **trusted scorer** (:mod:`brainscore.boundary.scorer`): the server's own interpreter and plugins, its data and
  cache. It loads the benchmark, its data, metric and ceiling, asks the model server for the model's answers, checks
  them, computes the score with its bootstrap, and prints the outcome on a pipe only this task reads.

What the model server prints (and the scorer's progress on its standard error) is the submission's log, appended to
the task's log as it comes, read in chunks with a cap (:attr:`Limits.log`: a model server that prints more is
killed); it is never parsed for results. The outcome is recorded (:func:`brainscore.results.record`, which checks
every score) only as the scorer reports it, under the task's model and benchmark, so a submission can neither forge
a score nor record one under another model's name. A pair fails, with a reason in the submitter's terms, when the
model breaks a limit (named), raises, answers what the boundary refuses (NaN, a wrong shape, other stimuli, a request
for the data), leaves processes behind, or when the trusted side fails.
"""
from __future__ import annotations

import codecs
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from sqlalchemy import make_url
from sqlalchemy.orm import Session

from brainscore.boundary import cgroup, launcher
from brainscore.boundary.process import PACKAGE_ROOT, Limits, prepare_resources, sandbox, server_command
from brainscore.errors import BrainScoreError
from brainscore.plugin_sources import private_bytecode
from brainscore.results import Database, record
from brainscore.results.records import NotRecorded
from brainscore.results.schema import SubmissionTask
from brainscore.scoring.outcome import Outcome
from brainscore.web import environments, watchdog
from brainscore.web.checks import SubmissionRejected, reference_plugin_dir
from brainscore.web.tasks import (MAX_FAILURE_CHARS, now, record_pair_failure, set_result, shorten,
                                  update_task)

__all__ = ["run_pair", "scorer_command", "MAX_EVENT_BYTES", "SERVER_GRACE_S"]

MAX_EVENT_BYTES = 8 * 1024**2
"""Most bytes of the scorer's standard output read (its one outcome line)."""
SERVER_GRACE_S = 10
"""Seconds the model server has to end after the scorer ended (it is told to); then it is killed, and the pair fails."""
SCORER_MEMORY_FACTOR = 3
"""The trusted scorer's memory cgroup holds this many times the memory budget (it holds an answer of up to the budget
while it checks and converts it, 2.5 times at its peak) plus :data:`SCORER_MEMORY_BASE`."""
SCORER_MEMORY_BASE = 2 * 1024**3
_said_unbounded: list[str] = []  # said once per worker process in the server's log


def scorer_command(model: str, benchmark: str, channel_fd: int, stimuli: Path, max_bytes: int) -> list[str]:
    """The trusted scorer's command line (the server's own interpreter)."""
    return [sys.executable, "-m", "brainscore.boundary.scorer", "--model", model, "--benchmark", benchmark,
            "--channel-fd", str(channel_fd), "--stimuli", str(stimuli), "--max-bytes", str(max_bytes)]


def _scorer_environment(root: Path) -> dict[str, str]:
    """The scorer's environment: this process's (the server's settings, data and plugins, and the plugin folders
    administrators approved under the submissions folder ``root``, :mod:`brainscore.web.approval`), the brainscore
    package first on the path; never a submission's folder or plugin folder otherwise."""
    from brainscore.web.approval import approved_folders

    env = dict(os.environ)
    approved = approved_folders(root)
    if approved:
        configured = [p for p in env.get("BRAINSCORE_PLUGIN_DIRS", "").split(os.pathsep) if p]
        env["BRAINSCORE_PLUGIN_DIRS"] = os.pathsep.join(dict.fromkeys([*configured, *approved]))
    env["PYTHONPATH"] = os.pathsep.join([str(PACKAGE_ROOT), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                                              if p and Path(p).resolve() != PACKAGE_ROOT]])
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONPYCACHEPREFIX"] = str(private_bytecode())  # the scorer imports approved plugins: bytecode of its own
    return env


# ------------------------------------------------------------------------------ the Dask task
def run_pair(db_url: str, task_id: int, k: int, model: str, benchmark: str, limits: Limits = Limits(),
             command: list[str] | None = None, scorer: list[str] | None = None) -> dict:
    """Score one (model, benchmark) pair of submission task ``task_id`` across the boundary: the Dask task.

    Marks the submission task ``running`` at pair ``k``, runs the model server (its working directory
    ``<task folder>/run``, the plugin in ``<task folder>/site``, the stimuli in ``<task folder>/stimuli``, ``limits``,
    no network) and the trusted scorer, appends what they print to the task's log as it comes, and records the
    scorer's outcome (a failure with the log).

    Parameters
    ----------
    db_url : str
        The results database (which holds the web tables).
    task_id, k : int
        The submission task and the 1-based index of the pair among its
        :attr:`~brainscore.results.schema.SubmissionTask.pairs`.
    limits : Limits
    command, scorer : list of str, optional
        The model server's and the scorer's commands (default :func:`~brainscore.boundary.process.server_command`,
        :func:`scorer_command`; tests give their own); the model server's runs under the launcher.

    Returns
    -------
    dict
        ``{"status": "done", "score": float}`` or ``{"status": "failed", "failure": str}``.
    """
    private_bytecode()  # this worker process never reads a __pycache__ planted beside an approved plugin's source
    store = Database(db_url)  # opened per task: a Dask worker runs tasks in threads of its own
    engine = store.engine
    with Session(engine) as session:
        task = session.get(SubmissionTask, task_id)
        folder, submission_id, total, started = Path(task.folder), task.submission_id, task.total, task.started
        requirements = list(task.requirements or [])
    fields = {"status": "running", "current": k, "failure": ""}
    if started is None:
        fields["started"] = now()
    update_task(engine, task_id, log_append=f"\n=== [{k}/{total}] {model} on {benchmark}{_where()}\n", **fields)
    if submission_id is not None:
        store.update_submission(submission_id, status="running")
    site, workdir, stimuli = folder / "site", folder / "run", folder / "stimuli"
    workdir.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(stimuli, ignore_errors=True)  # a pair sees the images of its own calls only
    python = sys.executable
    if command is None:
        try:  # its requirements' environment, installed here (by the queue, after the upload) the first time
            python = environments.python_for(requirements, folder.parent / "environments",
                                             log=lambda line: update_task(engine, task_id, log_append=line))
        except SubmissionRejected as missing:
            return record_pair_failure(store, task_id, submission_id, model, benchmark, "; ".join(missing.problems))
    reference = reference_plugin_dir(site)  # a plugin folder written for the reference Brain-Score
    resources = prepare_resources(folder / "resources")  # what a model may read itself (ImageNet class metadata)
    hidden = [folder.parent]  # every submission; the home, configuration and user's home: hidden_paths() adds them
    database = make_url(db_url)
    if database.drivername.startswith("sqlite") and database.database not in (None, "", ":memory:"):
        hidden.append(Path(database.database))
    box = sandbox(python, workdir, limits, uid=launcher.UID_BASE + task_id % launcher.UID_RANGE, resources=resources,
                  shown=(site, stimuli, resources), hidden=tuple(hidden), python_path=(site,),
                  plugin_dirs=(reference,) if reference is not None else ())
    spec, env = box.spec, box.env
    from brainscore.boundary.crossing import StimulusFolder

    StimulusFolder(stimuli)  # made (0755) before the sandbox binds it
    ours, theirs = socket.socketpair()
    server = command or server_command(python, model, theirs.fileno(), stimuli, {}, limits.memory)
    trusted = scorer or scorer_command(model, benchmark, ours.fileno(), stimuli, limits.memory)
    # each side's memory counted by the kernel (memfds too) in a cgroup of its own, where the machine has one
    groups = (cgroup.memory_cgroup(f"server-{task_id}-{k}", limits.memory),
              cgroup.memory_cgroup(f"scorer-{task_id}-{k}", SCORER_MEMORY_FACTOR * limits.memory + SCORER_MEMORY_BASE))
    if groups[0] is None:
        said = cgroup.why_unbounded()
        update_task(engine, task_id, log_append=f"[{said}]\n")
        if not _said_unbounded:
            _said_unbounded.append(said)
            print(f"brainscore serve: {said}", file=sys.stderr, flush=True)
    try:
        ended = _run(engine, task_id, spec, server, env, trusted, workdir, limits, ours, theirs, k=k, groups=groups)
        failure, outcome = ended.failure(limits), ended.outcome
        if failure is not None:  # a pair that failed because the kernel killed it at its memory limit says so
            failure = _memory_failure(groups, limits) or failure
    finally:
        for group in groups:
            if group is not None:
                group.remove()
    shutil.rmtree(stimuli, ignore_errors=True)
    if failure is None:
        if outcome is None or (outcome.model, outcome.benchmark) != (model, benchmark):
            failure = "the scorer reported no result for this pair; nothing was recorded"
        else:
            try:
                record(outcome, store, submission_id=submission_id)
            except NotRecorded as error:
                if error.kept is None:
                    failure = f"its score could not be recorded: {error}"
                else:  # in the journal: recorded when the database next opens
                    update_task(engine, task_id, log_append=f"\n[{error}]\n")
            except BrainScoreError as error:  # InvalidScore among them: never a done score
                failure = f"its score could not be recorded: {error}"
            if failure is None:
                result = {"status": "done", "score": outcome.score}
                set_result(engine, task_id, f"{model}|{benchmark}", result)
                return result
    return record_pair_failure(store, task_id, submission_id, model, benchmark, failure)


def _run(engine, task_id: int, spec: launcher.Spec, server_argv: list[str], server_env: dict, scorer_argv: list[str],
         workdir: Path, limits: Limits, ours: socket.socket, theirs: socket.socket, k: int = 0,
         groups: tuple = (None, None)) -> "_Ended":
    """Run the model server (under the launcher) and the scorer; stream their output into the task's log.

    Each runs in a session and process group of its own, recorded in the submission's folder and watched by a
    :mod:`~brainscore.web.watchdog` of their own that kills both at the wall-clock limit (and a grace) or as soon as
    this process dies (a killed server's worker), so neither outlives its time limit or its server."""
    report_read, report_write = os.pipe()
    log_read, log_write = os.pipe()  # the model server's output: the submission's log, capped
    err_read, err_write = os.pipe()  # the scorer's standard error: its progress and warnings, into the log too
    out_read, out_write = os.pipe()  # the scorer's standard output: its outcome line, read here only
    spec = replace(spec, report_fd=report_write, keep_fds=(theirs.fileno(),))
    server = scorer = None
    try:
        server = subprocess.Popen(cgroup.join_command(groups[0], launcher.launcher_command(spec, server_argv)),
                                  cwd=workdir, env=server_env,
                                  stdin=subprocess.DEVNULL, stdout=log_write, stderr=log_write, start_new_session=True,
                                  pass_fds=(report_write, theirs.fileno()))
        scorer = subprocess.Popen(cgroup.join_command(groups[1], scorer_argv), cwd=workdir.parent, env=_scorer_environment(workdir.parents[1]),
                                  stdin=subprocess.DEVNULL,
                                  stdout=out_write, stderr=err_write, start_new_session=True, pass_fds=(ours.fileno(),))
    except OSError:
        for process in (server, scorer):
            if process is not None:
                _kill_group(process)
        raise
    finally:
        for descriptor in (report_write, log_write, err_write, out_write):
            os.close(descriptor)
        ours.close()
        theirs.close()
    guard, guarded = _watch(server, scorer, workdir.parent, limits, k, groups)
    killed_for: list[str] = []

    def kill(reason: str, *processes) -> None:
        if not killed_for:
            killed_for.append(reason)
        for process in processes or (server, scorer):
            _kill_group(process)

    timer = threading.Timer(limits.wall, kill, [f"exceeded the wall-clock time limit of {limits.wall} s (killed)"])
    timer.start()
    log = _Log(engine, task_id, limits.log, lambda reason: kill(reason, server))
    scorer_err = _Log(engine, task_id, limits.log, None)
    out = b""
    selector = selectors.DefaultSelector()
    for descriptor in (log_read, err_read, out_read):
        selector.register(descriptor, selectors.EVENT_READ)
    grace = None
    try:
        while selector.get_map():
            for key, _ in selector.select(timeout=0.5):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fd)
                elif key.fd == out_read:
                    out += chunk[:max(0, MAX_EVENT_BYTES - len(out))]
                else:
                    (log if key.fd == log_read else scorer_err).take(chunk)
            log.flush()
            if grace is None and scorer.poll() is not None:
                grace = time.monotonic() + SERVER_GRACE_S
            if grace is not None and time.monotonic() > grace and server.poll() is None:
                kill("did not end when the scorer told it to (killed): a model server's processes must end with it",
                     server)
                grace = float("inf")
        server.wait()
        scorer.wait()
    finally:
        _release(guard, guarded, workdir.parent)
        timer.cancel()
        selector.close()
        for descriptor in (log_read, err_read, out_read):
            os.close(descriptor)
        log.flush(force=True)
        scorer_err.flush(force=True)
        with os.fdopen(report_read, "rb") as report:
            verdict_line = report.read(65536)
    try:
        verdict = json.loads(verdict_line) if verdict_line.strip() else {}
    except ValueError:
        verdict = {}
    if not verdict and not killed_for:
        verdict = {"error": f"the sandbox ended without a verdict (exit code {server.returncode})"}
    event = None
    for line in out.splitlines():
        if line.startswith(b'{"event"'):
            try:
                event = json.loads(line)
            except ValueError:
                event = None
    return _Ended(verdict, killed_for[0] if killed_for else None, event, log.last_line(), scorer.returncode,
                  scorer_err.last_line())


def _memory_failure(groups: tuple, limits: Limits) -> str | None:
    """The failure of a pair whose model server or scorer the kernel killed at its memory cgroup's limit, else None."""
    server, scorer = groups
    if server is not None and server.oom_killed():
        return (f"ran out of memory: the memory limit of {_size(limits.memory)} was reached (counted by the operating "
                f"system: every page the model holds, memfds and shared memory included; killed)")
    if scorer is not None and scorer.oom_killed():
        return (f"the trusted scorer ran out of its memory limit of {_size(scorer.limit)} while it checked the model's "
                f"answers (killed); nothing was recorded")
    return None


def _watch(server: subprocess.Popen, scorer: subprocess.Popen, folder: Path, limits: Limits,
           k: int, groups: tuple = (None, None)) -> tuple[subprocess.Popen | None, int]:
    """Start the pair's :mod:`~brainscore.web.watchdog` over the process groups of ``server`` and ``scorer`` and
    record them in ``folder``; returns the watchdog and the write end of its pipe (-1, None: it could not start, the
    pair runs on under this process's timer alone, as it did before)."""
    read, write = os.pipe()
    try:
        guard = subprocess.Popen(watchdog.command([server.pid, scorer.pid], limits.wall + watchdog.GRACE_S),
                                 stdin=read, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 start_new_session=True,
                                 env={"PATH": os.defpath, "BRAINSCORE_WATCHDOG_CGROUPS": os.pathsep.join(
                                     str(g.path) for g in groups if g is not None)})
    except OSError:
        os.close(write)
        return None, -1
    finally:
        os.close(read)
    try:
        watchdog.record(folder, [server.pid, scorer.pid], guard.pid, k,
                        tuple(str(g.path) for g in groups if g is not None))
    except OSError:
        pass  # the watchdog still guards the pair; only a restart cannot reap it early
    return guard, write


def _release(guard: subprocess.Popen | None, write: int, folder: Path) -> None:
    """The pair ended (its processes were waited for): tell its watchdog, which exits without killing, and remove
    the record of its processes."""
    if guard is None:
        return
    try:
        os.write(write, b"done")
    except OSError:
        pass
    os.close(write)
    try:
        guard.wait(timeout=10)
    except subprocess.TimeoutExpired:
        guard.kill()
        guard.wait()
    try:
        os.remove(folder / watchdog.RECORD)
    except OSError:
        pass


def _kill_group(process: subprocess.Popen | None) -> None:
    if process is None:
        return
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _Log:
    """Output appended to a task's log as it comes (one write per half second), at most ``limit`` bytes (then
    ``on_limit`` is called with the reason); remembers its last line that is not empty."""

    def __init__(self, engine, task_id: int, limit: int, on_limit):
        self.engine, self.task_id, self.limit, self.on_limit = engine, task_id, limit, on_limit
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.total, self.pending, self.flushed, self.tail = 0, [], time.monotonic(), b""

    def take(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if self.total > self.limit:
            if self.total - len(chunk) <= self.limit:  # keep what fits, drain the rest unread
                kept = chunk[:max(0, self.limit - (self.total - len(chunk)))]
                self.pending.append(self.decoder.decode(kept, final=True))
                self.pending.append(f"\n[... output beyond the log limit of {_size(self.limit)} left out ...]\n")
                if self.on_limit is not None:
                    self.on_limit(f"printed more than the log limit of {_size(self.limit)} (killed)")
            return
        self.pending.append(self.decoder.decode(chunk))
        self.tail = (self.tail + chunk)[-(MAX_FAILURE_CHARS * 4):]

    def flush(self, force: bool = False) -> None:
        if self.pending and (force or time.monotonic() - self.flushed > 0.5):
            update_task(self.engine, self.task_id, log_append="".join(self.pending))
            self.pending, self.flushed = [], time.monotonic()

    def last_line(self) -> str:
        lines = [line for line in self.tail.decode("utf-8", "replace").splitlines() if line.strip()]
        return lines[-1][-MAX_FAILURE_CHARS * 2:] if lines else ""


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


def limit_reason(text: str, limits: Limits, code: int | None = None) -> str | None:
    """The limit (or the containment) a failure's text shows the model ran into, in the submitter's terms; None."""
    exited = f"exited with code {code}; " if code is not None else ""
    if "MemoryError" in text or "can't allocate memory" in text or "Cannot allocate memory" in text:
        return f"ran out of memory: the memory limit of {_size(limits.memory)} (RLIMIT_AS) was reached"
    if "Resource temporarily unavailable" in text and ("fork" in text.lower() or "BlockingIOError" in text):
        return f"the process limit of {limits.processes} processes and threads (RLIMIT_NPROC) was reached"
    if "No space left on device" in text or "File too large" in text:
        return f"wrote more than the disk limit of {_size(limits.disk)} (its working directory's size)"
    if "Network is unreachable" in text or "Temporary failure in name resolution" in text:
        return f"{exited}submissions have no network"
    if "Read-only file system" in text or "No such file or directory" in text or "Permission denied" in text:
        return (f"{exited}a submission sees only its own folder (read-only), the Python environment and its "
                f"stimuli's images, and writes only in its working directory")
    return None


@dataclass
class _Ended:
    """How a pair's two processes ended: the sandbox's verdict, whether the task killed them and why, the scorer's
    outcome event, the model server's last line, the scorer's exit code and last line of standard error."""

    verdict: dict
    killed_for: str | None
    event: dict | None
    last_line: str
    scorer_code: int | None
    scorer_line: str

    @property
    def outcome(self) -> Outcome | None:
        try:
            return Outcome.from_json((self.event or {}).get("outcome") or {})
        except (TypeError, ValueError):
            return None

    def failure(self, limits: Limits) -> str | None:
        """Why the pair failed, in the submitter's terms (None: the scorer reports a score and the model server
        ended cleanly). The model's own error (or the boundary's refusal) the scorer reported comes first, with a
        limit the task then enforced named after it (a model server that reported its error and then hung); then a
        limit the task enforced, then a refusal of the boundary, then how the model server ended (naming the limit
        it broke), then the scorer's own report."""
        line = shorten(self.last_line.strip(), MAX_FAILURE_CHARS)
        kind = (self.event or {}).get("kind")
        reported = self.outcome
        said = shorten((reported.failure or "") if reported is not None else "", MAX_FAILURE_CHARS)
        if self.killed_for is not None:
            if said and kind in ("model", "boundary"):  # its real refusal first, then that it hung (issue 36)
                reason = limit_reason(said, limits)
                return (f"{reason}: {said}" if reason else said) + f" (then the model server {self.killed_for})"
            return f"{self.killed_for}: {line}" if line else self.killed_for
        if kind == "boundary":
            return f"{said}; nothing was recorded"
        server = self._server_failure(limits, line, said)
        if server is not None:
            return server
        if self.event is None or reported is None:
            why = shorten(self.scorer_line.strip(), MAX_FAILURE_CHARS)
            return (f"the scorer ended without a result (exit code {self.scorer_code})" + (f": {why}" if why else "")
                    + "; nothing was recorded")
        if kind == "done" and reported.status == "done":
            return None
        if kind == "model":
            reason = limit_reason(said, limits)
            return f"{reason}: {said}" if reason else said
        if kind == "ended":
            return f"{said}; it exited (code {self.verdict.get('exit')}) without answering: nothing was recorded"
        return said or "the scorer failed; nothing was recorded"

    def _server_failure(self, limits: Limits, line: str, said: str = "") -> str | None:
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
        elif code == 0:
            reason = (f"left {left} process{'es' if left != 1 else ''} running when it ended (killed): a "
                      f"submission's processes must end with it")
        else:
            # the log's last line is the error's message; the scorer's report names its type (BlockingIOError)
            reason = limit_reason(f"{line}\n{said}", limits, code) or f"exited with code {code}"
        if left and code != 0:
            reason += f" (and left {left} process{'es' if left != 1 else ''} running, killed)"
        return f"{reason}: {line}" if line else reason
