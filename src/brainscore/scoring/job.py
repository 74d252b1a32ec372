"""The main job: score a model on a benchmark, with its provenance and a bootstrap confidence interval."""
from __future__ import annotations

import time
from typing import Any

from brainscore import device as _device_names
from brainscore import registry
from brainscore.caching import check_home
from brainscore.data import store
from brainscore.metrics.score import Score
from brainscore.models.weights import recording_weights, weights_summary
from brainscore.progress import stage
from brainscore.scoring import bootstrap as _bootstrap
from brainscore.scoring import provenance as _provenance
from brainscore.scoring import selection

DEFAULT_RESAMPLES = 1000
MAX_RESAMPLES = 100_000
"""Most bootstrap resamples one score may ask for (each refits nothing but recomputes the metric's aggregate; far
more than the interval's precision needs: 1,000 give it to about 1%)."""
DEFAULT_SEED = 0


def load_model(identifier: str, *, device: str | None = None, **kwargs) -> Any:
    """The :class:`~brainscore.models.BrainModel` registered as ``identifier`` (e.g. ``"efficientnet-lite0"``).

    ``kwargs`` go to the model's factory (e.g. ``region_layer_map={"V4": "_blocks.5"}``), and so does
    ``device`` when given (checked by :func:`brainscore.device.resolve` unless it already was; None:
    the factory's default, the model's own device). A model that
    commits regions to layers but has no layer scorer gets :func:`brainscore.scoring.selection.layer_scorer`,
    which chooses a region's layer on selection data the scored benchmarks never use.

    Raises
    ------
    UnknownIdentifierError
        If no plugin registers ``identifier``; the message lists the closest identifiers.
    DeviceError
        If torch cannot serve ``device`` (before the model is built).
    """
    device = _device_names.resolve(device)
    if device is not None:
        kwargs["device"] = device
    model = registry.models.load(identifier, **kwargs)
    if getattr(model, "layer_scorer", False) is None:
        model.layer_scorer = selection.layer_scorer
    return model


def model_hashes(model: Any) -> tuple[str | None, str | None]:
    """The model's weights sha256 and architecture fingerprint, where it exposes them (else None)."""
    found = {}
    for name in ("weights_hash", "architecture_fingerprint"):
        value = None
        for holder in (model, getattr(model, "activations_model", None)):
            if holder is None:
                continue
            try:
                value = getattr(holder, name, None)
            except Exception:  # a property that cannot be computed for this model: unknown, not fatal
                value = None
            if value is not None:
                break
        found[name] = None if value is None else str(value)
    return found["weights_hash"], found["architecture_fingerprint"]


def model_facts(model: Any) -> dict | None:
    """``{"parameter_count": n}`` of the model's network when it was loaded (counted once by its extractor), else
    None: a model answered from cached activations is not built just to count its parameters."""
    for holder in (model, getattr(model, "activations_model", None)):
        try:
            count = getattr(holder, "parameter_count", None) if holder is not None else None
        except Exception:  # a property that cannot be computed for this model: unknown, not fatal
            count = None
        if isinstance(count, int) and count > 0:
            return {"parameter_count": count}
    return None


def layer_selection_of(model: Any) -> dict[str, dict]:
    """The layer selections ``model`` made while it was scored: region -> ``{"layer": the committed layer,
    "scores": [[layer, score], ...]}`` with every candidate layer in depth order and its selection score (the
    mean raw score on the region's selection benchmarks, :func:`brainscore.scoring.selection.layer_scorer`).

    Empty for a model whose regions were all given by its ``region_layer_map`` (nothing was selected).
    """
    selected = getattr(model, "layer_scores", None) or {}
    committed = getattr(model, "region_layer_map", None) or {}
    order = list(getattr(model, "layers", None) or [])
    curves = {}
    for region, scores in selected.items():
        layers = sorted(scores, key=lambda layer: order.index(layer) if layer in order else len(order))
        curves[str(region)] = {"layer": committed.get(region),
                               "scores": [[str(layer), float(scores[layer])] for layer in layers]}
    return curves


def formula_of(result: Score) -> str:
    """How ``result`` was normalised: ``r2_over_ceiling``, ``legacy`` ((r/c)²), ``raw_over_ceiling``,
    ``raw_over_ceiling_clipped``, ``r2`` (r², no ceiling) or ``raw`` (no ceiling)."""
    formula = result.attrs.get("formula")
    ceiling = result.attrs.get("ceiling")
    no_ceiling = ceiling is None or ("note" in getattr(ceiling, "attrs", {}) and float(ceiling) == 1.0)
    if formula:
        return "r2" if no_ceiling and formula in ("r2_over_ceiling", "legacy") else str(formula)
    if no_ceiling:
        return "raw"
    return "raw_over_ceiling_clipped" if "unbounded" in result.attrs else "raw_over_ceiling"


def device_of(model: Any) -> str:
    """The device ``model`` runs on, as its record names it (``cpu``, ``cuda:0``): its ``device_label`` or ``device``,
    or its activations model's, else ``cpu``. Known without importing torch where the model labels it."""
    for holder in (model, getattr(model, "activations_model", None)):
        label = getattr(holder, "device_label", None) if holder is not None else None
        if isinstance(label, str):  # known without importing torch
            return label
        device = getattr(holder, "device", None) if holder is not None else None
        if device is not None and not callable(device):
            return str(device)
    return "cpu"


def commitment_of(model: Any, region: str | None) -> dict | None:
    """How ``model`` chose the layer it answered ``region`` with: ``{"region", "layer", "method", ...}``, or None.

    ``method`` is ``declared`` (the model's own map), ``selection`` (with ``scorer`` and ``benchmarks``;
    the per-layer scores are in :func:`layer_selection_of`) or ``rule`` (with the rule's ``rule``,
    ``relative_depth``, ``maps``, ``index``, ``n_candidates`` and ``candidates``, see
    :mod:`brainscore.models.layer_rule`). None for a benchmark without a region or a model without layers.
    """
    table = getattr(model, "layer_commitments", None)
    if region is None or table is None:
        return None
    entry = table().get(region)
    if entry is None:
        return None
    return {"region": region, **{key: value for key, value in entry.items() if key != "scores"}}


def _commit_layer(model: Any, benchmark: Any) -> None:
    """Commit the benchmark's region to a layer now (running layer selection, on numpy, if needed)."""
    region = getattr(benchmark, "region", None)
    layer_for = getattr(model, "layer_for", None)
    if region is not None and layer_for is not None:
        layer_for(region)


class _SameDevice:
    """The default of :func:`score`'s ``metric_device``: the metric computes where the model runs."""

    def __repr__(self) -> str:
        return "SAME_DEVICE"

    def __reduce__(self) -> str:
        return "SAME_DEVICE"  # pickled by name: the one instance in every process


#: ``metric_device`` of :func:`score` when not given: the ``device`` of the model.
SAME_DEVICE = _SameDevice()


def score(model_identifier: str, benchmark_identifier: str, *, device: str | None = None,
          bootstrap: int = DEFAULT_RESAMPLES, bootstrap_seed: int = DEFAULT_SEED, metric_device: Any = SAME_DEVICE,
          model: Any = None, **model_kwargs) -> Score:
    """Score a model on a benchmark: the main job.

    Parameters
    ----------
    model_identifier : str
        A registered model, e.g. ``"efficientnet-lite0"``.
    benchmark_identifier : str
        A registered benchmark, e.g. ``"Cowley2026.210325.V4-pls"``.
    device : str, optional
        A torch device (``"cuda"``, ``"cuda:1"``, ``"cpu"`` for torch on the host), checked once
        before any work (:func:`brainscore.device.resolve`): the model's factory gets it, and the
        benchmark's metric and ceiling compute there (``benchmark(model, device=...)``, torch, results
        back as numpy). None (the default): the model's own device, numpy for the metrics. Layer
        selection stays on numpy, so its cached choice holds for every device.
    bootstrap : int
        Bootstrap resamples for the confidence interval (default 1000; 0 skips it, leaving
        ``error`` and ``ci95`` None).
    bootstrap_seed : int
        Seed of the resampling (recorded in the provenance).
    metric_device : str or None, optional
        Where the metric, the ceiling and the bootstrap compute, when not where the model runs (e.g.
        None, numpy on the host, for a kernel that gains nothing on a GPU while the model runs on
        one: :mod:`brainscore.runner.placement`). Default: ``device``.
    model : BrainModel, optional
        The model to score, already loaded (e.g. a :class:`~brainscore.boundary.remote.RemoteModel`, whose network
        runs in a sandbox and was built there with ``model_kwargs``); None loads ``model_identifier`` here. Either
        way the benchmark, the metric, the ceiling and the bootstrap run in this process.
    **model_kwargs
        Passed to the model's factory, e.g. ``region_layer_map={"V4": "_blocks.5"}`` (with ``model``: recorded in the
        provenance only).

    Returns
    -------
    Score
        The ceiled score (its value is the benchmark's, unchanged), with attrs ``raw``, ``ceiling``,
        ``error`` (the bootstrap standard error of the ceiled score, see
        :mod:`brainscore.scoring.bootstrap`), ``error_reference`` (the error as the reference
        reports it, e.g. the SEM over cross-validation splits), ``ci95`` (the bootstrap 95%
        percentile interval), ``ceiling_error``/``ceiling_ci95`` (the same for the ceiling),
        ``formula``, ``model_identifier``, ``benchmark_identifier``, ``benchmark_version``, ``score_range`` (the
        ceiled scores the benchmark declares it can give, ``Benchmark.score_range``),
        ``layers`` (the committed region -> layer map, where the model has one), ``commitment`` (how
        the benchmark's region was committed, :func:`commitment_of`; also in the provenance), ``layer_selection``
        (every candidate layer's selection score, for regions whose layer was chosen automatically, see
        :func:`layer_selection_of`; also in the provenance), ``duration_s`` and
        ``provenance`` (see :mod:`brainscore.scoring.provenance`).

    Raises
    ------
    UnknownIdentifierError
        If the model or the benchmark is not registered.
    ValueError
        If ``bootstrap`` is negative or over :data:`MAX_RESAMPLES`.
    DeviceError
        (a ``ValidationError``) if ``device`` names no torch device, or a CUDA device on a machine
        where torch sees no GPU; raised before any model or data is loaded.
    """
    if not 0 <= int(bootstrap) <= MAX_RESAMPLES:
        raise ValueError(f"bootstrap must be a number of resamples from 0 (no interval) to {MAX_RESAMPLES:,}, "
                         f"got {bootstrap}")
    start, started = _provenance.utc_now(), time.perf_counter()
    check_home()  # an unusable BRAINSCORE_HOME fails now, not after the work
    device = _device_names.resolve(device)  # the one check: no GPU for "cuda" fails now, not deep in torch
    metric_device = device if metric_device is SAME_DEVICE else _device_names.resolve(metric_device)
    # the files read while the benchmark and the model are built count too (a plugin may load its data, or its
    # weights, eagerly): all are named in the provenance
    with store.recording_files() as data_files, recording_weights() as weights_files:
        benchmark = registry.load_benchmark(benchmark_identifier)
        check_data = getattr(benchmark, "check_data", None)
        if callable(check_data):  # the metric's needs on the data, before layer selection and activations
            check_data()
        if model is None:
            model = load_model(model_identifier, device=device, **model_kwargs)
        with stage(f"scoring {model_identifier} on {benchmark_identifier}"):
            if device is not None:
                _commit_layer(model, benchmark)  # layer selection on numpy: its cached choice holds for every device
            on = {} if metric_device is None else {"device": metric_device}  # other packages' benchmarks may not take one
            result = benchmark(model, **on)
            interval = _bootstrap.confidence_interval(benchmark, result, resamples=int(bootstrap),
                                                      seed=bootstrap_seed, device=metric_device)
    result.attrs["model_identifier"] = model_identifier
    result.attrs["benchmark_identifier"] = benchmark_identifier
    result.attrs["benchmark_version"] = getattr(benchmark, "version", None)
    result.attrs["score_range"] = tuple(getattr(benchmark, "score_range", (0.0, 1.0)))
    layers = getattr(model, "region_layer_map", None)
    if layers is not None:
        result.attrs["layers"] = dict(layers)
    commitment = commitment_of(model, getattr(benchmark, "region", None))
    if commitment is not None:
        result.attrs["commitment"] = commitment
    selection_curves = layer_selection_of(model)
    if selection_curves:
        result.attrs["layer_selection"] = selection_curves
    formula = formula_of(result)
    result.attrs["formula"] = formula
    _bootstrap.attach(result, interval)
    result.attrs["duration_s"] = time.perf_counter() - started
    weights, fingerprint = model_hashes(model)
    ceiling = result.attrs.get("ceiling")
    result.attrs["provenance"] = _provenance.collect(
        model={"identifier": model_identifier, "weights_sha256": weights, "architecture_fingerprint": fingerprint,
               "layers": result.attrs.get("layers"), "commitment": commitment,
               "kwargs": {**model_kwargs, **({} if device is None else {"device": device})} or None},
        benchmark={"identifier": benchmark_identifier, "version": getattr(benchmark, "version", None),
                   "data_files": dict(sorted(data_files.items()))},
        metric=repr(getattr(benchmark, "metric", None)) if getattr(benchmark, "metric", None) is not None else None,
        ceiling={"method": getattr(benchmark, "_ceiling_identity", None),
                 "parameters": {k: v for k, v in getattr(ceiling, "attrs", {}).items()
                                if isinstance(v, (str, int, float, bool)) and k not in ("error", "error_reference")}
                 or None,
                 "value": None if ceiling is None else (float(ceiling) if getattr(ceiling, "ndim", 0) == 0 else None),
                 "error_reference": None if ceiling is None else getattr(ceiling, "attrs", {}).get(
                     "error_reference", getattr(ceiling, "attrs", {}).get("error")),
                 "error": result.attrs.get("ceiling_error")},
        formula=formula,
        bootstrap={"resamples": int(bootstrap), "seed": int(bootstrap_seed),
                   "unit": interval.unit if interval is not None else None,
                   "method": interval.method if interval is not None else None},
        device=device_of(model), start=start, end=_provenance.utc_now(), duration_s=result.attrs["duration_s"],
        layer_selection=selection_curves or None, model_facts=model_facts(model),
        plugin_sources=_plugin_sources(model_identifier, benchmark_identifier),
        weights=weights_summary(weights_files) or _remote_weights(model))
    unbounded = result.attrs.get("unbounded")
    if unbounded is not None and getattr(unbounded, "ndim", 0) == 0:  # a clipped score: what it was before
        result.attrs["provenance"]["unclipped_score"] = float(unbounded)
    return result


def _remote_weights(model: Any) -> dict | None:
    """The weights record a sandboxed model's server reports (its build ran there, not here), else None."""
    try:
        value = getattr(model, "weights_record", None)
    except Exception:  # noqa: BLE001 - a fact that cannot be read: unknown, not fatal
        return None
    return value if isinstance(value, dict) else None


def _plugin_sources(model: str, benchmark: str) -> dict | None:
    """Where the plugin folders of ``--plugin-dir`` declaring the model and the benchmark were found (None:
    built-in ones)."""
    found = {kind: source for kind, identifier in (("model", model), ("benchmark", benchmark))
             if (source := registry.plugin_source(kind, identifier)) is not None}
    return found or None
