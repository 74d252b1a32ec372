"""A pair's watchdog: its processes end at their time limit, or when the process that runs the pair dies.

:func:`brainscore.web.pairs.run_pair` runs a pair's model server (under the launcher) and trusted scorer, each in a
session and process group of its own, and enforces the wall-clock limit with a timer of its own. That timer, and
the clean-up after it, live in the Dask worker: when the web server is killed (``kill -9``) its workers die with it,
and the pair's processes, in sessions of their own, ran on past their time limit (5 min 36 s in an audit, issue 36),
while the restarted server ran the pair again beside them.

So each pair also has this watchdog, a separate process in a session of its own, started with
``python -I watchdog.py`` (the standard library only: it never imports the submission's code or the server's
plugins). Its standard input is a pipe whose other end only the worker holds:

- the worker writes ``done`` when the pair ended: the watchdog exits and kills nothing;
- end of file without ``done`` (the worker died, whatever killed it): it kills the pair's process groups and every
  process left in their sessions;
- its deadline (the pair's wall-clock limit and a grace) passes first: the same.

The pair's processes are recorded in ``processes.json`` in the submission's folder (:func:`record`) for as long as
they run, so a restarted server reaps any of them still alive before it runs the pair again (:func:`reap_recorded`).
"""
from __future__ import annotations

import errno
import json
import os
import select
import signal
import socket
import sys
import time

__all__ = ["RECORD", "GRACE_S", "command", "record", "reap", "reap_recorded", "remove_cgroups", "main"]

RECORD = "processes.json"
"""The file, in a submission task's folder, naming the process groups of its pair that runs."""
GRACE_S = 30
"""Seconds past a pair's wall-clock limit the watchdog waits before it kills the pair (the worker's own timer
kills it at the limit, naming it; the watchdog acts when that timer could not)."""


def command(groups: list[int], deadline_s: float) -> list[str]:
    """The watchdog's command line: kill ``groups`` (and their sessions) after ``deadline_s`` seconds, or when its
    standard input ends without ``done``."""
    return [sys.executable, "-I", os.path.abspath(__file__), "--deadline-s", str(float(deadline_s)),
            "--groups", ",".join(str(int(g)) for g in groups)]


def _sessions_members(sessions: set[int]) -> list[int]:
    """Living processes whose session (or process group) is one of ``sessions``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != b"Z" and (int(fields[2]) in sessions or int(fields[3]) in sessions):
            found.append(int(entry))
    return found


def reap(groups: list[int]) -> int:
    """Kill (SIGKILL) the process groups ``groups`` and every process left in their sessions (each group leads a
    session of its own: ``start_new_session``); returns how many processes were killed."""
    me, killed = os.getpid(), set()
    wanted = {int(g) for g in groups if int(g) > 1}
    for _ in range(50):
        for group in wanted:
            try:
                os.killpg(group, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        left = [pid for pid in _sessions_members(wanted) if pid != me]
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.05)
    return len(killed)


def record(folder, groups: list[int], watchdog: int, k: int, cgroups: tuple = ()) -> None:
    """Write :data:`RECORD` in a submission task's ``folder``: pair ``k``'s process ``groups``, its ``watchdog``'s
    pid on this host and the memory ``cgroups`` (folders) its processes run in."""
    path = os.path.join(str(folder), RECORD)
    partial = path + ".partial"
    with open(partial, "w") as handle:
        json.dump({"host": socket.gethostname(), "k": int(k), "groups": [int(g) for g in groups],
                   "watchdog": int(watchdog), "started": time.time(), "cgroups": [str(c) for c in cgroups]},
                  handle)
    os.replace(partial, path)


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


#: How long :func:`remove_cgroups` waits for a killed process to leave its cgroup (seconds).
CGROUP_EMPTY_S = 15.0


def remove_cgroups(folders, wait_s: float = CGROUP_EMPTY_S) -> None:
    """Remove the emptied memory cgroups ``folders`` (only brainscore's, under /sys/fs/cgroup).

    A process killed a moment ago may still be leaving its cgroup (a large address space takes a while to tear
    down, longer on a loaded machine) and the kernel refuses to remove a cgroup with a task in it (``EBUSY``): each
    folder is tried again for up to ``wait_s`` seconds. A folder that is gone already, or that cannot be removed
    for another reason, is left as it is.
    """
    deadline = time.monotonic() + wait_s
    for folder in folders:
        if not (os.path.basename(str(folder)).startswith("brainscore-") and str(folder).startswith("/sys/fs/cgroup/")):
            continue
        while True:
            try:
                os.rmdir(folder)
            except OSError as error:
                if error.errno == errno.EBUSY and time.monotonic() < deadline:
                    time.sleep(0.1)
                    continue
            break


def reap_recorded(folder) -> str | None:
    """Kill what :data:`RECORD` in ``folder`` names that is still alive (a previous server's pair), remove the record,
    and say what was done (None: there was no record). A record of another host is left alone (said so)."""
    path = os.path.join(str(folder), RECORD)
    try:
        with open(path) as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        return f"the record of the previous run's processes could not be read ({error}); none were ended"
    if data.get("host") != socket.gethostname():
        return (f"pair {data.get('k')} of the previous run ran on host {data.get('host')!r}: its processes there end "
                f"at their time limit (their watchdog), not from here")
    watchdog = int(data.get("watchdog", 0))
    if watchdog > 1 and __file__.rsplit("/", 1)[-1] in _cmdline(watchdog):  # the pid still names our watchdog
        try:
            os.kill(watchdog, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    # a group is ours only while its leader (or a member) still runs brainscore's launcher or scorer
    groups = [g for g in data.get("groups", []) if any("brainscore" in _cmdline(pid)
                                                        for pid in _sessions_members({int(g)}))]
    killed = reap(groups) if groups else 0
    remove_cgroups(data.get("cgroups", []))  # emptied above
    try:
        os.remove(path)
    except OSError:
        pass
    return (f"pair {data.get('k')} of the previous run: {killed} process{'es' if killed != 1 else ''} still running "
            f"ended before it runs again")


def main(argv: list[str] | None = None) -> int:
    """``python -I watchdog.py --deadline-s S --groups G1,G2``: see the module."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 4 or args[0] != "--deadline-s" or args[2] != "--groups":
        print("usage: watchdog.py --deadline-s SECONDS --groups PGID[,PGID...]", file=sys.stderr)
        return 2
    deadline = time.monotonic() + float(args[1])
    groups = [int(g) for g in args[3].split(",") if g]
    cgroups = [c for c in os.environ.get("BRAINSCORE_WATCHDOG_CGROUPS", "").split(os.pathsep) if c]
    received = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            reap(groups)
            time.sleep(0.2)
            remove_cgroups(cgroups)
            return 1
        ready, _, _ = select.select([0], [], [], min(left, 5.0))
        if not ready:
            continue
        chunk = os.read(0, 64)
        if not chunk:  # the worker is gone without saying the pair ended
            reap(groups)
            time.sleep(0.2)
            remove_cgroups(cgroups)
            return 1
        received += chunk
        if b"done" in received:
            return 0


if __name__ == "__main__":
    sys.exit(main())
