"""A run waits for the workers it needs and says so, fails clearly when they do not come or go for good, and checks
``--device cuda`` on the workers (issue 30). Real clusters of worker processes on 127.0.0.1; no GPU is needed."""
import io
import os
import threading
import time
from pathlib import Path

import pytest

from brainscore import runner
from brainscore.device import DeviceError, resolve
from brainscore.runner import clusters, watch

TESTS = Path(__file__).resolve().parent.parent


@pytest.fixture
def plugin_on_workers(tmp_path, monkeypatch):
    """Workers import the test plugin (``runner_helpers``) and use a cache of their own."""
    import runner_helpers  # noqa: F401

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    return tmp_path


def empty_cluster():
    """A scheduler with no worker yet (as a batch cluster whose jobs are queued); workers are added by ``scale``."""
    from distributed import LocalCluster

    return LocalCluster(n_workers=0, threads_per_worker=1, processes=True, dashboard_address=None)


def test_the_run_waits_for_its_first_worker_says_so_and_goes_on_when_it_joins():
    from distributed import Client

    cluster = empty_cluster()
    try:
        with Client(cluster) as client:
            stream = io.StringIO()
            timer = threading.Timer(3.0, lambda: cluster.scale(1))
            timer.start()
            start = time.monotonic()
            workers = watch.wait_for_workers(client, timeout=120, stream=stream)
            waited = time.monotonic() - start
            timer.join()
    finally:
        cluster.close()
    assert len(workers) == 1 and waited >= 2.5
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("waiting for a worker (0 connected so far, 0 s of up to 120 s)")
    assert lines[-1].startswith("1 worker(s) connected after ") and lines[-1].endswith("the run starts")


def test_without_a_worker_holding_model_the_wait_ends_with_an_error_that_says_what_is_missing():
    from distributed import Client

    cluster = empty_cluster()
    try:
        cluster.scale(1)
        with Client(cluster) as client:
            client.wait_for_workers(1, timeout=60)
            stream = io.StringIO()
            with pytest.raises(watch.WorkersMissing) as raised:
                watch.wait_for_workers(client, needs={"MODEL"}, timeout=2, stream=stream, poll=0.2)
    finally:
        cluster.close()
    message = str(raised.value)
    assert message.startswith("no worker holding MODEL joined the cluster at tcp://127.0.0.1:")
    assert "within 2 s (1 worker(s) connected)" in message
    assert "--preload brainscore.runner.workers" in message and "--wait-for-workers SECONDS" in message
    assert stream.getvalue().startswith("waiting for a worker holding MODEL (1 connected so far")


def _run_and_remove_the_model_worker(client, cluster, pairs, wait_s, replace: bool):
    """Run ``pairs``; once a forward pass runs on worker 0 (MODEL), take worker 0 away for good (and, with
    ``replace``, start another worker holding MODEL once the run has said it lost it). The run's results."""
    out: dict = {}

    def run():
        try:
            out["results"] = runner.run(pairs, client, progress=False, needs={"MODEL"}, wait_s=wait_s)
        except BaseException as error:  # noqa: BLE001 - shown by the test
            out["error"] = error
    thread = threading.Thread(target=run)
    thread.start()
    workers = client.scheduler_info(n_workers=-1)["workers"]
    holder = next(address for address, info in workers.items() if info["name"] == 0)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and thread.is_alive():
        if any(key[0] in ("brainscore-select", "brainscore-activations")
               for key in client.processing().get(holder, ())):
            break
        time.sleep(0.1)
    else:
        pytest.fail("no forward pass was seen running on the MODEL worker")
    template = cluster.worker_spec.pop(0)
    cluster.sync(cluster._correct_state)  # worker 0 closes; nothing replaces it
    if replace:
        time.sleep(4)
        options = {**template["options"], "resources": {"MODEL": 1}}
        cluster.worker_spec[7] = {"cls": template["cls"], "options": options}
        cluster.sync(cluster._correct_state)
    thread.join(600)
    if "error" in out:
        raise out["error"]
    return out["results"]


def test_when_the_only_model_worker_leaves_the_run_says_so_and_goes_on_with_its_replacement(
        plugin_on_workers, monkeypatch, capfd):
    from distributed import Client

    monkeypatch.setenv("BRAINSCORE_TEST_FORWARD_SLEEP", "1")  # a forward pass lasts long enough to lose its worker
    pairs = runner.pairs("tiny-seeded", "Kriegeskorte2008.IT-rdm")
    cluster = clusters.local_cluster(2, preload=["runner_helpers"])
    try:
        with Client(cluster) as client:
            results = _run_and_remove_the_model_worker(client, cluster, pairs, wait_s=300, replace=True)
    finally:
        cluster.close()
    assert [r["status"] for r in results] == ["done"], results[0].get("log")
    assert results[0]["score"] == pytest.approx(0.07986019888403255, abs=0)  # as in test_engine: the same number
    err = capfd.readouterr().err
    assert "the only worker holding MODEL (worker 0 on 127.0.0.1 (tcp://127.0.0.1:" in err
    assert "left the cluster: the tasks that need it wait for a replacement for up to 300 s" in err
    assert "worker 7 on 127.0.0.1" in err and "holds MODEL again after" in err


def test_when_no_model_worker_comes_back_the_pairs_left_fail_with_a_message_that_says_why(
        plugin_on_workers, monkeypatch, capfd):
    from distributed import Client

    monkeypatch.setenv("BRAINSCORE_TEST_FORWARD_SLEEP", "1")
    pairs = runner.pairs("tiny-seeded", "Kriegeskorte2008.IT-rdm")
    cluster = clusters.local_cluster(2, preload=["runner_helpers"])
    try:
        with Client(cluster) as client:
            start = time.monotonic()
            results = _run_and_remove_the_model_worker(client, cluster, pairs, wait_s=5, replace=False)
            took = time.monotonic() - start
    finally:
        cluster.close()
    assert [r["status"] for r in results] == ["failed"]
    assert results[0]["failure"].startswith("WorkersMissing: no worker holding MODEL joined the cluster in the 5 s "
                                            "after the last one left")
    assert "run the same command again to score only those" in results[0]["failure"]
    assert took < 120  # it gave up; it did not hang
    assert "the only worker holding MODEL (worker 0 on 127.0.0.1" in capfd.readouterr().err


def test_cuda_is_checked_on_the_workers_and_the_error_names_each_worker_without_a_gpu(plugin_on_workers):
    """No GPU here: a GPU node's layout (worker 0 MODEL, worker 1 GPU) where worker 0's torch is made to claim a GPU;
    worker 1 reports none and is named, worker 0 is not."""
    from distributed import Client

    import runner_helpers

    with pytest.raises(DeviceError):
        resolve("cuda")  # this process has no GPU: a check here would refuse every run
    cluster = clusters.local_cluster(2, gpus=1)
    try:
        with Client(cluster) as client:
            workers = client.scheduler_info(n_workers=-1)["workers"]
            by_name = {info["name"]: address for address, info in workers.items()}
            client.run(runner_helpers.pretend_one_gpu, workers=[by_name[0]])
            with pytest.raises(DeviceError) as raised:
                watch.check_device(client, "cuda")
            client.run(runner_helpers.pretend_one_gpu, workers=[by_name[1]])
            watch.check_device(client, "cuda")  # every worker has its (pretended) GPU: the run may go on
    finally:
        cluster.close()
    message = str(raised.value)
    assert message.startswith("--device cuda: 1 of the 2 worker(s) that would compute on it cannot (checked on the "
                              "workers, not on this machine):")
    assert f"worker 1 on 127.0.0.1 ({by_name[1]}): --device cuda: torch " in message
    assert "sees no CUDA GPU" in message and by_name[0] not in message


def test_run_device_cuda_on_an_existing_cluster_is_refused_by_its_workers_not_by_this_machine(tmp_path):
    from cluster_helpers import dask_cluster, environment, run_command

    env = environment(tmp_path)
    with dask_cluster(env, workers=1) as address:
        result = run_command("--scheduler", address, "--device", "cuda", "--models", "tiny-seeded",
                             "--benchmarks", "Kriegeskorte2008.IT-rdm", "--wait-for-workers", "60", env=env)
    assert result.returncode == 2, result.stderr[-2000:]
    assert "error: --device cuda: 1 of the 1 worker(s) that would compute on it cannot (checked on the workers" \
        in result.stderr
    assert "on 127.0.0.1 (tcp://127.0.0.1:" in result.stderr
