"""The run key: what names a pair's computation, so that a run skips the pairs it has recorded.

A pair is *already done* when a successful outcome in the run's store (:mod:`brainscore.results.records`)
carries the same ``run_key``: a hash of the model and its arguments, the benchmark and its version,
the package version and the code that computes the score (:func:`run_key`). ``--rerun`` ignores this.
"""
from __future__ import annotations

from typing import Any

from brainscore.caching import content_key
from brainscore.caching.code import code_hash


def run_key(model: str, benchmark: str, benchmark_version: Any, model_kwargs: dict[str, Any]) -> str:
    """sha256 naming a pair's computation (not its timing): equal keys mean a recorded score can be reused."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        package = version("brainscore")
    except PackageNotFoundError:
        package = "unknown"
    # the device (not a model argument: Pair.device) never changes the score, so it is not in the key
    return content_key(kind="run", model=model, benchmark=benchmark, benchmark_version=benchmark_version,
                       model_kwargs=dict(model_kwargs), package=package, code=_code(model, benchmark))


def _code(model: str, benchmark: str) -> str:
    """Hash of the code that computes the pair's score: the job, the benchmark classes, model commitment,
    and the plugins that declare the model and the benchmark (never a version bumped by hand)."""
    from brainscore import registry

    plugins = [module for module in (registry.declaring_plugin("model", model),
                                     registry.declaring_plugin("benchmark", benchmark)) if module]
    return code_hash("brainscore.scoring.job", "brainscore.benchmarks.neural", "brainscore.benchmarks.rsa",
                     "brainscore.benchmarks.behavioral", "brainscore.benchmarks.properties",
                     "brainscore.models.commitment", *plugins)
