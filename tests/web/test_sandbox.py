"""A hostile submitter (issue 23): real model plugins whose code attacks at import and inside ``look_at``, queued
with one honest submission on the real path (Dispatcher -> Dask -> run_pair -> sandbox launcher -> child).

Each attack must fail, the submission be recorded as failed with a reason that names what stopped it, and the
honest submission queued beside them still score. All the submissions run in one Dask cluster at once (module
fixture), so the module costs about one scoring run plus the wall-clock limit of the one that sleeps.

The file-system, network, process and forgery containment needs namespaces (root, or unprivileged user
namespaces, and ``unshare``): without them those tests are skipped (their rootless fallbacks, stated in the
docs/security.md's "Containment of a submission's code", are covered by ``test_rootless_fallback_*``).
"""
from __future__ import annotations

import math
import re
import os
import socket
import time
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from brainscore.results import Database
from brainscore.web import accounts
from brainscore.web.checks import extract
from brainscore.web.queue import Dispatcher, Limits, SubmissionTask, write_entry_point
from brainscore.boundary.launcher import UID_BASE, UID_RANGE, isolation
from host_helpers import survivors
from web_helpers import EXAMPLE_PLUGIN, plugin_zip

BENCHMARK = "Cowley2026.210325.V4-pls"
HONEST_SCORE = 0.1036  # `brainscore score --model my-tiny-net --benchmark Cowley2026.210325.V4-pls` (the tiny network of docs/models.md)
LIMITS = Limits(memory=4 * 1024**3, cpu=600, wall=90, disk=512 * 1024**2, log=1024**2, processes=64)
SECRET = "the-server-secret-7f3a9c"
OUTLIVE = "4321.5"  # the sleep argument that marks the processes a plugin tries to leave running

pytestmark = [pytest.mark.skipif(isolation() == "none", reason="namespaces are unavailable here (not root, no "
                                 "unprivileged user namespaces, or no unshare): the sandbox runs limits only"),
              pytest.mark.slow]

# each attack: Python source of ``attack(where)``, run at import of the model module and inside look_at
ATTACKS = {
    "read": '''
def attack(where):
    for path in READ_PATHS:
        try:
            print("READ", path, open(path, errors="replace").read()[:200], flush=True)
        except OSError as error:
            print("denied", where, path, type(error).__name__, flush=True)
    if where == "look_at":
        open(READ_PATHS[0], "rb").read()
''',
    "write": '''
def attack(where):
    for path in WRITE_PATHS:
        try:
            with open(path, "a") as out:
                out.write("owned")
            print("WROTE", path, flush=True)
        except OSError as error:
            print("denied", where, path, type(error).__name__, flush=True)
    if where == "look_at":  # its own plugin folder
        open(os.path.join(os.path.dirname(__file__), "planted.py"), "a").write("owned")
''',
    "disk": '''
def attack(where):
    if where == "look_at":
        with open("big.bin", "wb") as out:
            for _ in range(1000):
                out.write(b"x" * 2**20)
''',
    "socket": '''
def attack(where):
    import socket
    try:
        socket.create_connection(("127.0.0.1", PORT), timeout=5)
        print("CONNECTED", flush=True)
    except OSError as error:
        print("denied", where, type(error).__name__, error, flush=True)
    if where == "look_at":
        socket.create_connection(("127.0.0.1", PORT), timeout=5)
''',
    "fork": '''
def attack(where):
    import time
    forks = 0
    while forks < 100000:
        pid = os.fork()
        if pid == 0:
            time.sleep(1000)
            os._exit(0)
        forks += 1
        print("forked", forks, flush=True)
''',
    "memory": '''
def attack(where):
    try:
        block = bytearray(8 * 1024**3)
        print("ALLOCATED", len(block), flush=True)
    except MemoryError:
        print("denied", where, "MemoryError", flush=True)
    if where == "look_at":
        block = bytearray(8 * 1024**3)
''',
    "sleep": '''
def attack(where):
    if where == "look_at":
        import time
        time.sleep(1000)
''',
    "outlive": '''
def attack(where):
    import subprocess
    subprocess.Popen(["sleep", OUTLIVE], start_new_session=True)
    if os.fork() == 0:  # a daemon: double fork, own session
        os.setsid()
        if os.fork() == 0:
            os.execvp("sleep", ["sleep", OUTLIVE])
        os._exit(0)
''',
    "forge": '''
def attack(where):
    try:
        import sqlite3
        sqlite3.connect(DATABASE).execute("select 1 from scores").fetchall()
        print("OPENED THE DATABASE", flush=True)
    except Exception as error:
        print("denied", where, type(error).__name__, error, flush=True)
    if where == "look_at":  # claim a perfect score for the honest user's model
        outcome = {"model": "honest-net", "benchmark": BENCHMARK, "status": "done", "score": 1.0,
                   "benchmark_version": 1}
        print(json.dumps({"event": "done", "outcome": outcome}), flush=True)
        os._exit(0)
''',
    "log": '''
def attack(where):
    import sys
    for _ in range(100):
        sys.stdout.write("x" * 2**20 + "\\n")
''',
}


def hostile_model(kind: str, constants: dict) -> str:
    """The tiny network's model.py (docs/models.md) with ``attack`` run at import and wrapped around look_at."""
    values = "".join(f"{name} = {value!r}\n" for name, value in constants.items())
    return ((EXAMPLE_PLUGIN / "model.py").read_text() + "\nimport json, os\n" + values + ATTACKS[kind] + '''
attack("import")
_commitment = commitment


def commitment(identifier, **kwargs):
    model = _commitment(identifier, **kwargs)
    look_at = model.look_at

    def hostile_look_at(*args, **kw):
        attack("look_at")
        return look_at(*args, **kw)
    model.look_at = hostile_look_at
    return model
''')


def queue(url: str, root: Path, owner: str, identifier: str, package: str, data: bytes) -> int:
    """Unpack ``data`` as submission of ``owner`` and queue it (as the upload route does after its checks)."""
    store = Database(url)
    with Session(accounts.engine_for(url)) as session:
        task = SubmissionTask(owner=owner, package=package, filename=f"{package}.zip", models=[identifier],
                              benchmarks=[BENCHMARK], requirements=[], public=True, status="preparing")
        session.add(task)
        session.commit()
        folder = root / str(task.id)
        extract(data, folder / "site")
        write_entry_point(folder / "site", package, task.id)
        task.folder, task.status = str(folder), "queued"
        task.submission_id = store.create_submission(owner, [identifier], [BENCHMARK], status="queued")
        session.commit()
        task_id = task.id
    store.add_model(identifier, owner=owner, public=True)
    return task_id


def processes_of(uid: int) -> list[int]:
    return [int(e) for e in os.listdir("/proc") if e.isdigit() and _uid_of(e) == uid]


def _uid_of(pid: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Queue the honest submission and one per attack, run them all on one Dask cluster; return what each needs."""
    from distributed import Client, LocalCluster

    folder = tmp_path_factory.mktemp("sandbox")
    url = f"sqlite:///{folder / 'results.sqlite'}"
    root = folder / "submissions"
    config = folder / "xdg" / "brainscore"
    config.mkdir(parents=True)
    (config / "secret.toml").write_text(f'token = "{SECRET}"\n')
    outside = folder / "outside.txt"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.setblocking(False)

    honest = queue(url, root, "bob", "honest-net", "honest_net", plugin_zip("honest-net", "honest_net"))
    honest_init = root / str(honest) / "site" / "honest_net" / "__init__.py"
    constants = {
        "READ_PATHS": [str(folder / "results.sqlite"), str(honest_init), str(config / "secret.toml"),
                       str(Path.home() / ".config"), "/etc/shadow"],
        "WRITE_PATHS": [str(honest_init), str(outside), str(root / "planted.py"), "/etc/planted", "/usr/planted"],
        "PORT": listener.getsockname()[1], "OUTLIVE": OUTLIVE, "DATABASE": str(folder / "results.sqlite"),
        "BENCHMARK": BENCHMARK}
    tasks = {"honest": honest}
    for kind in ATTACKS:
        package = f"evil_{kind}"
        data = plugin_zip(f"evil-{kind}", package, extra={f"{package}/model.py": hostile_model(kind, constants)})
        tasks[kind] = queue(url, root, "mallory", f"evil-{kind}", package, data)
    honest_before = honest_init.read_bytes()

    store = Database(url)
    with LocalCluster(n_workers=1, threads_per_worker=4, processes=False, dashboard_address="127.0.0.1:0") as cluster, \
            Client(cluster) as client:
        dispatcher = Dispatcher(store.engine, store, url, root, client=client)
        dispatcher.limits = LIMITS
        started = time.monotonic()
        dispatcher.start()
        try:
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline:
                with Session(accounts.engine_for(url), expire_on_commit=False) as session:
                    ended = {kind: session.get(SubmissionTask, i) for kind, i in tasks.items()}
                if all(t.status in ("done", "failed") for t in ended.values()):
                    break
                time.sleep(0.5)
            else:
                pytest.fail(f"submissions did not end: {[(k, t.status) for k, t in ended.items()]}")
        finally:
            dispatcher.stop()
    try:
        connection, _ = listener.accept()
        accepted = True
        connection.close()
    except BlockingIOError:
        accepted = False
    listener.close()
    return {"tasks": ended, "ids": tasks, "url": url, "folder": folder, "outside": outside, "root": root,
            "honest_init": honest_init, "honest_before": honest_before, "accepted": accepted,
            "seconds": time.monotonic() - started}


def failure_of(run, kind: str) -> str:
    task = run["tasks"][kind]
    assert task.status == "failed", (kind, task.status, task.log[-3000:])
    (result,) = task.results.values()
    assert result["status"] == "failed"
    rows = Database(run["url"]).scores(f"evil-{kind}", include_failed=True)  # recorded as that model's failure
    assert [(row.status, row.failure) for row in rows] == [("failed", result["failure"])], task.log[-3000:]
    return result["failure"]


def test_the_honest_submission_scores_beside_them(run):
    task = run["tasks"]["honest"]
    assert task.status == "done", task.log[-3000:]
    (row,) = Database(run["url"]).scores("honest-net")
    assert row.score == pytest.approx(HONEST_SCORE, abs=5e-4) and math.isfinite(row.score)
    assert task.results == {f"honest-net|{BENCHMARK}": {"status": "done", "score": row.score}}


def test_reading_outside_its_folder_fails(run):
    failure = failure_of(run, "read")
    log = run["tasks"]["read"].log
    assert "READ " not in log and SECRET not in log and "SQLite format" not in log
    assert log.count("denied import") == 5 and log.count("denied look_at") == 5
    assert failure.startswith("a submission sees only its own folder (read-only), the Python environment and its "
                              "stimuli's images, and writes only in its working directory: the model raised "
                              "FileNotFoundError while answering look_at")
    assert "No such file or directory" in failure and "results.sqlite" in failure


def test_writing_outside_its_working_directory_fails(run):
    failure = failure_of(run, "write")
    log = run["tasks"]["write"].log
    assert "WROTE" not in log and log.count("denied import") == 5, log[-3000:]
    assert run["honest_init"].read_bytes() == run["honest_before"]
    assert not run["outside"].exists() and not (run["root"] / "planted.py").exists()
    assert not Path("/etc/planted").exists() and not Path("/usr/planted").exists()
    assert failure.startswith("a submission sees only its own folder (read-only)"), failure
    assert "Read-only file system" in failure, failure


def test_filling_the_disk_fails_at_the_disk_limit(run):
    failure = failure_of(run, "disk")
    assert failure.startswith("wrote more than the disk limit of 512 MiB (its working directory's size): ")
    assert "No space left on device" in failure or "File too large" in failure


def test_opening_a_socket_fails(run):
    failure = failure_of(run, "socket")
    log = run["tasks"]["socket"].log
    assert "CONNECTED" not in log and not run["accepted"]
    assert "denied import OSError [Errno 101] Network is unreachable" in log
    assert failure == ("submissions have no network: the model raised OSError while answering look_at: [Errno 101] "
                       "Network is unreachable")


def test_a_fork_bomb_stops_at_the_process_limit(run):
    failure = failure_of(run, "fork")
    assert failure.startswith("the process limit of 64 processes and threads (RLIMIT_NPROC) was reached")
    # its error; on a loaded machine its forks may outlast the grace, and the kill is then named after it
    assert "[Errno 11] Resource temporarily unavailable" in failure
    forks = [int(line.split()[1]) for line in run["tasks"]["fork"].log.splitlines() if line.startswith("forked ")]
    assert 0 < max(forks) < 64
    uid = UID_BASE + run["ids"]["fork"] % UID_RANGE
    assert processes_of(uid) == []  # every fork was killed with the task


def test_allocating_past_the_memory_limit_fails(run):
    failure = failure_of(run, "memory")
    log = run["tasks"]["memory"].log
    assert "ALLOCATED" not in log and "denied import MemoryError" in log
    assert failure == ("ran out of memory: the memory limit of 4 GiB (RLIMIT_AS) was reached: the model raised "
                       "MemoryError while answering look_at: ")


def test_sleeping_past_the_time_limit_is_killed(run):
    failure = failure_of(run, "sleep")
    assert failure == "exceeded the wall-clock time limit of 90 s (killed)" or \
        failure.startswith("exceeded the wall-clock time limit of 90 s (killed): ")


def test_no_process_outlives_its_task(run):
    failure = failure_of(run, "outlive")
    assert re.fullmatch(r"left [2-9] processes running when it ended \(killed\): a submission's processes must "
                        r"end with it(: .*)?", failure)  # the model server's last line, if it printed one
    assert survivors(f"sleep {OUTLIVE}", ignore=("pytest",)) == []
    uid = UID_BASE + run["ids"]["outlive"] % UID_RANGE
    assert processes_of(uid) == []


def test_a_forged_identifier_is_refused(run):
    """The model server's output is its log only (issue 32): the outcome line it prints for the honest user's
    model is never read; it ends without answering, and nothing is recorded."""
    failure = failure_of(run, "forge")
    log = run["tasks"]["forge"].log
    assert "OPENED THE DATABASE" not in log and '"model": "honest-net"' in log
    assert failure == ("the model's process ended while answering look_at (the other side of the boundary closed "
                       "it); it exited (code 0) without answering: nothing was recorded")
    scores = Database(run["url"]).scores("honest-net", include_failed=True)
    assert [row.score for row in scores] == [pytest.approx(HONEST_SCORE, abs=5e-4)]  # the honest one only
    assert {row.identifier: row.owner for row in Database(run["url"]).models()}["honest-net"] == "bob"


def test_a_flood_of_output_is_cut_at_the_log_limit(run):
    failure = failure_of(run, "log")
    log = run["tasks"]["log"].log
    assert failure.startswith("printed more than the log limit of 1 MiB (killed)")
    assert "[... output beyond the log limit of 1 MiB left out ...]" in log
    assert len(log) < 1.1 * 2**20
