"""Run a grid of (model, benchmark) pairs on a Dask cluster, or one after the other in this process.

The task graph of :func:`run` (one run, keys ``(stage, run id, ...)``):

``plan[b]`` (region and stimuli of each benchmark, to find what pairs share) ·
``ceiling[b]`` once per benchmark ·
``select[m, region, selection benchmark]`` (candidate layers' features, split over workers) ->
``select[m, region]`` -> ``activations[m, stimuli, region]`` (one per stimulus set and region,
shared by every benchmark on those stimuli) -> ``score[m, b]`` (which also waits for ``ceiling[b]``).

Every stage is a function of :mod:`brainscore.runner.stages`; the upstream stages warm the cache
and the score stage runs the one job, so a run's scores equal ``brainscore score``'s bit for bit.
Outcomes are recorded (:mod:`brainscore.results.records`) by this process as each pair finishes, so a
run that is killed resumes, when started again, with only the pairs it had not recorded (same run key,
:mod:`brainscore.runner.keys`).
"""
from __future__ import annotations

import contextlib
import sys
from concurrent.futures import CancelledError
import threading
import time
import uuid
from collections import Counter
from typing import Any, Callable, Collection, Iterable, Sequence

from brainscore import progress as _progress
from brainscore import registry
from brainscore.device import is_cuda
from brainscore.runner import placement, stages, watch
from brainscore.runner.workers import MODEL
from brainscore.runner.grid import Pair
from brainscore.runner.keys import run_key
from brainscore.scoring import selection
from brainscore.scoring.outcome import Outcome

STAGES = ("plan", "select", "activations", "ceiling", "score")
#: Times Dask re-runs a task that raised (a worker that dies is rescheduled by the scheduler itself,
#: up to ``distributed.scheduler.allowed-failures`` times).
RETRIES = 2

Callback = Callable[[dict[str, Any]], None]


def _benchmark_info(benchmark: str) -> dict[str, Any]:
    """Region and version of a benchmark, read without loading its data."""
    try:
        instance = registry.load_benchmark(benchmark)
    except Exception as error:  # noqa: BLE001 - the pair fails with this error, reported by the job
        return {"region": None, "version": None, "failure": f"{type(error).__name__}: {error}"}
    return {"region": getattr(instance, "region", None), "version": getattr(instance, "version", None)}


def _skipped(pairs: Sequence[Pair], store, rerun: bool, on_result: Callback | None):
    """Split ``pairs`` into those to compute (with their run keys) and the summaries of those already recorded."""
    info = {b: _benchmark_info(b) for b in dict.fromkeys(p.benchmark for p in pairs)}
    todo, done = [], []
    for pair in pairs:
        key = run_key(pair.model, pair.benchmark, info[pair.benchmark]["version"], pair.model_kwargs)
        found = None if rerun or store is None else store.find(pair.model, pair.benchmark, key)
        if found is not None:
            summary = found.replace(status="skipped").summary()
            done.append(summary)
            if on_result:
                on_result(summary)
        else:
            todo.append((pair, key))
    return todo, done, info


def all_recorded(pairs: Sequence[Pair], store) -> list[dict[str, Any]] | None:
    """The summaries (``status`` ``skipped``) of ``pairs`` when ``store`` records every one of them with its run
    key (:mod:`brainscore.runner.keys`, the key ``brainscore score`` records too), else None: a run with nothing
    to compute need not start a cluster."""
    todo, done, _ = _skipped(pairs, store, False, None)
    return None if todo else _in_order(done, pairs)


def _finish(store, outcome: Outcome, key: str, on_result: Callback | None) -> dict[str, Any]:
    """Record ``outcome`` (if there is a store), report its summary to ``on_result``; the summary.

    A score that cannot be one (:func:`brainscore.results.validity.check_outcome`) is a failure of its pair.
    """
    from brainscore.results.validity import InvalidScore, check_outcome

    try:
        check_outcome(outcome)
    except InvalidScore as refused:
        outcome = Outcome.from_failure(outcome.model, outcome.benchmark, refused, log="")
    if store is not None:
        from brainscore.results import NotRecorded

        try:
            store.record(outcome, key)
        except NotRecorded as error:  # kept in the journal; the run goes on with the other pairs
            print(f"warning: {error}", file=sys.stderr, flush=True)
    summary = outcome.summary()
    if on_result:
        on_result(summary)
    return summary


def run_sequential(pairs: Sequence[Pair], store=None, rerun: bool = False,
                   on_result: Callback | None = None, sandbox: Any = None,
                   model_plugin_dirs: tuple = ()) -> list[dict[str, Any]]:
    """Score ``pairs`` one after the other in this process (what ``brainscore score`` does for several pairs).

    Parameters
    ----------
    pairs : sequence of Pair
    store : DatabaseOutcomeStore or JsonLinesOutcomeStore, optional
        Where outcomes are recorded and already-recorded pairs are found (:mod:`brainscore.results.records`);
        None records nothing.
    rerun : bool
        Score pairs even if already recorded.
    on_result : callable (dict) -> None, optional
        Called with each pair's summary as it finishes.
    sandbox : brainscore.boundary.Limits, optional
        Run each model in a sandboxed model server (:mod:`brainscore.boundary`) with these limits, loaded from the
        installed plugins and ``model_plugin_dirs``; None runs models in this process.

    Returns
    -------
    list of dict
        One summary per pair (:meth:`brainscore.scoring.outcome.Outcome.summary`; ``status`` is
        ``done``, ``failed`` or ``skipped``), in the order of ``pairs``.
    """
    todo, done, _ = _skipped(pairs, store, rerun, on_result)
    results = list(done)
    with _progress.stage(f"scoring {len(todo)} pairs ({len(done)} already recorded)", total=len(todo),
                         unit="pair") as step:
        for pair, key in todo:
            outcome = stages.score_pair(pair.model, pair.benchmark, pair.model_kwargs, device=pair.device,
                                        sandbox=sandbox, model_plugin_dirs=model_plugin_dirs)
            results.append(_finish(store, outcome, key, on_result))
            step.update()
    return _in_order(results, pairs)


def _in_order(results: Iterable[dict[str, Any]], pairs: Sequence[Pair]) -> list[dict[str, Any]]:
    by_pair = {(r["model"], r["benchmark"]): r for r in results}
    return [by_pair[(p.model, p.benchmark)] for p in pairs if (p.model, p.benchmark) in by_pair]


class Progress:
    """What a run is doing, on ``stream``: per stage, tasks done of all, running and failed; per task, when it
    started and ended.

    On a terminal one status line is rewritten in place every ``interval`` seconds (stage counts, the time
    since the start, and the time left estimated from the pairs scored so far); each task that took at
    least :data:`brainscore.progress.DELAY_S` leaves a line above it when it ends. In a log (a file or a
    pipe) each task writes one line when it starts running on a worker and one when it ends, with its
    duration, and the counts are written when they change (looked at every 5 intervals) and every
    :data:`brainscore.progress.LOG_EVERY_S` seconds while nothing changes::

        [14:02:11] select tiny-seeded V4: started
        [14:03:24] select tiny-seeded V4: done in 73.0 s
        [14:03:24] plan 1/1 | select 1/1 | activations 0/2 (1 on workers) | ceiling 2/2 | score 0/2, 75 s
    """

    def __init__(self, client, stream=None, interval: float = 1.0):
        self.client = client
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.total: Counter = Counter()
        self.done: Counter = Counter()
        self.failed: Counter = Counter()
        self.seconds: Counter = Counter()  # task-seconds per stage, as the tasks report them
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last = ""
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._start = time.perf_counter()
        self._running: dict = {}  # key -> wall time it was first seen running
        self._ended: list[tuple[float, str]] = []  # (when, line) of finished tasks, not yet written
        self._shown_at = self._start  # when a log last got the counts
        self._known: set = set()

    @staticmethod
    def _name(key) -> str:
        """``select tiny-seeded V4`` from the key ``("brainscore-select", run id, "tiny-seeded", "V4")``."""
        if isinstance(key, tuple) and key and str(key[0]).startswith("brainscore-"):
            return " ".join([str(key[0])[len("brainscore-"):], *map(str, key[2:])])
        return str(key)

    def track(self, stage: str, future) -> None:
        """Count ``future`` under ``stage``; it is counted done or failed when it finishes."""
        with self._lock:
            self.total[stage] += 1
            self._known.add(future.key)

        def finished(f, stage=stage):
            ok, seconds = f.status == "finished", 0.0
            if ok:
                try:
                    value = f.result()
                    if isinstance(value, Outcome):
                        ok, seconds = value.status != "failed", float(value.duration_s or 0.0)
                    else:
                        ok, seconds = value.get("ok", True), float(value.get("duration_s") or 0.0)
                except Exception:  # noqa: BLE001
                    ok = False
            with self._lock:
                (self.done if ok else self.failed)[stage] += 1
                self.seconds[stage] += seconds
                began = self._running.pop(f.key, None)
                took = seconds or (time.time() - began if began is not None else 0.0)
                if not self._tty or took >= _progress.DELAY_S or not ok:
                    line = f"{self._name(f.key)}: {'done' if ok else 'failed'} in {took:.1f} s"
                    self._ended.append((time.time(), line))
        future.add_done_callback(finished)

    def _poll_running(self) -> list[tuple[float, str]]:
        """Tasks seen running since the last poll (when, and their "started" line); keeps :attr:`_running`."""
        started = []
        try:
            processing = self.client.processing()
        except Exception:  # noqa: BLE001 - the display must never stop a run
            return started
        with self._lock:
            for keys in processing.values():
                for key in keys:
                    if key in self._known and key not in self._running:
                        self._running[key] = time.time()
                        started.append((self._running[key], f"{self._name(key)}: started"))
        return started

    def line(self) -> str:
        """``stage done/total (running, failed)`` for every stage with tasks, and the time so far and left."""
        counts, timing = self._counts()
        return f"{counts}, {timing}" if counts else ""

    def _counts(self) -> tuple[str, str]:
        """(``stage done/total (running, failed) | ...``, the time so far and left)."""
        running: Counter = Counter()
        try:
            for keys in self.client.processing().values():
                for key in keys:
                    if isinstance(key, tuple) and str(key[0]).startswith("brainscore-"):
                        running[str(key[0])[len("brainscore-"):]] += 1
        except Exception:  # noqa: BLE001 - the display must never stop a run
            pass
        parts = []
        with self._lock:
            for stage in STAGES:
                if self.total[stage]:
                    extra = []
                    if running[stage]:
                        extra.append(f"{running[stage]} on workers")
                    if self.failed[stage]:
                        extra.append(f"{self.failed[stage]} failed")
                    parts.append(f"{stage} {self.done[stage] + self.failed[stage]}/{self.total[stage]}"
                                 + (f" ({', '.join(extra)})" if extra else ""))
            scored, pairs = self.done["score"] + self.failed["score"], self.total["score"]
        elapsed = time.perf_counter() - self._start
        timing = f"{elapsed:.0f} s"
        if pairs and 0 < scored < pairs:
            timing += f", about {elapsed / scored * (pairs - scored):.0f} s left"
        return " | ".join(parts), timing

    def _loop(self) -> None:
        # a terminal redraws its line every interval; a log gets the counts at most every 5 intervals
        tick, every = 0, 1 if self._tty else 5
        while not self._stop.wait(self.interval):
            tick += 1
            self.show(started=self._poll_running(), counts=tick % every == 0)

    def show(self, final: bool = False, started: Sequence[tuple[float, str]] = (), counts: bool = True) -> None:
        """Write the task lines gathered since the last call and the counts: on a terminal the status line drawn
        again; in a log the counts when they changed, or every :data:`brainscore.progress.LOG_EVERY_S` seconds."""
        with self._lock:
            ended, self._ended = self._ended, []
        events = sorted([*started, *ended])
        counted, timing = self._counts()
        text = f"{counted}, {timing}" if counted else ""
        now = time.perf_counter()
        try:
            if self._tty:
                for when, event in events:  # above the status line, which is drawn again below them
                    self.stream.write("\r\033[K" + _stamped(event, when) + "\n")
                self.stream.write("\r\033[K" + text + ("\n" if final else ""))
            else:
                for when, event in events:
                    self.stream.write(_stamped(event, when) + "\n")
                due = now - self._shown_at >= _progress.LOG_EVERY_S
                if counted and (final or (counts and (counted != self._last or due))):
                    self.stream.write(_stamped(text) + "\n")
                    self._last, self._shown_at = counted, now
            self.stream.flush()
        except (OSError, ValueError):  # a closed stream: the display must never stop a run
            pass

    def __enter__(self) -> "Progress":
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join()
        self.show(final=True)


def _stamped(text: str, when: float | None = None) -> str:
    return f"[{time.strftime('%H:%M:%S', time.localtime(when))}] {text}"


def _submit_grid(todo, info, gpu: bool, held: set[str], submit, sandbox: Any = None,
                 model_plugin_dirs: tuple = ()) -> dict:
    """Submit the task graph of :func:`run` (``submit(stage, fn, *args, name=, asks=, priority=, **kwargs)`` makes
    each task; ``sandbox``: see :func:`run`); ``{score task key: (future, pair, run key)}``."""
    def where(stage: str, device, benchmark: str | None = None) -> placement.Placement:
        # the metric's kernel matters only on GPUs (and waits for the benchmark's plan only there)
        kernel = (known.get(benchmark) or planned_result(benchmark) or {}).get("kernel") if gpu and benchmark else None
        return placement.place(stage, device, gpu, held, kernel)

    def planned_result(benchmark: str):
        return planned[benchmark].result() if benchmark in planned else None

    benchmarks = list(dict.fromkeys(pair.benchmark for pair, _ in todo))
    known = {b: stages.cached_plan(b, info[b]["version"]) for b in benchmarks}
    planned = {b: submit("plan", stages.plan, b, name=(b,), priority=30) for b in benchmarks if known[b] is None}
    select = {}
    selection_data = selection.selection_benchmarks()
    for pair, _ in todo:
        region = info[pair.benchmark]["region"]
        if sandbox is None and region is not None and (pair.model, region) not in select:
            forward = where("select", pair.device)
            warm = [submit("select", stages.warm_selection, pair.model, region, b, pair.model_kwargs,
                           device=forward.device, name=(pair.model, region, b), asks=forward.resources,
                           priority=20)
                    for b in selection_data.get(region, ())]
            select[(pair.model, region)] = submit("select", stages.select_layer, pair.model, region,
                                                  pair.model_kwargs, *warm, device=forward.device,
                                                  name=(pair.model, region), asks=forward.resources, priority=20)
    devices = {pair.benchmark: pair.device for pair, _ in reversed(todo)}  # the metrics' device
    ceiling = {}
    for b in benchmarks:
        there = where("ceiling", devices[b], b)
        ceiling[b] = submit("ceiling", stages.compute_ceiling, b, there.device, name=(b,), asks=there.resources)
    stimuli = {b: (known[b] or planned[b].result())["stimuli"] for b in benchmarks}
    activations: dict[tuple, Any] = {}
    scores = {}
    for pair, key in todo:
        region = info[pair.benchmark]["region"]
        group = (pair.model, stimuli[pair.benchmark], region)
        if sandbox is None and group not in activations:
            upstream = [select[(pair.model, region)]] if region is not None else []
            forward = where("activations", pair.device)
            activations[group] = submit("activations", stages.warm_activations, pair.model, pair.benchmark,
                                        pair.model_kwargs, *upstream, device=forward.device, name=group,
                                        asks=forward.resources, priority=10)
        there = where("score", pair.device, pair.benchmark)
        extra = {"metric_device": there.device} if gpu else {}  # on the CPU the metric runs where the model does
        if sandbox is not None:
            extra.update(sandbox=sandbox, model_plugin_dirs=tuple(model_plugin_dirs))
        upstream = [activations[group]] if group in activations else []
        future = submit("score", stages.score_pair, pair.model, pair.benchmark, pair.model_kwargs,
                        ceiling[pair.benchmark], *upstream, device=there.model_device,
                        name=(pair.model, pair.benchmark), asks=there.resources, **extra)
        scores[future.key] = (future, pair, key)
    return scores


def run(pairs: Sequence[Pair], client, store=None, rerun: bool = False, on_result: Callback | None = None,
        progress: bool = True, gpu: bool = False, stream=None, stats: dict | None = None, sandbox: Any = None,
        model_plugin_dirs: tuple = (), needs: Collection[str] = (),
        wait_s: float = watch.DEFAULT_WAIT_S) -> list[dict[str, Any]]:
    """Score ``pairs`` on the Dask cluster of ``client``; the summaries of all pairs in the order of ``pairs``.

    Parameters
    ----------
    pairs : sequence of Pair
    client : distributed.Client
        Its workers must see the same ``$BRAINSCORE_HOME`` (the cache) and data mirror as this process.
    store : DatabaseOutcomeStore or JsonLinesOutcomeStore, optional
        Where each outcome is recorded as it finishes (None: nowhere), and where pairs
        already recorded with the same run key are found and skipped.
    rerun : bool
        Score every pair, recorded or not.
    on_result : callable (dict) -> None, optional
        Called in this process with each pair's summary as it finishes (``status`` ``done``,
        ``failed`` or ``skipped``).
    progress : bool
        Show per-stage progress on ``stream`` (default stderr).
    gpu : bool
        The cluster is laid out for GPUs (:func:`brainscore.runner.clusters.worker_layout`): forward
        passes ask for ``MODEL`` (one network per GPU), scores for ``GPU`` (a GPU's second worker),
        ceilings for ``GPU`` or ``CPU`` and each metric computes on the GPU or with numpy, by whether
        its kernel gains on a GPU (:func:`brainscore.runner.placement.place`). Otherwise the tasks
        that run a forward pass (layer selection, activations) ask for ``MODEL=1`` when a worker holds
        it (:func:`brainscore.runner.clusters.model_resources`): one at a time there.
    stats : dict, optional
        Filled with the task-seconds each stage took (``{"select": 95.1, ...}``; needs ``progress``).
    sandbox : brainscore.boundary.Limits, optional
        Put the model calls through the boundary on the workers: each score task runs its model in a sandboxed model
        server with these limits (loaded from the installed plugins and ``model_plugin_dirs``), the benchmark, metric
        and ceiling in the worker. The model's features are then not shared between pairs (a sandbox keeps no
        cache), so the warm-up stages (layer selection, activations) are left out.
    needs : collection of str
        Resources (``MODEL``, ``GPU``) some worker must hold before the run starts
        (:func:`brainscore.runner.clusters.resources_needed`): the run waits for them, and for at
        least one worker, up to ``wait_s`` seconds (:func:`brainscore.runner.watch.wait_for_workers`),
        and only then reads what its tasks may ask for. While it runs, a resource its tasks ask for
        that no worker holds any more is waited for as long, then the pairs not yet scored fail
        with a message that says so (:class:`brainscore.runner.watch.Watch`).
    wait_s : float
        Seconds to wait for workers (default :data:`brainscore.runner.watch.DEFAULT_WAIT_S`).

    Returns
    -------
    list of dict
        :meth:`~brainscore.scoring.outcome.Outcome.summary` per pair; failures carry ``failure`` and ``log``.

    Raises
    ------
    WorkersMissing
        If the workers the run needs have not joined after ``wait_s`` seconds (nothing was computed).
    DeviceError
        If a pair's device is CUDA and a worker that would compute on it has no GPU
        (:func:`brainscore.runner.watch.check_device`; checked on the workers, not here).
    """
    from distributed import as_completed

    todo, results, info = _skipped(pairs, store, rerun, on_result)
    if not todo:
        return _in_order(results, pairs)
    run_id = uuid.uuid4().hex[:8]
    workers = watch.wait_for_workers(client, needs, wait_s, stream=sys.stderr)
    for device in dict.fromkeys(pair.device for pair, _ in todo if is_cuda(pair.device)):
        watch.check_device(client, device, workers)
    held = placement.held_by(workers)
    if not gpu and MODEL not in held and len({w.get("host") for w in workers.values()}) < len(workers):
        print(f"note: no worker holds {MODEL}, so forward passes may run side by side on one machine; start the "
              f"workers with --preload brainscore.runner.workers for one at a time (docs/cluster.md)",
              file=sys.stderr, flush=True)
    asked: set[str] = set()  # the resources the tasks ask for, watched while they run
    submitted: list = []
    display = Progress(client, stream) if progress else None

    def submit(stage: str, fn, *args, name: tuple = (), asks: dict | None = None, priority: int = 0, **kwargs):
        future = client.submit(fn, *args, **kwargs, key=(f"brainscore-{stage}", run_id, *map(str, name)),
                               retries=RETRIES, resources=asks, priority=priority, pure=False)
        asked.update(asks or ())
        submitted.append(future)
        if display:
            display.track(stage, future)
        return future

    def give_up(message: str) -> None:  # the watch found no worker for the tasks left: stop waiting for them
        client.cancel([f for f in submitted if not f.done()], reason=message)

    with display if display else contextlib.nullcontext(), watch.Watch(client, asked, give_up,
                                                                        timeout=wait_s) as watching:
        try:
            scores = _submit_grid(todo, info, gpu, held, submit, sandbox, model_plugin_dirs)
        except CancelledError:  # a plan the submission waited for, cancelled by the watch: every pair fails with why
            if not watching.failure:
                raise
            scores = {}
            for pair, key in todo:
                outcome = Outcome.from_failure(pair.model, pair.benchmark, watch.WorkersMissing(watching.failure))
                results.append(_finish(store, outcome, key, on_result))
        for future in as_completed([f for f, _, _ in scores.values()]):
            _, pair, key = scores[future.key]
            try:
                outcome = future.result()
            except Exception as error:  # noqa: BLE001 - e.g. KilledWorker after too many worker deaths
                if watching.failure and future.cancelled():
                    error = watch.WorkersMissing(watching.failure)
                outcome = Outcome.from_failure(pair.model, pair.benchmark, error)
            results.append(_finish(store, outcome, key, on_result))
    if stats is not None and display:
        stats.update({stage: round(seconds, 2) for stage, seconds in display.seconds.items()})
    return _in_order(results, pairs)

