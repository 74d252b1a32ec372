"""Issue 36: after ``kill -9`` of ``brainscore serve`` a pair's model server, scorer and launcher ran on past their
time limit (5 min 36 s, then killed by hand), and the restarted server ran the pair again beside them.

A real ``brainscore serve`` (its Dask LocalCluster of one worker) scores a model that never finishes loading; the
server is killed with SIGKILL while the pair runs. Its processes end with it (their watchdog), and when even the
watchdog is gone, the restarted server ends them before it runs the pair again: never two copies of a pair.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from browser_helpers import wait_until_serving
from host_helpers import free_port
from web_helpers import plugin_zip, upload_token

SRC = Path(__file__).resolve().parents[2] / "src"
BENCHMARK = "Cowley2026.210325.V4-pls"
HANGING = '''import time

from brainscore.registry import register_model


@register_model("hang-net")
def _hang_net(**kwargs):
    print("hang-net: loading, forever", flush=True)
    time.sleep(3600)
'''

pytestmark = pytest.mark.slow  # two or three real servers started, about 90 s


def pair_processes() -> list[int]:
    """Pids of living processes that belong to a pair of ``hang-net`` (its launcher, model server, scorer)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            command = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if state != b"Z" and b"hang-net" in command and any(b"brainscore" in part for part in command):
            found.append(int(entry))
    return found


def _running(name: bytes) -> list[int]:
    return [pid for pid in pair_processes() if name in Path(f"/proc/{pid}/cmdline").read_bytes()]


def scorers() -> list[int]:
    """The trusted scorers of ``hang-net`` pairs (which wait for the model to load)."""
    return _running(b"brainscore.boundary.scorer")


def servers_of_models() -> list[int]:
    """The model servers of ``hang-net`` pairs (the model loads, forever)."""
    return _running(b"brainscore.boundary.server")


def start(folder: Path, port: int, time_limit: int = 300) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
           "BRAINSCORE_HOME": str(folder / "home")}
    log = open(folder / "server.log", "a")
    process = subprocess.Popen([sys.executable, "-m", "brainscore", "serve", "--port", str(port),
                                "--db", f"sqlite:///{folder / 'results.sqlite'}", "--time-limit-s", str(time_limit),
                                "--workers", "1"], env=env, stdout=log, stderr=subprocess.STDOUT)
    wait_until_serving(f"http://127.0.0.1:{port}", process, folder / "server.log")
    return process


def wait(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.25)
    pytest.fail(f"{what} within {seconds} s")


def _kill_left_behind() -> None:
    """Never leave a hang-net behind, whatever the test found; one that ends between listing and killing is gone
    already (CI once failed here on ``ProcessLookupError``)."""
    for pid in pair_processes():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture
def running(tmp_path):
    """A server scoring ``hang-net`` (a model that never loads): (folder, port, server, task key, token)."""
    assert not pair_processes(), "a hang-net pair of another run is still alive"
    port = free_port()
    server = start(tmp_path, port)
    url = f"http://127.0.0.1:{port}"
    token = upload_token(url, "alice")
    answer = httpx.post(url + "/api/submissions", headers={"Authorization": f"Bearer {token}"},
                        files={"file": ("p.zip", plugin_zip("hang-net", "hang_net", {"hang_net/__init__.py": HANGING}))},
                        data={"benchmarks": BENCHMARK}, timeout=60)
    assert answer.status_code == 201, answer.text
    wait(lambda: [scorers(), servers_of_models()] if scorers() and servers_of_models() else None, 120,
         "the pair's model server and scorer did not start")
    servers = [server]
    yield tmp_path, port, servers, answer.json()["id"], token
    for process in servers:
        if process.poll() is None:
            process.kill()
            process.wait()
    _kill_left_behind()


def test_a_killed_servers_pair_ends_with_it(running):
    folder, port, servers, key, token = running
    before = pair_processes()
    time.sleep(2)
    assert scorers() and servers_of_models()  # the scorer waits for the model, which loads
    servers[0].kill()  # SIGKILL: no clean-up of the server's runs
    servers[0].wait()
    wait(lambda: not pair_processes(), 30, f"the pair's processes {before} still ran after the server was killed")
    (record,) = (folder / "home" / "submissions").glob("*/processes.json")
    for folder_of_cgroup in json.loads(record.read_text()).get("cgroups", []):  # and their memory cgroups removed
        wait(lambda: not Path(folder_of_cgroup).exists(), 10, f"{folder_of_cgroup} was not removed")


def test_a_restarted_server_reaps_what_is_left_before_it_runs_the_pair_again(running):
    folder, port, servers, key, token = running
    (record,) = wait(lambda: list((folder / "home" / "submissions").glob("*/processes.json")), 30,
                     "the running pair's processes were not recorded")
    recorded = json.loads(record.read_text())
    os.kill(recorded["watchdog"], signal.SIGKILL)  # the worst case: its watchdog is gone too
    servers[0].kill()
    servers[0].wait()
    time.sleep(3)
    survivors = pair_processes()
    assert survivors, "the pair ended with its server although its watchdog was killed first"
    servers.append(start(folder, port))  # the restart ends them, then runs the pair again
    wait(lambda: not set(survivors) & set(pair_processes()), 30, "the previous run's pair was not ended")
    url = f"http://127.0.0.1:{port}"
    log = wait(lambda: (lambda view: view["log"] if view["log"].count("=== [1/1]") >= 2 else None)(
        httpx.get(f"{url}/api/submissions/{key}", headers={"Authorization": f"Bearer {token}"}).json()),
        120, "the pair did not run again")
    assert "[server restarted; queued again; pair 1 of the previous run: " in log
    assert "still running ended before it runs again]" in log
    for folder_of_cgroup in recorded.get("cgroups", []):  # the previous run's memory cgroups are removed too
        assert not Path(folder_of_cgroup).exists(), folder_of_cgroup
    # one copy of the pair runs: one model server process tree, one scorer
    wait(scorers, 60, "the pair's scorer did not start again")
    time.sleep(2)
    assert len(scorers()) == 1, scorers()


def test_a_pair_killed_at_its_time_limit_keeps_what_the_model_printed(tmp_path):
    """Issue 36: the log of a pair killed at its time limit held only its header, nothing the model printed."""
    port = free_port()
    server = start(tmp_path, port, time_limit=25)
    try:
        url = f"http://127.0.0.1:{port}"
        token = upload_token(url, "alice")
        answer = httpx.post(url + "/api/submissions", headers={"Authorization": f"Bearer {token}"},
                            files={"file": ("p.zip", plugin_zip("hang-net", "hang_net",
                                                                {"hang_net/__init__.py": HANGING}))},
                            data={"benchmarks": BENCHMARK}, timeout=60)
        key = answer.json()["id"]
        view = wait(lambda: (lambda v: v if v["status"] in ("done", "failed") else None)(
            httpx.get(f"{url}/api/submissions/{key}", headers={"Authorization": f"Bearer {token}"}).json()),
            150, "the pair did not end at its time limit")
    finally:
        server.kill()
        server.wait()
        _kill_left_behind()
    (failure,) = [r["failure"] for r in view["results"].values()]
    assert failure.startswith("exceeded the wall-clock time limit of 25 s (killed)"), failure
    assert "hang-net: loading, forever" in view["log"], view["log"]
