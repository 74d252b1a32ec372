"""Whether a run's cluster has the workers it needs: waiting for them, checking their device, noticing when they go.

A batch system starts workers when its queue lets it, an existing scheduler may have none yet, and a
worker may die mid-run. Dask itself waits in silence: a task that asks for a resource no worker holds
stays "no-worker" forever. So a run (:func:`brainscore.runner.engine.run`)

- waits, with a message and a timeout, until workers holding the resources it needs have joined
  (:func:`wait_for_workers`), and only then reads which resources the cluster holds, so that a GPU run
  whose jobs are still queued asks for ``GPU`` as it should;
- checks a ``--device cuda`` run's device on the workers that will compute on it, not on the machine
  the run was started from (a login node need not have a GPU), naming each worker that lacks it
  (:func:`check_device`);
- watches, while its tasks run, the resources they ask for (:class:`Watch`): when the last worker
  holding one leaves, it says so, waits for a replacement (a nanny restarts a worker that died,
  dask-jobqueue submits a new job), and after the timeout fails the pairs not yet scored with a
  message that says why, instead of hanging.
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Any, Callable, Collection

from brainscore.device import DeviceError
from brainscore.errors import ValidationError
from brainscore.runner.workers import CPU, GPU, MODEL, describe, device_problem

__all__ = ["DEFAULT_WAIT_S", "WorkersMissing", "wait_for_workers", "holders", "check_device", "Watch"]

#: Seconds a run waits for the workers it needs, at its start and after losing them (``--wait-for-workers``).
DEFAULT_WAIT_S = 3600.0
#: How often (seconds) a message says the run is still waiting.
REMIND_S = 60.0
#: What stands for "any worker" among the resources waited for.
ANY = "a worker"


class WorkersMissing(ValidationError):
    """No worker (holding a resource a run needs) joined the cluster within the time the run waits."""


def _workers(client) -> dict[str, dict[str, Any]]:
    return client.scheduler_info(n_workers=-1).get("workers", {})


def holders(workers: dict[str, dict[str, Any]], resource: str) -> dict[str, dict[str, Any]]:
    """The workers (address -> scheduler info) that hold ``resource`` (:data:`ANY`: every worker)."""
    if resource == ANY:
        return dict(workers)
    return {address: info for address, info in workers.items() if (info.get("resources") or {}).get(resource)}


def _hint(resource: str) -> str:
    """How a user gets a worker holding ``resource``."""
    if resource == MODEL:
        return ("on a batch system its jobs may still be queued (squeue, qstat, bjobs) or have failed to start (see "
                "their log directory); on a cluster of your own, start its workers with --preload "
                "brainscore.runner.workers, or one per machine with --resources MODEL=1")
    if resource in (GPU, CPU):
        return (f"batch jobs may still be queued or have failed to start; on a cluster of your own, start the GPU "
                f"workers with --resources {resource}=1")
    return "batch jobs may still be queued (squeue, qstat, bjobs) or have failed to start (see their log directory)"


def wait_for_workers(client, needs: Collection[str] = (), timeout: float = DEFAULT_WAIT_S, stream=None,
                     poll: float = 1.0) -> dict[str, dict[str, Any]]:
    """Wait until ``client``'s cluster has a worker, and a worker holding each resource of ``needs``.

    Prints on ``stream`` (default stderr) what it waits for when it starts waiting, every
    :data:`REMIND_S` seconds after, and when the workers are there; says nothing when they already are.

    Parameters
    ----------
    client : distributed.Client
    needs : collection of str
        Dask resources (``MODEL``, ``GPU``, ``CPU``) some worker must hold.
    timeout : float
        Seconds to wait at most.
    poll : float
        Seconds between two looks at the scheduler.

    Returns
    -------
    dict
        The workers (address -> the scheduler's info, with ``resources``, ``name``, ``host``).

    Raises
    ------
    WorkersMissing
        If they are not all there after ``timeout`` seconds; the message names what is missing and how
        to get it.
    """
    stream = stream if stream is not None else sys.stderr
    wanted = [ANY, *sorted(set(needs))]
    start = time.monotonic()
    told = 0.0
    while True:
        workers = _workers(client)
        missing = [name for name in wanted if not holders(workers, name)]
        elapsed = time.monotonic() - start
        if not missing:
            if told:
                print(f"{len(workers)} worker(s) connected after {elapsed:.0f} s; the run starts", file=stream,
                      flush=True)
            return workers
        what = "a worker" if missing == [ANY] else "a worker holding " + " and ".join(m for m in missing if m != ANY)
        if elapsed >= timeout:
            raise WorkersMissing(f"no {what[2:]} joined the cluster at {client.scheduler.address} within "
                                 f"{timeout:.0f} s ({len(workers)} worker(s) connected): {_hint(missing[-1])}. "
                                 f"--wait-for-workers SECONDS waits longer")
        if not told or time.monotonic() - told >= REMIND_S:
            print(f"waiting for {what} ({len(workers)} connected so far, {elapsed:.0f} s of up to {timeout:.0f} s)",
                  file=stream, flush=True)
            told = time.monotonic()
        time.sleep(poll)


def check_device(client, device: str, workers: dict[str, dict[str, Any]] | None = None) -> None:
    """Check that the workers that will compute on ``device`` can, where they run (not on this machine).

    The workers asked are those that hold ``MODEL`` or ``GPU`` (the ones a GPU run's forward passes,
    scores and GPU kernels go to; a GPU node's ``CPU`` workers see no GPU on purpose), or every worker
    where none holds either. Each resolves ``device`` itself (:func:`brainscore.device.resolve`).

    Raises
    ------
    DeviceError
        Naming each worker that cannot serve ``device`` (name, host, address) with the reason it gave.
    """
    workers = _workers(client) if workers is None else workers
    chosen = {**holders(workers, MODEL), **holders(workers, GPU)} or workers
    if not chosen:
        return
    problems = client.run(device_problem, str(device), workers=list(chosen))
    lacking = {address: problem for address, problem in problems.items() if problem}
    if lacking:
        lines = "\n".join(f"  {describe(address, chosen.get(address, {}))}: {problem}"
                          for address, problem in sorted(lacking.items()))
        raise DeviceError(f"--device {device}: {len(lacking)} of the {len(chosen)} worker(s) that would compute on "
                          f"it cannot (checked on the workers, not on this machine):\n{lines}", str(device))


class Watch:
    """While a run's tasks go on, notices when no worker holds a resource they ask for any more.

    A thread looks at the scheduler every ``interval`` seconds. When the last worker holding one of
    ``resources`` (a live collection: the resources the run's tasks asked for so far), or the last
    worker at all, leaves, it prints which worker it was and that
    the run waits up to ``timeout`` seconds for a replacement; when one joins, it says so. When none
    has joined in time it calls ``give_up(message)`` once (the run then fails its remaining pairs with
    that message) and stops.

    Use as a context manager; :attr:`failure` is the message given up with, or None.
    """

    def __init__(self, client, resources: Collection[str], give_up: Callable[[str], None],
                 timeout: float = DEFAULT_WAIT_S, stream=None, interval: float = 2.0):
        self.client = client
        self.resources = resources
        self.give_up = give_up
        self.timeout = timeout
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.failure: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last: dict[str, dict[str, dict[str, Any]]] = {}
        self._lost: dict[str, float] = {}

    def check(self) -> None:
        """One look at the scheduler (what the thread does every ``interval`` seconds)."""
        workers = _workers(self.client)
        for resource in [ANY, *sorted(set(self.resources) - {ANY})]:
            now = holders(workers, resource)
            if now:
                if resource in self._lost:
                    back = ", ".join(describe(a, i) for a, i in now.items())
                    waited = time.monotonic() - self._lost.pop(resource)
                    self._say(f"{back} holds {resource} again after {waited:.0f} s; the run goes on" if resource != ANY
                              else f"{back} joined after {waited:.0f} s; the run goes on")
                continue
            if resource not in self._lost:
                self._lost[resource] = time.monotonic()
                gone = ", ".join(describe(a, i) for a, i in self._last.get(resource, {}).items()) or "?"
                only = "the only worker" if len(self._last.get(resource, {})) <= 1 else "the last workers"
                holding = f" holding {resource}" if resource != ANY else ""
                self._say(f"{only}{holding} ({gone}) left the cluster: the tasks that need it wait for a replacement "
                          f"for up to {self.timeout:.0f} s (a nanny restarts a worker that died; dask-jobqueue "
                          f"submits a new job; {_hint(resource)})")
            elif time.monotonic() - self._lost[resource] >= self.timeout and self.failure is None:
                holding = f" holding {resource}" if resource != ANY else ""
                self.failure = (f"no worker{holding} joined the cluster in the {self.timeout:.0f} s after the last one "
                                f"left; the pairs not scored by then are not scored ({_hint(resource)}); run the same "
                                f"command again to score only those")
                self._say(self.failure)
                self.give_up(self.failure)
                self._stop.set()
                return
        # who holds what now, to name them should they leave (every resource: tasks may ask for it next)
        for resource in {ANY, *(name for info in workers.values() for name in (info.get("resources") or {}))}:
            now = holders(workers, resource)
            if now:
                self._last[resource] = now

    def _say(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.check()
            except Exception:  # noqa: BLE001 - a look that fails (scheduler busy) is retried; never stops the run
                continue

    def __enter__(self) -> "Watch":
        self.check()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="brainscore-watch")
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
