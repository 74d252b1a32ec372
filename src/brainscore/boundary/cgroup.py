"""Memory bounded by the operating system's accounting: a cgroup of its own per process tree, where the machine has one.

``RLIMIT_AS`` (the model server's :attr:`~brainscore.boundary.process.Limits.memory`) bounds address space only: a
model held 3.8 GB of host memory in memfds under ``RLIMIT_AS`` = 3 GiB (pages written into a memfd and not mapped are
not counted), and the trusted scorer had no limit at all (issue 36). A memory cgroup counts every page its processes
charge (anonymous memory, shared memory and memfds, page cache) and the kernel's OOM killer ends the tree at its limit.

:func:`memory_cgroup` makes a child cgroup under this process's own one, in the cgroup v2 hierarchy where its memory
controller may be enabled there, else in the cgroup v1 ``memory`` hierarchy, when the folder is writable (the server
runs as root, or was delegated its cgroup). A process joins it with :func:`join_command` (``/bin/sh`` writes its own
pid into ``cgroup.procs``, then ``exec``\\s the command: everything it starts is in the cgroup from its first
instruction). Where neither is possible (no root, a read-only ``/sys/fs/cgroup``), :func:`why_unbounded` says why and
the caller says so in the submission's log. (``systemd-run --scope -p MemoryMax=`` needs a running systemd manager;
the cgroup files need no daemon, so they are used directly.)
"""
from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MemoryCgroup", "memory_cgroup", "join_command", "why_unbounded", "CGROUP_ROOT"]

CGROUP_ROOT = Path("/sys/fs/cgroup")
UNBOUNDED = "memory is bounded by RLIMIT_AS only: memfd pages are not counted"


@dataclass
class MemoryCgroup:
    """A memory cgroup of ``limit`` bytes at ``path`` (``version`` 1 or 2)."""

    path: Path
    version: int
    limit: int

    @property
    def procs(self) -> Path:
        """The file a process writes its pid into to join."""
        return self.path / "cgroup.procs"

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of this cgroup at its limit (or the usage reached it)."""
        try:
            if self.version == 2:
                events = (self.path / "memory.events").read_text()
                return any(line.split()[0] in ("oom_kill", "oom") and int(line.split()[1]) > 0
                           for line in events.splitlines() if line.strip())
            control = (self.path / "memory.oom_control").read_text()
            for line in control.splitlines():
                if line.startswith("oom_kill ") and int(line.split()[1]) > 0:
                    return True
            return int((self.path / "memory.max_usage_in_bytes").read_text()) >= self.limit * 0.98
        except (OSError, ValueError, IndexError):
            return False

    def peak(self) -> int | None:
        """Most bytes charged at once (None where the kernel does not say)."""
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        try:
            return int((self.path / name).read_text())
        except (OSError, ValueError):
            return None

    def remove(self) -> None:
        """Kill what is left in it and remove it (a cgroup is removed empty)."""
        import signal
        import time

        for _ in range(50):
            try:
                pids = [int(p) for p in self.procs.read_text().split()]
            except OSError:
                return
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.02)
        try:
            os.rmdir(self.path)
        except OSError:
            pass


def _own(controller: str | None) -> str | None:
    """This process's cgroup path in the v1 hierarchy of ``controller`` (None: the v2 one)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        number, controllers, path = line.split(":", 2)
        if controller is None and number == "0" and controllers == "":
            return path
        if controller is not None and controller in controllers.split(","):
            return path
    return None


def _where(base: Path, own: str) -> Path | None:
    """The folder of this process's cgroup ``own`` under the mounted hierarchy ``base`` (a container sees its own
    cgroup as the root, or the whole tree)."""
    for candidate in (base / own.lstrip("/"), base):
        if candidate.is_dir():
            return candidate
    return None


def _v2(name: str, limit: int) -> MemoryCgroup | None:
    if not (CGROUP_ROOT / "cgroup.controllers").exists():
        return None
    own = _own(None)
    parent = _where(CGROUP_ROOT, own) if own is not None else None
    if parent is None or "memory" not in (parent / "cgroup.controllers").read_text().split():
        return None
    try:
        if "memory" not in (parent / "cgroup.subtree_control").read_text().split():
            (parent / "cgroup.subtree_control").write_text("+memory")  # refused while the parent holds processes
        path = parent / name
        path.mkdir()
    except OSError:
        return None
    try:
        (path / "memory.max").write_text(str(limit))
        if (path / "memory.swap.max").exists():
            (path / "memory.swap.max").write_text("0")
    except OSError:
        os.rmdir(path)
        return None
    return MemoryCgroup(path, 2, limit)


def _v1(name: str, limit: int) -> MemoryCgroup | None:
    own = _own("memory")
    parent = _where(CGROUP_ROOT / "memory", own) if own is not None else None
    if parent is None:
        return None
    path = parent / name
    try:
        path.mkdir()
    except OSError:
        return None
    try:
        (path / "memory.limit_in_bytes").write_text(str(limit))
        if (path / "memory.memsw.limit_in_bytes").exists():  # no swap past the limit either
            (path / "memory.memsw.limit_in_bytes").write_text(str(limit))
    except OSError:
        os.rmdir(path)
        return None
    return MemoryCgroup(path, 1, limit)


def memory_cgroup(label: str, limit: int) -> MemoryCgroup | None:
    """A new memory cgroup of ``limit`` bytes under this process's own (v2 where possible, else v1), named
    ``brainscore-<label>-<random>``; None where this machine offers neither (see :func:`why_unbounded`)."""
    name = f"brainscore-{label}-{uuid.uuid4().hex[:8]}"
    return _v2(name, int(limit)) or _v1(name, int(limit))


def why_unbounded() -> str:
    """The sentence the log gets where :func:`memory_cgroup` finds no cgroup (with the reason where known)."""
    if not CGROUP_ROOT.is_dir():
        reason = "no /sys/fs/cgroup"
    elif os.geteuid() != 0:
        reason = "the server is not root and was not delegated a cgroup"
    else:
        reason = "no writable memory cgroup under /sys/fs/cgroup"
    return f"{UNBOUNDED} ({reason})"


def join_command(group: MemoryCgroup | None, argv: list[str]) -> list[str]:
    """``argv`` run inside ``group`` (``argv`` itself where None): ``/bin/sh`` writes its pid into the cgroup, then
    ``exec``\\s ``argv`` (the arguments are passed as such, never put into the shell's code)."""
    if group is None:
        return list(argv)
    return ["/bin/sh", "-c", 'echo $$ > "$1" && shift && exec "$@"', "sh", str(group.procs), *argv]
