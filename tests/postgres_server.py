"""A throw-away PostgreSQL server for tests: ``initdb`` + ``pg_ctl`` in a temporary folder on 127.0.0.1.

Uses the binaries of Debian's ``postgresql`` package (``/usr/lib/postgresql/*/bin``; ``.ci/run``
installs it). PostgreSQL refuses to run as root, so as root the server runs as the ``postgres``
user the package creates. Nothing here skips: if the server cannot start, the caller fails loudly.
"""
from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from host_helpers import free_port


class PostgresUnavailable(RuntimeError):
    """The PostgreSQL binaries are missing or the server did not start."""


def _bin_dir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    raise PostgresUnavailable("PostgreSQL is not installed: `apt-get install -y postgresql` (as .ci/run does)")


class PostgresServer:
    """Start with :meth:`start`, stop (and delete its folder) with :meth:`stop`; :attr:`url` for SQLAlchemy."""

    def __init__(self):
        self.bin = _bin_dir()
        self.folder = Path(tempfile.mkdtemp(prefix="brainscore-pg-"))
        self.data = self.folder / "data"
        self.port = free_port()
        self._as = []
        if os.geteuid() == 0:
            import pwd
            try:
                user = pwd.getpwnam("postgres")
            except KeyError as error:
                raise PostgresUnavailable("running as root but there is no 'postgres' user to run the server as") from error
            os.chown(self.folder, user.pw_uid, user.pw_gid)
            self._as = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        result = subprocess.run(self._as + list(args), capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            raise PostgresUnavailable(f"{' '.join(args)} failed ({result.returncode}): {result.stderr or result.stdout}")
        return result

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> "PostgresServer":
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync",
                  "-E", "UTF8")
        options = f"-h 127.0.0.1 -p {self.port} -k {self.folder} -F -c fsync=off"
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.folder / "log"),
                  "-w", "-t", "60", "start")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self
            time.sleep(0.2)
        raise PostgresUnavailable(f"PostgreSQL did not listen on 127.0.0.1:{self.port}; log: {self.folder / 'log'}")

    def create_database(self, name: str) -> str:
        """Create database ``name`` and return its URL."""
        self._run(str(self.bin / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name)
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        try:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
