"""Benchmarks that are the mean of child benchmarks, one per subject or one per cross-validation fold.

Some data sets record each subject on their own stimuli, or on disjoint voxels: one regression over all
subjects at once would mix them (a stimulus row holds only one subject's voxels). The score is then
computed **per subject** and averaged (as Brain-Score averages per-animal scores, Schrimpf et al. 2018),
and a cross-validated benchmark likewise averages its **folds** (K-fold cross-validation, Stone 1974):

- :class:`UnitMeanBenchmark` ``(identifier, units, factory, dim)``: one child benchmark per unit, built by
  ``factory(unit)`` when it is needed and released right after, so that one child's data are in memory at a
  time. :class:`SubjectMeanBenchmark` (dim ``subject``) and :class:`FoldMeanBenchmark` (dim ``fold``, units
  ``0 .. n_folds - 1``) are its two uses; :func:`kfold_benchmarks` builds a fold factory from one assembly
  (shuffled K folds over stimuli, scikit-learn's ``KFold(shuffle=True)`` membership).
- :func:`brainscore.data.assemblies.block_diagonal_concat` stacks per-subject slices into one assembly.

**The aggregate Score.** For units ``u_1 .. u_n`` along dim ``<dim>`` (``subject`` or ``fold``):

- its value: the mean of the children's (ceiled) scores;
- ``attrs['raw']``: a scalar Score, the mean of the children's unceiled scores (each child's ``attrs['raw']``
  averaged to one number; children without one are left out); where no child has one, the per-unit scores
  ``attrs['raw_<dim>s']`` (absent for a single unit);
- ``attrs['raw_<dim>s']``: the children's scores, a DataArray over ``<dim>`` (coordinate: the units);
- ``attrs['sem_<dim>s']``: their standard deviation (``ddof=1``) over ``sqrt(n)``; 0 for one unit;
- ``attrs['ceiling']``: a Score, the mean of the children's ceilings, with ``attrs['raw_<dim>s']`` (each
  child's ceiling over ``<dim>``) and ``attrs['sem']`` = ``attrs['error']`` (their SEM as above);
- ``attrs['error']``: the bootstrap error over units (Efron 1979; :func:`brainscore.metrics.bootstrap.attach_unit_error`
  over ``<dim>``, :data:`UNIT_N_BOOTSTRAP` resamples, seed 0), with ``attrs['error_over']`` ``[<dim>]``
  and ``attrs['n_bootstrap']``; for a single unit, NaN with ``attrs['error_nan_reason']``
  (:func:`brainscore.metrics.bootstrap.declare_no_error`);
- the children's own Scores: each under its subject's name (``attrs[<subject>]``) for
  :class:`SubjectMeanBenchmark`, as a list ``attrs['<dim>s']`` otherwise (``attrs['folds']``).

**Finite check.** A child's score or ceiling that is not a finite number stops the aggregate with a
:class:`~brainscore.errors.ValidationError` naming the units at fault and listing every child's value
(``"<identifier>: the score of subject ['b'] is not a finite number, so their mean would not be either
(a: 0.4, b: nan); fix or leave out that subject"``), rather than averaging a NaN into a number.

**Metadata and ceiling.** ``region``, ``version``, ``bibtex``, ``score_range`` (and ``parent`` = the region)
are read from the first child, built once at construction and released without reading its data; its time
bins are read then only where the child stores them as a value, else when first asked for
(:attr:`UnitMeanBenchmark.time_bins`; a child's property may load its data). The ceiling is the mean of the
children's ceilings, computed when first asked for and kept in memory by the benchmark object (per metric
device, as :class:`~brainscore.benchmarks.base.BenchmarkBase`'s): not cached on disk, since which data the
children read is known only to them (each child caches its own ceiling as it does alone). Called with
``device=`` (:func:`~brainscore.benchmarks.base.takes_device`), the children score inside that metric device's
context; the children are called as ``child(candidate)``, so a child of another package need not take one.
"""
from __future__ import annotations

import gc
import inspect
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import xarray as xr

from brainscore.benchmarks.base import BenchmarkBase, takes_device
from brainscore.errors import ValidationError
from brainscore.metrics.bootstrap import attach_unit_error, declare_no_error
from brainscore.metrics.device import current as metric_device
from brainscore.metrics.score import Score
from brainscore.metrics.splits import kfold

__all__ = ["UnitMeanBenchmark", "SubjectMeanBenchmark", "FoldMeanBenchmark", "kfold_benchmarks", "UNIT_N_BOOTSTRAP",
           "RESERVED_ATTRIBUTES", "child_raw_value", "standard_error", "release_child"]

#: Bootstrap resamples of the per-unit scores behind an aggregate's ``attrs['error']``.
UNIT_N_BOOTSTRAP = 200

#: attributes of the aggregate Score that a subject's name (``attrs[<subject>]``) must not overwrite
RESERVED_ATTRIBUTES = frozenset({"raw", "ceiling", "error", "error_over", "n_bootstrap", "error_nan_reason",
                                 "raw_subjects", "sem_subjects", "folds", "raw_folds", "sem_folds"})


def child_raw_value(child_score: Any) -> float:
    """A child's unceiled score as one number: the mean of its ``attrs['raw']`` (a Score or array, e.g. per
    neuroid); NaN when it has none or it is not numeric."""
    raw = getattr(child_score, "attrs", {}).get("raw")
    if raw is None:
        return float("nan")
    try:
        values = np.asarray(getattr(raw, "values", raw), dtype=float)
    except (TypeError, ValueError):
        return float("nan")
    return float(values.mean()) if values.size else float("nan")


def standard_error(values: np.ndarray) -> float:
    """The standard error of the mean of ``values`` (1-d): ``std(ddof=1) / sqrt(n)``; 0.0 for a single value."""
    values = np.asarray(values, dtype=float)
    return float(values.std(ddof=1) / np.sqrt(len(values))) if len(values) > 1 else 0.0


def release_child(child: Any, attributes: Sequence[str]) -> None:
    """Set each of ``attributes`` of ``child`` (a benchmark done with) to None, so that the data it references are
    freed even while something else still holds ``child``; an attribute it lacks, or that cannot be set, is left
    alone."""
    for name in attributes:
        if hasattr(child, name):
            try:
                setattr(child, name, None)
            except (AttributeError, TypeError):
                pass


def _stored(child: Any, names: Sequence[str]) -> Any:
    """The first of ``names`` that ``child`` stores as a value (not a property, which may load its data), or None."""
    for name in names:
        value = inspect.getattr_static(child, name, None)
        if value is not None and not isinstance(value, property):
            return value
    return None


class UnitMeanBenchmark(BenchmarkBase):
    """The mean of child benchmarks over units (subjects, folds), built one at a time (see the module notes).

    Parameters
    ----------
    identifier : str
    units : sequence
        The units, in the order of ``attrs['raw_<dim>s']``; at least one.
    factory : callable (unit) -> Benchmark
        Builds one unit's benchmark; called once at construction (for the metadata), then once per unit for
        the ceiling, once per unit for each score and for :meth:`load_data`. A child needs a ``ceiling`` and
        ``__call__(candidate)``; ``region``, ``version``, ``bibtex``, ``score_range`` and time bins are read
        from the first where it has them.
    dim : str
        The name of the units' dim in the Score's attrs.

    Attributes
    ----------
    units : list
    dim : str
    region : str or None
        The first child's.
    released_attributes : tuple of str
        Attributes of a child set to None once it has been used, so that its data are freed even if something
        else (e.g. the factory's closure) still holds the child; empty here (a child no longer referenced is
        freed by the garbage collector).
    n_bootstrap : int
        Resamples of the error over units (:data:`UNIT_N_BOOTSTRAP`).

    Raises
    ------
    TypeError
        If ``factory`` is not callable.
    ValueError
        If ``units`` is empty.
    """

    released_attributes: tuple[str, ...] = ()
    n_bootstrap: int = UNIT_N_BOOTSTRAP

    def __init__(self, identifier: str, units: Sequence[Any], factory: Callable[[Any], Any], dim: str = "unit"):
        if not callable(factory):
            raise TypeError(f"{type(self).__name__} {identifier!r}: the factory must be callable "
                            f"({dim} -> benchmark); got {type(factory).__name__}")
        self.units = list(units)
        if not self.units:
            raise ValueError(f"{type(self).__name__} {identifier!r} needs at least one {dim}")
        self.dim = dim
        self._factory = factory
        sample = factory(self.units[0])
        region = getattr(sample, "region", None)
        version = getattr(sample, "version", 1)
        bibtex = getattr(sample, "bibtex", None) or ""
        self.score_range = tuple(getattr(sample, "score_range", type(self).score_range))
        self._time_bins = _stored(sample, ("timebins", "time_bins"))
        self._release(sample)
        del sample
        gc.collect()
        super().__init__(identifier=identifier, version=version, ceiling_func=self.mean_ceiling,
                         parent=region or "", bibtex=bibtex)
        self.region = region

    @property
    def time_bins(self) -> Any:
        """The first child's time bins (``[(start, end)]`` in ms; None if it has none), read when first needed:
        its ``timebins`` or ``time_bins`` (a property of the child may load its data)."""
        if self._time_bins is None:
            child = self._factory(self.units[0])
            try:
                self._time_bins = _stored(child, ("timebins", "time_bins"))
                for name in ("timebins", "time_bins"):
                    if self._time_bins is None:
                        self._time_bins = getattr(child, name, None)
            finally:
                self._release(child)
        return self._time_bins

    @time_bins.setter
    def time_bins(self, value: Any) -> None:
        self._time_bins = value

    @property
    def ceiling(self) -> Score:
        """The mean of the children's ceilings (:meth:`mean_ceiling`), computed once per metric device and kept
        in memory (see the module notes)."""
        device = metric_device()
        if device not in self._ceilings:
            self._ceilings[device] = self.mean_ceiling()
        return self._ceilings[device]

    def load_data(self) -> bool:
        """Load every child's data now, one child at a time (:meth:`brainscore.benchmarks.base.Benchmark.load_data`);
        whether every child found data to load (a child without ``load_data`` counts as not)."""
        loaded = True
        for _, child in self.children():
            load = getattr(child, "load_data", None)
            loaded &= bool(load()) if callable(load) else False
        return loaded

    def _release(self, child: Any) -> None:
        release_child(child, self.released_attributes)

    def children(self) -> Iterator[tuple[Any, Any]]:
        """``(unit, child benchmark)`` for each unit in order, each built on demand and released (its
        :attr:`released_attributes` cleared, then garbage-collected) once the caller moves on."""
        for unit in self.units:
            child = self._factory(unit)
            try:
                yield unit, child
            finally:
                self._release(child)
                del child
                gc.collect()

    def over_units(self, values: np.ndarray, name: str | None = None) -> xr.DataArray:
        """``values`` (one per unit) as a DataArray over :attr:`dim`, with the units as its coordinate."""
        return xr.DataArray(values, dims=(self.dim,), coords={self.dim: self.units}, name=name)

    def check_finite(self, values: np.ndarray, what: str) -> None:
        """Raise the finite-check error (module notes) if a unit's ``what`` (``"score"``, ``"ceiling"``) is not
        finite.

        Raises
        ------
        ValidationError
            Naming the units at fault and listing every unit's value.
        """
        bad = [unit for unit, value in zip(self.units, values) if not np.isfinite(value)]
        if bad:
            listing = ", ".join(f"{unit}: {value!r}" for unit, value in zip(self.units, values.tolist()))
            raise ValidationError(f"{self.identifier}: the {what} of {self.dim} {bad} is not a finite number, so "
                                  f"their mean would not be either ({listing}); fix or leave out that {self.dim}")

    def _ceiling_of(self, values: np.ndarray) -> Score:
        self.check_finite(values, "ceiling")
        ceiling = Score(float(values.mean()))
        ceiling.attrs[f"raw_{self.dim}s"] = self.over_units(values)
        ceiling.attrs["sem"] = ceiling.attrs["error"] = standard_error(values)
        return ceiling

    def mean_ceiling(self) -> Score:
        """The mean of the children's ceilings, computed now (each child built in turn), with ``attrs``
        ``raw_<dim>s`` and ``sem`` = ``error``.

        Raises
        ------
        ValidationError
            If a child's ceiling is not finite.
        """
        return self._ceiling_of(np.array([float(child.ceiling) for _, child in self.children()], dtype=float))

    @takes_device
    def __call__(self, candidate: Any) -> Score:
        """Score ``candidate`` on every child in turn and average (see the module notes for the attrs).

        ``device`` (keyword, :func:`~brainscore.benchmarks.base.takes_device`): where the children's metrics
        and ceilings compute.

        Raises
        ------
        ValidationError
            If a child's score or ceiling is not finite (the message lists every child's value).
        """
        scores, ceilings, raws = [], [], []
        for _, child in self.children():
            child_score = child(candidate)
            scores.append(child_score)
            ceilings.append(float(child.ceiling))
            raws.append(child_raw_value(child_score))
        values = np.array([float(s) for s in scores], dtype=float)
        self.check_finite(values, "score")
        raws = np.array(raws)
        ceiling = self._ceiling_of(np.array(ceilings))
        score = Score(float(values.mean()))
        per_unit = self.over_units(values, name=f"{self.identifier}_per_{self.dim}")
        finite_raws = raws[np.isfinite(raws)]
        if finite_raws.size:  # a scalar 'raw' first, so attach_unit_error keeps it instead of the per-unit values
            score.attrs["raw"] = Score(float(finite_raws.mean()))
        score.attrs[f"raw_{self.dim}s"] = per_unit
        score.attrs[f"sem_{self.dim}s"] = standard_error(values)
        score.attrs["ceiling"] = ceiling
        self.keep_child_scores(score, scores)
        if len(values) > 1:
            return attach_unit_error(score, per_unit, over=[self.dim], n_bootstrap=self.n_bootstrap)
        return declare_no_error(score, reason=f"a single {self.dim}: nothing to resample at this level")

    def keep_child_scores(self, score: Score, scores: list) -> None:
        """Keep the children's Scores in ``score.attrs``: here as the list ``attrs['<dim>s']``."""
        score.attrs[f"{self.dim}s"] = scores


class SubjectMeanBenchmark(UnitMeanBenchmark):
    """The mean over subjects of one child benchmark per subject (see the module notes); each child's Score is
    kept under its subject's name, ``attrs[<subject>]``.

    Parameters
    ----------
    identifier : str
    subjects : sequence of str
        At least one, each once, none named as an attribute of the Score (:data:`RESERVED_ATTRIBUTES`).
    factory : callable (subject) -> Benchmark
        E.g. a train/test benchmark on that subject's slice of the data.

    Raises
    ------
    ValueError
        If ``subjects`` is empty (or a plain string), lists a subject twice, or names a reserved attribute.
    TypeError
        If ``factory`` is not callable.
    """

    def __init__(self, identifier: str, subjects: Sequence[str], factory: Callable[[str], Any]):
        name = type(self).__name__
        if isinstance(subjects, str) or not len(subjects):
            raise ValueError(f"{name} {identifier!r} needs a non-empty sequence of subjects; got {subjects!r}")
        subjects = list(subjects)
        repeated = sorted({str(s) for s in subjects if subjects.count(s) > 1})
        if repeated:
            raise ValueError(f"{name} {identifier!r}: subjects {repeated} are listed more than once (each would "
                             f"count twice in the mean); list each subject once")
        reserved = sorted({str(s) for s in subjects if str(s) in RESERVED_ATTRIBUTES})
        if reserved:
            raise ValueError(f"{name} {identifier!r}: subject names {reserved} are names of the score's own "
                             f"attributes (each subject's score is kept under its name); rename them")
        super().__init__(identifier, subjects, factory, dim="subject")

    def keep_child_scores(self, score: Score, scores: list) -> None:
        """Keep each child's Score under its subject's name, ``attrs[<subject>]``."""
        for subject, child_score in zip(self.units, scores):
            score.attrs[subject] = child_score


class FoldMeanBenchmark(UnitMeanBenchmark):
    """The mean over cross-validation folds of one child benchmark per fold (see the module notes); the
    children's Scores are the list ``attrs['folds']``.

    Parameters
    ----------
    identifier : str
    n_folds : int
        At least 1; the folds are ``0 .. n_folds - 1``.
    factory : callable (int) -> Benchmark
        Builds fold ``k``'s benchmark, e.g. :func:`kfold_benchmarks`.

    Raises
    ------
    ValueError
        If ``n_folds`` < 1.
    """

    def __init__(self, identifier: str, n_folds: int, factory: Callable[[int], Any]):
        if int(n_folds) < 1:
            raise ValueError(f"{type(self).__name__} {identifier!r} needs at least one fold; got n_folds={n_folds}")
        self.n_folds = int(n_folds)
        super().__init__(identifier, list(range(self.n_folds)), factory, dim="fold")


def kfold_benchmarks(assembly: Any, n_folds: int, build: Callable[[int, Any, Any], Any],
                     split_coord: str = "stimulus_id", random_state: int = 1) -> Callable[[int], Any]:
    """A factory of fold benchmarks for :class:`FoldMeanBenchmark`: shuffled K folds over the values of
    ``split_coord``.

    The unique values of ``assembly[split_coord]`` (in order of first appearance) are split by
    :func:`brainscore.metrics.splits.kfold` (scikit-learn's ``KFold(shuffle=True, random_state)`` membership);
    every presentation whose value is in fold ``k``'s test part goes to the test assembly, the others to the
    train assembly, so repetitions of one stimulus never straddle train and test.

    Parameters
    ----------
    assembly : NeuroidAssembly
        ``presentation x neuroid``, with ``split_coord`` on ``presentation``.
    n_folds : int
        2 <= n_folds <= the number of unique values.
    build : callable (fold, train_assembly, test_assembly) -> Benchmark
    split_coord : str
    random_state : int
        Seed of the shuffle (the reference's default, 1).

    Returns
    -------
    callable (int) -> Benchmark
        ``factory(k)`` = ``build(k, train, test)``, the assemblies selected from ``assembly`` (``isel``, order kept).

    Raises
    ------
    ValueError
        If ``split_coord`` is missing or ``n_folds`` is out of range (here, not at the first fold), or (from the
        factory) if fold ``k`` does not exist.
    """
    if split_coord not in assembly.coords:
        raise ValueError(f"cannot split over {split_coord!r}: not a coordinate of the assembly "
                         f"(coordinates: {sorted(map(str, assembly.coords))})")
    labels = np.asarray(assembly[split_coord].values)
    _, first = np.unique(labels, return_index=True)
    values = labels[np.sort(first)]
    folds = kfold(len(values), int(n_folds), random_state=random_state)

    def factory(k: int) -> Any:
        if not 0 <= int(k) < len(folds):
            raise ValueError(f"fold {k} does not exist: there are {len(folds)} folds (0 .. {len(folds) - 1})")
        is_test = np.isin(labels, values[folds[int(k)][1]])
        train = assembly.isel(presentation=np.flatnonzero(~is_test))
        test = assembly.isel(presentation=np.flatnonzero(is_test))
        return build(int(k), train, test)

    return factory
