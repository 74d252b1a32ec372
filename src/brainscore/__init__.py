"""brainscore: how brain-like is a computer-vision model?

Scores models against primate neural recordings and behaviour with standard benchmarks
(Schrimpf et al. 2018, "Brain-Score: Which Artificial Neural Network for Object Recognition is
most Brain-Like?"; Schrimpf et al. 2020, Neuron). Each score runs from 0 (not aligned) to 1
(aligned at the data's noise ceiling).

>>> import brainscore
>>> score = brainscore.score("efficientnet-lite0", "Cowley2026.210325.V4-pls")  # doctest: +SKIP
"""
from __future__ import annotations

import importlib
import os

# HDF5's own file locks (flock) are off in every brainscore process unless the user set them: every netCDF file
# brainscore writes appears whole by a rename (brainscore.data.io.write_netcdf) and is never written in place, and
# a lock another process took on a shared cache file made a reader fail with "unable to lock file, errno = 11"
# (seen in CI); network file systems of clusters often refuse such locks too. Read by HDF5 once, when h5py first
# loads it, so it is set before anything imports h5py.
os.environ.setdefault("HDF5_USE_FILE_LOCKING", "FALSE")

# name -> module that defines it; imported on first use (module __getattr__, PEP 562), so that
# `import brainscore` and the command line start in milliseconds, not the seconds that xarray,
# pandas and torch take
_LAZY = {
    **{name: "brainscore.api" for name in (
        "score", "load_dataset", "load_stimulus_set", "load_metric", "load_ceiling", "load_benchmark", "load_model",
        "list_datasets", "list_stimulus_sets", "list_metrics", "list_ceilings", "list_benchmarks", "list_models")},
    **{name: "brainscore.data" for name in (
        "StimulusSet", "DataAssembly", "NeuroidAssembly", "BehavioralAssembly", "PropertiesAssembly")},
    **{name: "brainscore.errors" for name in (
        "BrainScoreError", "UnknownIdentifierError", "DataNotFoundError", "HashMismatchError", "AlignmentError",
        "ValidationError")},
    "Score": "brainscore.metrics.score",
    # the 2019 README's names (the reference's API, issue 21)
    "get_assembly": "brainscore.legacy", "get_stimulus_set": "brainscore.legacy",
}

__all__ = ["score", "load_dataset", "load_stimulus_set", "load_metric", "load_ceiling", "load_benchmark",
           "load_model", "leaderboard", "list_datasets", "list_stimulus_sets", "list_metrics", "list_ceilings",
           "list_benchmarks", "list_models", "StimulusSet", "DataAssembly", "NeuroidAssembly",
           "BehavioralAssembly", "PropertiesAssembly", "Score", "get_assembly", "get_stimulus_set",
           "BrainScoreError", "UnknownIdentifierError", "DataNotFoundError", "HashMismatchError", "AlignmentError", "ValidationError", "__version__"]


def __getattr__(name: str):
    """Import a documented name's module on first use (PEP 562)."""
    if name == "__version__":
        from brainscore.config import package_version

        value = package_version()
    elif name == "leaderboard":  # a callable package: brainscore.leaderboard() -> DataFrame
        value = importlib.import_module("brainscore.leaderboard")
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module 'brainscore' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
