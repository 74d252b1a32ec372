"""The sandbox launcher without a model (fast): what holds without namespaces (the rootless fallback), what an
unprivileged user namespace gives, and the queue's output cap and identifier check on plain children."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from brainscore.results import Database
from brainscore.boundary import launcher as sandbox
from brainscore.web import accounts
from brainscore.web.queue import Limits, SubmissionTask, run_pair
from host_helpers import survivors

BENCHMARK = "Cowley2026.210325.V4-pls"
SRC = str(Path(sandbox.__file__).resolve().parents[2])


def launch(tmp_path, code: str, mode: str, **spec) -> tuple[dict, str]:
    """Run ``python -c code`` under the launcher in ``mode``; return its verdict and its output."""
    (tmp_path / "run").mkdir(exist_ok=True)
    read, write = os.pipe()
    fields = dict(readable=(*sandbox.SYSTEM_FOLDERS, sys.prefix, sys.base_prefix, SRC), workdir=str(tmp_path / "run"),
                  isolate=mode != "none", uid=2_000_999, gid=2_000_999, memory=2 * 1024**3, disk=16 * 1024**2,
                  processes=64, report_fd=write)
    fields.update(spec)
    argv = sandbox.launcher_command(sandbox.Spec(**fields), [sys.executable, "-c", code], mode=mode)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, pass_fds=(write,),
                              start_new_session=True, env={"PATH": os.environ["PATH"], "PYTHONPATH": SRC})
    finally:
        os.close(write)
    with os.fdopen(read) as report:
        return json.loads(report.read()), done.stdout + done.stderr


def userns_available() -> bool:
    try:
        return subprocess.run(["unshare", "--user", "--map-root-user", "true"], capture_output=True).returncode == 0
    except FileNotFoundError:
        return False


LEAVE_BEHIND = """
import os, subprocess
subprocess.Popen(["sleep", "{mark}"])                            # a plain child, orphaned when this exits
subprocess.Popen(["sleep", "{mark}"], start_new_session=True)   # one in a session of its own
if os.fork() == 0:                                               # a daemon: double fork, own session
    os.setsid()
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", "{mark}"])
    os._exit(0)
"""


@pytest.mark.parametrize("mode", ["none", "root", "userns"])
def test_what_a_child_leaves_running_is_killed_and_counted(tmp_path, mode):
    """Rootless fallback: the launcher is the sub-reaper of the child's orphans and kills the child's session;
    in namespaces its PID namespace ends with it."""
    available = {"none": True, "root": sandbox.isolation() == "root",
                 "userns": sandbox.isolation() != "none" and userns_available()}
    if not available[mode]:
        pytest.skip(f"{mode} namespaces are unavailable here (isolation: {sandbox.isolation()})")
    mark = f"98765.{ {'none': 1, 'root': 2, 'userns': 3}[mode] }"
    verdict, output = launch(tmp_path, LEAVE_BEHIND.format(mark=mark), mode)
    assert verdict["exit"] == 0 and verdict["left_behind"] >= 3, output  # (4 when the daemon's first fork is seen)
    assert survivors(f"sleep {mark}") == []


def test_rootless_fallback_keeps_the_limits(tmp_path):
    verdict, output = launch(tmp_path, "bytearray(3 * 1024**3)", "none")
    assert verdict == {"exit": 1, "left_behind": 0} and output.strip().endswith("MemoryError")
    verdict, output = launch(tmp_path, "open('big', 'wb').write(b'x' * 20 * 2**20)", "none")
    assert verdict == {"exit": 1, "left_behind": 0} and "[Errno 27] File too large" in output
    assert (tmp_path / "run" / "big").stat().st_size == 16 * 1024**2  # in its working directory, cut at the limit


def test_a_user_namespace_hides_the_host_without_root(tmp_path):
    """What an unprivileged server gets (``unshare --user``): its own file system and no network, no capabilities."""
    if not userns_available():
        pytest.skip("no unshare, or user namespaces are disabled here: the rootless fallback is limits only")
    secret = tmp_path / "secret.txt"
    secret.write_text("hidden")
    tests = Path(__file__).resolve().parents[1]  # on the host, outside what the child is shown
    assert tests.is_dir()
    code = (f"import os, socket\nprint(os.path.exists({str(secret)!r}), os.path.exists({str(tests)!r}))\n"
            "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('CapEff')])\n"
            "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=3)\nexcept OSError as e:\n    print(e)\n")
    verdict, output = launch(tmp_path, code, "userns")
    assert verdict == {"exit": 0, "left_behind": 0}, output
    lines = output.splitlines()
    assert lines[0] == "False False"
    assert lines[1] == "['0000000000000000']" and "Network is unreachable" in lines[2]


def add_task(url, tmp_path) -> int:
    with Session(accounts.engine_for(url)) as session:
        task = SubmissionTask(owner="alice", models=["fake-net"], benchmarks=[BENCHMARK], folder=str(tmp_path / "task"),
                              status="queued", results={})
        session.add(task)
        session.commit()
        return task.id


def test_output_past_the_log_limit_is_cut_and_fails(tmp_path):
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    task_id = add_task(url, tmp_path)
    code = "import sys\nfor _ in range(100):\n    sys.stdout.write('x' * 2**20 + '\\n')\n"
    result = run_pair(url, task_id, 1, "fake-net", BENCHMARK, Limits(wall=60, log=2**20, isolate=False),
                      [sys.executable, "-c", code])
    assert result["status"] == "failed" and result["failure"].startswith("printed more than the log limit of 1 MiB (killed)")
    with Session(accounts.engine_for(url)) as session:
        log = session.get(SubmissionTask, task_id).log
    assert "[... output beyond the log limit of 1 MiB left out ...]" in log and len(log) < 1.1 * 2**20


def test_a_result_for_another_model_is_not_recorded(tmp_path):
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    task_id = add_task(url, tmp_path)
    """The model's process prints the outcome line that once recorded a score, for another model: the scorer alone
    reports outcomes (issue 32), so the line is never read and the pair fails without an answer."""
    outcome = {"model": "victim-net", "benchmark": BENCHMARK, "status": "done", "score": 1.0, "benchmark_version": 1}
    code = f"import json; print(json.dumps({{'event': 'done', 'outcome': {outcome!r}}}))"
    result = run_pair(url, task_id, 1, "fake-net", BENCHMARK, Limits(wall=60, isolate=False),
                      [sys.executable, "-c", code])
    assert result["status"] == "failed"
    assert result["failure"].startswith("the model's process ended while loading the model"), result["failure"]
    assert "without answering: nothing was recorded" in result["failure"]
    assert Database(url).scores("victim-net", include_failed=True) == []
    (failure,) = Database(url).scores("fake-net", include_failed=True)
    assert failure.status == "failed"


@pytest.mark.skipif(sandbox.isolation() == "none", reason="without namespaces a child sees every folder anyway")
def test_the_servers_weight_folders_are_seen_read_only(tmp_path):
    """``brainscore serve --weights-dir D``: plugins may load weights from D by absolute path, so the child sees it."""
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    task_id = add_task(url, tmp_path)
    weights = tmp_path / "weights"
    weights.mkdir()
    (weights / "w.bin").write_bytes(b"\x01\x02")
    code = (f"import json, os\nprint('weights', open({str(weights / 'w.bin')!r}, 'rb').read().hex())\n"
            f"print(os.access({str(weights)!r}, os.W_OK), os.path.exists({str(tmp_path / 'results.sqlite')!r}))\n")
    run_pair(url, task_id, 1, "fake-net", BENCHMARK, Limits(wall=60, readable=(str(weights),)),
             [sys.executable, "-c", code])
    with Session(accounts.engine_for(url)) as session:
        log = session.get(SubmissionTask, task_id).log
    assert "\nweights 0102\nFalse False\n" in log


SYSTEM_PYTHON = "/usr/bin/python3"


@pytest.mark.skipif(os.geteuid() != 0 or not Path(SYSTEM_PYTHON).exists() or not userns_available(),
                    reason="needs root (to become an unprivileged user), the system's python3 and user namespaces")
def test_an_unprivileged_server_gets_the_user_namespace_sandbox():
    """The rootless path for real: the launcher run by an unprivileged user (uid 65534) in ``userns`` mode hides the
    host's files, has no network, stops a fork bomb at the process limit and kills what the child leaves."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="brainscore-rootless-"))
    try:
        folder.chmod(0o777)
        (folder / "run").mkdir(mode=0o777)
        (folder / "run").chmod(0o777)
        secret = folder / "secret.txt"
        secret.write_text("hidden")
        secret.chmod(0o644)
        code = (f"import os, socket, time\nprint('sees', os.path.exists({str(secret)!r}), os.getuid())\n"
                "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=3)\nexcept OSError as e:\n    print(e)\n"
                "n = 0\ntry:\n    while n < 1000:\n        if os.fork() == 0:\n            time.sleep(100)\n"
                "            os._exit(0)\n        n += 1\nexcept OSError as e:\n    print('forks', n, e)\n")
        spec = sandbox.Spec(readable=(*sandbox.SYSTEM_FOLDERS,), workdir=str(folder / "run"), isolate=True,
                            memory=2 * 1024**3, disk=16 * 1024**2, processes=20, report_fd=-1)
        argv = sandbox.launcher_command(spec, [SYSTEM_PYTHON, "-c", code], mode="userns")
        argv = [SYSTEM_PYTHON if a == sys.executable else a for a in argv]
        done = subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", *argv],
                              capture_output=True, text=True, timeout=60, env={"PATH": os.environ["PATH"]})
        lines = done.stdout.splitlines()
        assert lines[0] == "sees False 0", done.stdout + done.stderr  # root of its namespace, nobody outside
        assert "Network is unreachable" in lines[1]
        assert lines[2].startswith("forks ") and int(lines[2].split()[1]) < 20 and "[Errno 11]" in lines[2]
        verdict = json.loads(done.stderr.strip().splitlines()[-1])
        assert verdict["exit"] == 0 and 0 < verdict["left_behind"] < 20
        assert survivors("time.sleep(100)") == []
    finally:
        shutil.rmtree(folder, ignore_errors=True)
