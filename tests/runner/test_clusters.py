"""Where a run's workers come from: the jobqueue path up to the job script, and the LocalCluster's size."""
import dask
import pytest

from brainscore.errors import ValidationError
from brainscore.runner import clusters

JOBQUEUE_YAML = """
jobqueue:
  slurm:
    queue: gpu
    account: vision-lab
    cores: 8
    processes: 1
    memory: 64GiB
    walltime: "04:00:00"
    job-extra-directives: ["--gres=gpu:1"]
    local-directory: /tmp
"""


def test_slurm_cluster_from_the_users_jobqueue_yaml_asks_for_the_configured_resources(tmp_path):
    path = tmp_path / "jobqueue.yaml"
    path.write_text(JOBQUEUE_YAML)
    config = dask.config.collect([str(path)], env={})
    with dask.config.set(config):
        cluster = clusters.jobqueue_cluster("slurm", workers=0, gpus=True,
                                            scheduler_options={"host": "127.0.0.1", "dashboard_address": None})
        try:
            script = cluster.job_script()
        finally:
            cluster.close()
    lines = script.splitlines()
    assert "#SBATCH -p gpu" in lines
    assert "#SBATCH -A vision-lab" in lines
    assert "#SBATCH --cpus-per-task=8" in lines
    assert "#SBATCH --mem=64G" in lines
    assert "#SBATCH -t 04:00:00" in lines
    assert "#SBATCH --gres=gpu:1" in lines
    command = lines[-1]
    assert "--nthreads 8" in command and "--resources GPU=1" in command  # one model per GPU


def test_unknown_cluster_kind_is_a_clear_error():
    with pytest.raises(ValidationError, match="slurm, pbs, sge"):
        clusters.jobqueue_cluster("kubernetes")


def test_default_workers_is_at_most_one_per_core_and_at_least_one():
    import os

    assert 1 <= clusters.default_workers() <= len(os.sched_getaffinity(0))



def test_an_existing_scheduler_gets_the_preloaded_plugin_and_runs_the_grid(tmp_path, monkeypatch):
    import os
    from pathlib import Path

    from brainscore import runner

    tests = Path(__file__).resolve().parent.parent
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tests), os.environ.get("PYTHONPATH", "")]))
    import runner_helpers  # noqa: F401 - the plugin is known here; the workers learn it from the preload plugin

    existing = clusters.local_cluster(1)  # started elsewhere, knows nothing of the test plugin
    try:
        client, cluster = clusters.connect(scheduler=existing.scheduler_address, preload=["runner_helpers"])
        assert cluster is None
        try:
            results = runner.run(runner.pairs("tiny-seeded", "Kiani2007.IT-rdm"), client, progress=False)
        finally:
            client.close()
    finally:
        existing.close()
    assert results[0]["status"] == "done", results[0].get("log")
    assert results[0]["ceiling"] == 1.0  # Kiani 2007 has one RDM: no ceiling


def test_scheduler_and_cluster_together_are_refused():
    with pytest.raises(ValidationError, match="either --scheduler or --cluster"):
        clusters.connect(scheduler="tcp://127.0.0.1:1", cluster="slurm")


def _thread_priorities(dask_worker) -> set:
    import os

    return {os.getpriority(os.PRIO_PROCESS, int(tid)) for tid in os.listdir("/proc/self/task")}


def _malloc_trim(dask_worker):
    import os

    return os.environ.get("MALLOC_TRIM_THRESHOLD_")


def test_on_the_cpu_one_worker_runs_every_forward_pass_and_the_others_compute_metrics(tmp_path, monkeypatch):
    """Worker 0 alone holds MODEL; selection and activations tasks ask for it, scores and ceilings do not.

    The other worker computes at a lower priority, so that a metric does not stall the forward pass.
    """
    import os
    from pathlib import Path

    from distributed import Client, get_task_stream

    from brainscore import runner

    tests = Path(__file__).resolve().parent.parent
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tests), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    import runner_helpers  # noqa: F401

    cluster = clusters.local_cluster(2, preload=["runner_helpers"])
    try:
        client = Client(cluster)
        try:
            workers = client.scheduler_info(n_workers=-1)["workers"]
            holders = {info["name"] for info in workers.values() if (info.get("resources") or {}).get("MODEL")}
            assert holders == {0} and len(workers) == 2
            assert clusters.model_resources(client) == {"MODEL": 1}
            # the metric worker yields the cores to the forward pass: every thread 10 nice levels lower
            priorities = client.run(_thread_priorities)
            by_name = {workers[address]["name"]: levels for address, levels in priorities.items()}
            base = os.getpriority(os.PRIO_PROCESS, 0)
            assert by_name == {0: {base}, 1: {min(19, base + clusters.METRIC_NICENESS)}}
            # nor Dask's MALLOC_TRIM_THRESHOLD_=65536, which made every forward pass page-fault its tensors anew
            trims = set(client.run(_malloc_trim).values())
            assert trims == {os.environ.get("MALLOC_TRIM_THRESHOLD_")}
            with get_task_stream(client) as stream:
                results = runner.run(runner.pairs("tiny-seeded", "Kriegeskorte2008.IT-rdm,Cowley2026.210325.V4-pls,"
                                                                 "Geirhos2021edge-top1"), client, progress=False)
            model_worker = next(address for address, info in workers.items() if info["name"] == 0)
        finally:
            client.close()
    finally:
        cluster.close()
    assert [r["status"] for r in results] == ["done"] * 3, [r.get("log") for r in results]
    ran_on: dict[str, set] = {}
    for task in stream.data:
        ran_on.setdefault(task["key"][0], set()).add(task["worker"])
    # the V4 layer is chosen (tiny-seeded has no map): 3 selection passes, 1 choice, 3 activations tasks
    assert ran_on["brainscore-select"] == ran_on["brainscore-activations"] == {model_worker}
    assert {"brainscore-score", "brainscore-ceiling"} <= set(ran_on)


def test_a_gpu_cluster_gives_every_worker_one_gpu_and_no_model_slot():
    from distributed import Client

    cluster = clusters.local_cluster(2, gpus=2)
    try:
        client = Client(cluster)
        try:
            resources = sorted(tuple(sorted((info.get("resources") or {}).items()))
                               for info in client.scheduler_info(n_workers=-1)["workers"].values())
            assert resources == [(("GPU", 1),), (("GPU", 1),)]
            assert clusters.model_resources(client) is None
        finally:
            client.close()
    finally:
        cluster.close()
