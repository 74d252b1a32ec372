"""The same records wherever a run computes (issue 30): ``brainscore score``, the local cluster, an existing Dask
cluster of plain ``dask worker`` processes, and a real one-node SLURM cluster through dask-jobqueue.

Every field of every record (floats compared as ``float.hex``; only row numbers, timestamps and
durations left out) equals ``brainscore score``'s. Before the workers' numerics were set on every
cluster, a ``dask worker`` (one BLAS thread, Dask's default) recorded the small network's raw score on
Cowley 2026 V4 ...f946 against ``score``'s ...ed4 in its last bits, and so its score, error and interval.
Each run starts from an empty cache, so its workers really extract, compute the ceilings and score.
"""
import subprocess
import sys
import textwrap

import pytest

from brainscore.runner import clusters
from cluster_helpers import dask_cluster, environment, records, run_command

MODEL = "tiny-seeded"
BENCHMARKS = "Cowley2026.210325.V4-pls,Kriegeskorte2008.IT-rdm"  # PLS (BLAS sums) and RSA


def score_records(home, model: str, benchmarks: str) -> list[dict]:
    """The records of ``brainscore score`` on ``model`` x ``benchmarks``, in one process from an empty cache."""
    code = ("import sys, runner_helpers; from brainscore.cli import main; "
            f"sys.exit(main(['score', '--model', {model!r}, '--benchmark', {benchmarks!r}]))")
    result = subprocess.run([sys.executable, "-c", code], env=environment(home), capture_output=True, text=True,
                            timeout=1200)
    assert result.returncode == 0, result.stderr[-3000:]
    found = records(home)
    assert [(r["model"], r["benchmark"], r["status"]) for r in found] == [
        (model, benchmark, "done") for benchmark in benchmarks.split(",")]
    return found


@pytest.fixture(scope="module")
def expected(tmp_path_factory):
    """The records of ``brainscore score`` on the two pairs."""
    return score_records(tmp_path_factory.mktemp("score-home"), MODEL, BENCHMARKS)


def test_the_local_cluster_records_what_score_records(expected, tmp_path):
    result = run_command("--models", MODEL, "--benchmarks", BENCHMARKS, "--workers", "2", env=environment(tmp_path))
    assert result.returncode == 0, result.stderr[-3000:]
    assert records(tmp_path) == expected


def test_plain_dask_workers_record_what_score_records(expected, tmp_path):
    """``dask worker`` as a user starts it (one BLAS thread, Dask's malloc trim): the client's plugin fixes both."""
    import os

    from distributed import Client

    env = environment(tmp_path)
    with dask_cluster(env, workers=2) as address:
        result = run_command("--scheduler", address, "--models", MODEL, "--benchmarks", BENCHMARKS, env=env)
        with Client(address) as client:
            applied = list(client.run(lambda dask_worker: {**dask_worker.brainscore_numerics, "environment": {
                name: os.environ.get(name) for name in ("OMP_NUM_THREADS", "MALLOC_TRIM_THRESHOLD_")}}).values())
    assert result.returncode == 0, result.stderr[-3000:]
    assert records(tmp_path) == expected
    cores = len(os.sched_getaffinity(0))
    assert len(applied) == 2
    for numerics in applied:  # every BLAS as in a lone process (Dask had set 1), malloc's thresholds adaptive again
        assert numerics["blas"] and set(numerics["blas"].values()) == {cores}
        # the nanny plugin restarted each worker process without Dask's variables: it loaded its libraries with
        # the lone thread counts and glibc's adaptive malloc, so the worker plugin had nothing left to change
        assert numerics["environment"] == {"OMP_NUM_THREADS": None, "MALLOC_TRIM_THRESHOLD_": None}
        assert numerics["malloc"] is None
    # no worker holds MODEL on a cluster started without the preload: the run says how to get one
    assert "start the workers with --preload brainscore.runner.workers" in result.stderr


#: The README's quick-start pair, whose records issue 39 found one last digit apart on plain ``dask worker``s.
QUICK_START = ("efficientnet-lite0", "Cowley2026.210325.V4-pls")


@pytest.mark.nightly  # two EfficientNet-Lite0 scorings of 1,200 images from empty caches (about 4 minutes)
def test_plain_dask_workers_record_the_quick_start_pair_as_score_does(tmp_path):
    """The real network on the quick-start pair, on workers started as docs/cluster.md says (no preload).

    ``dask worker --nthreads 1 --resources MODEL=1`` sets one BLAS thread and Dask's malloc trim; the records
    (score, raw, error, interval, ceiling, layer: every field as ``float.hex``) equal ``brainscore score``'s.
    """
    model, benchmark = QUICK_START
    expected = score_records(tmp_path / "score-home", model, benchmark)
    env = environment(tmp_path / "run-home")
    with dask_cluster(env, workers=2, worker_args=("--resources", "MODEL=1")) as address:
        result = run_command("--scheduler", address, "--models", model, "--benchmarks", benchmark, env=env,
                             timeout=1200)
    assert result.returncode == 0, result.stderr[-3000:]
    # before the nanny plugin (workers restarted with the lone thread counts) score, raw, error and interval
    # differed in their last bits here, and before warm_activations passed it on, the Dask record lacked the
    # network's parameter count (provenance["model_facts"]): the scoring worker never loaded the network
    assert records(tmp_path / "run-home") == expected


JOBQUEUE_YAML = """
jobqueue:
  slurm:
    cores: {cores}
    memory: 8GiB
    walltime: "00:30:00"
    interface: lo
    local-directory: {folder}/workers
    log-directory: {folder}/logs
    worker-extra-args: ["--no-dashboard"]
    scheduler-options: {{host: 127.0.0.1, dashboard_address: null}}
"""


@pytest.fixture
def slurm():
    """A one-node SLURM cluster on 127.0.0.1 (munged, slurmctld, slurmd), always stopped at the end."""
    from slurm_cluster import SlurmCluster

    cluster = SlurmCluster()
    try:
        yield cluster.start()
    finally:
        cluster.stop()


def test_a_real_slurm_cluster_records_what_score_records(expected, slurm, tmp_path):
    """``brainscore run --cluster slurm``: one job of this machine's cores, laid out as the local cluster."""
    (tmp_path / "dask").mkdir()
    (tmp_path / "dask" / "jobqueue.yaml").write_text(textwrap.dedent(JOBQUEUE_YAML).format(
        cores=slurm.cpus, folder=tmp_path))
    env = environment(tmp_path / "home", SLURM_CONF=str(slurm.conf), DASK_CONFIG=str(tmp_path / "dask"))
    result = run_command("--cluster", "slurm", "--workers", "1", "--wait-for-workers", "300", "--models", MODEL,
                         "--benchmarks", BENCHMARKS, env=env)
    logs = "\n".join(p.read_text(errors="replace") for p in sorted((tmp_path / "logs").glob("*")))
    assert result.returncode == 0, result.stderr[-3000:] + "\n" + logs[-4000:] + "\n" + slurm.logs()
    assert records(tmp_path / "home") == expected
    assert not slurm.jobs()  # the run ended its job when it closed the cluster
    # the job's workers as a local cluster's on its cores and memory, each with the preload that gives one MODEL
    workers = len(clusters.worker_layout(0, slurm.cpus, 8 << 30))
    assert logs.count("Run preload setup: brainscore.runner.workers") == workers
