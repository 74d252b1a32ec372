"""Each worker of a run, wherever it was started: one network at a time per machine (the preload's model slot) and
the numerics of a lone process (the client's plugin). Real ``dask worker`` processes on 127.0.0.1."""
import os
import signal
import time

from distributed import Client

from brainscore.runner import workers as worker_settings
from cluster_helpers import dask_cluster, environment


def _model_holders(client) -> dict:
    info = client.scheduler_info(n_workers=-1)["workers"]
    return {address: w["name"] for address, w in info.items() if (w.get("resources") or {}).get("MODEL")}


def test_with_the_preload_one_worker_of_a_machine_holds_model_and_its_restart_takes_it_again(tmp_path):
    """``dask worker --nworkers 3 --preload brainscore.runner.workers``: the local cluster's layout on any machine."""
    with dask_cluster(environment(tmp_path), workers=3, preload=("brainscore.runner.workers",)) as address:
        with Client(address) as client:
            holders = _model_holders(client)
            assert len(holders) == 1
            (holder,) = holders
            levels = client.run(lambda: {os.getpriority(os.PRIO_PROCESS, int(t))
                                         for t in os.listdir("/proc/self/task")})
            base = os.getpriority(os.PRIO_PROCESS, 0)
            metric = {min(19, base + worker_settings.METRIC_NICENESS)}
            assert {address: level for address, level in levels.items()} == {
                address: ({base} if address == holder else metric) for address in levels}
            # the holder dies: its nanny starts a new process, which takes the machine's slot again
            os.kill(client.run(os.getpid, workers=[holder])[holder], signal.SIGKILL)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                now = _model_holders(client)
                if now and set(now) != {holder}:
                    break
                time.sleep(0.5)
            assert len(now) == 1 and set(now) != {holder}, now
            assert len(client.scheduler_info(n_workers=-1)["workers"]) == 3


def test_the_slot_lock_is_one_per_scheduler_machine_and_batch_job(monkeypatch):
    first = worker_settings.slot_lock_path("tcp://10.0.0.1:8786")
    assert first == worker_settings.slot_lock_path("tcp://10.0.0.1:8786")
    assert first != worker_settings.slot_lock_path("tcp://10.0.0.1:8787")  # another run on the same machine
    monkeypatch.setenv("SLURM_JOB_ID", "4242")  # two jobs of one run on one node: one slot each
    assert worker_settings.slot_lock_path("tcp://10.0.0.1:8786") != first
