"""The submission queue: Dask tasks run each pair as a model server with limits and without network beside a trusted
scorer; every failure is recorded with its log; only the scorer's outcome is a score (a model that prints one gets
nothing); submissions are served first come, first served, and survive a restart.

Most tests here give the pair fake processes (``command``: the model server, ``scorer``: the trusted scorer) to test
the queue's mechanics without a model; tests/web/test_boundary_web.py submits real hostile models."""
from __future__ import annotations

import re
import socket
import sys

import numpy as np
import pytest
from sqlalchemy.orm import Session

from brainscore.results import Database
from brainscore.web import accounts
from brainscore.web.queue import Dispatcher, SubmissionTask, Limits, place_in_queue, run_pair
from brainscore.boundary.launcher import isolation

BENCHMARK = "Cowley2026.210325.V4-pls"
OTHER = "Kriegeskorte2008.IT-rdm"


@pytest.fixture
def url(tmp_path):
    return f"sqlite:///{tmp_path / 'results.sqlite'}"


def add_task(url, tmp_path, benchmarks=(BENCHMARK,), models=("fake-net",), status="queued", results=None) -> int:
    with Session(accounts.engine_for(url)) as session:
        task = SubmissionTask(owner="alice", models=list(models), benchmarks=list(benchmarks), folder=str(tmp_path / "task"),
                  status=status, results=results or {})
        session.add(task)
        session.commit()
        return task.id


def get_task(url, task_id) -> SubmissionTask:
    with Session(accounts.engine_for(url), expire_on_commit=False) as session:
        return session.get(SubmissionTask, task_id)


def done_line(score: float, model: str = "fake-net", benchmark: str = BENCHMARK) -> str:
    """Python code printing the done event of a scorer that scored ``model`` on ``benchmark``."""
    outcome = {"model": model, "benchmark": benchmark, "status": "done", "score": score, "benchmark_version": 1}
    return f"print(json.dumps({{'event': 'done', 'kind': 'done', 'outcome': {outcome!r}}}))"


def scorer(code: str) -> list[str]:
    """A fake trusted scorer running ``code`` (it does not talk to the model server)."""
    return [sys.executable, "-c", f"import json; {code}"]


def run_with(url, tmp_path, code: str, limits=Limits(memory=1024**3, wall=60), scored: float | None = 1.0,
             scorer_code: str | None = None) -> SubmissionTask:
    """Run one pair whose model server is ``code`` beside a fake scorer reporting ``scored`` (None: the real scorer)."""
    task_id = add_task(url, tmp_path)
    fake = None if scored is None and scorer_code is None else scorer(scorer_code or done_line(scored))
    run_pair(url, task_id, 1, "fake-net", BENCHMARK, limits, [sys.executable, "-c", code], fake)
    return get_task(url, task_id)


def test_a_failing_child_is_recorded_with_its_log(url, tmp_path):
    task = run_with(url, tmp_path, "print('loading the model'); raise SystemExit('weights missing')")
    assert task.status == "running" and task.current == 1  # the dispatcher closes the task when its pairs are done
    assert task.results[f"fake-net|{BENCHMARK}"] == {"status": "failed", "failure": "exited with code 1: weights missing"}
    assert "=== [1/1] fake-net on Cowley2026.210325.V4-pls\nloading the model\nweights missing\n" in task.log
    (failure,) = Database(url).scores("fake-net", include_failed=True)
    assert failure.status == "failed" and failure.failure == "exited with code 1: weights missing"
    assert "weights missing" in failure.log


def test_the_scorers_outcome_is_the_score(url, tmp_path):
    task = run_with(url, tmp_path, "print('the model answers')", scored=0.42)
    assert task.results[f"fake-net|{BENCHMARK}"] == {"status": "done", "score": 0.42}
    (row,) = Database(url).scores("fake-net")  # recorded by the task, as the trusted scorer reported it
    assert row.score == 0.42


@pytest.mark.parametrize("forged", [1e6, -5.0, float("nan")])
def test_a_done_line_the_model_prints_is_never_a_score(url, tmp_path, forged):
    """Issue 32: a plugin that printed ``{"event": "done", "outcome": {..., "score": 1e6}}`` got 1e6 recorded (and
    rank 1). The model server's output is the log only; with the real scorer, a model server that prints a score and
    exits without answering ends with nothing recorded as done."""
    code = f"import json; {done_line(forged)}".replace("nan", "float('nan')")
    task = run_with(url, tmp_path, code, scored=None)
    result = task.results[f"fake-net|{BENCHMARK}"]
    assert result["status"] == "failed", task.log[-2000:]
    assert result["failure"].startswith("the model's process ended while loading the model"), result["failure"]
    assert result["failure"].endswith("it exited (code 0) without answering: nothing was recorded")
    assert [(row.status, row.score) for row in Database(url).scores("fake-net", include_failed=True)] == \
        [("failed", None)]
    assert '"event": "done"' in task.log  # printed, kept in the log, never read as a result


def test_a_score_the_scorer_reports_is_checked_too(url, tmp_path):
    """The one check of every recorded score (brainscore.results.validity) holds on the website's path as well."""
    task = run_with(url, tmp_path, "pass", scored=1e6)
    result = task.results[f"fake-net|{BENCHMARK}"]
    assert result["status"] == "failed" and "is 1000000.0, outside [0, 1]" in result["failure"]
    assert [row.status for row in Database(url).scores("fake-net", include_failed=True)] == ["failed"]


def test_memory_limit_applies_to_the_child(url, tmp_path):
    task = run_with(url, tmp_path, "x = bytearray(3 * 1024**3)")
    assert task.results[f"fake-net|{BENCHMARK}"]["status"] == "failed" and "MemoryError" in task.log


def test_wall_clock_limit_kills_the_child(url, tmp_path):
    task = run_with(url, tmp_path, "import time; time.sleep(30)", Limits(wall=1))
    assert task.results[f"fake-net|{BENCHMARK}"]["failure"] == "exceeded the wall-clock time limit of 1 s (killed)"


def test_the_model_server_runs_in_its_own_working_directory(url, tmp_path):
    task = run_with(url, tmp_path, "import os; print(os.getcwd())")
    assert f"\n{tmp_path / 'task' / 'run'}\n" in task.log


@pytest.mark.skipif(isolation() == "none", reason="network namespaces need root or user namespaces and unshare "
                                                   "(children then run offline only)")
def test_children_have_no_network(url, tmp_path):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    task = run_with(url, tmp_path, f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)")
    server.close()
    assert "ConnectionRefusedError" in task.log or "Network is unreachable" in task.log


def test_place_in_queue(url, tmp_path):
    engine = accounts.engine_for(url)
    first, second = add_task(url, tmp_path), add_task(url, tmp_path)
    assert place_in_queue(engine, get_task(url, first)) == 1
    assert place_in_queue(engine, get_task(url, second)) == 2
    assert place_in_queue(engine, get_task(url, add_task(url, tmp_path, status="running"))) is None


@pytest.fixture
def client():
    """A Dask cluster of one single-threaded worker (threads of this process, so the test's command is seen)."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address="127.0.0.1:0") as cluster, \
            Client(cluster) as client:
        yield client


def dispatcher_with(url, tmp_path, client, order_file, fail=()) -> Dispatcher:
    store = Database(url)
    dispatcher = Dispatcher(store.engine, store, url, tmp_path, memory_limit=1024**3, wall_limit=60, client=client)
    dispatcher.limits = Limits(memory=1024**3, wall=60, isolate=False)  # the children write the order file

    def command(model, benchmark, submission_id):  # the model server: writes the order, fails where asked
        outcome = "raise SystemExit('no layer for IT')" if benchmark in fail else "pass"
        return [sys.executable, "-c", f"import json; open({str(order_file)!r}, 'a').write('{model}|{benchmark}\\n'); "
                                      f"{outcome}"]
    dispatcher.command = command
    dispatcher.scorer = lambda model, benchmark, submission_id: scorer(done_line(0.5, model, benchmark))
    return dispatcher


def wait_for(url, task_ids, timeout=60):
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        tasks = [get_task(url, i) for i in task_ids]
        if all(task.status in ("done", "failed") for task in tasks):
            return tasks
        time.sleep(0.2)
    pytest.fail(f"tasks did not end: {[(j.id, j.status, j.log) for j in tasks]}")


def test_submissions_run_on_dask_first_come_first_served(url, tmp_path, client):
    order = tmp_path / "order.txt"
    first = add_task(url, tmp_path, models=["a-net"], benchmarks=[BENCHMARK, OTHER])
    second = add_task(url, tmp_path, models=["b-net"], benchmarks=[BENCHMARK])
    dispatcher = dispatcher_with(url, tmp_path, client, order, fail=(OTHER,))
    dispatcher.start()
    try:
        done_first, done_second = wait_for(url, [first, second])
    finally:
        dispatcher.stop()
    # one worker thread: the older submission's pairs both run before the newer one's
    assert order.read_text().splitlines() == [f"a-net|{BENCHMARK}", f"a-net|{OTHER}", f"b-net|{BENCHMARK}"]
    assert done_first.status == "failed" and done_first.current == 2
    assert done_first.results == {f"a-net|{BENCHMARK}": {"status": "done", "score": 0.5},
                                  f"a-net|{OTHER}": {"status": "failed", "failure": "exited with code 1: no layer for IT"}}
    assert done_first.failure == "one or more benchmarks failed; see the log"
    assert done_second.status == "done" and done_second.results == {f"b-net|{BENCHMARK}": {"status": "done", "score": 0.5}}
    assert re.search(rf"=== \[2/2\] a-net on {OTHER} \(Dask worker inproc://[^)]+\)\nno layer for IT\n", done_first.log)
    assert done_first.started is not None and done_first.finished >= done_first.started


def test_a_restart_queues_running_tasks_again_and_keeps_their_finished_pairs(url, tmp_path, client):
    order = tmp_path / "order.txt"
    kept = {f"a-net|{BENCHMARK}": {"status": "done", "score": 0.25}}
    task_id = add_task(url, tmp_path, models=["a-net"], benchmarks=[BENCHMARK, OTHER], status="running", results=kept)
    dispatcher = dispatcher_with(url, tmp_path, client, order)
    assert dispatcher.requeue_running() == 1
    assert get_task(url, task_id).status == "queued" and "[server restarted; queued again]" in get_task(url, task_id).log
    dispatcher.start()
    try:
        (task,) = wait_for(url, [task_id])
    finally:
        dispatcher.stop()
    assert order.read_text().splitlines() == [f"a-net|{OTHER}"]  # only the pair it had not finished
    assert task.status == "done" and task.results == {**kept, f"a-net|{OTHER}": {"status": "done", "score": 0.5}}


def test_a_lost_task_is_a_visible_failure(url, tmp_path, client, monkeypatch):
    task_id = add_task(url, tmp_path, models=["a-net"])
    dispatcher = dispatcher_with(url, tmp_path, client, tmp_path / "order.txt")
    monkeypatch.setattr("brainscore.web.queue.run_pair", lambda *args: 1 / 0)  # the task itself breaks
    dispatcher.start()
    try:
        (task,) = wait_for(url, [task_id])
    finally:
        dispatcher.stop()
    assert task.status == "failed"
    assert task.results[f"a-net|{BENCHMARK}"] == {
        "status": "failed", "failure": "the scoring task was lost: ZeroDivisionError: division by zero"}
    (failure,) = Database(url).scores("a-net", include_failed=True)
    assert failure.failure == "the scoring task was lost: ZeroDivisionError: division by zero"


def test_an_existing_scheduler_is_used_and_left_running(url, tmp_path):
    """``--scheduler ADDR``: the dispatcher connects to that cluster (over TCP) and closes only its client."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://", host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster:
        task_id = add_task(url, tmp_path, models=["a-net"])
        dispatcher = dispatcher_with(url, tmp_path, None, tmp_path / "order.txt")
        dispatcher.scheduler, dispatcher._own_client = cluster.scheduler_address, True
        dispatcher.start()
        try:
            (task,) = wait_for(url, [task_id])
        finally:
            dispatcher.stop()
        assert task.status == "done" and f"(Dask worker {next(iter(cluster.workers.values())).address})" in task.log
        assert dispatcher.client is None and cluster.status.name == "running"


def test_the_scorer_finds_the_settings_under_xdg_config_home_and_the_model_server_has_no_data(url, tmp_path,
                                                                                                monkeypatch):
    """Issue 25 #1: a server whose data mirror is set in ``$XDG_CONFIG_HOME/brainscore/config.toml`` scored its
    submissions without it. Issue 32: the data are the trusted scorer's only; the model server gets the weights
    folders, never a data mirror."""
    mirror, weights = tmp_path / "mirror", tmp_path / "weights"
    mirror.mkdir()
    weights.mkdir()
    (tmp_path / "xdg" / "brainscore").mkdir(parents=True)
    (tmp_path / "xdg" / "brainscore" / "config.toml").write_text(f'data_mirror = "{mirror}"\n'
                                                                 f'torchvision_weights = "{weights}"\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("BRAINSCORE_DATA_MIRROR", raising=False)
    monkeypatch.delenv("BRAINSCORE_TORCHVISION_WEIGHTS", raising=False)
    server = ("import os; from brainscore import config; print('server mirrors:', *config.data_mirrors()); "
              "print('server weights:', os.environ.get('BRAINSCORE_TORCHVISION_WEIGHTS'))")
    trusted = ("import sys; from brainscore import config; "
               "print('scorer mirrors:', *[str(m) for m in config.data_mirrors()[:1]], file=sys.stderr); "
               + done_line(1.0))
    task = run_with(url, tmp_path, server, scorer_code=trusted)
    assert task.results[f"fake-net|{BENCHMARK}"] == {"status": "done", "score": 1.0}
    assert f"scorer mirrors: {mirror}" in task.log and f"server weights: {weights}" in task.log
    assert str(mirror) not in task.log.split("server mirrors:")[1].splitlines()[0]


def test_a_long_failure_message_is_kept_whole(url, tmp_path):
    """Issue 25 #2: the failure shown on the submission page was the child's last line cut at 300 characters,
    mid-word (``...and run `brainscor``)."""
    message = ("DataNotFoundError: data file x.nc was not found and BRAINSCORE_OFFLINE=1 forbids downloads. " * 4
               + "Put the file at <mirror>/x.nc and run `brainscore config set data_mirror <mirror>`")
    task = run_with(url, tmp_path, f"raise SystemExit({message!r})")
    assert len(message) > 300
    assert task.results[f"fake-net|{BENCHMARK}"]["failure"] == f"exited with code 1: {message}"


def test_shorten_cuts_between_words():
    from brainscore.web.queue import shorten

    assert shorten("short enough", 100) == "short enough"
    assert shorten("alpha beta gamma delta", 15) == "alpha beta …"
    assert shorten("x" * 40, 10) == "xxxxxxxx …"


def test_a_prepared_environment_under_the_hidden_submissions_folder_is_shown_to_the_model_server(tmp_path,
                                                                                                   monkeypatch):
    """The venv made for a submission's requirements.txt lives under the submissions folder, which the model server
    must not see; the venv itself (built by the server from named packages) must be visible, or its python cannot
    start. The data (mirrors, the server's locally packaged data) are never shown (issue 32)."""
    from brainscore.boundary.process import visible_paths

    submissions = tmp_path / "submissions"
    venv = submissions / "environments" / "abc123"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    site = submissions / "task-1" / "site"
    shown = visible_paths(str(venv / "bin" / "python"), hidden=[submissions], shown=(site,))
    assert str(venv) in shown and str(site) in shown
    assert str(submissions) not in shown and str(submissions / "environments") not in shown
    plain = visible_paths(str(tmp_path / "elsewhere" / "bin" / "python"), hidden=[submissions], shown=(site,))
    assert str(venv) not in plain
    home, mirror = tmp_path / "home", tmp_path / "mirror"
    (home / "packages").mkdir(parents=True)
    mirror.mkdir()
    monkeypatch.setenv("BRAINSCORE_HOME", str(home))
    monkeypatch.setenv("BRAINSCORE_DATA_MIRROR", str(mirror))
    shown = visible_paths(str(venv / "bin" / "python"), hidden=[home], extra=(str(mirror),), shown=(site,))
    assert str(home / "packages") not in shown and str(home) not in shown and str(mirror) not in shown


def test_packaged_data_files_are_readable_by_the_sandboxed_scorers(tmp_path):
    """Data files are written through a temporary file (mkstemp: 0600); the packaged file must be 0644 so that a
    scoring child running as another user can read it."""
    import xarray as xr

    from brainscore.data.io import read_netcdf, write_netcdf

    target = write_netcdf(xr.DataArray(np.arange(6.0).reshape(2, 3), dims=("presentation", "neuroid")),
                          tmp_path / "assy_x.nc")
    assert target.stat().st_mode & 0o777 == 0o644
    assert read_netcdf(target).values.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_a_model_servers_error_is_kept_when_it_then_hangs(url, tmp_path, monkeypatch):
    """Issue 36: "the model server's real refusal is lost when it does not exit in time": a model server that
    reported its error and then hung was recorded as killed for not ending, without the error."""
    monkeypatch.setattr("brainscore.web.pairs.SERVER_GRACE_S", 2)
    refusal = {"model": "fake-net", "benchmark": BENCHMARK, "status": "failed",
               "failure": "ValueError: the model has no layer 'IT'", "benchmark_version": 1}
    reported = (f"import time; time.sleep(4); "  # the model server prints, then the scorer reports its error
                f"print(json.dumps({{'event': 'failed', 'kind': 'model', 'outcome': {refusal!r}}}))")
    task = run_with(url, tmp_path, "print('no IT layer here'); import time; time.sleep(60)", scorer_code=reported)
    assert task.results[f"fake-net|{BENCHMARK}"] == {"status": "failed", "failure": (
        "ValueError: the model has no layer 'IT' (then the model server did not end when the scorer told it to "
        "(killed): a model server's processes must end with it)")}
    assert "no IT layer here" in task.log  # what it printed up to the kill is kept
