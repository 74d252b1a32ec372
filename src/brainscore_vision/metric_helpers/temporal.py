"""Metrics and regressions over time bins: per time bin, or with time bins spanned as more presentations.

- :class:`PerTime` ``(metric)``: the metric on each time bin separately (``assembly.isel(time_bin=t)``),
  results stacked along ``time_bin`` with its ``time_bin_start``/``time_bin_end`` (ms).
- :class:`SpanTime` ``(metric)``: the time bins folded into the presentations (each (presentation,
  time bin) pair becomes one presentation), then the metric once.
- :class:`PerTimeRegression` / :class:`SpanTimeRegression` ``(regression)``: an
  :class:`~brainscore_vision.metric_helpers.xarray_utils.XarrayRegression` fitted per time bin, or once
  over the folded time bins; ``predict`` returns ``presentation x neuroid x time_bin``.

An assembly without a ``time_bin`` dim is passed through as one time bin.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import xarray as xr

from brainscore.errors import ValidationError

__all__ = ["PerTime", "SpanTime", "PerTimeRegression", "SpanTimeRegression"]

TIME_BIN = "time_bin"
_TIME_COORDS = ("time_bin_start", "time_bin_end")


def _time_coords(assembly: Any) -> dict[str, tuple[str, np.ndarray]]:
    return {name: (TIME_BIN, np.asarray(c.values)) for name, c in assembly.coords.items() if c.dims == (TIME_BIN,)}


def _time_bins(*assemblies: Any) -> int:
    sizes = {a.sizes[TIME_BIN] for a in assemblies if TIME_BIN in a.dims}
    if len(sizes) > 1:
        raise ValidationError(f"the assemblies have different numbers of time bins: {sorted(sizes)}")
    return sizes.pop() if sizes else 0


def _at(assembly: Any, t: int) -> Any:
    return assembly.isel({TIME_BIN: t}, drop=True) if TIME_BIN in assembly.dims else assembly


def _stack(results: list[Any], time_coords: dict) -> Any:
    """Per-time-bin results stacked along ``time_bin`` (dim last), with the time coordinates."""
    cls = type(results[0])
    stacked = xr.concat([xr.DataArray(r) for r in results], dim=TIME_BIN).assign_coords(time_coords)
    stacked = stacked.transpose(..., TIME_BIN)
    stacked.attrs = dict(getattr(results[0], "attrs", {}))
    return cls(stacked)


def _span(assembly: Any, presentation: str = "presentation") -> Any:
    """``presentation x ... x time_bin`` with the time bins folded into ``presentation`` (time bin coords kept
    as presentation coords)."""
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


def _unspan(assembly: Any, n_time: int, time_coords: dict, presentation: str = "presentation") -> Any:
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


class PerTime:
    """``metric`` applied to each time bin; results stacked along ``time_bin``.

    Parameters
    ----------
    metric : callable
        ``metric(*assemblies)`` on assemblies without a ``time_bin`` dim.
    """

    def __init__(self, metric: Callable[..., Any]):
        self._metric = metric

    def __call__(self, *assemblies: Any, **kwargs: Any) -> Any:
        n_time = _time_bins(*assemblies)
        if not n_time:
            return self._metric(*assemblies, **kwargs)
        time_coords = _time_coords(next(a for a in assemblies if TIME_BIN in a.dims))
        results = [self._metric(*[_at(a, t) for a in assemblies], **kwargs) for t in range(n_time)]
        return _stack(results, time_coords)


class SpanTime:
    """``metric`` applied once, with the time bins folded into the presentations (see the module notes)."""

    def __init__(self, metric: Callable[..., Any], presentation: str = "presentation"):
        self._metric, self._presentation = metric, presentation

    def __call__(self, *assemblies: Any, **kwargs: Any) -> Any:
        return self._metric(*[_span(a, self._presentation) for a in assemblies], **kwargs)


class PerTimeRegression:
    """One regression per time bin (``regression`` is copied for each, :func:`copy.deepcopy`).

    ``fit(source, target)`` fits bin ``t`` of the source to bin ``t`` of the target (a source without
    time bins is used for every target bin); ``predict(source)`` stacks the predictions along ``time_bin``.
    """

    def __init__(self, regression: Any):
        self._template = regression
        self._regressions: list[Any] = []
        self._time_coords: dict = {}

    def fit(self, source: Any, target: Any) -> None:
        import copy

        n_time = _time_bins(source, target) or 1
        self._time_coords = _time_coords(target if TIME_BIN in target.dims else source)
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
        """
        if not self._regressions:
            raise RuntimeError("PerTimeRegression.predict called before fit")
        if TIME_BIN in source.dims and source.sizes[TIME_BIN] != len(self._regressions):
            raise ValidationError(f"fitted on {len(self._regressions)} time bins, asked to predict "
                                  f"{source.sizes[TIME_BIN]}")
        predictions = [r.predict(_at(source, t)) for t, r in enumerate(self._regressions)]
        return _stack(predictions, self._time_coords)


class SpanTimeRegression:
    """One regression fitted on all time bins folded into the presentations; ``predict`` unfolds them again."""

    def __init__(self, regression: Any, presentation: str = "presentation"):
        self._regression, self._presentation = regression, presentation
        self._time_coords: dict = {}

    def fit(self, source: Any, target: Any) -> None:
        self._time_coords = _time_coords(target if TIME_BIN in target.dims else source)
        self._regression.fit(self._folded(source), self._folded(target))

    def _folded(self, assembly: Any) -> Any:
        spanned = _span(assembly, self._presentation)
        if TIME_BIN in assembly.dims:  # a (stimulus, time bin) pair identifies a folded presentation
            ids = np.asarray(spanned["stimulus_id"].values).astype(str)
            starts = np.asarray(spanned["time_bin_start"].values).astype(str)
            spanned = spanned.assign_coords(stimulus_id=(self._presentation, np.char.add(np.char.add(ids, "@"), starts)))
        return spanned

    def predict(self, source: Any) -> Any:
        """Predictions ``presentation x neuroid x time_bin``."""
        n_time = source.sizes.get(TIME_BIN, 0)
        prediction = self._regression.predict(self._folded(source))
        if not n_time:
            return prediction
        prediction = prediction.assign_coords(stimulus_id=(self._presentation, np.repeat(
            np.asarray(source["stimulus_id"].values), n_time)))
        return _unspan(prediction, n_time, _time_coords(source), self._presentation)
