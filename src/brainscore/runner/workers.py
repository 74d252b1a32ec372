"""What every Dask worker of a run computes with, on any cluster: the numerics of a lone process, one network at a time.

Two things make a run's records bit-identical to ``brainscore score`` and its forward passes as
fast as on the local cluster, wherever the workers came from (a LocalCluster, ``dask worker``
processes started by hand, a batch job of dask-jobqueue):

- **The numerics of a lone process** (:func:`lone_process_plugin`, a worker plugin every run's client
  registers, :func:`brainscore.runner.clusters.connect`). ``dask worker`` starts its processes
  with one BLAS and OpenMP thread (``OMP_NUM_THREADS=1`` ...) and ``MALLOC_TRIM_THRESHOLD_=65536``
  (``distributed.nanny.pre-spawn-environ``). One BLAS thread orders a PLS's float sums unlike a lone
  process with every core: the raw score of a small network on Cowley 2026 V4 differed in its last
  bits on a ``dask worker`` (issue 30), and the fixed malloc threshold made every forward pass
  page-fault its tensors anew. The plugin gives each worker the thread counts a lone process on its
  machine has (:func:`apply_lone_numerics`), before any task runs there. Setting a library's threads
  after it loaded is not always the same as loading it with them: EfficientNet-Lite0's quick-start
  pair still differed in its last bits on plain ``dask worker`` processes (issue 39), and equalled ``brainscore
  score`` when the workers were started with the lone thread counts. So a nanny plugin
  (:func:`lone_process_nanny_plugin`) first gives each nanny the lone environment and restarts its
  worker process where the thread variables differ, so that every library loads with them.
- **One network at a time per machine** (:func:`dask_setup`, the preload
  ``--preload brainscore.runner.workers`` of batch jobs and of workers started by hand). Of the
  workers of one batch job (or, outside a batch job, of one machine) that the run's scheduler
  serves, the first to start holds the Dask resource ``MODEL``, which every task that runs a network
  asks for; the others compute metrics at a lower priority (:func:`yield_to_model`). The choice is a
  lock file held for the worker process's life, taken before the worker registers with the
  scheduler, so the scheduler knows the resource from the worker's first message (a resource given
  to a worker later never reaches tasks already waiting for it). A worker that dies frees the lock:
  its nanny restarts it, and the new process takes the slot again.

This module imports nothing of brainscore at import time but :mod:`brainscore.config`; torch is never
imported here (a worker must be able to set OpenMP's variables before torch loads it).
"""
from __future__ import annotations

import functools
import hashlib
import os
import sys
import tempfile
from typing import Any

from brainscore import config

__all__ = ["MODEL", "GPU", "CPU", "BLAS_THREADS", "TORCH_THREADS", "METRIC_NICENESS", "lone_environment",
           "remote_environment", "lone_process_plugin", "lone_process_nanny_plugin", "apply_lone_numerics", "dask_setup", "take_model_slot",
           "slot_lock_path", "yield_to_model", "describe", "device_problem"]

#: The resource that the one worker of a machine that runs networks holds.
MODEL = "MODEL"
#: The resource of a GPU's second worker: metric kernels that gain on a GPU (:mod:`brainscore.runner.placement`).
GPU = "GPU"
#: The resource of a GPU node's CPU workers (GPUs hidden): ceilings, metrics and bootstraps on the host.
CPU = "CPU"
#: The environment variable of the torch thread count (the ``torch_threads`` setting of brainscore.config).
TORCH_THREADS = config.SETTINGS["torch_threads"].env
#: Thread counts of the BLAS and OpenMP libraries, which Dask sets to 1 in every worker by default.
BLAS_THREADS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
#: glibc's variable of the heap trim threshold; Dask sets 65536, which also fixes the mmap threshold.
MALLOC_TRIM = "MALLOC_TRIM_THRESHOLD_"
#: How much lower the scheduling priority of a machine's metric workers is (:func:`yield_to_model`).
METRIC_NICENESS = 10
#: ``mallopt`` parameters (glibc's malloc.h) and the thresholds glibc's dynamic rule reaches at most on a
#: 64-bit machine (``DEFAULT_MMAP_THRESHOLD_MAX``, 32 MiB; trim twice that): what a lone process's malloc
#: converges to once a forward pass has freed its large tensors.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
DYNAMIC_MMAP_MAX = 32 << 20


def lone_environment() -> dict[str, str | None]:
    """The settings of this process that its workers must compute with: the numerics and speed of a lone process.

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

    Returns
    -------
    dict
        Variable name -> value, None for "unset" (the library's own default).
    """
    env: dict[str, str | None] = {name: os.environ.get(name) for name in (*BLAS_THREADS, MALLOC_TRIM)}
    env[TORCH_THREADS] = str(config.torch_threads())
    env["OMP_WAIT_POLICY"] = os.environ.get("OMP_WAIT_POLICY", "PASSIVE")
    return env


def remote_environment() -> dict[str, str | None]:
    """:func:`lone_environment` for workers on other machines: the torch thread count only where it is set.

    The default count is the usable cores of the process that runs torch: on a batch node, the
    node's (or the job's), not the login node's where this process runs.
    """
    env = lone_environment()
    value, source = config.get("torch_threads")
    env[TORCH_THREADS] = None if value is None else str(value)
    return env


def apply_lone_numerics(environment: dict[str, str | None]) -> dict[str, Any]:
    """Make this process compute as a lone process with ``environment`` (:func:`lone_environment`) would.

    - the variables of ``environment`` are set, or removed where None, in ``os.environ``: libraries
      loaded later (torch and its OpenMP, scipy's BLAS) read them when they load, and so does a child
      process;
    - the BLAS and OpenMP libraries already loaded (numpy's OpenBLAS, ...) are set to the thread count
      the variables give, else to the usable cores (:func:`brainscore.config.usable_cores`), the
      default they pick when no variable is set (threadpoolctl);
    - torch, where already imported, runs with :func:`brainscore.config.torch_threads` threads;
    - where this process started with a fixed ``MALLOC_TRIM_THRESHOLD_`` (Dask's nanny sets 65536) and
      ``environment`` sets none, glibc's malloc gets the thresholds its adaptive rule would reach
      (:data:`DYNAMIC_MMAP_MAX`; ``mallopt``): speed only, no number changes.

    Thread counts order float sums, so this is what makes a worker's scores bit-identical to a lone
    ``brainscore score`` process's on a machine with the same usable cores.

    Returns
    -------
    dict
        What was applied: ``blas`` (library -> threads), ``torch`` (threads or None), ``malloc``
        (``"adaptive"``, the value set, or None where nothing changed).
    """
    fixed_trim = os.environ.get(MALLOC_TRIM)
    for name, value in environment.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = str(value)
    applied: dict[str, Any] = {"blas": _limit_loaded_libraries(), "torch": None, "malloc": None}
    torch = sys.modules.get("torch")
    if torch is not None:
        applied["torch"] = config.torch_threads()
        torch.set_num_threads(applied["torch"])
    wanted = environment.get(MALLOC_TRIM)
    if wanted is not None and wanted != fixed_trim:
        applied["malloc"] = wanted if _mallopt(M_TRIM_THRESHOLD, int(wanted)) else None
    elif wanted is None and fixed_trim is not None:
        adaptive = _mallopt(M_MMAP_THRESHOLD, DYNAMIC_MMAP_MAX) and _mallopt(M_TRIM_THRESHOLD, 2 * DYNAMIC_MMAP_MAX)
        applied["malloc"] = "adaptive" if adaptive else None
    return applied


def _threads_for(internal_api: str) -> int:
    """The thread count a library (threadpoolctl's ``internal_api``) picks in a lone process with this environment."""
    names = {"openblas": ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"), "mkl": ("MKL_NUM_THREADS", "OMP_NUM_THREADS"),
             "blis": ("BLIS_NUM_THREADS", "OMP_NUM_THREADS")}.get(internal_api, ("OMP_NUM_THREADS",))
    for name in names:
        value = os.environ.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return config.usable_cores()


def _limit_loaded_libraries() -> dict[str, int]:
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - a dependency of scikit-learn, which brainscore needs
        return {}
    controller = ThreadpoolController()
    applied = {}
    for library in controller.lib_controllers:
        threads = _threads_for(library.internal_api)
        if library.num_threads != threads:
            library.set_num_threads(threads)
        applied[os.path.basename(library.filepath)] = threads
    return applied


def _mallopt(parameter: int, value: int) -> bool:
    """glibc's ``mallopt(parameter, value)``; False where there is no glibc (or it refuses)."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if not name or not sys.platform.startswith("linux"):
        return False
    try:
        return bool(ctypes.CDLL(name).mallopt(ctypes.c_int(parameter), ctypes.c_int(value)))
    except (OSError, AttributeError):
        return False


def lone_process_plugin(environment: dict[str, str | None]):
    """A worker plugin: every worker computes as a lone process with ``environment`` (:func:`apply_lone_numerics`).

    Registered by the client on every cluster (:func:`brainscore.runner.clusters.connect`); Dask runs
    it on the workers already there and on each worker that joins later, before it runs a task.
    ``environment`` is the client's :func:`lone_environment` (for workers on other machines,
    :func:`remote_environment`). What it applied is kept on the worker as ``brainscore_numerics``.
    """
    return _plugin_class()(environment)


@functools.lru_cache(maxsize=None)
def _plugin_class():
    from distributed.diagnostics.plugin import WorkerPlugin  # imported only where a cluster is used

    class LoneProcess(WorkerPlugin):
        name = "brainscore-lone-process"

        def __init__(self, environment: dict[str, str | None]):
            self.environment = dict(environment)

        def setup(self, worker) -> None:
            worker.brainscore_numerics = apply_lone_numerics(self.environment)

    return LoneProcess


def lone_process_nanny_plugin(environment: dict[str, str | None]):
    """A nanny plugin: every nanny starts its worker process with ``environment`` (:func:`lone_environment`).

    A nanny writes Dask's ``distributed.nanny.pre-spawn-environ`` (``OMP_NUM_THREADS=1``, ...) into the
    environment of the worker processes it starts, and BLAS and OpenMP read their thread counts when
    they load. The plugin sets or removes each variable of ``environment`` in the nanny's environment,
    its pre-spawn variables and its worker's variables, and where a thread variable
    (:data:`BLAS_THREADS`) changed, restarts the worker process (Dask's ``NannyPlugin.restart``), so that
    its libraries load with the lone process's counts; a nanny that joins later starts its worker so.
    Registered by the client before :func:`lone_process_plugin` (:func:`brainscore.runner.clusters.connect`);
    workers without a nanny (``--no-nanny``) get only the worker plugin.
    """
    return _nanny_plugin_class()(environment)


@functools.lru_cache(maxsize=None)
def _nanny_plugin_class():
    from distributed.diagnostics.plugin import NannyPlugin

    class LoneProcessNanny(NannyPlugin):
        name = "brainscore-lone-process-nanny"

        def __init__(self, environment: dict[str, str | None]):
            self.environment = dict(environment)
            self.restart = False

        def setup(self, nanny) -> None:
            changed = False
            for name, value in self.environment.items():
                before = nanny.env.get(name, os.environ.get(name))  # what its worker process started with
                for place in (os.environ, nanny.pre_spawn_env, nanny.env):
                    if value is None:
                        place.pop(name, None)
                    else:
                        place[name] = str(value)
                changed |= name in BLAS_THREADS and before != (None if value is None else str(value))
            self.restart = changed and nanny.process is not None  # a nanny still starting has no worker yet

    return LoneProcessNanny


#: The batch systems' variables of the job a process runs in (SLURM, PBS/Torque, SGE, LSF).
JOB_VARIABLES = ("SLURM_JOB_ID", "PBS_JOBID", "JOB_ID", "LSB_JOBID")
_held_slot: list = []  # the lock of the machine's model slot, held for this process's life


def slot_lock_path(scheduler: str) -> str:
    """The lock file of the model slot of this machine (or batch job) for the run served by ``scheduler``.

    One per (scheduler address, batch job or host name, user), in the temporary folder (node-local
    on a cluster): the workers of one job share it, two runs never do.
    """
    import platform

    job = next((f"{name}={os.environ[name]}" for name in JOB_VARIABLES if os.environ.get(name)), "")
    group = "\0".join((str(scheduler), platform.node(), job, str(os.getuid() if hasattr(os, "getuid") else "")))
    digest = hashlib.sha256(group.encode()).hexdigest()[:20]
    return os.path.join(tempfile.gettempdir(), f"brainscore-model-slot-{digest}.lock")


def take_model_slot(scheduler: str) -> bool:
    """Try to hold this machine's model slot for the rest of this process's life (:func:`slot_lock_path`)."""
    from filelock import FileLock, Timeout

    lock = FileLock(slot_lock_path(scheduler), thread_local=False)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return False
    _held_slot.append(lock)  # never released: the kernel frees it when this process ends
    return True


def dask_setup(worker) -> None:
    """Dask preload (``--preload brainscore.runner.workers``): one worker per machine or batch job holds ``MODEL``.

    Runs in each worker before it registers with the scheduler. A worker started with resources of
    its own (``--resources MODEL=1``, ``GPU=1``, ...) keeps them. Otherwise it takes the model slot
    of its machine (:func:`take_model_slot`) and holds ``MODEL=1``, or, when another worker has it,
    computes at a lower priority (:func:`yield_to_model`), as the metric workers of a local cluster do.
    """
    state = getattr(worker, "state", None)
    held = dict(getattr(state, "total_resources", None) or {})
    if held:
        if MODEL not in held and GPU not in held:
            yield_to_model()
        return
    if take_model_slot(worker.scheduler.address):
        state.total_resources[MODEL] = 1
        state.available_resources[MODEL] = 1
    else:
        yield_to_model()


def yield_to_model(niceness: int = METRIC_NICENESS) -> None:
    """Lower the scheduling priority of every thread of this process (Linux ``nice``) by ``niceness``.

    Run in the workers of a machine that do not hold :data:`MODEL`: the forward pass runs torch on
    every core, and an OpenMP parallel region waits for its slowest thread, so a metric computing
    beside it at the same priority stalls the whole pass. At a lower priority the metric runs on
    what the pass leaves idle, and at full speed when no pass runs. Threads made later (BLAS,
    torch) inherit the priority of the thread that makes them. Scheduling only: no number changes.
    Does nothing where threads cannot be listed or reniced.
    """
    import contextlib

    tasks = "/proc/self/task"
    if not os.path.isdir(tasks):
        return
    for tid in os.listdir(tasks):
        with contextlib.suppress(OSError, ValueError):
            current = os.getpriority(os.PRIO_PROCESS, int(tid))
            os.setpriority(os.PRIO_PROCESS, int(tid), min(19, current + niceness))


def describe(address: str, info: dict[str, Any]) -> str:
    """A worker as a message names it: ``worker 'NAME' on HOST (ADDRESS)`` from the scheduler's ``info``."""
    name = info.get("name", address)
    host = info.get("host") or address
    return f"worker {name!r} on {host} ({address})"


def device_problem(device: str) -> str | None:
    """Why this process cannot compute on ``device`` (:func:`brainscore.device.resolve`'s message), or None."""
    from brainscore.device import DeviceError, resolve

    try:
        resolve(str(device), option="--device")
    except DeviceError as error:
        return str(error)
    return None
