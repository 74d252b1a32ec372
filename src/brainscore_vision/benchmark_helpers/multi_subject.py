"""The reference's per-subject and K-fold aggregate benchmarks: names over
:mod:`brainscore.benchmarks.aggregate` (the Score's attrs, the finite check and the metadata are documented there).

As in the reference, these are ``brainscore_vision.benchmarks.BenchmarkBase`` objects: the ceiling is computed once
per object, not cached on disk; ``peak_aggregation`` (the reference's memory hint) is kept as
``_peak_aggregation`` and unused, and ``preallocate_memory`` (its memory probe) is not provided: ``brainscore``'s
runner sizes its work itself. ``_release`` and ``_child_raw_scalar``, private names the reference's ``laion_fmri``
imports, are kept.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from brainscore.benchmarks.aggregate import (UNIT_N_BOOTSTRAP, FoldMeanBenchmark, SubjectMeanBenchmark, child_raw_value,
                                             kfold_benchmarks, release_child)
from brainscore.data import assemblies

from brainscore_vision.benchmarks import BenchmarkBase

__all__ = ["MultiSubjectNeuralBenchmark", "KFoldNeuralBenchmark", "block_diagonal_concat", "kfold_factory",
           "WRAPPER_N_BOOTSTRAP"]

WRAPPER_N_BOOTSTRAP = UNIT_N_BOOTSTRAP  # resamples behind an aggregate's ``error``
_REFERENCE_DATA_ATTRIBUTES = ("_assembly", "_similarity_metric", "_ceiling_func", "_ceiling")  # released from a child
kfold_factory = kfold_benchmarks  # :func:`brainscore.benchmarks.aggregate.kfold_benchmarks`
_child_raw_scalar = child_raw_value  # :func:`brainscore.benchmarks.aggregate.child_raw_value`


def _release(child: Any) -> None:
    """The reference's ``_release``: :func:`brainscore.benchmarks.aggregate.release_child` of its data attributes."""
    release_child(child, _REFERENCE_DATA_ATTRIBUTES)


class _Reference:
    """What both reference classes add to the core aggregate: the reference base's ceiling (once per object), the
    reference's data attributes released from each child, and ``timebins``."""

    released_attributes = _REFERENCE_DATA_ATTRIBUTES
    ceiling = BenchmarkBase.ceiling

    @property
    def timebins(self) -> Any:
        """The reference's name of :attr:`brainscore.benchmarks.aggregate.UnitMeanBenchmark.time_bins`."""
        return self.time_bins

    @timebins.setter
    def timebins(self, value: Any) -> None:
        self.time_bins = value


class MultiSubjectNeuralBenchmark(_Reference, SubjectMeanBenchmark, BenchmarkBase):
    """The reference's ``MultiSubjectNeuralBenchmark``: :class:`brainscore.benchmarks.aggregate.SubjectMeanBenchmark`;
    the subjects are also ``_subjects``."""

    def __init__(self, identifier: str, subjects: Sequence[str], per_subject_factory: Callable[[str], Any],
                 peak_aggregation: float = 1.0):
        super().__init__(identifier, subjects, per_subject_factory)
        self._peak_aggregation = float(peak_aggregation)
        self._subjects = self.units


class KFoldNeuralBenchmark(_Reference, FoldMeanBenchmark, BenchmarkBase):
    """The reference's ``KFoldNeuralBenchmark``: :class:`brainscore.benchmarks.aggregate.FoldMeanBenchmark`; the
    number of folds is also ``_n_folds``."""

    def __init__(self, identifier: str, n_folds: int, fold_factory: Callable[[int], Any],
                 peak_aggregation: float = 1.0):
        super().__init__(identifier, n_folds, fold_factory)
        self._peak_aggregation = float(peak_aggregation)
        self._n_folds = self.n_folds


def block_diagonal_concat(slices: Sequence[Any],
                          presentation_coords: tuple[str, ...] = ("stimulus_id", "subject_id_pres", "repetition"),
                          neuroid_coords: tuple[str, ...] = ("subject_id", "region", "roi", "voxel_index_in_brain_mask",
                                                             "nc_4rep", "nc_12rep", "nc_allrep")) -> Any:
    """The reference's ``block_diagonal_concat``: :func:`brainscore.data.assemblies.block_diagonal_concat` with the
    reference's (LAION-fMRI) coordinates by default, as the reference's ``NeuroidAssembly``."""
    from brainscore_core.supported_data_standards.brainio.assemblies import NeuroidAssembly

    return NeuroidAssembly(assemblies.block_diagonal_concat(slices, presentation_coords, neuroid_coords))
