"""The Dask cluster a run uses: a LocalCluster sized to the machine, an existing scheduler, or a batch system.

- default: :class:`distributed.LocalCluster` of worker *processes* (one task at a time each, so a
  worker that dies takes one task with it). Each worker computes with the numerics of a lone
  process (:func:`~brainscore.runner.workers.lone_environment`): torch uses the ``torch_threads``
  setting's threads and BLAS its own default, so a run's scores equal ``brainscore score``'s bit
  for bit (float sums are ordered by the thread count); on every other cluster a worker plugin
  does the same (:func:`connect`, :mod:`brainscore.runner.workers`). Workers may then run more
  threads than there are cores; OpenMP threads wait
  passively (``OMP_WAIT_POLICY=PASSIVE``), so they sleep rather than spin while another worker
  computes. On the CPU one worker holds the resource ``MODEL``, which every task that runs a network
  asks for: forward passes run one at a time with all cores, metrics beside them;
- ``scheduler="tcp://host:8786"``: an existing cluster; its workers must share ``$BRAINSCORE_HOME``
  and the data mirror with this process (``dask worker ADDR --nworkers N --nthreads 1 --preload
  brainscore.runner.workers`` gives each machine the local cluster's layout);
- ``cluster="slurm" | "pbs" | "sge" | "lsf"``: a dask-jobqueue cluster configured by the user's
  dask configuration (``~/.config/dask/jobqueue.yaml``, section ``jobqueue.<name>``: queue, cores,
  memory, walltime, ``job_extra_directives`` such as ``--gres=gpu:1``), kept at ``workers`` jobs
  (:func:`jobqueue_cluster`). The guide is ``docs/cluster.md``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from brainscore import config
from brainscore.errors import ValidationError
from brainscore.runner.workers import (BLAS_THREADS, CPU, GPU, METRIC_NICENESS, MODEL, TORCH_THREADS,  # noqa: F401
                                       lone_environment, lone_process_nanny_plugin, lone_process_plugin,
                                       remote_environment, yield_to_model)

JOBQUEUE = {"slurm": "SLURMCluster", "pbs": "PBSCluster", "sge": "SGECluster", "lsf": "LSFCluster"}
#: Memory a worker should have for one network and its activations (GiB), used to size a LocalCluster.
WORKER_MEMORY_GIB = 4
#: The module every batch job's worker preloads: one worker per job holds MODEL
#: (:func:`brainscore.runner.workers.dask_setup`).
SLOT_PRELOAD = "brainscore.runner.workers"
#: What a local cluster's workers start with: the numerics of a lone process
#: (:func:`brainscore.runner.workers.lone_environment`).
worker_environment = lone_environment


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
    """A dask-jobqueue cluster of ``name`` (``slurm``, ``pbs``, ``sge``, ``lsf``) from the user's dask configuration.

    The configuration's section ``jobqueue.<name>`` (``~/.config/dask/jobqueue.yaml``) says what a
    job asks for (queue, ``cores``, ``memory``, walltime, directives); ``kwargs`` override it (tests
    pass ``cores``, ``memory``). What brainscore adds, so that a job computes as a local cluster on
    the same cores does (issue 30: SLURM took 1.63 times the local cluster's time on the same cores):

    - ``processes`` (workers per job), where the configuration leaves it unset: on the CPU one
      single-threaded worker per core and per :data:`WORKER_MEMORY_GIB` GiB of the job's memory
      (:func:`worker_layout`, as a local cluster on a node of the job's size); with ``gpus``, one.
      dask-jobqueue's own default (about the square root of ``cores``, each with several threads)
      would run two forward passes or a pass and a metric in one process, contending for its threads;
    - ``--preload brainscore.runner.workers`` on the CPU: the first worker of each job holds
      ``MODEL``, the others compute metrics at a lower priority (:func:`brainscore.runner.workers.dask_setup`);
    - ``--resources GPU=1`` with ``gpus``: one model per GPU.

    The cluster is kept at ``workers`` jobs with :meth:`adapt` (minimum = maximum), so a job that
    ends (its walltime, or the workers' ``--lifetime``) is replaced by a new one; ``workers=0``
    submits nothing (e.g. to print :meth:`job_script`).

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
    import dask
    from dask.utils import parse_bytes

    section = f"jobqueue.{name}"
    cores, memory = (kwargs.get(key, dask.config.get(f"{section}.{key}", None)) for key in ("cores", "memory"))
    if kwargs.get("processes") is None and dask.config.get(f"{section}.processes", None) is None and cores and memory:
        kwargs["processes"] = 1 if gpus else len(worker_layout(0, int(cores), parse_bytes(memory)))
    extra = kwargs.pop("worker_extra_args", None)
    if extra is None:  # the configuration's (an argument replaces it, as in dask-jobqueue)
        extra = dask.config.get(f"{section}.worker-extra-args", None) or []
    extra = list(extra)
    kwargs["worker_extra_args"] = extra + (["--resources", f"{GPU}=1"] if gpus else ["--preload", SLOT_PRELOAD])
    cluster = getattr(dask_jobqueue, JOBQUEUE[name])(**kwargs)
    if workers:
        cluster.adapt(minimum_jobs=int(workers), maximum_jobs=int(workers))
    return cluster


def resources_needed(scheduler: str | None, cluster: str | None, gpus: int) -> frozenset[str]:
    """The resources a run waits for some worker to hold before it starts (:func:`brainscore.runner.watch.wait_for_workers`).

    A local cluster starts with its layout (:func:`worker_layout`): ``MODEL`` on the CPU, ``MODEL``
    and ``GPU`` with GPUs. A batch job's first worker holds ``MODEL`` on the CPU and every worker of
    a GPU job ``GPU``. An existing scheduler's workers hold what their owner gave them, if anything:
    any worker will do (its tasks ask only for what some worker holds, :mod:`brainscore.runner.placement`).
    """
    if scheduler:
        return frozenset()
    if not cluster:
        return frozenset({MODEL, GPU} if gpus else {MODEL})
    return frozenset({GPU} if gpus else {MODEL})


def connect(scheduler: str | None = None, cluster: str | None = None, workers: int | None = None,
            gpus: int = 0, preload: Sequence[str] = (), model_slot: bool = True, memory_per_worker: int | None = None):
    """A ``(client, cluster)`` pair for a run (``cluster`` None when connecting to an existing scheduler).

    ``model_slot`` and ``memory_per_worker`` (bytes) are passed to :func:`local_cluster`. On every
    cluster the client registers the worker plugin that makes each worker, present or joining later,
    compute with the numerics of a lone process (:func:`brainscore.runner.workers.lone_process_plugin`:
    this process's settings; on other machines, their own cores), then one that imports each
    ``preload`` module. Close both when done (the client first).
    """
    from distributed import Client

    if scheduler and cluster:
        raise ValidationError("give either --scheduler or --cluster, not both")
    if workers is not None and int(workers) < 1:
        raise ValidationError(f"--workers must be at least 1, got {workers}; leave it out for a count sized to "
                              f"the machine")
    made = None
    if cluster:
        made = jobqueue_cluster(cluster, workers or 1, gpus=bool(gpus))
    elif not scheduler:
        made = local_cluster(workers, gpus=gpus, preload=preload, model_slot=model_slot,
                             memory_per_worker=memory_per_worker)
        preload = ()  # the local workers import them when they start
    try:
        client = Client(scheduler or made)
        try:
            environment = remote_environment() if made is None or cluster else lone_environment()
            client.register_plugin(lone_process_nanny_plugin(environment))  # restarts workers loaded otherwise
            client.register_plugin(lone_process_plugin(environment))
            for module in preload:
                client.register_plugin(_preload_plugin(module))
        except BaseException:
            client.close()
            raise
    except BaseException:
        if made is not None:
            made.close()
        raise
    return client, made


def _preload_plugin(module: str):
    from distributed.diagnostics.plugin import WorkerPlugin

    class Preload(WorkerPlugin):
        name = f"brainscore-preload-{module}"

        def setup(self, worker):
            import importlib

            importlib.import_module(module)

    return Preload()
