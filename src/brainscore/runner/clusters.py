"""The Dask cluster a run uses: a LocalCluster sized to the machine, an existing scheduler, or a batch system.

- default: :class:`distributed.LocalCluster` of worker *processes* (one task at a time each, so a
  worker that dies takes one task with it). Each worker computes with the numerics of a lone
  process (:func:`worker_environment`): torch uses the ``torch_threads`` setting's threads and BLAS its own
  default, so a run's scores equal ``brainscore score``'s bit for bit (float sums are ordered by
  the thread count). Workers may then run more threads than there are cores; OpenMP threads wait
  passively (``OMP_WAIT_POLICY=PASSIVE``), so they sleep rather than spin while another worker
  computes. On the CPU one worker holds the resource ``MODEL``, which every task that runs a network
  asks for: forward passes run one at a time with all cores, metrics beside them;
- ``scheduler="tcp://host:8786"``: an existing cluster; its workers must share ``$BRAINSCORE_HOME``
  and the data mirror with this process;
- ``cluster="slurm" | "pbs" | "sge"``: a dask-jobqueue cluster configured entirely by the user's
  dask configuration (``~/.config/dask/jobqueue.yaml``, section ``jobqueue.<name>``: queue, cores,
  memory, walltime, ``job_extra_directives`` such as ``--gres=gpu:1``), scaled to ``workers`` jobs.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Sequence

from brainscore import config
from brainscore.errors import ValidationError

JOBQUEUE = {"slurm": "SLURMCluster", "pbs": "PBSCluster", "sge": "SGECluster"}
#: The environment variable of the torch thread count (the ``torch_threads`` setting of brainscore.config).
TORCH_THREADS = config.SETTINGS["torch_threads"].env
#: Thread counts of the BLAS and OpenMP libraries, which Dask sets to 1 in every worker by default.
BLAS_THREADS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
#: The resource that the one worker of a machine that runs networks holds (see :func:`local_cluster`).
MODEL = "MODEL"
#: The resource of a GPU's second worker: metric kernels that gain on a GPU (:mod:`brainscore.runner.placement`).
GPU = "GPU"
#: The resource of a GPU node's CPU workers (GPUs hidden): ceilings, metrics and bootstraps on the host.
CPU = "CPU"
#: How much lower the scheduling priority of a local CPU cluster's metric workers is (:func:`yield_to_model`).
METRIC_NICENESS = 10
#: Memory a worker should have for one network and its activations (GiB), used to size a LocalCluster.
WORKER_MEMORY_GIB = 4


def worker_environment() -> dict[str, str | None]:
    """The environment a LocalCluster's worker processes start with: the numerics and speed of a lone process.

    - ``BRAINSCORE_TORCH_THREADS``: this process's :func:`brainscore.config.torch_threads`, so
      every worker runs torch with the same count whatever its own configuration;
    - ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``: this process's values where
      set, else unset (None), so BLAS uses its own default as in a lone process (Dask's default of 1
      would order the metric's float sums differently);
    - ``OMP_WAIT_POLICY=PASSIVE`` unless set: with more threads than cores over all workers, OpenMP
      threads sleep at barriers instead of spinning;
    - ``MALLOC_TRIM_THRESHOLD_``: this process's value where set, else unset. Dask sets 65536 to hand
      freed memory back to the system sooner, which also turns off glibc's adaptive mmap threshold:
      every tensor above 128 KiB is then mapped and page-faulted anew on each forward pass, and
      EfficientNet-Lite0's extraction took twice as long in a worker (41 s against 20 s on a V4
      session's 1,200 images).

    Dask's nannies also set these in the process that starts them (``os.environ.update``); what must reach the
    workers only is in :data:`WORKER_ONLY_ENVIRONMENT`.
    """
    env: dict[str, str | None] = {name: os.environ.get(name) for name in (*BLAS_THREADS, "MALLOC_TRIM_THRESHOLD_")}
    env[TORCH_THREADS] = str(config.torch_threads())
    env["OMP_WAIT_POLICY"] = os.environ.get("OMP_WAIT_POLICY", "PASSIVE")
    return env


@dataclass(frozen=True)
class WorkerSpec:
    """One worker of a local cluster: its name, Dask resources, memory limit (bytes) and scheduling role.

    ``yields``: the worker computes at a lower priority (:func:`yield_to_model`) so that a forward
    pass beside it keeps the cores; ``device``: ``"gpu"`` for a worker that holds a GPU, else ``"cpu"``;
    ``hide_gpus``: the worker starts with ``CUDA_VISIBLE_DEVICES=""`` (a GPU node's CPU workers, which
    must not touch the GPU: no CUDA context, no GPU memory).
    """

    name: int
    resources: dict[str, int] | None
    memory_limit: int
    yields: bool
    device: str = "cpu"
    hide_gpus: bool = False


def worker_layout(gpus: int, cores: int, memory: int, workers: int | None = None,
                  memory_per_worker: int | None = None, model_slot: bool = True) -> list[WorkerSpec]:
    """The workers of a local cluster on a node of ``gpus`` GPUs, ``cores`` cores and ``memory`` bytes (pure).

    - Count: ``workers``, else one per core and at most one per :data:`WORKER_MEMORY_GIB` GiB of
      ``memory`` (at least one; with GPUs at least one per GPU).
    - Without GPUs: worker 0 holds :data:`MODEL` (with ``model_slot``), so forward passes run one
      at a time with every core, and the others compute metrics at a lower priority beside it.
    - With GPUs (issue 24: one worker per GPU made every ceiling queue behind the model work):
      workers ``0 .. gpus-1`` hold :data:`MODEL` (selection and activations, one network per GPU;
      :func:`brainscore.device.for_worker` gives worker ``k`` GPU ``k mod gpus``); workers ``gpus ..
      2 gpus - 1`` hold :data:`GPU`, a second process on each GPU for the scores and the metric
      kernels that gain there (:mod:`brainscore.runner.placement`); the others hold :data:`CPU`, see no
      GPU (``hide_gpus``) and run ceilings and metrics on the host at a lower priority. With too few
      workers for all three roles, the GPU workers take the missing ones (``GPU``, then ``CPU``), so
      every resource a task may ask for is held.
    - Memory limit: ``memory_per_worker`` for every worker where given; else ``memory`` shared
      equally, except that a worker that runs networks (MODEL or GPU) gets at least
      :data:`WORKER_MEMORY_GIB` GiB (never more than ``memory``): room for a forward pass and the
      layer-selection budget. Limits may add up to more than ``memory``; a limit is where Dask
      restarts a worker, not a reservation.

    Raises
    ------
    ValidationError
        If ``workers`` is below 1 or below ``gpus``, or ``gpus``, ``cores`` or ``memory`` are not positive
        (``gpus`` may be 0).
    """
    if gpus < 0 or cores < 1 or memory < 1:
        raise ValidationError(f"a node needs gpus >= 0, cores >= 1 and memory >= 1 byte; got gpus={gpus}, "
                              f"cores={cores}, memory={memory}")
    if memory_per_worker is not None and memory_per_worker < 1:
        raise ValidationError(f"--memory-per-worker must be positive, got {memory_per_worker} bytes")
    per_model = WORKER_MEMORY_GIB << 30
    if workers is None:
        n = max(1, gpus, min(cores, memory // per_model))
    else:
        n = int(workers)
        if n < 1:
            raise ValidationError(f"--workers must be at least 1, got {n}")
        if n < gpus:
            raise ValidationError(f"--workers {n} is fewer than the {gpus} GPUs: give at least one worker per GPU "
                                  f"or leave --workers out")
    share = memory // n
    model_memory = max(share, min(per_model, memory))
    if gpus:
        return _gpu_layout(gpus, n, share, model_memory, memory_per_worker)
    specs = []
    for number in range(n):
        holds = model_slot and number == 0
        resources = {MODEL: 1} if holds else None
        yields = model_slot and not holds and n > 1
        limit = memory_per_worker or (model_memory if holds else share)
        specs.append(WorkerSpec(number, resources, int(limit), yields, "cpu"))
    return specs


def _gpu_layout(gpus: int, n: int, share: int, model_memory: int, memory_per_worker: int | None) -> list[WorkerSpec]:
    """The ``n`` workers of a node with ``gpus`` GPUs (``n >= gpus``): see :func:`worker_layout`."""
    slots = min(gpus, n - gpus)                            # second worker per GPU, where there are workers for it
    hosts = n - gpus - slots
    specs = []
    for number in range(n):
        if number < gpus:
            resources = {MODEL: 1, **({} if slots else {GPU: 1}), **({} if slots or hosts else {CPU: 1})}
        elif number < gpus + slots:
            resources = {GPU: 1, **({} if hosts else {CPU: 1})}
        else:
            resources = {CPU: 1}
        on_gpu = number < gpus + slots
        limit = memory_per_worker or (model_memory if on_gpu else share)
        specs.append(WorkerSpec(number, resources, int(limit), yields=not on_gpu, device="gpu" if on_gpu else "cpu",
                                hide_gpus=not on_gpu))
    return specs


def default_workers() -> int:
    """Worker processes for this machine: one per core, at most one per :data:`WORKER_MEMORY_GIB` GiB of memory."""
    import psutil

    return len(worker_layout(0, config.usable_cores(), int(psutil.virtual_memory().total)))


def local_cluster(workers: int | None = None, gpus: int = 0, preload: Sequence[str] = (), model_slot: bool = True,
                  memory_per_worker: int | None = None, **kwargs):
    """A LocalCluster of ``workers`` processes (one task at a time each) computing as a lone process does.

    Laid out by :func:`worker_layout` for this machine (its cores, memory and ``gpus``). Every
    worker starts with :func:`worker_environment`: torch and BLAS use as many threads as in a
    lone ``brainscore score`` process, so scores are bit-identical to it. On the CPU, worker 0 alone
    holds the resource :data:`MODEL` (one slot): the tasks of a run that run a network ask for it, so
    forward passes run one at a time with every core (:func:`model_resources`), while the other
    workers compute metrics and ceilings at a lower priority (:func:`yield_to_model`). Two forward
    passes side by side on the same cores take longer together than one after the other, and hold
    two networks' activations in memory. With GPUs, one worker per GPU holds ``GPU=1`` and the
    others compute on the remaining cores.

    Parameters
    ----------
    workers : int, optional
        All workers, GPU ones included. Default: one per core, at most one per
        :data:`WORKER_MEMORY_GIB` GiB (:func:`worker_layout`).
    gpus : int
        GPUs: workers ``0 .. gpus-1`` get the resource ``GPU=1`` (tasks that run a model ask for
        it: one model per GPU).
    preload : sequence of str
        Modules every worker imports when it starts (e.g. a model plugin that is not installed).
    model_slot : bool
        On the CPU, give worker 0 :data:`MODEL` and lower the others' priority (False: all workers
        alike, e.g. for the website's queue, whose tasks run whole jobs in child processes).
    memory_per_worker : int, optional
        Each worker's memory limit in bytes (default: the setting ``memory_per_worker``, else as
        :func:`worker_layout` shares the machine's memory).
    **kwargs
        Passed to :class:`distributed.LocalCluster` (e.g. ``dashboard_address``).

    Raises
    ------
    ValidationError
        If ``workers`` is below 1 (or below ``gpus``).
    """
    import psutil
    from distributed import LocalCluster

    if workers is not None and int(workers) < 1:  # 0 is an error, not 'unset'
        raise ValidationError(f"--workers must be at least 1, got {workers}")
    memory = config.memory_per_worker() if memory_per_worker is None else memory_per_worker
    specs = worker_layout(gpus, config.usable_cores(), int(psutil.virtual_memory().total), workers, memory,
                          model_slot)
    env = worker_environment()  # None unsets Dask's default of 1 BLAS thread
    import dask

    # the nannies read the environment when they are made: the workers are started inside this block
    with dask.config.set({"distributed.nanny.pre-spawn-environ": {**dask.config.get(
            "distributed.nanny.pre-spawn-environ", {}), **env}}):
        # the workers beside the one that runs networks compute at a lower priority (dask_setup)
        hooks = [__name__] if any(spec.yields for spec in specs) else []
        cluster = LocalCluster(n_workers=0, threads_per_worker=1, processes=True, preload=hooks + list(preload),
                               dashboard_address=kwargs.pop("dashboard_address", None), **kwargs)
        try:
            template = cluster.new_spec
            for spec in specs:  # named 0, 1, ... (brainscore.device.for_worker picks GPU <number mod GPUs>)
                options = {**template["options"], "resources": spec.resources, "memory_limit": spec.memory_limit}
                options["env"] = {**(options.get("env") or {}), **WORKER_ONLY_ENVIRONMENT}
                if spec.hide_gpus:  # a GPU node's CPU worker: torch there sees no GPU, so never touches it
                    options["env"] = {**options["env"], **HIDDEN_GPUS}
                cluster.worker_spec[spec.name] = {"cls": template["cls"], "options": options}
            cluster.sync(cluster._correct_state)  # starts them, raising if one cannot start (scale would not)
            cluster.wait_for_workers(len(specs))
        except BaseException:
            cluster.close()
            raise
    return cluster


#: Set in every local worker and not in the process that starts them (a nanny's ``env``, applied in the worker):
#: ``brainscore run`` reports each task (:class:`brainscore.runner.engine.Progress`), so the workers draw no
#: progress of their own over it.
WORKER_ONLY_ENVIRONMENT = {"BRAINSCORE_PROGRESS": "0"}
#: The environment of a GPU node's CPU workers: CUDA shows them no device.
HIDDEN_GPUS = {"CUDA_VISIBLE_DEVICES": ""}


def dask_setup(worker) -> None:
    """Dask preload hook (``brainscore.runner.clusters``) of a local CPU cluster's workers: see :func:`yield_to_model`."""
    held = getattr(getattr(worker, "state", None), "total_resources", None) or {}
    if MODEL not in held and GPU not in held:
        yield_to_model()


def yield_to_model(niceness: int = METRIC_NICENESS) -> None:
    """Lower the scheduling priority of every thread of this process (Linux ``nice``) by ``niceness``.

    Run in the workers of a local CPU cluster that do not hold :data:`MODEL`: the forward pass runs
    torch on every core, and an OpenMP parallel region waits for its slowest thread, so a metric
    computing beside it at the same priority stalls the whole pass. At a lower priority the metric
    runs on what the pass leaves idle, and at full speed when no pass runs. Threads made later
    (BLAS, torch) inherit the priority of the thread that makes them. Scheduling only: no number
    changes. Does nothing where threads cannot be listed or reniced.
    """
    import contextlib

    tasks = "/proc/self/task"
    if not os.path.isdir(tasks):
        return
    for tid in os.listdir(tasks):
        with contextlib.suppress(OSError, ValueError):
            current = os.getpriority(os.PRIO_PROCESS, int(tid))
            os.setpriority(os.PRIO_PROCESS, int(tid), min(19, current + niceness))


def model_resources(client) -> dict[str, int] | None:
    """The resources a task that runs a network should ask for on ``client``'s cluster, or None.

    ``{"MODEL": 1}`` when a worker advertises :data:`MODEL` (worker 0 of :func:`local_cluster` on
    the CPU; on a cluster of your own, start one worker per machine with ``--resources MODEL=1``
    for the same effect), so that forward passes run one at a time there; None otherwise.
    """
    workers = client.scheduler_info(n_workers=-1).get("workers", {})
    if any((info.get("resources") or {}).get(MODEL) for info in workers.values()):
        return {MODEL: 1}
    return None


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
            gpus: int = 0, preload: Sequence[str] = (), model_slot: bool = True, memory_per_worker: int | None = None):
    """A ``(client, cluster)`` pair for a run (``cluster`` None when connecting to an existing scheduler).

    ``model_slot`` and ``memory_per_worker`` (bytes) are passed to :func:`local_cluster`. Close both
    when done (the client first).
    """
    from distributed import Client

    if scheduler and cluster:
        raise ValidationError("give either --scheduler or --cluster, not both")
    if workers is not None and int(workers) < 1:
        raise ValidationError(f"--workers must be at least 1, got {workers}; leave it out for a count sized to "
                              f"the machine")
    if scheduler:
        client = Client(scheduler)
        for module in preload:
            client.register_plugin(_preload_plugin(module))
        return client, None
    made = (jobqueue_cluster(cluster, workers or 1, gpus=bool(gpus)) if cluster
            else local_cluster(workers, gpus=gpus, preload=preload, model_slot=model_slot,
                                memory_per_worker=memory_per_worker))
    return Client(made), made


def _preload_plugin(module: str):
    from distributed.diagnostics.plugin import WorkerPlugin

    class Preload(WorkerPlugin):
        name = f"brainscore-preload-{module}"

        def setup(self, worker):
            import importlib

            importlib.import_module(module)

    return Preload()
