"""``PropertiesBenchmark`` with the reference's signature, on :class:`brainscore.benchmarks.properties.PropertiesBenchmark`.

Single-neuron property benchmarks (Marques, Schrimpf & DiCarlo 2021): the model's neuroids are
recorded on the experiment's stimuli, a property (surround suppression, orientation bandwidth,
...) is computed for each by ``neuronal_property``, and its distribution is compared with the
data's by ``similarity_metric`` (e.g. ``load_metric('ks_similarity', property_name=...)``); the
score is ``raw / ceiling`` (``ceil_score``).

Differences from ``brainscore``'s class, all in the signature:

- the stimuli default to the assembly's stimulus set (``assembly.stimulus_set``);
- ``neuronal_property`` is called with the keyword arguments it names among ``responses`` (the
  model's ``presentation x neuroid`` responses), ``stimuli`` / ``stimulus_set`` (the stimuli as
  placed on the model's screen) and ``model_identifier``; it returns a ``PropertiesAssembly``
  (``neuroid x neuronal_property``);
- ``ceiling_func`` may take the data assembly (``NeuronalPropertyCeiling(metric)``-style, e.g.
  ``load_ceiling('ks_similarity', property_name=...)``) or nothing;
- ``timebins`` (default ``[(70, 170)]``) and ``version`` (default 1) are keywords; ``visual_degrees``
  and ``number_of_trials`` are too, defaulting as the reference reads them from the data: the
  stimulus set's ``degrees`` column and the assembly's ``number_of_trials`` attribute (else 8
  degrees and 1 trial).

Not supported: a ``neuronal_property`` that needs ``baseline`` (the reference's Marques et al.
pipeline of receptive-field mapping and firing-rate calibration, which ``brainscore``'s own
Marques 2020 benchmarks implement); constructing such a benchmark raises a ``TypeError`` that says so.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

import numpy as np

from brainscore.benchmarks import properties as _properties
from brainscore.data.assemblies import DataAssembly
from brainscore.errors import ValidationError
from brainscore.plugins.benchmarks.marques2020 import properties as marques

from brainscore_vision.benchmark_helpers.neural_common import _REGIONS, _ceiling, _region
from brainscore_vision.utils import LazyLoad, unwrap

__all__ = ["PropertiesBenchmark"]

_ARGUMENTS = ("responses", "stimuli", "stimulus_set", "model_identifier")


class _PropertyFunction:
    """A reference-style ``neuronal_property`` called as ``brainscore`` calls it: ``f(responses, stimuli)``."""

    def __init__(self, func: Callable[..., Any], benchmark: "PropertiesBenchmark", identifier: str = ""):
        parameters = inspect.signature(func).parameters
        required = [name for name, p in parameters.items() if p.default is p.empty
                    and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        unknown = [name for name in required if name not in _ARGUMENTS]
        if unknown:
            hint = ""
            if "baseline" in unknown and _replaced_builtin(identifier):
                hint = (f" (the reference's calibrated blank responses: brainscore's own benchmark of this name "
                        f"computes them; your plugin folder replaces it, so load 'builtin:{identifier}')")
            elif "baseline" in unknown:
                hint = (" (the reference's calibrated blank responses: use brainscore's Marques 2020 benchmarks, "
                        "e.g. `brainscore list benchmarks 'Marques2020*'`, or compute the property from the responses)")
            raise TypeError(f"neuronal_property {getattr(func, '__qualname__', func)!r} needs arguments {unknown} "
                            f"that the benchmark cannot give; it gives {list(_ARGUMENTS)}{hint}")
        takes_all = any(p.kind == p.VAR_KEYWORD for p in parameters.values())
        self.names = [name for name in _ARGUMENTS if takes_all or name in parameters]
        self.func, self.benchmark = func, benchmark

    def __call__(self, responses, stimuli):
        given = {"responses": responses, "stimuli": stimuli, "stimulus_set": stimuli,
                 "model_identifier": self.benchmark.model_identifier}
        return self.func(**{name: given[name] for name in self.names})


def _replaced_builtin(identifier: str) -> bool:
    """Whether a plugin folder here replaces brainscore's built-in benchmark ``identifier`` (``builtin:IDENTIFIER``)."""
    if not identifier:
        return False
    from brainscore import registry

    return f"builtin:{identifier}" in registry.benchmarks.list(f"builtin:{identifier}")


class PropertiesBenchmark(_properties.PropertiesBenchmark):
    """Distribution of a single-neuron property, with the reference's signature (see the module notes).

    Parameters
    ----------
    identifier : str
    assembly : PropertiesAssembly, LazyLoad or callable
        The data's property values (``neuroid x neuronal_property``), with the stimuli in
        ``assembly.stimulus_set`` unless ``stimulus_set`` is given.
    neuronal_property : callable
        Computes the model's property values (see the module notes).
    similarity_metric : callable (model_properties, data_properties) -> Score
    timebins : sequence of (start, end) ms
    ceiling_func : callable, optional
    parent, bibtex : str
    version : int
    visual_degrees : float, optional
        Default: the stimulus set's ``degrees`` (one value), else 8.
    number_of_trials : int, optional
        Default: the assembly's ``attrs['number_of_trials']``, else 1.
    stimulus_set : StimulusSet, LazyLoad or callable, optional
    region : str, optional
        Default: the assembly's ``region`` coordinate, else ``parent``, else ``V1``.

    Raises
    ------
    TypeError
        If ``neuronal_property`` needs arguments the benchmark cannot give.
    """

    def __init__(self, identifier: str, assembly: Any, neuronal_property: Callable[..., Any],
                 similarity_metric: Callable, timebins: Sequence[tuple[int, int]] = ((70, 170),),
                 ceiling_func: Callable | None = None, parent: str | None = None, bibtex: str = "",
                 version: int = 1, visual_degrees: float | None = None, number_of_trials: int | None = None,
                 stimulus_set: Any = None, region: str | None = None):
        if region is None:  # the data's region, else a parent that is a region, else V1 (Marques et al.'s)
            has_region = (not isinstance(assembly, LazyLoad) and isinstance(assembly, DataAssembly)
                          and "region" in assembly.coords)
            region = _region(assembly, None, None) if has_region else (parent if parent in _REGIONS else "V1")
        self.model_identifier: str | None = None
        super().__init__(identifier=identifier, version=version, assembly=unwrap(assembly),
                         stimulus_set=unwrap(stimulus_set) if stimulus_set is not None else self._assembly_stimuli,
                         property_func=_PropertyFunction(neuronal_property, self, identifier),
                         similarity_metric=similarity_metric, ceiling_func=_ceiling(ceiling_func),
                         visual_degrees=visual_degrees, number_of_trials=number_of_trials, region=region,
                         parent=parent or region, bibtex=bibtex, time_bins=timebins)

    # brainscore's __init__ stores these two; the defaults are read from the data when first needed
    @property
    def visual_degrees(self) -> float:
        """Degrees of visual angle of the stimuli (given, else the stimulus set's ``degrees``, else 8)."""
        if self._given_visual_degrees is not None:
            return self._given_visual_degrees
        degrees = self.stimulus_set.get("degrees")
        values = np.unique(np.asarray(degrees, dtype=float)) if degrees is not None else []
        return float(values[0]) if len(values) == 1 else 8.0

    @visual_degrees.setter
    def visual_degrees(self, value) -> None:
        self._given_visual_degrees = None if value is None else float(value)

    @property
    def number_of_trials(self) -> int:
        """Presentations per stimulus (given, else the assembly's ``number_of_trials`` attribute, else 1)."""
        if self._given_number_of_trials is not None:
            return self._given_number_of_trials
        return int(self.assembly.attrs.get("number_of_trials", 1))

    @number_of_trials.setter
    def number_of_trials(self, value) -> None:
        self._given_number_of_trials = None if value is None else int(value)

    def _assembly_stimuli(self):
        stimuli = self.assembly.attrs.get("stimulus_set")
        if stimuli is None:
            raise ValidationError(f"benchmark {self.identifier!r}: the assembly carries no stimulus set "
                                  f"(assembly.stimulus_set) to measure the property with; pass stimulus_set=")
        return stimuli

    def __call__(self, candidate) -> Any:
        """Record ``candidate``, compute its neuroids' property, and score the distribution (``raw / ceiling``)."""
        self.model_identifier = getattr(candidate, "identifier", None)
        return super().__call__(candidate)


# ------------------------------------------------------------------------------------------------------------------
# The reference's per-unit property functions (Marques, Schrimpf & DiCarlo 2021), which its ``marques2020`` benchmark
# folder imports. Each works on one unit's tuning curve; brainscore's own Marques 2020 benchmarks compute the same
# properties vectorised over units (:mod:`brainscore.plugins.benchmarks.marques2020.properties`).

#: smoothing kernels of the reference's tuning fits, by ``filt_type`` (normalised to sum 1 where applied)
_KERNELS = {"hanning": (0, 2 / 5, 1, 2 / 5, 0), "flat": (1, 1, 1, 1, 1), "smooth": (0, 1 / 5, 1, 1 / 5, 0),
            "triangle": (0.5, 0.75, 1, 0.75, 0.5)}

__all__ += ["calc_circular_variance", "calc_bandwidth", "calc_orthogonal_preferred_ratio",
            "calc_spatial_frequency_tuning", "calc_size_tuning", "calc_texture_modulation", "calc_sparseness",
            "calc_variance_ratio", "calc_variance"]


def _kernel(filt_type: str | None) -> np.ndarray | None:
    if filt_type is None:
        return None
    if filt_type not in _KERNELS:
        raise ValueError(f"unknown filt_type {filt_type!r}; one of {sorted(_KERNELS)} or None")
    weights = np.asarray(_KERNELS[filt_type], dtype=float)
    return weights / weights.sum()


def _nested_grid(activations: Any, names: Sequence[str], n_stimuli: int) -> bool:
    """Whether the presentations' values of ``names`` run through their full grid (last name fastest), repeated."""
    columns = [np.asarray(activations[name].values) for name in names]
    levels = [np.unique(c) for c in columns]
    size = int(np.prod([len(v) for v in levels]))
    if size == 0 or n_stimuli % size:
        return False
    grid = np.meshgrid(*levels, indexing="ij")
    return all(np.array_equal(np.tile(g.ravel(), n_stimuli // size), c) for g, c in zip(grid, columns))


def _assert_grating_activations(activations: Any) -> None:
    """Check that grating responses are ordered as the property code reshapes them.

    ``activations`` (``neuroid x presentation``, with the gratings' ``position_y``, ``position_x``,
    ``contrast``, ``radius``, ``spatial_frequency``, ``orientation``, ``phase`` on ``presentation``) must either
    be the full grid over these seven, nested in this order (phase fastest), or repeated cycles of the grid over
    (spatial_frequency, orientation, phase).

    Raises
    ------
    ValidationError
        If the presentations are in another order (the reshape would mix conditions).
    """
    n_stimuli = activations.sizes["presentation"]
    full = ("position_y", "position_x", "contrast", "radius", "spatial_frequency", "orientation", "phase")
    if _nested_grid(activations, full, n_stimuli) or \
            _nested_grid(activations, ("spatial_frequency", "orientation", "phase"), n_stimuli):
        return
    raise ValidationError(f"the {n_stimuli} grating presentations are not a grid over {full} nested in that order "
                          f"(phase fastest), nor repeated cycles over (spatial_frequency, orientation, phase); "
                          f"record the stimulus set in its own order")


def _assert_texture_activations(activations: Any) -> None:
    """Check that texture responses, sorted by (type, family, sample), are the full grid over the three.

    Raises
    ------
    ValidationError
        If a (type, family, sample) combination is missing or repeated.
    """
    ordered = activations.sortby(["type", "family", "sample"])
    if not _nested_grid(ordered, ("type", "family", "sample"), ordered.sizes["presentation"]) or \
            ordered.sizes["presentation"] != int(np.prod([len(np.unique(ordered[n].values))
                                                          for n in ("type", "family", "sample")])):
        raise ValidationError("the texture presentations are not exactly one of each (type, family, sample)")


def calc_circular_variance(orientation_curve: np.ndarray, orientation: np.ndarray) -> float:
    """Circular variance ``1 - |sum r exp(2i theta)| / sum |r|`` of an orientation curve (Ringach et al. 2002).

    ``orientation`` in degrees; 0 for a unit responding at one orientation only, 1 for a flat curve.
    """
    curve = np.asarray(orientation_curve, dtype=float)
    resultant = np.abs(np.sum(curve * np.exp(2j * np.deg2rad(np.asarray(orientation, dtype=float)))))
    return float(1 - resultant / np.sum(np.abs(curve)))


def calc_bandwidth(orientation_curve: np.ndarray, orientation: np.ndarray, filt_type: str | None = "hanning",
                   thrsh: float = 0.5, mode: str = "full"):
    """Orientation bandwidth of a curve over [0, 180) degrees, from a smoothed spline fit.

    The fit is :func:`~brainscore.plugins.benchmarks.marques2020.properties.orientation_tuning_fit` with the
    ``filt_type`` kernel (every degree from -180 to 359). The preferred orientation is the fit's argmax over 0-179;
    the bandwidth is the distance between the nearest degrees on either side where the fit falls to ``thrsh`` x its
    peak (NaN if either is missing or it exceeds 180); halved for ``mode='half'``.

    Returns
    -------
    (bandwidth, preferred orientation index 0-179, degrees 0-179, the fit over them)
    """
    curve = np.asarray(orientation_curve, dtype=float).reshape(1, -1)
    degrees, fitted = marques.orientation_tuning_fit(curve, np.asarray(orientation, dtype=float), _kernel(filt_type))
    fitted = fitted[0]
    preferred = int(np.argmax(fitted[180:360]))
    peak_index = preferred + 180
    low = np.flatnonzero(fitted[:peak_index] <= fitted[peak_index] * thrsh)
    high = np.flatnonzero(fitted[peak_index + 1:] <= fitted[peak_index] * thrsh)
    bandwidth = np.nan
    if len(low) and len(high):
        bandwidth = degrees[peak_index + 1 + high[0]] - degrees[low[-1]]
        bandwidth = np.nan if bandwidth > 180 else bandwidth
    if mode == "half":
        bandwidth = bandwidth / 2
    return bandwidth, preferred, degrees[180:360], fitted[180:360]


def calc_orthogonal_preferred_ratio(orientation_curve: np.ndarray, orientation: np.ndarray) -> float:
    """Response at the orthogonal orientation (half the samples away) over the response at the preferred one."""
    curve = np.asarray(orientation_curve, dtype=float)
    preferred = int(np.argmax(curve))
    orthogonal = (preferred + len(orientation) // 2) % len(orientation)
    return float(curve[orthogonal] / curve[preferred])


def calc_spatial_frequency_tuning(y: np.ndarray, sf: np.ndarray, filt_type: str | None = "triangle",
                                  thrsh: float = 0.707, mode: str = "ratio"):
    """Peak and bandwidth of a spatial-frequency tuning curve (``sf`` ascending, cycles/degree).

    The spline of :func:`~brainscore.plugins.benchmarks.marques2020.properties.spatial_frequency_spline` with the
    ``filt_type`` kernel, cut by :func:`~brainscore.plugins.benchmarks.marques2020.properties.spatial_frequency_cutoffs`:
    bandwidth ``f_high / f_low - 1`` for ``mode='oct'``, else (as the reference) ``100 f_low / f_high``, at ``thrsh``
    x the peak, NaN without a cut-off.

    Returns
    -------
    (bandwidth, peak frequency, r² of the fit at the measured frequencies, the 100 frequencies, the fit)
    """
    y = np.asarray(y, dtype=float).reshape(1, -1)
    spline = marques.spatial_frequency_spline(y, sf, _kernel(filt_type))
    grid = marques.spatial_frequency_grid(sf)
    fitted = spline(grid)
    peak, bandwidth = marques.spatial_frequency_cutoffs(grid, fitted, thrsh, "oct" if mode == "oct" else "ratio")
    r2 = 1 - np.sum((y[0] - spline(np.log2(np.asarray(sf, dtype=float)))[0]) ** 2) / np.sum((y[0] - y.mean()) ** 2)
    return bandwidth[0], peak[0], r2, 2 ** grid, fitted[0]


def calc_size_tuning(size_curve: np.ndarray, radius: np.ndarray):
    """Surround suppression of a size tuning curve (Cavanaugh, Bair & Movshon 2002), by
    :func:`~brainscore.plugins.benchmarks.marques2020.properties.size_tuning_curve_properties`.

    Returns
    -------
    (grating summation field, surround diameter, their ratio, SSI); the first three NaN unless peak > 0 and SSI > 0.1
    """
    values = marques.size_tuning_curve_properties(np.asarray(size_curve, dtype=float).reshape(1, -1), radius)
    return tuple(values[name][0] for name in ("grating_summation_field", "surround_diameter",
                                              "surround_grating_summation_field_ratio", "surround_suppression_index"))


def calc_texture_modulation(response: np.ndarray):
    """Texture modulation per family, ``(texture - noise) / (texture + noise)`` (rows 1 and 0), and its nan-mean."""
    response = np.asarray(response, dtype=float)
    per_family = (response[1] - response[0]) / (response[1] + response[0])
    return np.nanmean(per_family), per_family


def calc_sparseness(response: np.ndarray) -> float:
    """Sparseness of responses over stimuli (Vinje & Gallant 2000): ``(1 - mean(r)² / mean(r²)) / (1 - 1/n)``."""
    r = np.asarray(response, dtype=float).ravel()
    n = r.size
    return float((1 - r.mean() ** 2 / np.mean(r ** 2)) / (1 - 1 / n))


def calc_variance(response: np.ndarray):
    """Nested ANOVA mean squares of ``(family, sample[, repetition])`` responses: (residual, sample, family).

    Without repetitions (2-d ``response``) the residual mean square is undefined: NaN."""
    response = np.asarray(response, dtype=float)
    if response.ndim == 3:
        a, b, n = response.shape
        sample_mean = response.mean(axis=2)
        residual = np.sum((response - sample_mean[:, :, None]) ** 2) / (a * b * (n - 1))
    else:
        a, b = response.shape
        n = 1
        sample_mean = response
        residual = float("nan")
    family_mean = sample_mean.mean(axis=1)
    sample = n * np.sum((sample_mean - family_mean[:, None]) ** 2) / (a * (b - 1))
    family = b * n * np.sum((family_mean - family_mean.mean()) ** 2) / (a - 1)
    return residual, sample, family


def calc_variance_ratio(response: np.ndarray):
    """Family over sample variance (each a share of the total, + 0.02) from the nested ANOVA of :func:`calc_variance`
    (Freeman, Ziemba et al. 2013). Returns (ratio, sample share, family share)."""
    response = np.asarray(response, dtype=float)
    residual_ms, sample_ms, family_ms = calc_variance(response)
    if response.ndim == 3:
        residual = residual_ms
        sample = (sample_ms - residual_ms) / response.shape[2]
        family = (family_ms - sample_ms) / (response.shape[2] * response.shape[1])
    else:
        residual, sample = 0.0, sample_ms
        family = (family_ms - sample_ms) / response.shape[1]
    total = residual + sample + family
    return (family / total + 0.02) / (sample / total + 0.02), sample / total, family / total
