"""The reference's ``metric_helpers.transformations``: a metric applied to parts of the data (cross-validation splits,
divisions by coordinate values), then aggregated (docs/coming_from_brain_score.md, "The mapping, name by name").

Splits are :func:`brainscore.metrics.splits.assembly_splits` over the unique values of ``split_coord`` in the
target's order (the reference's shuffle splits: ``splits=10``, ``train_size=0.9``, seed 1, stratified by
``stratification_coord`` where the assembly has it); every presentation of a value goes to the same side, along
every dim ``split_coord`` lies on (an RDM's two). Per-split values are kept as ``raw`` (dim ``split``); the score is
their mean with ``error`` the standard error (:func:`brainscore.metrics.splits.mean_over_splits`).
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Generator, Sequence

import numpy as np
import xarray as xr

from brainscore.errors import ValidationError
from brainscore.metrics.splits import FIRST_SEEN_VALUES, SplitConfig, assembly_splits, mean_over_splits
from brainscore_core.metrics import Score
from brainscore_vision.metric_helpers import Defaults
from brainscore_vision.metric_helpers.xarray_utils import order_of

__all__ = ["Transformation", "CrossValidationSingle", "CrossValidation", "TestOnlyCrossValidation",
           "CartesianProduct", "apply_aggregate", "standard_error_of_the_mean"]


def standard_error_of_the_mean(values: xr.DataArray, dim: str) -> xr.DataArray:
    """std over ``dim`` (``ddof=0``) / sqrt(its length): :func:`brainscore.metrics.splits.mean_over_splits`'s error."""
    return mean_over_splits(values, dim)[1]


def apply_aggregate(aggregate_fnc: Callable[[Any], Any], values: Any) -> Score:
    """``aggregate_fnc(values)`` as a :class:`Score` whose ``attrs['raw']`` keeps ``values`` (and whose other
    attrs, e.g. ``error``, are those the aggregate set)."""
    score = aggregate_fnc(values)
    if not isinstance(score, Score):
        attrs = dict(getattr(score, "attrs", {}))
        score = Score(score)
        score.attrs.update(attrs)
    score.attrs["raw"] = values
    return score


def _mean_over_splits(values: xr.DataArray) -> Score:
    center, error = mean_over_splits(values, "split")
    score = Score(center)
    score.attrs["error"] = error
    return score


def _as_score(value: Any) -> Score:
    if isinstance(value, Score):
        return value
    if isinstance(value, xr.DataArray):
        return Score(value)
    return Score(np.asarray(value, dtype=float))


class Transformation:
    """Base of the transformations: ``__call__(*assemblies, apply=metric)`` runs :meth:`pipe`, feeding each
    part it yields to ``metric``, and returns the aggregate.

    :meth:`pipe` is a generator: it yields a tuple of the parts' assemblies; the caller ``send``\\ s
    the metric's result back and receives ``True`` once it was the last part; the next ``next`` gives
    the merged result.
    """

    def __call__(self, *assemblies: Any, apply: Callable[..., Any], aggregate: Callable | None = None, **kwargs: Any):
        generator = self.pipe(*assemblies)
        for parts in generator:
            done = generator.send(apply(*parts, **kwargs))
            if done:
                break
        result = next(generator)
        if not self.aggregates:
            return result
        # as the reference: the metric's own aggregate first (e.g. the median over neuroids of each split), then the
        # transformation's (the mean over splits, with its standard error), each keeping what it reduced as raw
        score = apply_aggregate(aggregate, result) if aggregate is not None else result
        return apply_aggregate(self.aggregate, score)

    aggregates = True

    def aggregate(self, values: Any) -> Score:
        """Mean over ``split`` with the standard error as ``error`` (dimensions other than ``split`` kept)."""
        return _mean_over_splits(values)

    def pipe(self, *assemblies: Any) -> Generator:
        raise NotImplementedError


def _merge_results(results: Sequence[Any], dim: str, values: Sequence[Any]) -> xr.DataArray:
    """Results of the parts, stacked along a new ``dim`` labelled ``values``."""
    arrays = [_as_score(r) for r in results]
    merged = xr.concat([xr.DataArray(a).drop_attrs() if hasattr(xr.DataArray, "drop_attrs") else xr.DataArray(a)
                        for a in arrays], dim=dim)
    return Score(merged.assign_coords({dim: list(values)}))


class _Split:
    """The splits of one cross-validation over the unique values of ``split_coord``."""

    def __init__(self, splits: int = 10, train_size: float | None = None, test_size: float | None = None,
                 split_coord: str = Defaults.stimulus_coord, stratification_coord: str | None = "object_name",
                 unique_split_values: bool = False, random_state: int = 1, kfold: bool = False,
                 preprocess_indices: Callable | None = None):
        if train_size is None and test_size is None:
            train_size = 0.9
        self.split_coord, self.stratification_coord = split_coord, stratification_coord
        self.splits, self.train_size, self.test_size = splits, train_size, test_size
        self.random_state, self.kfold = random_state, kfold
        self.preprocess_indices = preprocess_indices

    def indices(self, assembly: Any) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
        """(unique split values in ``assembly``'s order, list of (train, test) indices into them): brainscore's
        :func:`~brainscore.metrics.splits.assembly_splits` over first-seen values, stratified where it can be."""
        config = SplitConfig(splits=self.splits, train_size=self.train_size, test_size=self.test_size,
                             split_coord=self.split_coord, stratification_coord=self.stratification_coord,
                             kfold=self.kfold, random_state=self.random_state)
        return assembly_splits(assembly, config, over=FIRST_SEEN_VALUES, what="the assembly", stratify_if_present=True)

    def subset(self, assembly: Any, wanted: np.ndarray) -> Any:
        """The presentations of ``assembly`` whose ``split_coord`` is among ``wanted``, along every dim it lies on."""
        (dim,) = assembly[self.split_coord].dims
        index = np.flatnonzero(np.isin(np.asarray(assembly[self.split_coord].values), wanted))
        if assembly.dims.count(dim) == 1:
            return assembly.isel({dim: index})
        # a repeated dim (an RDM, presentation x presentation): subset both, keep the presentation coordinates
        positions = np.ix_(*[index if d == dim else np.arange(n) for d, n in zip(assembly.dims, assembly.shape)])
        coords = {name: (dim, np.asarray(c.values)[index]) for name, c in assembly.coords.items() if c.dims == (dim,)}
        return type(assembly)(np.asarray(assembly.values)[positions], dims=assembly.dims, coords=coords)


class CrossValidationSingle(Transformation):
    """``metric(train, test)`` on each split of one assembly (see the module notes for the splits).

    Parameters
    ----------
    splits, train_size, test_size, split_coord, stratification_coord, random_state, kfold
        As the reference's ``CrossValidationSingle`` (and :class:`~brainscore.metrics.splits.SplitConfig`).
    """

    def __init__(self, **kwargs: Any):
        self._split = _Split(**kwargs)

    def pipe(self, assembly: Any) -> Generator:
        values, folds = self._split.indices(assembly)
        results = []
        for i, (train, test) in enumerate(folds):
            result = yield (self._split.subset(assembly, values[train]), self._split.subset(assembly, values[test]))
            results.append(result)
            yield i == len(folds) - 1
        yield _merge_results(results, "split", range(len(results)))


class TestOnlyCrossValidation(CrossValidationSingle):
    """``metric(test)`` on the test part of each split of one assembly."""

    def pipe(self, assembly: Any) -> Generator:
        values, folds = self._split.indices(assembly)
        results = []
        for i, (_, test) in enumerate(folds):
            result = yield (self._split.subset(assembly, values[test]),)
            results.append(result)
            yield i == len(folds) - 1
        yield _merge_results(results, "split", range(len(results)))


class CrossValidation(Transformation):
    """``metric(train_source, train_target, test_source, test_target)`` on each split.

    Splits are drawn on the target's ``split_coord`` values; the source must hold the same values and
    is subset to the same ones (its order is its own: metrics align by ``stimulus_id``).
    """

    def __init__(self, **kwargs: Any):
        self._split = _Split(**kwargs)

    def pipe(self, source: Any, target: Any) -> Generator:
        values, folds = self._split.indices(target)
        source_values = np.unique(np.asarray(source[self._split.split_coord].values))
        order_of(source_values, values, self._split.split_coord)  # every target value is in the source
        results = []
        for i, (train, test) in enumerate(folds):
            parts = (self._split.subset(source, values[train]), self._split.subset(target, values[train]),
                     self._split.subset(source, values[test]), self._split.subset(target, values[test]))
            result = yield parts
            results.append(result)
            yield i == len(folds) - 1
        yield _merge_results(results, "split", range(len(results)))


class CartesianProduct(Transformation):
    """``metric`` on every combination of the values of the ``dividers`` coordinates, stacked along them.

    Parameters
    ----------
    dividers : sequence of str
        Coordinates (or dims) to divide by; none: the metric runs once on the whole assembly.

    A result's ``raw`` values that already carry a divider as a coordinate are concatenated along
    their own dim (the divider stays a coordinate there) instead of gaining a new dim.
    """

    aggregates = False

    def __init__(self, dividers: Sequence[str] = ()):
        self.dividers = list(dividers)

    def _divisions(self, assembly: Any) -> list[tuple[dict, Any]]:
        if not self.dividers:
            return [({}, assembly)]
        choices = []
        for divider in self.dividers:
            if divider not in assembly.coords:
                raise ValidationError(f"cannot divide by {divider!r}: the assembly has no such coordinate")
            choices.append(list(dict.fromkeys(np.asarray(assembly[divider].values).tolist())))
        divisions = []
        for combination in itertools.product(*choices):
            part = assembly
            for divider, value in zip(self.dividers, combination):
                (dim,) = part[divider].dims
                mask = np.asarray(part[divider].values) == value
                part = part.isel({dim: np.flatnonzero(mask)})
                if divider == dim or part.sizes[dim] == 1 and divider in part.dims:
                    part = part.squeeze(dim, drop=True) if divider == dim else part
            divisions.append((dict(zip(self.dividers, combination)), part))
        return divisions

    def pipe(self, *assemblies: Any) -> Generator:
        divisions = self._divisions(assemblies[0])
        results = []
        for i, (key, part) in enumerate(divisions):
            result = yield (part, *assemblies[1:])
            results.append((key, result))
            yield i == len(divisions) - 1
        yield self._merge(results)

    def _merge(self, results: list[tuple[dict, Any]]) -> Any:
        if not self.dividers:
            return results[0][1]
        scores = []
        for key, result in results:
            score = _as_score(result)
            raw = score.attrs.get("raw")
            score = score.expand_dims({d: [v] for d, v in key.items()})
            if raw is not None:
                score.attrs["raw"] = raw
            scores.append(score)
        merged = Score(xr.combine_by_coords([xr.DataArray(s).drop_attrs().rename("score").to_dataset()
                                             for s in scores])["score"])
        merged = merged.transpose(*self.dividers, ...)
        raws = [s.attrs["raw"] for s in scores if "raw" in s.attrs]
        if len(raws) == len(scores):
            merged.attrs["raw"] = self._merge_raw(raws, [k for k, _ in results])
        return merged

    def _merge_raw(self, raws: list[Any], keys: list[dict]) -> Any:
        first = raws[0]
        if all(divider in first.coords and divider not in first.dims for divider in self.dividers) and first.ndim == 1:
            (dim,) = first.dims
            merged = xr.concat([xr.DataArray(r) for r in raws], dim=dim)
            levels = [name for name, c in merged.coords.items() if c.dims == (dim,) and name != dim]
            return type(first)(merged.set_index({dim: levels}) if levels else merged)
        return type(first)(xr.concat([xr.DataArray(r).expand_dims({d: [v] for d, v in key.items()})
                                      for r, key in zip(raws, keys)], dim=self.dividers[0]))
