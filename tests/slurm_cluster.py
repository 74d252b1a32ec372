"""A throw-away one-node SLURM cluster for tests: munged, slurmctld and slurmd on 127.0.0.1 in a temporary folder.

Uses Debian's ``slurm-wlm`` and ``munge`` packages (``.ci/run`` installs them). Everything the
daemons read or write is in the folder: a munge key made here, a ``slurm.conf`` written here (the
node is this host, by its name, at 127.0.0.1; ``proctrack/linuxproc``, ``task/none``, no cgroup.conf,
no accounting), their sockets, state, spool and logs. The daemons run in the foreground as children
of this process on free ports, so :meth:`SlurmCluster.stop` ends exactly them, after cancelling the
cluster's jobs and waiting for their processes to end. Nothing here skips: if the cluster cannot
start, the caller fails loudly, with the daemons' logs.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from host_helpers import free_port

DAEMONS = ("munged", "slurmctld", "slurmd")


class SlurmUnavailable(RuntimeError):
    """The SLURM or munge binaries are missing, or the cluster did not start."""


def _binary(name: str) -> str:
    for folder in ("/usr/sbin", "/usr/bin"):
        if os.access(f"{folder}/{name}", os.X_OK):
            return f"{folder}/{name}"
    found = shutil.which(name)
    if found is None:
        raise SlurmUnavailable(f"{name} is not installed: `apt-get install -y slurm-wlm munge` (as .ci/run does)")
    return found


class SlurmCluster:
    """Start with :meth:`start`, stop (daemons ended, folder deleted) with :meth:`stop`; :attr:`env` for clients.

    ``cpus`` and ``memory_mb`` are the node's (default: this machine's cores and 90% of its memory).
    """

    def __init__(self, cpus: int | None = None, memory_mb: int | None = None):
        import psutil

        self.binaries = {name: _binary(name) for name in (*DAEMONS, "sinfo", "squeue", "scancel")}
        self.folder = Path(tempfile.mkdtemp(prefix="brainscore-slurm-"))
        self.host = socket.gethostname()
        self.cpus = cpus or os.cpu_count() or 1
        self.memory_mb = memory_mb or int(psutil.virtual_memory().total * 0.9) >> 20
        self.processes: dict[str, subprocess.Popen] = {}
        self.conf = self.folder / "slurm.conf"
        self.munge_socket = self.folder / "munge" / "munge.socket"

    @property
    def env(self) -> dict[str, str]:
        """The environment of a process that talks to this cluster (sbatch, squeue, dask-jobqueue)."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def _start(self, name: str, *args: str) -> None:
        log = open(self.folder / "log" / f"{name}.out", "wb")
        self.processes[name] = subprocess.Popen([self.binaries[name], *args], stdout=log, stderr=subprocess.STDOUT,
                                                stdin=subprocess.DEVNULL, env=self.env, start_new_session=True)
        log.close()

    def logs(self) -> str:
        """The last lines of every daemon's log, for a failure message."""
        parts = []
        for path in sorted((self.folder / "log").glob("*")):
            lines = path.read_text(errors="replace").splitlines()[-15:]
            parts.append(f"--- {path.name}\n" + "\n".join(lines))
        return "\n".join(parts)

    def start(self) -> "SlurmCluster":
        for sub in ("munge", "log", "state", "spool"):
            (self.folder / sub).mkdir(mode=0o700)
        key = self.folder / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        self._start("munged", "--foreground", "--force", f"--socket={self.munge_socket}", f"--key-file={key}",
                    f"--log-file={self.folder / 'log' / 'munged.log'}", f"--pid-file={self.folder / 'munge' / 'pid'}",
                    f"--seed-file={self.folder / 'munge' / 'seed'}")
        self._wait(lambda: self.munge_socket.exists(), "munged made no socket")
        controller, node = free_port(), free_port()
        self.conf.write_text("\n".join([
            "ClusterName=brainscore-test",
            f"SlurmctldHost={self.host}(127.0.0.1)",
            f"SlurmctldPort={controller}",
            f"SlurmdPort={node}",
            "SlurmUser=root", "SlurmdUser=root",
            "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={self.folder / 'state'}",
            f"SlurmdSpoolDir={self.folder / 'spool'}",
            f"SlurmctldPidFile={self.folder / 'slurmctld.pid'}",
            f"SlurmdPidFile={self.folder / 'slurmd.pid'}",
            f"SlurmctldLogFile={self.folder / 'log' / 'slurmctld.log'}",
            f"SlurmdLogFile={self.folder / 'log' / 'slurmd.log'}",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU", "MpiDefault=none", "ReturnToService=2",
            f"NodeName={self.host} NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory={self.memory_mb} State=UNKNOWN",
            "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        ]) + "\n")
        self._start("slurmctld", "-D", "-f", str(self.conf))
        self._start("slurmd", "-D", "-f", str(self.conf), "-N", self.host)
        self._wait(self._idle, "the node did not become idle")
        return self

    def _idle(self) -> bool:
        result = subprocess.run([self.binaries["sinfo"], "-h", "-o", "%T"], capture_output=True, text=True,
                                env=self.env, timeout=30)
        return result.returncode == 0 and result.stdout.strip() == "idle"

    def _wait(self, ready, what: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, process in self.processes.items():
                if process.poll() is not None:
                    raise SlurmUnavailable(f"{name} exited with {process.returncode} while starting:\n{self.logs()}")
            if ready():
                return
            time.sleep(0.3)
        raise SlurmUnavailable(f"{what} within {timeout:.0f} s:\n{self.logs()}")

    def jobs(self) -> list[str]:
        """The ids of the cluster's jobs still queued or running."""
        result = subprocess.run([self.binaries["squeue"], "-h", "-o", "%i"], capture_output=True, text=True,
                                env=self.env, timeout=30)
        return result.stdout.split() if result.returncode == 0 else []

    def stop(self) -> None:
        """Cancel the jobs (and wait for them to end), end the daemons, delete the folder. Safe to call twice."""
        try:
            if "slurmctld" in self.processes and self.processes["slurmctld"].poll() is None:
                jobs = self.jobs()
                if jobs:
                    subprocess.run([self.binaries["scancel"], *jobs], env=self.env, timeout=30, capture_output=True)
                deadline = time.monotonic() + 60
                while self.jobs() and time.monotonic() < deadline:
                    time.sleep(0.5)
        finally:
            for name in reversed(DAEMONS):
                process = self.processes.pop(name, None)
                if process is None:
                    continue
                process.terminate()
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            shutil.rmtree(self.folder, ignore_errors=True)
