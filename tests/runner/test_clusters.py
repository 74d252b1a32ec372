"""Where a run's workers come from: the jobqueue path up to the job script, and the LocalCluster's size."""
import dask
import dask_jobqueue  # noqa: F401 - its defaults are in dask's configuration before a test sets and restores it
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
    config = dask.config.merge(dask.config.config, dask.config.collect([str(path)], env={}))  # over the defaults
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


def _job_script(**kwargs) -> str:
    cluster = clusters.jobqueue_cluster("slurm", workers=0, scheduler_options={"host": "127.0.0.1",
                                                                            "dashboard_address": None}, **kwargs)
    try:
        return cluster.job_script()
    finally:
        cluster.close()


def test_a_cpu_job_runs_the_local_clusters_layout_one_single_threaded_worker_per_core_and_one_model_slot():
    """Issue 30: jobqueue's default (about sqrt(cores) workers of several threads) ran forward passes side by side."""
    command = _job_script(cores=16, memory="64GiB", processes=None).splitlines()[-1]
    assert "--nworkers 16" in command and "--nthreads 1 " in command
    assert "--preload brainscore.runner.workers" in command and "--resources" not in command
    assert "--nworkers 5 " in _job_script(cores=16, memory="20GiB").splitlines()[-1]  # at most one per 4 GiB
    mine = _job_script(cores=16, memory="64GiB", processes=4).splitlines()[-1]  # the user's choice stays
    assert "--nthreads 4" in mine and "--nworkers 4" in mine
    gpu = _job_script(cores=8, memory="64GiB", gpus=True).splitlines()[-1]
    assert "--nworkers" not in gpu and "--nthreads 8" in gpu and "--resources GPU=1" in gpu


def test_the_resources_a_run_waits_for_follow_the_kind_of_cluster():
    assert clusters.resources_needed(None, None, 0) == {"MODEL"}          # a local CPU cluster's worker 0
    assert clusters.resources_needed(None, None, 1) == {"MODEL", "GPU"}   # a local GPU node's layout
    assert clusters.resources_needed(None, "slurm", 0) == {"MODEL"}       # each job's first worker (the preload)
    assert clusters.resources_needed(None, "slurm", 1) == {"GPU"}         # every worker of a GPU job
    assert clusters.resources_needed("tcp://h:8786", None, 1) == set()    # whatever its owner gave its workers


def test_unknown_cluster_kind_is_a_clear_error():
    with pytest.raises(ValidationError, match="slurm, pbs, sge, lsf"):
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


def test_a_gpu_cluster_starts_its_roles_and_hides_the_gpus_from_its_cpu_workers():
    """No GPU here: the layout is faked by ``gpus=1``; the CPU workers start with CUDA showing no device."""
    import os

    from distributed import Client

    cluster = clusters.local_cluster(3, gpus=1)
    try:
        client = Client(cluster)
        try:
            workers = client.scheduler_info(n_workers=-1)["workers"]
            by_name = {info["name"]: (info.get("resources") or {}) for info in workers.values()}
            assert by_name == {0: {"MODEL": 1}, 1: {"GPU": 1}, 2: {"CPU": 1}}
            assert clusters.model_resources(client) == {"MODEL": 1}
            seen = client.run(lambda: os.environ.get("CUDA_VISIBLE_DEVICES"))
            names = {address: info["name"] for address, info in workers.items()}
            assert {names[address]: value for address, value in seen.items()} == {0: None, 1: None, 2: ""}
        finally:
            client.close()
    finally:
        cluster.close()


GIB = 1 << 30


def test_a_cpu_node_has_one_model_worker_and_metric_workers_sized_by_cores_and_memory():
    specs = clusters.worker_layout(gpus=0, cores=16, memory=128 * GIB)
    assert [s.name for s in specs] == list(range(16))
    assert [s.resources for s in specs] == [{"MODEL": 1}] + [None] * 15
    assert [s.yields for s in specs] == [False] + [True] * 15
    assert {s.memory_limit for s in specs} == {8 * GIB}  # 128 GiB / 16 is above the 4 GiB a network needs
    # this machine: 2 cores, 24 GiB; 12 workers ask for 2 GiB each, the network's worker still gets 4 GiB
    twelve = clusters.worker_layout(gpus=0, cores=2, memory=24 * GIB, workers=12)
    assert [s.memory_limit for s in twelve] == [4 * GIB] + [2 * GIB] * 11
    assert len(clusters.worker_layout(gpus=0, cores=16, memory=20 * GIB)) == 5  # one per 4 GiB
    assert [s.memory_limit for s in clusters.worker_layout(0, 4, 8 * GIB, memory_per_worker=3 * GIB)] == [3 * GIB] * 2


def test_a_gpu_node_has_a_model_worker_and_a_kernel_worker_per_gpu_and_cpu_workers_on_the_other_cores():
    specs = clusters.worker_layout(gpus=1, cores=16, memory=128 * GIB)  # issue 24's node
    assert len(specs) == 16 and [s.device for s in specs] == ["gpu"] * 2 + ["cpu"] * 14
    assert [s.resources for s in specs] == [{"MODEL": 1}, {"GPU": 1}] + [{"CPU": 1}] * 14
    assert [s.hide_gpus for s in specs] == [False] * 2 + [True] * 14      # CPU workers never touch the GPU
    assert [s.yields for s in specs] == [False] * 2 + [True] * 14
    assert {s.memory_limit for s in specs} == {8 * GIB}
    two = clusters.worker_layout(gpus=2, cores=16, memory=64 * GIB, workers=6)
    assert [s.resources for s in two] == [{"MODEL": 1}] * 2 + [{"GPU": 1}] * 2 + [{"CPU": 1}] * 2
    # fewer workers than roles: the GPU workers take the kernels, then the host work
    assert [s.resources for s in clusters.worker_layout(gpus=2, cores=4, memory=8 * GIB)] == \
        [{"MODEL": 1, "GPU": 1, "CPU": 1}] * 2                                  # 8 GiB: two workers
    assert [s.resources for s in clusters.worker_layout(gpus=1, cores=4, memory=64 * GIB, workers=2)] == \
        [{"MODEL": 1}, {"GPU": 1, "CPU": 1}]
    assert [s.memory_limit for s in clusters.worker_layout(gpus=2, cores=4, memory=8 * GIB)] == [4 * GIB, 4 * GIB]
    with pytest.raises(ValidationError, match="fewer than the 2 GPUs"):
        clusters.worker_layout(gpus=2, cores=4, memory=8 * GIB, workers=1)
    with pytest.raises(ValidationError, match="at least 1"):
        clusters.worker_layout(gpus=0, cores=4, memory=8 * GIB, workers=0)


def test_local_workers_get_the_memory_limit_asked_for():
    from distributed import Client

    cluster = clusters.local_cluster(2, memory_per_worker=3 * GIB // 2)
    try:
        with Client(cluster) as client:
            limits = [info["memory_limit"] for info in client.scheduler_info(n_workers=-1)["workers"].values()]
            assert limits == [3 * GIB // 2] * 2
    finally:
        cluster.close()
