"""Issue 36: a model held 3.8 GB of host memory in memfds under ``RLIMIT_AS`` = 3 GiB (memfd pages written and not
mapped are not address space). Each side of a pair now runs in a memory cgroup of its own where the machine has one,
so the kernel counts every page; where it has none, the submission's log says memory is bounded by RLIMIT_AS only."""
from __future__ import annotations

import pytest

from brainscore.boundary import cgroup
from brainscore.web.queue import Limits
from test_queue import BENCHMARK, run_with, url  # noqa: F401  (url: the fixture)

HOARD = ("import os\n"
         "fds = []\n"
         "for _ in range(16):  # 16 x 64 MiB = 1 GiB in memfds, never mapped: RLIMIT_AS does not see it\n"
         "    fd = os.memfd_create('hoard')\n"
         "    os.write(fd, b'\\1' * (64 << 20))\n"
         "    fds.append(fd)\n"
         "print('holding', len(fds) * 64, 'MiB in memfds', flush=True)\n")


def _probe() -> str | None:
    group = cgroup.memory_cgroup("probe", 1 << 30)
    if group is None:
        return cgroup.why_unbounded()
    group.remove()
    return None


@pytest.mark.skipif(_probe() is not None, reason=f"this machine offers no memory cgroup: {_probe()}")
def test_memory_held_in_memfds_counts_against_the_memory_limit(url, tmp_path):  # noqa: F811
    task = run_with(url, tmp_path, HOARD, Limits(memory=512 * 1024**2, wall=60))
    result = task.results[f"fake-net|{BENCHMARK}"]
    assert result["status"] == "failed", task.log[-2000:]
    assert result["failure"] == ("ran out of memory: the memory limit of 512 MiB was reached (counted by the operating "
                                 "system: every page the model holds, memfds and shared memory included; killed)")
    assert "holding 1024 MiB" not in task.log


def test_without_a_cgroup_the_log_says_memory_is_bounded_by_rlimit_as_only(url, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setattr(cgroup, "memory_cgroup", lambda label, limit: None)
    task = run_with(url, tmp_path, "print('fine')")
    assert task.results[f"fake-net|{BENCHMARK}"] == {"status": "done", "score": 1.0}
    assert "[memory is bounded by RLIMIT_AS only: memfd pages are not counted (" in task.log
