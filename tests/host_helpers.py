"""This host's ports and processes, for tests that start servers or sandboxed children."""
from __future__ import annotations

import os
import socket
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def survivors(marker: str, *, ignore: tuple[str, ...] = ()) -> list[str]:
    """The host's processes, other than this one, whose command line holds ``marker`` and none of ``ignore``
    (e.g. ``("pytest",)`` to pass over test runners started with the marker among their arguments);
    each as ``"PID: command line"`` (arguments joined by spaces). Processes that end while being read are
    passed over."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError):
            continue
        if marker in cmdline and not any(word in cmdline for word in ignore):
            found.append(f"{entry}: {cmdline}")
    return found
