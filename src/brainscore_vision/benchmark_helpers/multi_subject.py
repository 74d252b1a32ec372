"""Benchmarks that average child benchmarks over subjects or folds, under the reference's names.

Some data sets record each subject on their own stimuli, or on disjoint voxels: one regression over all
subjects at once would mix them (a stimulus row holds only one subject's voxels). The score is then
computed **per subject** and averaged, and a cross-validated benchmark likewise averages its folds:

- :class:`MultiSubjectNeuralBenchmark` ``(identifier, subjects, per_subject_factory)``: one child benchmark
  per subject, built by ``per_subject_factory(subject)`` when it is needed and released right after (one
  child's data in memory at a time). Score = the mean of the children's (ceiled) scores; ceiling = the mean
  of their ceilings; ``attrs['raw']`` = the mean of their raw scores; per-subject detail in
  ``attrs['raw_subjects']`` (a DataArray over ``subject``), ``attrs[<subject>]`` (each child's Score),
  ``attrs['sem_subjects']`` (standard deviation over subjects, ``ddof=1``, over sqrt(n)); ``attrs['error']``
  = bootstrap over subjects (:func:`~brainscore_vision.metric_helpers.bootstrap_error.attach_error`,
  :data:`WRAPPER_N_BOOTSTRAP` resamples, seed 0), or NaN with a reason for a single subject.
- :class:`KFoldNeuralBenchmark` ``(identifier, n_folds, fold_factory)``: the same over folds
  ``fold_factory(0) ... fold_factory(n_folds - 1)`` (``attrs['raw_folds']``, ``attrs['folds']``,
  ``attrs['sem_folds']``). :func:`kfold_factory` builds such a factory from one assembly with
  ``brainscore``'s shuffled K folds over stimuli (:func:`brainscore.metrics.splits.kfold`,
  scikit-learn's ``KFold(shuffle=True)`` membership).
- :func:`block_diagonal_concat`: per-subject ``presentation x neuroid`` slices stacked so that each
  subject fills its own diagonal block and every other cell is NaN.

Metadata (region, version, bibtex) are read from the first child, built once at construction without loading its
data; the time bins are read from it when first asked for (a child's ``time_bins`` may load its data).
A child's score that is not finite stops the aggregate with an error listing every child's score, rather
than averaging a NaN into a number (the reference averages it). ``preallocate_memory`` (the reference's
memory probe) is not provided: ``brainscore``'s runner sizes its work itself.
"""
from __future__ import annotations

import gc
import inspect
from typing import Any, Callable, Sequence

import numpy as np
import xarray as xr

from brainscore.errors import ValidationError
from brainscore.metrics.score import Score
from brainscore.metrics.splits import kfold

from brainscore_vision.benchmarks import BenchmarkBase
from brainscore_vision.metric_helpers.bootstrap_error import attach_error, declare_no_error

__all__ = ["MultiSubjectNeuralBenchmark", "KFoldNeuralBenchmark", "block_diagonal_concat", "kfold_factory",
           "WRAPPER_N_BOOTSTRAP"]

#: Bootstrap resamples of the per-subject (per-fold) scores behind an aggregate's ``error``.
WRAPPER_N_BOOTSTRAP = 200

#: attributes of the aggregate Score that a subject's name (``attrs[<subject>]``) must not overwrite
_RESERVED_ATTRIBUTES = frozenset({"raw", "ceiling", "error", "error_over", "n_bootstrap", "error_nan_reason",
                                  "raw_subjects", "sem_subjects", "folds", "raw_folds", "sem_folds"})
_HEAVY_ATTRIBUTES = ("_assembly", "_similarity_metric", "_ceiling_func", "_ceiling")


def _release(child: Any) -> None:
    """Drop the references a child benchmark holds to its data (``_assembly`` and its ceiling closures), so the
    memory is freed when the child goes out of scope. Attributes that cannot be set are left alone."""
    for name in _HEAVY_ATTRIBUTES:
        if hasattr(child, name):
            try:
                setattr(child, name, None)
            except (AttributeError, TypeError):
                pass


def _child_raw_scalar(child_score: Any) -> float:
    """The child's unceiled score as one number: the mean of ``attrs['raw']``; NaN when it has none (the
    aggregate's ``raw`` is then the mean over the children that have one)."""
    raw = getattr(child_score, "attrs", {}).get("raw")
    if raw is None:
        return float("nan")
    try:
        values = np.asarray(getattr(raw, "values", raw), dtype=float)
    except (TypeError, ValueError):
        return float("nan")
    return float(values.mean()) if values.size else float("nan")


def _sem(values: np.ndarray) -> float:
    return float(values.std(ddof=1) / np.sqrt(len(values))) if len(values) > 1 else 0.0


def _stored_time_bins(child: Any) -> Any:
    """The child's ``timebins`` where it is a stored value (not a property, which may load the child's data)."""
    value = inspect.getattr_static(child, "timebins", None)
    return None if isinstance(value, property) else value


def _child_time_bins(child: Any) -> Any:
    """The child's time bins: its stored ``timebins``, else its ``timebins`` / ``time_bins`` property (which may
    load its data), else None."""
    value = _stored_time_bins(child)
    if value is not None:
        return value
    for name in ("timebins", "time_bins"):
        value = getattr(child, name, None)
        if value is not None:
            return value
    return None


class _Aggregate(BenchmarkBase):
    """Mean of child benchmarks over units (subjects or folds), built one at a time by ``factory(unit)``."""

    _dim = "unit"
    _what = "unit"

    def __init__(self, identifier: str, units: Sequence[Any], factory: Callable[[Any], Any],
                 peak_aggregation: float = 1.0):
        if not callable(factory):
            raise TypeError(f"{type(self).__name__} {identifier!r}: the factory must be callable "
                            f"({self._what} -> benchmark); got {type(factory).__name__}")
        self._units = list(units)
        self._factory = factory
        self._peak_aggregation = float(peak_aggregation)
        sample = factory(self._units[0])
        region = getattr(sample, "region", None)
        version = getattr(sample, "version", 1)
        bibtex = getattr(sample, "bibtex", None) or ""
        # read now only where the child stores them: a property may load the child's data, which construction must
        # not (the data may be remote); else asked of the first child when first read (``timebins``)
        self._timebins = _stored_time_bins(sample)
        _release(sample)
        del sample
        gc.collect()
        super().__init__(identifier=identifier, ceiling_func=lambda: self._compute_ceiling(), version=version,
                         parent=region or "", bibtex=bibtex)
        self.region = region

    @property
    def timebins(self) -> Any:
        """The first child's time bins (``[(start, end)]`` ms), read from it when first needed."""
        if self._timebins is None:
            child = self._factory(self._units[0])
            try:
                self._timebins = _child_time_bins(child)
            finally:
                _release(child)
        return self._timebins

    @timebins.setter
    def timebins(self, value: Any) -> None:
        self._timebins = value

    def load_data(self) -> bool:
        """Load every child's data now, one child at a time (:meth:`brainscore.benchmarks.base.Benchmark.load_data`);
        whether every child found data to load."""
        loaded = True
        for _, child in self._children():
            load = getattr(child, "load_data", None)
            loaded &= bool(load()) if callable(load) else False
        return loaded

    def _children(self):
        """Each unit's child benchmark, built on demand and released once the caller is done with it."""
        for unit in self._units:
            child = self._factory(unit)
            try:
                yield unit, child
            finally:
                _release(child)
                del child
                gc.collect()

    def _over_units(self, values: np.ndarray, name: str | None = None) -> xr.DataArray:
        return xr.DataArray(values, dims=(self._dim,), coords={self._dim: self._units}, name=name)

    def _check_finite(self, values: np.ndarray, what: str) -> None:
        bad = [unit for unit, value in zip(self._units, values) if not np.isfinite(value)]
        if bad:
            listing = ", ".join(f"{unit}: {value!r}" for unit, value in zip(self._units, values.tolist()))
            raise ValidationError(f"{self.identifier}: the {what} of {self._what} {bad} is not a finite number, so "
                                  f"their mean would not be either ({listing}); fix or leave out that {self._what}")

    def _compute_ceiling(self) -> Score:
        values = np.array([float(child.ceiling) for _, child in self._children()], dtype=float)
        self._check_finite(values, "ceiling")
        ceiling = Score(float(values.mean()))
        ceiling.attrs[f"raw_{self._dim}s"] = self._over_units(values)
        ceiling.attrs["sem"] = ceiling.attrs["error"] = _sem(values)
        return ceiling

    def __call__(self, candidate: Any) -> Score:
        """Score ``candidate`` on every child in turn and average (see the module notes for the attrs).

        Raises
        ------
        ValidationError
            If a child's score or ceiling is not finite (the message lists every child's score).
        """
        scores, ceilings, raws = [], [], []
        for _, child in self._children():
            child_score = child(candidate)
            scores.append(child_score)
            ceilings.append(float(child.ceiling))
            raws.append(_child_raw_scalar(child_score))
        values = np.array([float(s) for s in scores], dtype=float)
        self._check_finite(values, "score")
        ceilings, raws = np.array(ceilings), np.array(raws)
        self._check_finite(ceilings, "ceiling")
        score = Score(float(values.mean()))
        per_unit = self._over_units(values, name=f"{self.identifier}_per_{self._dim}")
        finite_raws = raws[np.isfinite(raws)]
        if finite_raws.size:  # a scalar 'raw' first, so attach_error keeps it instead of the per-unit values
            score.attrs["raw"] = Score(float(finite_raws.mean()))
        score.attrs[f"raw_{self._dim}s"] = per_unit
        score.attrs[f"sem_{self._dim}s"] = _sem(values)
        ceiling = Score(float(ceilings.mean()))
        ceiling.attrs[f"raw_{self._dim}s"] = self._over_units(ceilings)
        ceiling.attrs["sem"] = ceiling.attrs["error"] = _sem(ceilings)
        score.attrs["ceiling"] = ceiling
        self._attach_children(score, scores)
        if len(values) > 1:
            return attach_error(score, per_unit, over=[self._dim], n_bootstrap=WRAPPER_N_BOOTSTRAP)
        return declare_no_error(score, reason=f"a single {self._what}: nothing to resample at this level")

    def _attach_children(self, score: Score, scores: list) -> None:
        raise NotImplementedError


class MultiSubjectNeuralBenchmark(_Aggregate):
    """The mean over subjects of one child benchmark per subject (see the module notes).

    Parameters
    ----------
    identifier : str
    subjects : sequence of str
        The subjects, in the order of ``attrs['raw_subjects']``; at least one.
    per_subject_factory : callable (subject) -> benchmark
        Builds one subject's benchmark (e.g. a ``TrainTestNeuralBenchmark`` on that subject's dense slice);
        called once at construction (for region, version, bibtex and time bins), then once per subject for the
        ceiling and once per subject for each scoring.
    peak_aggregation : float
        The reference's memory hint (children alive at once); kept as ``_peak_aggregation``, unused here.

    Raises
    ------
    ValueError
        If ``subjects`` is empty.
    TypeError
        If ``per_subject_factory`` is not callable.
    """

    _dim = "subject"
    _what = "subject"

    def __init__(self, identifier: str, subjects: Sequence[str], per_subject_factory: Callable[[str], Any],
                 peak_aggregation: float = 1.0):
        if isinstance(subjects, str) or not len(subjects):
            raise ValueError(f"MultiSubjectNeuralBenchmark {identifier!r} needs a non-empty sequence of subjects; "
                             f"got {subjects!r}")
        subjects = list(subjects)
        repeated = sorted({str(s) for s in subjects if subjects.count(s) > 1})
        if repeated:
            raise ValueError(f"MultiSubjectNeuralBenchmark {identifier!r}: subjects {repeated} are listed more than "
                             f"once (each would count twice in the mean); list each subject once")
        reserved = sorted({str(s) for s in subjects if str(s) in _RESERVED_ATTRIBUTES})
        if reserved:
            raise ValueError(f"MultiSubjectNeuralBenchmark {identifier!r}: subject names {reserved} are names of the "
                             f"score's own attributes (each subject's score is kept under its name); rename them")
        super().__init__(identifier, list(subjects), per_subject_factory, peak_aggregation)
        self._subjects = self._units

    def _attach_children(self, score: Score, scores: list) -> None:
        for subject, child_score in zip(self._units, scores):
            score.attrs[subject] = child_score


class KFoldNeuralBenchmark(_Aggregate):
    """The mean over folds of one child benchmark per fold (see the module notes).

    Parameters
    ----------
    identifier : str
    n_folds : int
        At least 1; the folds are ``0 .. n_folds - 1``.
    fold_factory : callable (int) -> benchmark
        Builds fold ``k``'s benchmark (e.g. from :func:`kfold_factory`).
    peak_aggregation : float
        As for :class:`MultiSubjectNeuralBenchmark`.

    Raises
    ------
    ValueError
        If ``n_folds`` < 1.
    """

    _dim = "fold"
    _what = "fold"

    def __init__(self, identifier: str, n_folds: int, fold_factory: Callable[[int], Any],
                 peak_aggregation: float = 1.0):
        if int(n_folds) < 1:
            raise ValueError(f"KFoldNeuralBenchmark {identifier!r} needs at least one fold; got n_folds={n_folds}")
        self._n_folds = int(n_folds)
        super().__init__(identifier, list(range(self._n_folds)), fold_factory, peak_aggregation)

    def _attach_children(self, score: Score, scores: list) -> None:
        score.attrs["folds"] = scores


def kfold_factory(assembly: Any, n_folds: int, build: Callable[[int, Any, Any], Any], split_coord: str = "stimulus_id",
                  random_state: int = 1) -> Callable[[int], Any]:
    """A ``fold_factory`` for :class:`KFoldNeuralBenchmark`: shuffled K folds over the values of ``split_coord``.

    The unique values of ``assembly[split_coord]`` (in order of first appearance) are split by
    :func:`brainscore.metrics.splits.kfold` (scikit-learn's ``KFold(shuffle=True, random_state)`` membership);
    every presentation whose value is in fold ``k``'s test part goes to the test assembly, the others to the
    train assembly, so repetitions of one stimulus never straddle train and test.

    Parameters
    ----------
    assembly : NeuroidAssembly
        ``presentation x neuroid``, with ``split_coord`` on ``presentation``.
    n_folds : int
        2 <= n_folds <= number of unique values.
    build : callable (fold, train_assembly, test_assembly) -> benchmark
    split_coord : str
    random_state : int

    Returns
    -------
    callable (int) -> benchmark

    Raises
    ------
    ValueError
        If ``split_coord`` is missing or ``n_folds`` is out of range (at construction, not at the first fold).
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


def _has_coord(assembly: Any, name: str) -> bool:
    try:
        assembly[name]
    except (KeyError, AttributeError, ValueError):
        return False
    return True


def block_diagonal_concat(slices: Sequence[Any],
                          presentation_coords: tuple[str, ...] = ("stimulus_id", "subject_id_pres", "repetition"),
                          neuroid_coords: tuple[str, ...] = ("subject_id", "region", "roi",
                                                             "voxel_index_in_brain_mask", "nc_4rep", "nc_12rep",
                                                             "nc_allrep")) -> Any:
    """Stack per-subject ``presentation x neuroid`` slices on the diagonal: subject ``i``'s rows hold values only
    in subject ``i``'s columns, NaN elsewhere.

    Parameters
    ----------
    slices : sequence of DataArray
        Each ``presentation x neuroid`` (other dims are refused).
    presentation_coords, neuroid_coords : tuple of str
        Coordinates concatenated along each dim (one-dimensional, in slice order); a name missing from any
        slice is left out of the result.

    Returns
    -------
    NeuroidAssembly
        Shape ``(sum of presentations, sum of neuroids)``; float (the slices' float dtype, else float32).

    Raises
    ------
    ValueError
        If ``slices`` is empty or a slice is not ``presentation x neuroid``.
    """
    from brainscore_core.supported_data_standards.brainio.assemblies import NeuroidAssembly

    slices = list(slices)
    if not slices:
        raise ValueError("block_diagonal_concat needs at least one slice")
    for i, part in enumerate(slices):
        if set(part.dims) != {"presentation", "neuroid"}:
            raise ValueError(f"slice {i} has dims {part.dims}; each slice must be presentation x neuroid")
    slices = [part.transpose("presentation", "neuroid") for part in slices]
    rows = np.cumsum([0] + [part.sizes["presentation"] for part in slices])
    columns = np.cumsum([0] + [part.sizes["neuroid"] for part in slices])
    dtype = slices[0].dtype if slices[0].dtype.kind == "f" else np.dtype(np.float32)
    data = np.full((rows[-1], columns[-1]), np.nan, dtype=dtype)
    for i, part in enumerate(slices):
        data[rows[i]:rows[i + 1], columns[i]:columns[i + 1]] = np.asarray(part.values)
    coords = {}
    for dim, names in (("presentation", presentation_coords), ("neuroid", neuroid_coords)):
        for name in names:
            if all(_has_coord(part, name) for part in slices):
                coords[name] = (dim, np.concatenate([np.asarray(part[name].values) for part in slices]))
    return NeuroidAssembly(xr.DataArray(data, dims=("presentation", "neuroid"), coords=coords, name="data"))
