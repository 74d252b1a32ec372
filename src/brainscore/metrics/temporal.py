"""Metrics and regressions over time bins: per time bin, or with the time bins folded into the presentations.

- :class:`PerTimeBin` ``(metric)``: the metric on each time bin separately (``assembly.isel(time_bin=t)``),
  results stacked along ``time_bin`` with its ``time_bin_start``/``time_bin_end`` (ms).
- :class:`SpanTimeBins` ``(metric)``: the time bins folded into the presentations (each (presentation,
  time bin) pair becomes one presentation, :func:`fold_time_bins`), then the metric once.
- :class:`PerTimeBinRegression` / :class:`SpanTimeBinsRegression` ``(regression)``: a regression on assemblies
  (``fit(source, target)``, ``predict(source)``) fitted per time bin, or once over the folded time bins;
  ``predict`` returns ``presentation x neuroid x time_bin``.

An assembly without a ``time_bin`` dim is passed through as one time bin. These are the reference Brain-Score's
``PerTime``, ``SpanTime``, ``PerTimeRegression`` and ``SpanTimeRegression`` (``metric_helpers/temporal.py``).
"""
from __future__ import annotations

import copy
from typing import Any, Callable

import numpy as np
import xarray as xr

from brainscore.errors import ValidationError

__all__ = ["PerTimeBin", "SpanTimeBins", "PerTimeBinRegression", "SpanTimeBinsRegression", "fold_time_bins",
           "unfold_time_bins", "stack_time_bins", "time_bin_coords", "TIME_BIN"]

TIME_BIN = "time_bin"


def time_bin_coords(assembly: Any) -> dict[str, tuple[str, np.ndarray]]:
    """Every coordinate of ``assembly`` along ``time_bin`` only, as ``{name: ("time_bin", values)}``."""
    return {name: (TIME_BIN, np.asarray(c.values)) for name, c in assembly.coords.items() if c.dims == (TIME_BIN,)}


def _time_bins(*assemblies: Any) -> int:
    sizes = {a.sizes[TIME_BIN] for a in assemblies if TIME_BIN in a.dims}
    if len(sizes) > 1:
        raise ValidationError(f"the assemblies have different numbers of time bins: {sorted(sizes)}")
    return sizes.pop() if sizes else 0


def _at(assembly: Any, t: int) -> Any:
    return assembly.isel({TIME_BIN: t}, drop=True) if TIME_BIN in assembly.dims else assembly


def stack_time_bins(results: list[Any], time_coords: dict) -> Any:
    """Per-time-bin results (assemblies or Scores of one class) stacked along ``time_bin`` (dim last), with the time
    coordinates ``time_coords`` (as :func:`time_bin_coords` gives them) and the first result's attrs."""
    cls = type(results[0])
    stacked = xr.concat([xr.DataArray(r) for r in results], dim=TIME_BIN).assign_coords(time_coords)
    stacked = stacked.transpose(..., TIME_BIN)
    stacked.attrs = dict(getattr(results[0], "attrs", {}))
    return cls(stacked)


def fold_time_bins(assembly: Any, presentation: str = "presentation") -> Any:
    """``presentation x ... x time_bin`` as ``(presentation x time_bin) x ...``: each (presentation, time bin) pair
    one presentation (time bin fastest), the time bin coordinates kept as presentation coordinates. An assembly
    without ``time_bin`` is returned unchanged."""
    if TIME_BIN not in assembly.dims:
        return assembly
    n_time = assembly.sizes[TIME_BIN]
    other = [d for d in assembly.dims if d not in (presentation, TIME_BIN)]
    values = np.asarray(assembly.transpose(presentation, TIME_BIN, *other).values)
    values = values.reshape(assembly.sizes[presentation] * n_time, *values.shape[2:])
    coords = {}
    for name, c in assembly.coords.items():
        if c.dims == (presentation,):
            coords[name] = (presentation, np.repeat(np.asarray(c.values), n_time))
        elif c.dims == (TIME_BIN,):
            coords[name] = (presentation, np.tile(np.asarray(c.values), assembly.sizes[presentation]))
        elif len(c.dims) == 1 and c.dims[0] in other:
            coords[name] = (c.dims[0], np.asarray(c.values))
    return type(assembly)(values, dims=(presentation, *other), coords=coords)


def unfold_time_bins(assembly: Any, n_time: int, time_coords: dict, presentation: str = "presentation") -> Any:
    """The inverse of :func:`fold_time_bins`: ``(presentation x n_time) x ...`` as ``presentation x ... x time_bin``,
    with the time coordinates ``time_coords`` (the presentation coordinates of every ``n_time``-th row kept)."""
    other = [d for d in assembly.dims if d != presentation]
    values = np.asarray(assembly.transpose(presentation, *other).values)
    n = values.shape[0] // n_time
    values = np.moveaxis(values.reshape(n, n_time, *values.shape[1:]), 1, -1)
    coords = {name: (presentation, np.asarray(c.values)[::n_time]) for name, c in assembly.coords.items()
              if c.dims == (presentation,) and name not in time_coords}
    coords.update({name: (c.dims[0], np.asarray(c.values)) for name, c in assembly.coords.items()
                   if len(c.dims) == 1 and c.dims[0] in other})
    coords.update(time_coords)
    return type(assembly)(values, dims=(presentation, *other, TIME_BIN), coords=coords)


class PerTimeBin:
    """``metric`` applied to each time bin; results stacked along ``time_bin`` (:func:`stack_time_bins`).

    Parameters
    ----------
    metric : callable
        ``metric(*assemblies, **kwargs)`` on assemblies without a ``time_bin`` dim.

    ``__call__(*assemblies, **kwargs)`` raises :class:`~brainscore.errors.ValidationError` if the assemblies have
    different numbers of time bins; without any ``time_bin`` dim it is ``metric(*assemblies)``.
    """

    def __init__(self, metric: Callable[..., Any]):
        self._metric = metric

    def __call__(self, *assemblies: Any, **kwargs: Any) -> Any:
        n_time = _time_bins(*assemblies)
        if not n_time:
            return self._metric(*assemblies, **kwargs)
        time_coords = time_bin_coords(next(a for a in assemblies if TIME_BIN in a.dims))
        results = [self._metric(*[_at(a, t) for a in assemblies], **kwargs) for t in range(n_time)]
        return stack_time_bins(results, time_coords)


class SpanTimeBins:
    """``metric`` applied once, with the time bins folded into ``presentation`` (:func:`fold_time_bins`)."""

    def __init__(self, metric: Callable[..., Any], presentation: str = "presentation"):
        self._metric, self._presentation = metric, presentation

    def __call__(self, *assemblies: Any, **kwargs: Any) -> Any:
        return self._metric(*[fold_time_bins(a, self._presentation) for a in assemblies], **kwargs)


class PerTimeBinRegression:
    """One regression per time bin (``regression``, with ``fit(source, target)``/``predict(source)`` on
    assemblies, is copied for each, :func:`copy.deepcopy`).

    ``fit(source, target)`` fits bin ``t`` of the source to bin ``t`` of the target (a source without
    time bins is used for every target bin); ``predict(source)`` stacks the predictions along ``time_bin``.
    """

    def __init__(self, regression: Any):
        self._template = regression
        self._regressions: list[Any] = []
        self._time_coords: dict = {}

    def fit(self, source: Any, target: Any) -> None:
        """Fit one copy per time bin; ValidationError if the two have different numbers of time bins."""
        n_time = _time_bins(source, target) or 1
        self._time_coords = time_bin_coords(target if TIME_BIN in target.dims else source)
        self._regressions = []
        for t in range(n_time):
            regression = copy.deepcopy(self._template)
            regression.fit(_at(source, t), _at(target, t))
            self._regressions.append(regression)

    def predict(self, source: Any) -> Any:
        """Predictions ``presentation x neuroid x time_bin``.

        Raises
        ------
        RuntimeError
            If called before ``fit``.
        ValidationError
            If ``source`` has another number of time bins than the fit.
        """
        if not self._regressions:
            raise RuntimeError(f"{type(self).__name__}.predict called before fit")
        if TIME_BIN in source.dims and source.sizes[TIME_BIN] != len(self._regressions):
            raise ValidationError(f"fitted on {len(self._regressions)} time bins, asked to predict "
                                  f"{source.sizes[TIME_BIN]}")
        predictions = [r.predict(_at(source, t)) for t, r in enumerate(self._regressions)]
        return stack_time_bins(predictions, self._time_coords)


class SpanTimeBinsRegression:
    """One regression fitted on all time bins folded into the presentations (a folded presentation's
    ``stimulus_id`` is ``<stimulus_id>@<time_bin_start>``); ``predict`` unfolds them again."""

    def __init__(self, regression: Any, presentation: str = "presentation"):
        self._regression, self._presentation = regression, presentation
        self._time_coords: dict = {}

    def fit(self, source: Any, target: Any) -> None:
        """Fit the regression on the folded ``source`` and ``target``."""
        self._time_coords = time_bin_coords(target if TIME_BIN in target.dims else source)
        self._regression.fit(self._folded(source), self._folded(target))

    def _folded(self, assembly: Any) -> Any:
        spanned = fold_time_bins(assembly, self._presentation)
        if TIME_BIN in assembly.dims:  # a (stimulus, time bin) pair identifies a folded presentation
            ids = np.asarray(spanned["stimulus_id"].values).astype(str)
            starts = np.asarray(spanned["time_bin_start"].values).astype(str)
            spanned = spanned.assign_coords(stimulus_id=(self._presentation, np.char.add(np.char.add(ids, "@"), starts)))
        return spanned

    def predict(self, source: Any) -> Any:
        """Predictions ``presentation x neuroid x time_bin`` (as the regression's, without time bins in ``source``)."""
        n_time = source.sizes.get(TIME_BIN, 0)
        prediction = self._regression.predict(self._folded(source))
        if not n_time:
            return prediction
        prediction = prediction.assign_coords(stimulus_id=(self._presentation, np.repeat(
            np.asarray(source["stimulus_id"].values), n_time)))
        return unfold_time_bins(prediction, n_time, time_bin_coords(source), self._presentation)
