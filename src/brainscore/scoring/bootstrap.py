"""Uncertainty that means one thing: the bootstrap over the units the experiment sampled.

For every score :func:`brainscore.score` returns:

``error``
    The **bootstrap standard error of the ceiled score**: the standard deviation (ddof=1) of the
    ceiled score recomputed on ``resamples`` seeded resamples (with replacement) of the unit the
    experiment sampled, with the ceiling recomputed on the same resamples (so the ceiling's own
    uncertainty, and its correlation with the raw score, propagate). The same definition for every
    benchmark, neural, RSA and behavioural.
``ci95``
    The bootstrap 95% percentile interval ``(2.5%, 97.5%)`` of the ceiled score (Efron &
    Tibshirani 1993, ch. 13).
``ceiling_error``, ``ceiling_ci95``
    The same for the ceiling (0 and a point interval for a fixed ceiling). ``attrs["ceiling"]`` (a copy of
    the benchmark's ceiling) carries them as its ``error`` and ``ci95``, its own error as ``error_reference``.
``error_reference``
    The error the benchmark computed before the bootstrap, for comparison: for neural benchmarks
    the SEM over cross-validation splits propagated with the ceiling's SEM over its splits, the
    std over kappas (error consistency), sqrt(p(1-p)) over trials (top-1), 0 (RDM Spearman, shape
    bias). These measure different things, which is why ``error`` replaces them.

The unit and what is recomputed are the benchmark's (its ``bootstrap`` method): stimuli for neural
and RSA benchmarks, images (or trials) for behavioural ones. A benchmark without a ``bootstrap``
method, or ``resamples=0``, leaves ``error`` and ``ci95`` None. The seed and the number of
resamples are recorded in the provenance.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from brainscore.metrics.bootstrap import BootstrapSamples, percentile_interval
from brainscore.metrics.score import Score
from brainscore.progress import stage

__all__ = ["confidence_interval", "attach", "BootstrapSamples", "BOOTSTRAP_INPUTS"]

BOOTSTRAP_INPUTS = ("choices", "model_rdm", "held_out", "model_properties")
"""Attributes benchmarks attach for their ``bootstrap`` only; :func:`attach` removes them."""


def confidence_interval(benchmark: Any, result: Score, resamples: int = 1000, seed: int = 0,
                        device: str | None = None) -> BootstrapSamples | None:
    """The bootstrap distribution of ``result`` from ``benchmark.bootstrap``, or None where it has none.

    Parameters
    ----------
    benchmark
        The benchmark that computed ``result`` (its ``bootstrap(result, resamples, seed)`` is called).
    result : Score
        What ``benchmark(model)`` returned.
    resamples : int
        0 skips the bootstrap.
    seed : int
    device : str, optional
        The device ``result`` was computed on (its ceiling is read there); passed on only when given.

    Returns
    -------
    BootstrapSamples or None
    """
    method = getattr(benchmark, "bootstrap", None)
    if resamples <= 0 or method is None or getattr(result, "ndim", 0) != 0:
        return None
    on = {} if device is None else {"device": device}
    name = getattr(benchmark, "identifier", type(benchmark).__name__)
    with stage(f"{name}: bootstrap interval, {resamples} resamples (seed {seed})"):
        return method(result, resamples=resamples, seed=seed, **on)


def _spread(samples: np.ndarray | None) -> tuple[float | None, tuple[float, float] | None]:
    if samples is None:
        return None, None
    finite = np.asarray(samples, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    if finite.size < 2:
        return None, None
    return float(finite.std(ddof=1)), percentile_interval(finite)


def attach(result: Score, samples: BootstrapSamples | None) -> Score:
    """Set ``error``, ``ci95``, ``ceiling_error``, ``ceiling_ci95`` and ``error_reference`` on ``result`` (in place).

    The score's value is not touched. See the module docstring for what each means. The inputs the
    bootstrap needed (:data:`BOOTSTRAP_INPUTS`) are removed, so the score stays small to store or send.
    """
    result.attrs["error_reference"] = result.attrs.get("error")
    error, ci95 = _spread(None if samples is None else samples.score)
    result.attrs["error"], result.attrs["ci95"] = error, ci95
    ceiling = result.attrs.get("ceiling")
    if samples is not None and samples.ceiling is not None:
        result.attrs["ceiling_error"], result.attrs["ceiling_ci95"] = _spread(samples.ceiling)
    elif samples is not None and ceiling is not None and getattr(ceiling, "ndim", 0) == 0:
        value = float(ceiling)  # a fixed ceiling (none, or from other data): no sampling uncertainty here
        result.attrs["ceiling_error"], result.attrs["ceiling_ci95"] = 0.0, (value, value)
    else:
        result.attrs["ceiling_error"], result.attrs["ceiling_ci95"] = None, None
    if result.attrs["ceiling_error"] is not None and getattr(ceiling, "ndim", 1) == 0 and hasattr(ceiling, "attrs"):
        # ``score.attrs["ceiling"]`` prints and reports the same spread as the CLI: a copy (the benchmark keeps
        # its cached ceiling) whose ``error`` is the bootstrap one, its own kept as ``error_reference``
        ceiling = ceiling.copy()
        ceiling.attrs["error_reference"] = ceiling.attrs.get("error")
        ceiling.attrs["error"] = result.attrs["ceiling_error"]
        ceiling.attrs["ci95"] = result.attrs["ceiling_ci95"]
        result.attrs["ceiling"] = ceiling
    if samples is not None:
        result.attrs["bootstrap_unit"] = samples.unit
    # what the benchmarks kept only for the bootstrap (answers, model RDM, held-out predictions)
    for holder in (result, result.attrs.get("raw")):
        for name in BOOTSTRAP_INPUTS:
            getattr(holder, "attrs", {}).pop(name, None)
    return result
