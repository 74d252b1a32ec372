"""The stages of a run, as plain functions that Dask runs on workers (and ``brainscore score`` runs in-process).

A pair's score is always computed by the one job, :func:`brainscore.scoring.score`. The upstream
stages only *warm the content-keyed cache* it reads, so that work shared between pairs is done
once, in parallel, and the final score is bit-identical to a sequential ``brainscore score``:

- :func:`warm_selection` per (model, region, selection benchmark): every candidate layer's features
  on that benchmark's stimuli (one pass, PCA-reduced, cached), the forward passes of a layer
  selection split over workers;
- :func:`select_layer` per (model, region): the layer selection a model needs for a region it has
  no stored layer for (cached under ``layer_selection``);
- :func:`warm_activations` per (model, stimulus set, region or behaviour): shows the model what the
  benchmark says it will show (its stimuli placed on the model's screen; the model's ``look_at``
  extracts and caches the features), without the metric; every benchmark on the same stimuli then
  finds them cached;
- :func:`compute_ceiling` per benchmark (not per model), cached under ``ceilings``;
- :func:`score_pair` per (model, benchmark): the job itself.

Large arrays never travel between processes: workers share ``$BRAINSCORE_HOME`` (a shared
filesystem on a cluster) and pass only small summaries. Each function catches the errors of the
work it runs and returns them (a failed warm-up is retried by the job, which then reports it), so a
deterministic failure is not retried; a worker that dies is handled by Dask's rescheduling.
"""
from __future__ import annotations

import hashlib
import time
import traceback
from typing import Any

from brainscore import registry
from brainscore.benchmarks.base import presentations_of
from brainscore.caching import Cache
from brainscore.device import for_worker
from brainscore.runner.placement import kernel_of
from brainscore.scoring import job, selection
from brainscore.scoring.outcome import Outcome


def _failure(error: BaseException) -> dict[str, Any]:
    return {"ok": False, "failure": f"{type(error).__name__}: {error}",
            "log": "".join(traceback.format_exception(error))}


def _model(model: str, model_kwargs: dict[str, Any], device: str | None):
    """The model, on this worker's GPU for a run on ``"cuda"`` (:func:`brainscore.device.for_worker`)."""
    return job.load_model(model, device=for_worker(device), **model_kwargs)


def _plan_key(benchmark: str, version: Any) -> str:
    from brainscore.caching import content_key

    # "runner-describe": the key this stage had before it was named plan (its cached answers stay valid)
    return content_key(kind="runner-describe", benchmark=benchmark, version=version, layout=3)  # 3: with kernel


def cached_plan(benchmark: str, version: Any) -> dict[str, Any] | None:
    """The cached :func:`plan` of ``benchmark`` at ``version``, or None (then run :func:`plan`)."""
    return Cache("runner").load(_plan_key(benchmark, version))


def plan(benchmark: str) -> dict[str, Any]:
    """What the planner needs to share work: the benchmark's region (or None) and its stimuli's identity.

    Loads the benchmark's stimuli once; the answer is cached by benchmark and version (it decides
    only which pairs share an activations task, never a number).

    Returns
    -------
    dict
        ``region`` (str or None), ``version``, ``stimuli`` (what the model is shown: the stimulus set's
        identifier, a hash of its sorted ids and the degrees it is placed at, None where it is shown
        as the files are), ``kernel`` (the metric's kernel, :func:`brainscore.runner.placement.kernel_of`:
        where a GPU run computes it), ``ok``; on an error ``ok`` is False with ``failure`` and ``log``.
    """
    try:
        instance = registry.load_benchmark(benchmark)
        version = getattr(instance, "version", None)
        stimuli = instance.stimulus_set
        ids = "\0".join(sorted(map(str, stimuli["stimulus_id"])))
        # benchmarks on one stimulus set share activations only if they place it alike on the model's
        # screen (Hermann 2020 shows the cue-conflict images unplaced, Geirhos 2021 at 3 degrees;
        # Kiani 2007 shows Kriegeskorte's 92 images at 7 degrees, Kriegeskorte 2008 at 2.9)
        shown = f"@{getattr(instance, 'visual_degrees', None)}deg"
        identity = f"{getattr(stimuli, 'identifier', '?')}:{hashlib.sha256(ids.encode()).hexdigest()[:16]}{shown}"
        result = {"ok": True, "region": getattr(instance, "region", None), "version": version, "stimuli": identity,
                  "kernel": kernel_of(getattr(instance, "metric", None))}
        Cache("runner").save(_plan_key(benchmark, version), result)
        return result
    except Exception as error:  # noqa: BLE001 - reported to the planner, who falls back to no sharing
        return {**_failure(error), "region": None, "stimuli": f"unknown:{benchmark}", "kernel": None}


def warm_selection(model: str, region: str, benchmark: str, model_kwargs: dict[str, Any], *,
                   device: str | None = None) -> dict[str, Any]:
    """Extract (and PCA-reduce) every candidate layer of ``model`` on one selection benchmark of ``region``.

    Does nothing when the model already commits ``region`` to a layer, has a layer scorer other than
    the default one, or has its selection cached. Run on several workers at once, the selection's
    forward passes are split between them; :func:`select_layer` then computes only the metric.
    ``device``: the run's device (checked by :func:`brainscore.device.resolve`), where the model runs.
    """
    start = time.perf_counter()
    try:
        instance = _model(model, model_kwargs, device)
        mapped = getattr(instance, "region_layer_map", None)
        if (mapped is None or region in mapped or getattr(instance, "layer_scorer", None) is not selection.layer_scorer
                or instance.selection_cached(region)):
            return {"ok": True, "note": "nothing to select", "duration_s": time.perf_counter() - start}
        selection.selection_features(benchmark, instance.candidates())
        return {"ok": True, "duration_s": time.perf_counter() - start}
    except Exception as error:  # noqa: BLE001
        return _failure(error)


def select_layer(model: str, region: str, model_kwargs: dict[str, Any], *upstream: Any,
                 device: str | None = None) -> dict[str, Any]:
    """Commit ``region`` of ``model`` to a layer (running layer selection if its map lacks the region).

    Returns ``{"ok": True, "layer": name}`` (``layer`` None for a model without layers), or a failure.
    ``upstream`` (the :func:`warm_selection` results) only orders the tasks.
    """
    start = time.perf_counter()
    try:
        instance = _model(model, model_kwargs, device)
        layer_for = getattr(instance, "layer_for", None)
        layer = layer_for(region) if layer_for is not None else None
        return {"ok": True, "layer": layer, "duration_s": time.perf_counter() - start}
    except Exception as error:  # noqa: BLE001
        return _failure(error)


def warm_activations(model: str, benchmark: str, model_kwargs: dict[str, Any], *upstream: Any,
                     device: str | None = None) -> dict[str, Any]:
    """Show ``model`` what ``benchmark`` will show it (:meth:`~brainscore.benchmarks.base.Benchmark.presentations`),
    so that its features are extracted and cached before the score needs them; no metric runs.

    Recordings are only extracted to their features files (:meth:`~brainscore.benchmarks.base.Presentation.prepare`),
    never loaded here, so a layer larger than the worker's memory is not held by the model worker.

    ``upstream`` are the results this depends on (the layer selection), unused except as ordering. A
    benchmark that does not say what it shows is left to its score (``note`` says so).
    """
    start = time.perf_counter()
    try:
        instance = _model(model, model_kwargs, device)
        shown = presentations_of(registry.load_benchmark(benchmark), instance)
        if shown is None:
            return {"ok": True, "duration_s": time.perf_counter() - start,
                    "note": "the benchmark does not say what it shows; its score extracts the features"}
        for presentation in shown:  # extracted to the cache, not loaded (a wide layer may not fit: issue 22)
            presentation.prepare(instance)
    except Exception as error:  # noqa: BLE001
        return _failure(error)
    return {"ok": True, "duration_s": time.perf_counter() - start, "presentations": len(shown),
            "model_facts": job.model_facts(instance)}


def compute_ceiling(benchmark: str, device: str | None = None) -> dict[str, Any]:
    """Compute (or find cached) the ceiling of ``benchmark``; ``{"ok": True, "ceiling": value}`` or a failure.

    ``device``: the run's device, where the scores' ceilings are computed too (None: numpy).
    """
    start = time.perf_counter()
    try:
        ceiling = registry.load_benchmark(benchmark).ceiling_on(for_worker(device))
        return {"ok": True, "ceiling": float(ceiling), "duration_s": time.perf_counter() - start}
    except Exception as error:  # noqa: BLE001
        return _failure(error)


def _with_model_facts(outcome: Outcome, upstream: tuple) -> Outcome:
    """``outcome`` with the parameter count that :func:`warm_activations` found where it loaded the network.

    This worker scored from the stored activations and so never loaded the network to count its parameters;
    ``brainscore score`` in one process does, and records ``provenance["model_facts"]`` (kept out of every key).
    """
    provenance = getattr(outcome, "provenance", None)
    facts = next((u["model_facts"] for u in upstream if isinstance(u, dict) and u.get("model_facts")), None)
    if isinstance(provenance, dict) and facts and not provenance.get("model_facts"):
        provenance["model_facts"] = facts
    return outcome


def score_pair(model: str, benchmark: str, model_kwargs: dict[str, Any], *upstream: Any,
               device: str | None = None, metric_device: Any = job.SAME_DEVICE, sandbox: Any = None,
               model_plugin_dirs: tuple = ()) -> Outcome:
    """Score ``model`` on ``benchmark`` with :func:`brainscore.scoring.score` (on ``device``, this worker's GPU of it).

    ``metric_device``: where the metric, ceiling and bootstrap compute (default: ``device``; None:
    numpy on the host, for a kernel that does not gain on a GPU: :mod:`brainscore.runner.placement`).
    ``sandbox``: :class:`brainscore.boundary.Limits` to run the model in a sandboxed model server (its code, loaded
    from the installed plugins and ``model_plugin_dirs``, never runs in this process; the benchmark, metric and
    ceiling do, :mod:`brainscore.boundary`); None runs it here.

    Returns
    -------
    Outcome
        :meth:`Outcome.from_score` of the score (with its provenance, to be recorded), or
        :meth:`Outcome.from_failure` with the traceback in ``log``.
    """
    try:
        metric = metric_device if metric_device is job.SAME_DEVICE or metric_device is None else for_worker(metric_device)
        if sandbox is None:
            outcome = Outcome.from_score(job.score(model, benchmark, device=for_worker(device), metric_device=metric,
                                                   **model_kwargs), model, benchmark)
            return _with_model_facts(outcome, upstream)
        from brainscore.boundary import ModelServer

        on = for_worker(device)
        with ModelServer(model, sandbox, {**model_kwargs, **({"device": on} if on is not None else {})},
                         plugin_dirs=tuple(model_plugin_dirs)) as server:
            return Outcome.from_score(job.score(model, benchmark, device=on, metric_device=metric, model=server.model,
                                                **model_kwargs), model, benchmark)
    except Exception as error:  # noqa: BLE001
        return Outcome.from_failure(model, benchmark, error)
