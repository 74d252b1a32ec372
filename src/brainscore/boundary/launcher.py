"""Containment of untrusted model code: the launcher every sandboxed model server runs under.

A submission's plugin is arbitrary Python, run at import and inside ``look_at``. Neither the website's queue
(:mod:`brainscore.web.queue`) nor ``brainscore score --sandbox`` / ``brainscore run --sandbox`` runs it directly:
they run the model server (:mod:`brainscore.boundary.server`) as ``python -m brainscore.boundary.launcher --spec
JSON -- CHILD ARGV``, which

1. where the server may create namespaces (:func:`isolation`), runs inside fresh mount, PID, network,
   IPC and UTS namespaces (``unshare``, util-linux) and builds the child's file system from nothing: a
   read-only tmpfs root into which it binds, read-only, only the folders of :attr:`Spec.readable` (the
   system folders ``/usr``, ``/etc``, ..., the Python environment, the brainscore package, weight and
   model plugin folders, the submission's own ``site`` folder and the folder the scorer puts the
   stimuli's images in), hides :attr:`Spec.masked` folders inside them under empty read-only tmpfs
   (the benchmark, data and metric plugins shipped in the brainscore package), and as the only
   writable place a fresh tmpfs of :attr:`Spec.disk` bytes at the submission's ``run`` folder (its
   working directory, ``HOME`` and ``TMPDIR``). The data, the database, other submissions, the server's
   home and ``~/.config`` are not in that file system at all; then ``pivot_root`` into it, so the
   host's tree is gone;
2. as root, drops to an unprivileged user of its own (:attr:`Spec.uid`, one per submission, so that
   :data:`RLIMIT_NPROC <resource.RLIMIT_NPROC>` counts that submission's processes only), with no
   supplementary groups and ``PR_SET_NO_NEW_PRIVS``;
3. sets the resource limits (address space, CPU time, processes, file size, no core files);
4. forks the child and waits for it. When it ends, every process it left behind is killed (in the PID
   namespace the launcher is its init, whose exit ends them all; without namespaces it is their
   sub-reaper) and counted;
5. writes its verdict (exit status or signal, processes left behind) as one JSON line on a file
   descriptor of its own (:attr:`Spec.report_fd`), closed in the child, so the child cannot forge it.

The child's one way out is the channel to the trusted scorer (:attr:`Spec.keep_fds`, a socket the launcher hands
to the child and closes in itself, so that the scorer sees the channel end when the child does).

What still holds without root and namespaces (:func:`isolation` returns ``"none"``): the resource limits,
the killing of what the child leaves behind (its session and the processes that were re-parented to the
launcher; a process that both leaves the session and outlives the launcher escapes), the capped log and
the identifiers decided by the server (:mod:`brainscore.web.queue`). Files the server's user can read the
submission can read too, and ``BRAINSCORE_OFFLINE=1`` is then all that keeps it off the network: run the
server as root (or in a container that allows ``unshare``) to host submissions from people you do not trust.
(Moved here from ``brainscore.web.sandbox``: the same launcher serves the website, ``brainscore score`` and
``brainscore run``.)
"""
from __future__ import annotations

import ctypes
import functools
import json
import os
import platform
import resource
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["Spec", "isolation", "launcher_command", "UID_BASE", "SYSTEM_FOLDERS", "main"]

UID_BASE = 2_000_000
"""The submission's user id is ``UID_BASE + task id % UID_RANGE`` (ids no account of the host uses)."""
UID_RANGE = 1_000_000
"""(the probe of :func:`isolation` runs as ``UID_BASE + UID_RANGE``)"""
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/sys")
"""Host folders every child sees, read-only (where they exist)."""
DEVICES = ("null", "zero", "full", "random", "urandom")

_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18
_MNT_DETACH = 2
_PR_CAPBSET_DROP, _PR_SET_CHILD_SUBREAPER, _PR_SET_NO_NEW_PRIVS = 24, 36, 38
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}


@dataclass(frozen=True)
class Spec:
    """What the launcher builds for one child (sent to it as JSON).

    Attributes
    ----------
    readable : tuple of str
        Host paths the child sees read-only at the same path (absent ones are skipped).
    workdir : str
        The child's working directory (a fresh tmpfs of ``disk`` bytes when isolated).
    isolate : bool
        Build the file system and drop privileges (the launcher then runs inside fresh namespaces).
    uid, gid : int or None
        The user and group the child runs as (None: stay who the launcher is, e.g. in a user namespace).
    memory, cpu : int
        ``RLIMIT_AS`` in bytes, ``RLIMIT_CPU`` in seconds.
    processes : int
        ``RLIMIT_NPROC``: processes and threads of the child's user (applied with ``uid`` only: it counts all
        processes of a user, and root ignores it).
    disk : int
        Bytes the child may write: the size of its tmpfs and ``RLIMIT_FSIZE``.
    report_fd : int
        File descriptor the verdict is written to (-1: standard error).
    masked : tuple of str
        Folders inside ``readable`` ones the child sees empty (an empty read-only tmpfs over each; absent ones are
        skipped).
    keep_fds : tuple of int
        File descriptors handed to the child (inherited through ``exec``) and closed in the launcher: the channel
        to the trusted scorer (:mod:`brainscore.boundary.channel`).

    The child's environment is the launcher's (which runs ``python -I``, so ``PYTHONPATH`` cannot
    put the submission's code into the launcher).
    """

    readable: tuple[str, ...]
    workdir: str
    isolate: bool
    uid: int | None = None
    gid: int | None = None
    memory: int = 8 * 1024**3
    cpu: int = 3600
    processes: int = 512
    disk: int = 2 * 1024**3
    report_fd: int = -1
    keep_fds: tuple[int, ...] = ()
    masked: tuple[str, ...] = ()


@functools.lru_cache(maxsize=None)
def isolation() -> str:
    """How this process can contain a child: ``"root"`` (namespaces and a user id of its own per submission),
    ``"userns"`` (namespaces inside an unprivileged user namespace: no separate user id) or ``"none"`` (limits
    and process clean-up only). Probed once per process by building a whole sandbox around ``python -c pass``
    (a container may allow ``unshare`` yet refuse a mount the sandbox needs)."""
    import tempfile

    if shutil.which("unshare") is None:
        return "none"
    for mode in (("root",) if os.geteuid() == 0 else ()) + ("userns",):
        with tempfile.TemporaryDirectory(prefix="brainscore-sandbox-probe-") as folder:
            os.mkdir(os.path.join(folder, "run"))
            read, write = os.pipe()
            spec = Spec(readable=(*SYSTEM_FOLDERS, sys.prefix, sys.base_prefix, sys.exec_prefix),
                        workdir=os.path.join(folder, "run"), isolate=True, uid=UID_BASE + UID_RANGE, gid=UID_BASE + UID_RANGE,
                        disk=1024**2, report_fd=write)
            try:
                subprocess.run(launcher_command(spec, [sys.executable, "-I", "-c", "pass"], mode=mode),
                               capture_output=True, timeout=30, pass_fds=(write,), env={"PATH": os.defpath})
            except (OSError, subprocess.TimeoutExpired):
                pass
            finally:
                os.close(write)
            with os.fdopen(read, "rb") as report:
                verdict = report.read()
        try:
            if json.loads(verdict or b"{}").get("exit") == 0:
                return mode
        except ValueError:
            pass
    return "none"


def _namespace_flags(mode: str) -> list[str]:
    user = ["--user", "--map-root-user"] if mode == "userns" else []
    return [*user, "--mount", "--pid", "--net", "--ipc", "--uts", "--fork", "--kill-child"]


def launcher_command(spec: Spec, argv: list[str], mode: str | None = None) -> list[str]:
    """The command that runs ``argv`` contained as ``spec`` says (``mode``: default :func:`isolation`;
    ``spec.isolate`` False runs it with limits and clean-up only)."""
    mode = isolation() if mode is None else mode
    prefix = [shutil.which("unshare"), *_namespace_flags(mode)] if spec.isolate and mode != "none" else []
    payload = asdict(spec)
    if mode != "root" or not prefix:  # a user id of its own only with a file system of its own (root's files)
        payload.update(uid=None, gid=None)
    payload["isolate"] = bool(prefix)
    # -I: neither PYTHONPATH (the submission's folder comes first there) nor the user's site reach the launcher
    return [*prefix, sys.executable, "-I", str(Path(__file__).resolve()), "--spec", json.dumps(payload), "--", *argv]


# ------------------------------------------------------------------------------ inside: building the jail
def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    return libc


def _check(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")


def _mount(libc, source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    encode = (lambda s: None if s is None else s.encode())
    _check(libc.mount(encode(source), encode(target), encode(fstype), flags, encode(data)),
           f"mount {source} on {target}")


def _bind(libc, source: str, target: str, writable: bool = False, device: bool = False) -> None:
    _mount(libc, source, target, None, _MS_BIND | _MS_REC)
    flags = _MS_BIND | _MS_REMOUNT | _MS_NOSUID | (0 if device else _MS_NODEV) | (0 if writable else _MS_RDONLY)
    _mount(libc, None, target, None, flags)


def _place(root: str, path: str, like: str) -> str:
    """Make ``root + path`` (a folder, or an empty file where ``like`` is not a folder); return it."""
    target = root + path
    if os.path.isdir(like):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()
    return target


def build_jail(spec: Spec, root: str) -> None:
    """Build the child's file system under ``root`` and ``pivot_root`` into it (inside fresh namespaces)."""
    libc = _libc()
    os.makedirs(root, exist_ok=True)
    _mount(libc, None, "/", None, _MS_REC | _MS_PRIVATE)  # nothing done here reaches the host
    _mount(libc, "tmpfs", root, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=16m,mode=0755")
    work = os.path.realpath(spec.workdir)
    bound: list[str] = []
    for path in sorted({os.path.normpath(p) for p in spec.readable}, key=len):
        if not os.path.lexists(path) or any(path == b or path.startswith(b + "/") for b in bound):
            continue
        if os.path.islink(path) and os.path.dirname(path) == "/":  # /lib -> usr/lib on a merged /usr
            os.symlink(os.readlink(path), root + path)
            continue
        _bind(libc, path, _place(root, path, path))
        bound.append(path)
    for path in sorted({os.path.normpath(p) for p in spec.masked}):  # seen empty, read-only
        if os.path.isdir(root + path) and any(path.startswith(b + "/") for b in bound):
            _mount(libc, "tmpfs", root + path, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=4k,mode=0555")
            _mount(libc, None, root + path, None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV, "size=4k,mode=0555")
    # the only writable place: a fresh tmpfs at the working directory, HOME and TMPDIR inside it
    os.makedirs(root + work, exist_ok=True)
    _mount(libc, "tmpfs", root + work, "tmpfs", _MS_NOSUID | _MS_NODEV, f"size={spec.disk},mode=0700")
    for sub in (".home", ".tmp"):
        os.makedirs(root + work + "/" + sub)
    if spec.uid is not None:
        for folder, _, files in os.walk(root + work):
            for name in [folder, *(os.path.join(folder, f) for f in files)]:
                os.chown(name, spec.uid, spec.gid)
    if not any(b == "/tmp" or b.startswith("/tmp/") or work.startswith("/tmp/") for b in bound):
        _bind(libc, root + work + "/.tmp", _place(root, "/tmp", root + work), writable=True)
    # /dev: a few harmless devices, /dev/shm in the child's quota; /proc of this PID namespace
    for name in DEVICES:
        if os.path.exists(f"/dev/{name}"):
            _bind(libc, f"/dev/{name}", _place(root, f"/dev/{name}", f"/dev/{name}"), writable=True, device=True)
    _bind(libc, root + work + "/.tmp", _place(root, "/dev/shm", root + work), writable=True)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{root}/dev/{name}")
    os.makedirs(root + "/proc", exist_ok=True)
    _mount(libc, "proc", root + "/proc", "proc", _MS_NOSUID | _MS_NODEV)
    _mount(libc, None, root, None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV, "size=16m,mode=0755")
    # pivot_root(".", "."), then detach the old root: the host's tree is no longer reachable
    os.chdir(root)
    number = _SYS_PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise OSError(f"pivot_root: unknown system call number on {platform.machine()}")
    _check(libc.syscall(number, b".", b"."), "pivot_root")
    _check(libc.umount2(b".", _MNT_DETACH), "umount the old root")
    os.chdir(work)


def drop_privileges(spec: Spec) -> None:
    """Empty the capability bounding set (so not even a root of a user namespace has capabilities after
    ``exec``), become ``spec.uid``/``spec.gid`` with no supplementary groups (where given), never gain privileges."""
    libc = _libc()
    if spec.isolate:  # in the namespaces the launcher holds CAP_SETPCAP (without them it may not, nor matter)
        try:
            last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
        except (OSError, ValueError):
            last = 40
        for capability in range(last + 1):
            _check(libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0), f"prctl(PR_CAPBSET_DROP, {capability})")
    if spec.uid is not None:
        os.setgroups([])
        os.setgid(spec.gid)
        os.setuid(spec.uid)
    _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")


def set_limits(spec: Spec) -> None:
    """The resource limits of the child (hard and soft alike, so it cannot raise them)."""
    limits = [(resource.RLIMIT_AS, spec.memory), (resource.RLIMIT_CPU, spec.cpu), (resource.RLIMIT_FSIZE, spec.disk),
              (resource.RLIMIT_CORE, 0)]
    if spec.isolate:  # its own user id, or its own user namespace (where the kernel counts per namespace)
        limits.append((resource.RLIMIT_NPROC, spec.processes))
    for kind, value in limits:
        resource.setrlimit(kind, (value, value))


def _processes() -> list[tuple[int, int, int]]:
    """(pid, parent pid, session) of every living process visible here (zombies left out)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
                if fields[0] != b"Z":
                    found.append((int(entry), int(fields[1]), int(fields[3])))
            except (OSError, IndexError, ValueError):
                pass
    return found


def _kill_left_behind(session: int) -> int:
    """Kill the processes the child left: (namespaced) every other process; else this process's children
    (orphans re-parented to it, the sub-reaper) and the child's session. Returns how many there were."""
    me, killed = os.getpid(), set()
    _reap()
    for _ in range(50):
        found = [pid for pid, parent, sid in _processes()
                 if pid != me and (me == 1 or parent == me or sid == session)]
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except ProcessLookupError:
                pass
        _reap()
        time.sleep(0.02)
    return len(killed)


def _reap() -> None:
    """Collect the exit status of every child that ended (orphans re-parented to this process included)."""
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def main(argv: list[str] | None = None) -> int:
    """``python -m brainscore.boundary.launcher --spec JSON -- CHILD ARGV``: contain, run, report (see the module)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 4 or args[0] != "--spec" or args[2] != "--":
        print("usage: python -m brainscore.boundary.launcher --spec JSON -- COMMAND [ARG ...]", file=sys.stderr)
        return 2
    data = json.loads(args[1])
    data["readable"] = tuple(data["readable"])
    data["keep_fds"] = tuple(data.get("keep_fds", ()))
    data["masked"] = tuple(data.get("masked", ()))
    spec, command = Spec(**data), args[3:]
    report = os.fdopen(spec.report_fd, "w") if spec.report_fd >= 0 else sys.stderr
    verdict: dict = {}
    try:
        if spec.isolate:
            build_jail(spec, os.path.realpath(spec.workdir) + ".root")
        else:
            _libc().prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
            os.chdir(spec.workdir)  # without a jail the child still starts in its own folder, not the caller's
        env = dict(os.environ)
        if spec.isolate:
            env.update(HOME=spec.workdir + "/.home", TMPDIR=spec.workdir + "/.tmp")
        pid = os.fork()
        if pid == 0:  # the child: no report channel, its own user and limits, then the command
            try:
                if spec.report_fd >= 0:
                    os.close(spec.report_fd)
                if spec.isolate:
                    os.setsid()
                drop_privileges(spec)
                set_limits(spec)
                os.execve(command[0], command, env)
            except BaseException as error:  # noqa: BLE001 - report anything, never return into the launcher
                print(f"[sandbox] could not start {command[0]}: {error}", file=sys.stderr, flush=True)
            os._exit(127)
        for descriptor in spec.keep_fds:  # the child's now: its end is seen to close when the child's does
            try:
                os.close(descriptor)
            except OSError:
                pass
        session = os.getsid(pid) if not spec.isolate else -1
        while True:
            try:
                done, status = os.waitpid(pid, 0)
            except InterruptedError:
                continue
            break
        verdict = ({"signal": os.WTERMSIG(status)} if os.WIFSIGNALED(status) else {"exit": os.WEXITSTATUS(status)})
        verdict["left_behind"] = _kill_left_behind(session)
    except OSError as error:
        verdict = {"error": f"the sandbox could not be built: {error}"}
    report.write(json.dumps(verdict) + "\n")
    report.flush()
    return 0 if verdict.get("exit") == 0 and not verdict.get("left_behind") else 1


if __name__ == "__main__":
    sys.exit(main())
