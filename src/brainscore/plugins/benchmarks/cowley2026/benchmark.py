"""Construction of the Cowley 2026 benchmarks (settings in ``__init__``)."""
from __future__ import annotations

from brainscore.registry import load_ceiling, load_dataset, load_metric
from brainscore.benchmarks.neural import NeuralBenchmark
from brainscore.data.assemblies import DataAssembly
from brainscore.metrics.score import Score

from . import BIBTEX

VISUAL_DEGREES = 11.2
NUMBER_OF_TRIALS = 14
VERSION = 1


def even_odd_ceiling(assembly: DataAssembly) -> Score:
    """Internal consistency over even/odd repetition halves (``repetition % 2``), as the reference."""
    return load_ceiling("internal_consistency")(_even_odd(assembly))


def _even_odd(assembly: DataAssembly) -> DataAssembly:
    return assembly.assign_coords(repetition=("presentation", assembly["repetition"].values % 2))


def _even_odd_bootstrap(assembly: DataAssembly, weights, stimulus_ids):
    """The even/odd ceiling on bootstrap resamples of the stimuli (see ``InternalConsistency.bootstrap``)."""
    return load_ceiling("internal_consistency").bootstrap(_even_odd(assembly), weights, stimulus_ids)


even_odd_ceiling.bootstrap = _even_odd_bootstrap


def cowley_benchmark(session: str, ceiled: bool) -> NeuralBenchmark:
    """The V4 PLS benchmark of one Cowley 2026 session; ``ceiled=False`` where only averages exist."""
    return NeuralBenchmark(
        identifier=f"Cowley2026.{session}.V4-pls", version=VERSION,
        assembly=lambda: load_dataset(f"Cowley2026.{session}"),
        similarity_metric=load_metric("pls", crossvalidation_kwargs=dict(stratification_coord=None)),
        visual_degrees=VISUAL_DEGREES, number_of_trials=NUMBER_OF_TRIALS,
        ceiling_func=even_odd_ceiling if ceiled else None, region="V4", parent="V4", bibtex=BIBTEX)
