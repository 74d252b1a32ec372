"""The run key: what names a pair's computation, so that a run skips the pairs it has recorded.

A pair is *already done* when a successful outcome in the run's store (:mod:`brainscore.results.records`)
carries the same ``run_key``: a hash of the model and its arguments, the benchmark and its version,
the bootstrap's settings, the package version and the code that computes the score (:func:`run_key`).
``brainscore score`` and ``brainscore run`` record it and look it up alike, so either reuses the other's
record; ``--rerun`` ignores it.
"""
from __future__ import annotations

from typing import Any

from brainscore.caching import content_key
from brainscore.caching.code import code_hash


def run_key(model: str, benchmark: str, benchmark_version: Any, model_kwargs: dict[str, Any],
            bootstrap: int = 1000, bootstrap_seed: int = 0) -> str:
    """sha256 naming a pair's computation (not its timing): equal keys mean a recorded score can be reused.

    The one key of ``brainscore run`` and ``brainscore score`` (each finds the other's records with it):
    the model and its factory arguments (``region_layer_map`` of ``--layer``), the benchmark and its
    version, the bootstrap's resamples and seed (:func:`brainscore.scoring.job.score`'s defaults, 1000
    and 0, unless ``--bootstrap`` says otherwise), the package version and the code that computes the
    score. The device is not in it: it decides where a score is computed, never which score it is.
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        package = version("brainscore")
    except PackageNotFoundError:
        package = "unknown"
    # the device (not a model argument: Pair.device) never changes the score, so it is not in the key
    return content_key(kind="run", model=model, benchmark=benchmark, benchmark_version=benchmark_version,
                       model_kwargs=dict(model_kwargs), package=package, code=_code(model, benchmark),
                       bootstrap=[int(bootstrap), int(bootstrap_seed)])


def _code(model: str, benchmark: str) -> str:
    """Hash of the code that computes the pair's score: the job, the benchmark classes, model commitment,
    and the plugins that declare the model and the benchmark (never a version bumped by hand)."""
    from brainscore import registry

    plugins = [module for module in (registry.declaring_plugin("model", model),
                                     registry.declaring_plugin("benchmark", benchmark)) if module]
    return code_hash("brainscore.scoring.job", "brainscore.benchmarks.neural", "brainscore.benchmarks.rsa",
                     "brainscore.benchmarks.behavioral", "brainscore.benchmarks.properties",
                     "brainscore.models.commitment", *plugins)
