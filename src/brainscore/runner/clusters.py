"""The Dask cluster a run uses: a LocalCluster sized to the machine, an existing scheduler, or a batch system.

- default: :class:`distributed.LocalCluster` of worker *processes* (one thread each, so a worker
  that dies takes one task with it; torch and BLAS in each get an equal share of the cores);
- ``scheduler="tcp://host:8786"``: an existing cluster; its workers must share ``$BRAINSCORE_HOME``
  and the data mirror with this process;
- ``cluster="slurm" | "pbs" | "sge"``: a dask-jobqueue cluster configured entirely by the user's
  dask configuration (``~/.config/dask/jobqueue.yaml``, section ``jobqueue.<name>``: queue, cores,
  memory, walltime, ``job_extra_directives`` such as ``--gres=gpu:1``), scaled to ``workers`` jobs.
"""
from __future__ import annotations

import os
from typing import Sequence

from brainscore.errors import ValidationError

JOBQUEUE = {"slurm": "SLURMCluster", "pbs": "PBSCluster", "sge": "SGECluster"}
#: Memory a worker should have for one network and its activations (GiB), used to size a LocalCluster.
WORKER_MEMORY_GIB = 4


def default_workers() -> int:
    """Worker processes for this machine: one per core, at most one per :data:`WORKER_MEMORY_GIB` GiB of memory."""
    import psutil

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    by_memory = int(psutil.virtual_memory().total / (WORKER_MEMORY_GIB << 30))
    return max(1, min(cores, by_memory))


def local_cluster(workers: int | None = None, gpus: int = 0, preload: Sequence[str] = (), **kwargs):
    """A LocalCluster of ``workers`` processes (one thread each) with the cores shared among them.

    Parameters
    ----------
    workers : int, optional
        Default :func:`default_workers` (with ``gpus``, one worker per GPU).
    gpus : int
        Give each worker the resource ``GPU=1`` (tasks that run a model ask for it: one model per GPU).
    preload : sequence of str
        Modules every worker imports when it starts (e.g. a model plugin that is not installed).
    **kwargs
        Passed to :class:`distributed.LocalCluster` (e.g. ``dashboard_address``).
    """
    from distributed import LocalCluster

    n = int(workers) if workers else (gpus or default_workers())
    if n < 1:
        raise ValidationError(f"--workers must be at least 1, got {n}")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    threads = max(1, cores // n)
    # torch and BLAS in each worker get its share of the cores (Dask's default is 1)
    env = {"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads)}
    import dask

    with dask.config.set({"distributed.nanny.pre-spawn-environ": {**dask.config.get(
            "distributed.nanny.pre-spawn-environ", {}), **env}}):
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                               resources={"GPU": 1} if gpus else None, preload=list(preload),
                               dashboard_address=kwargs.pop("dashboard_address", None), **kwargs)
    return cluster


def jobqueue_cluster(name: str, workers: int = 1, gpus: bool = False, **kwargs):
    """A dask-jobqueue cluster of ``name`` (``slurm``, ``pbs``, ``sge``) from the user's dask configuration.

    ``kwargs`` override the configuration (tests pass ``cores``, ``memory``). With ``gpus``, each
    worker advertises ``GPU=1`` so that one model runs per GPU.

    Raises
    ------
    ValidationError
        For an unknown name, or when dask-jobqueue is not installed.
    """
    if name not in JOBQUEUE:
        raise ValidationError(f"unknown --cluster {name!r}; expected one of {', '.join(JOBQUEUE)}")
    try:
        import dask_jobqueue
    except ImportError as error:
        raise ValidationError("--cluster needs dask-jobqueue: pip install dask-jobqueue") from error
    if gpus:
        extra = list(kwargs.pop("worker_extra_args", []) or [])
        kwargs["worker_extra_args"] = extra + ["--resources", "GPU=1"]
    cluster = getattr(dask_jobqueue, JOBQUEUE[name])(**kwargs)
    if workers:
        cluster.scale(jobs=int(workers))
    return cluster


def connect(scheduler: str | None = None, cluster: str | None = None, workers: int | None = None,
            gpus: int = 0, preload: Sequence[str] = ()):
    """A ``(client, cluster)`` pair for a run (``cluster`` None when connecting to an existing scheduler).

    Close both when done (the client first).
    """
    from distributed import Client

    if scheduler and cluster:
        raise ValidationError("give either --scheduler or --cluster, not both")
    if scheduler:
        client = Client(scheduler)
        for module in preload:
            client.register_plugin(_preload_plugin(module))
        return client, None
    made = (jobqueue_cluster(cluster, workers or 1, gpus=bool(gpus)) if cluster
            else local_cluster(workers, gpus=gpus, preload=preload))
    return Client(made), made


def _preload_plugin(module: str):
    from distributed.diagnostics.plugin import WorkerPlugin

    class Preload(WorkerPlugin):
        name = f"brainscore-preload-{module}"

        def setup(self, worker):
            import importlib

            importlib.import_module(module)

    return Preload()
