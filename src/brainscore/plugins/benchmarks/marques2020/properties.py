"""V1 single-neuron properties of model units from their grating responses (Marques, Schrimpf & DiCarlo 2021).

Array functions, vectorised over units (``unit`` is the first axis everywhere), following the
analysis of the Brain-Score reference (``properties_common.py`` and the ``marques2020`` benchmark
modules of brain-score/vision, as described in ``marques2020_v1_properties/README.md``):

1. :func:`receptive_field_centres`: each unit's receptive-field centre from the 21 x 21 grid of
   small gratings (response-weighted centroid of the grid positions above 5 % of its peak);
2. :func:`near`: the units whose centre lies within 0.15 degrees of the gratings' centre;
3. :func:`firing_rate_affine` / :func:`firing_rates`: one affine map from activations to spikes/s
   for the whole layer, so that the median responsive unit has the median V1 cell's peak and
   spontaneous rates (33.8 and 0.82 spikes/s);
4. :func:`dc_ac`: mean over the 8 phases (DC) and first-harmonic amplitude (AC);
5. per study: :func:`preferred_orientation` (De Valois, Yund & Hepler 1982), :func:`peak_spatial_frequency`
   (De Valois, Albrecht & Thorell 1982), :func:`spatial_frequency_bandwidth` (Schiller, Finlay &
   Volman 1976), :func:`size_tuning` (Cavanaugh, Bair & Movshon 2002), built on
   :func:`orientation_tuning_fit` and :func:`spatial_frequency_tuning_fit`.

The end of the module holds the reference's *per-unit* property functions (one tuning curve at a
time; ``brainscore_vision.benchmark_helpers.properties_common.calc_*`` name them), built on the
vectorised fits above: :func:`unit_circular_variance`, :func:`unit_orientation_bandwidth`,
:func:`unit_orthogonal_preferred_ratio`, :func:`unit_spatial_frequency_tuning`, :func:`unit_size_tuning`,
:func:`texture_modulation`, :func:`sparseness`, :func:`nested_anova_mean_squares`,
:func:`texture_variance_ratio`, and the order checks of the responses they reshape
(:func:`check_grating_order`, :func:`check_texture_order`).

The reference fits an interpolating cubic spline (``scipy.interpolate.UnivariateSpline(s=0)``,
FITPACK) one unit at a time. FITPACK's interpolating cubic spline has its interior knots at
``x[2:-2]``, which is the not-a-knot spline, so :class:`scipy.interpolate.CubicSpline` with
``bc_type="not-a-knot"`` fits all units at once with the same curve (tested against
``UnivariateSpline`` to 1e-9).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from scipy.interpolate import CubicSpline

from brainscore.errors import ValidationError

#: A grid position is part of the receptive field above this fraction of the unit's peak response.
RF_THRESHOLD = 0.05
#: Units are kept if their receptive-field centre is this close to the gratings' centre (degrees).
RF_DELTA = 0.15
#: V1 firing-rate statistics of the affine calibration (spikes/s; Marques et al. 2021).
MEDIAN_MAX_RESPONSE = 33.8
MEDIAN_SPONTANEOUS = 0.82
SINGLE_MAX_RESPONSE = 243.1
RESPONSE_THRESHOLD = 5.0
#: The smoothing kernel the reference calls "smooth": [0, 1/5, 1, 1/5, 0], normalised.
SMOOTH = np.array([0, 1 / 5, 1, 1 / 5, 0]) / (1 + 2 / 5)
ORIENTATION_BIN_LIMIT = 157.5


def receptive_field_centres(responses: np.ndarray, blank: np.ndarray, position_y: np.ndarray,
                            position_x: np.ndarray, threshold: float = RF_THRESHOLD) -> np.ndarray:
    """Receptive-field centre of every unit from its responses to small gratings on a grid.

    Negative activations are set to 0, the blank response is subtracted, the map is each
    position's largest response over the gratings shown there (negatives set to 0); the centre is
    the response-weighted centroid of the grid indices above ``threshold`` x the unit's peak,
    converted to degrees by linear interpolation of the grid. Source: ``map_receptive_field_locations``
    of the reference (Marques et al. 2021).

    Parameters
    ----------
    responses : ndarray of shape (unit, n_y, n_x, n_conditions)
        Activations to the gratings at each grid position (orientations x phases per position).
    blank : ndarray of shape (unit,)
        Activations to the blank screen.
    position_y, position_x : ndarray of shape (n_y,), (n_x,)
        Grid positions in degrees, ascending.
    threshold : float

    Returns
    -------
    ndarray of shape (unit, 2)
        (y, x) centre in degrees; NaN for a unit that responds to no grating above its blank response.
    """
    rf_map = np.maximum(responses, 0).max(axis=3) - np.maximum(blank, 0)[:, None, None]
    rf_map = np.maximum(rf_map, 0)
    peak = rf_map.reshape(len(rf_map), -1).max(axis=1)
    weights = np.where(rf_map > (peak * threshold)[:, None, None], rf_map, 0.0)
    total = weights.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        index_y = (weights.sum(axis=2) * np.arange(rf_map.shape[1])).sum(axis=1) / total
        index_x = (weights.sum(axis=1) * np.arange(rf_map.shape[2])).sum(axis=1) / total
    centres = np.stack([np.interp(index_y, np.arange(len(position_y)), position_y),
                        np.interp(index_x, np.arange(len(position_x)), position_x)], axis=1)
    centres[~(peak > 0)] = np.nan
    return centres


def near(centres: np.ndarray, position, delta: float = RF_DELTA) -> np.ndarray:
    """Boolean mask of the units whose centre (``unit x (y, x)``, degrees) is within ``delta`` of ``position`` (y, x)."""
    distance = np.linalg.norm(np.asarray(centres, dtype=float) - np.asarray(position, dtype=float), axis=1)
    return distance <= delta  # NaN centres compare False


def firing_rate_affine(responses: np.ndarray, blank: np.ndarray, median_max: float = MEDIAN_MAX_RESPONSE,
                       median_spontaneous: float = MEDIAN_SPONTANEOUS, single_max: float = SINGLE_MAX_RESPONSE,
                       threshold: float = RESPONSE_THRESHOLD) -> tuple[float, float]:
    """Slope and offset mapping a layer's activations to V1 firing rates (spikes/s).

    With activations clipped at 0, m = each unit's largest phase-averaged response over the
    conditions and b = its blank response. Units with ``m - b > (threshold / single_max) * max(m - b)``
    are responsive; over them ``slope = (median_max - median_spontaneous) / (median(m) - median(b))``
    and ``offset = median_spontaneous - slope * median(b)``. Source: ``firing_rates_affine`` of the
    reference (Marques et al. 2021; the V1 statistics are from Ringach et al. 2002's cells).

    Parameters
    ----------
    responses : ndarray of shape (unit, ..., phase)
        Responses to the orientation set (phase last).
    blank : ndarray of shape (unit,)

    Returns
    -------
    slope, offset : float

    Raises
    ------
    ValueError
        If no unit is given or the responsive units' median response equals their median blank
        response (no affine map exists).
    """
    if len(responses) == 0:
        raise ValueError("no units to calibrate firing rates on: no unit's receptive field is at the gratings' centre")
    m = np.maximum(responses, 0).mean(axis=-1).reshape(len(responses), -1).max(axis=1)
    b = np.maximum(blank, 0)
    gain = m - b
    responsive = gain > (threshold / single_max) * gain.max()
    if not responsive.any():
        raise ValueError(f"cannot calibrate firing rates: none of the {len(gain)} units responds to a grating more "
                         f"than to the blank screen")
    median_b, median_m = np.median(b[responsive]), np.median(m[responsive])
    if median_m == median_b:
        raise ValueError(f"cannot calibrate firing rates: the responsive units' median response {median_m} equals "
                         f"their median blank response")
    slope = (median_max - median_spontaneous) / (median_m - median_b)
    return float(slope), float(median_spontaneous - slope * median_b)


def firing_rates(activations: np.ndarray, slope: float, offset: float) -> np.ndarray:
    """``max(0, slope * max(0, activations) + offset)``: activations as firing rates (spikes/s; any shape)."""
    return np.maximum(slope * np.maximum(activations, 0) + offset, 0)


def dc_ac(responses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean over phases (DC) and first-harmonic amplitude ``2 |DFT_1| / n`` (AC) of ``responses`` (..., phase)."""
    n = responses.shape[-1]
    return responses.mean(axis=-1), 2 * np.abs(np.fft.fft(responses, axis=-1)[..., 1]) / n


def _smooth_same(curves: np.ndarray, kernel: np.ndarray | None) -> np.ndarray:
    """``np.convolve(kernel, curve, mode="same")`` of every row (zeros beyond the ends) for a 5-tap ``kernel``;
    ``curves`` itself for ``None``."""
    if kernel is None:
        return curves
    padded = np.pad(curves, ((0, 0), (2, 2)))
    return sum(kernel[k] * padded[:, 4 - k:4 - k + curves.shape[1]] for k in range(5))


def orientation_tuning_fit(curves: np.ndarray, orientations: np.ndarray, kernel: np.ndarray | None = SMOOTH
                           ) -> tuple[np.ndarray, np.ndarray]:
    """The reference's orientation tuning fit (``calc_bandwidth``; its ``filt_type="smooth"`` by default).

    The curve (orientations over 0-180 degrees) is tiled over -180...+360 degrees, smoothed with
    ``kernel`` ([1, 5, 1] / 7 by default; "same" convolution), interpolated by a cubic spline and
    evaluated at every integer degree from -180 to 359.

    Parameters
    ----------
    curves : ndarray of shape (unit, n_orientations)
    orientations : ndarray of shape (n_orientations,), degrees in [0, 180), ascending
    kernel : ndarray of shape (5,), summing to 1, or None (no smoothing)

    Returns
    -------
    degrees : ndarray of shape (540,), -180 ... 359
    fitted : ndarray of shape (unit, 540)
    """
    extended = np.concatenate([orientations - 180, orientations, orientations + 180])
    tiled = _smooth_same(np.tile(curves, (1, 3)), kernel)
    degrees = np.linspace(-180, 359, 540)
    return degrees, CubicSpline(extended, tiled, axis=1, bc_type="not-a-knot")(degrees)


def preferred_orientation(responses: np.ndarray, baseline: np.ndarray, orientations: np.ndarray,
                          threshold: float = RESPONSE_THRESHOLD) -> tuple[np.ndarray, np.ndarray]:
    """Preferred orientation of each unit (De Valois, Yund & Hepler 1982, as Marques et al. 2021 measure it).

    The DC orientation curve at the (size, spatial frequency) of the unit's largest DC response is
    fitted (:func:`orientation_tuning_fit`); the preferred orientation is the fitted curve's argmax
    over 0-179 degrees, with 180 subtracted from values >= 157.5 (so they fall in the data's first
    bin, -22.5 to 22.5).

    Parameters
    ----------
    responses : ndarray of shape (unit, n_size, n_sf, n_orientation, n_phase)
        Firing rates to the orientation set.
    baseline : ndarray of shape (unit,)
        Firing rates to the blank.
    orientations : ndarray of shape (n_orientation,), degrees

    Returns
    -------
    values : ndarray of shape (unit,), degrees in [-22, 157]
    kept : ndarray of bool, shape (unit,)
        Units whose largest DC response exceeds ``baseline + threshold`` (the reference keeps only these).
    """
    dc = responses.mean(axis=-1)
    flat = dc.reshape(len(dc), -1, dc.shape[-1])
    best = np.argmax(flat.max(axis=2), axis=1)
    curves = flat[np.arange(len(flat)), best]
    _, fitted = orientation_tuning_fit(curves, np.asarray(orientations, dtype=float))
    values = np.argmax(fitted[:, 180:360], axis=1).astype(float)
    values[values >= ORIENTATION_BIN_LIMIT] -= 180
    kept = dc.reshape(len(dc), -1).max(axis=1) > baseline + threshold
    return values, kept


def spatial_frequency_spline(curves: np.ndarray, spatial_frequencies: np.ndarray, kernel: np.ndarray | None = SMOOTH
                             ) -> CubicSpline:
    """The reference's spline through spatial-frequency tuning curves, over log2(sf).

    Each curve is padded with two copies of each end value and smoothed with ``kernel`` ([1, 5, 1] / 7
    by default; "valid" convolution; no padding or smoothing for ``None``), then interpolated by the
    not-a-knot cubic spline (FITPACK's ``UnivariateSpline(s=0)``).

    Parameters
    ----------
    curves : ndarray of shape (unit, n_sf)
    spatial_frequencies : ndarray of shape (n_sf,), cycles/degree, ascending
    kernel : ndarray of shape (5,), summing to 1, or None

    Returns
    -------
    scipy.interpolate.CubicSpline
        Of log2 cycles/degree, values of shape (unit, ...) (``axis=1``).
    """
    smoothed = curves
    if kernel is not None:
        padded = np.concatenate([curves[:, :1], curves[:, :1], curves, curves[:, -1:], curves[:, -1:]], axis=1)
        smoothed = sum(kernel[4 - k] * padded[:, k:k + curves.shape[1]] for k in range(5))
    log_sf = np.log2(np.asarray(spatial_frequencies, dtype=float))
    return CubicSpline(log_sf, smoothed, axis=1, bc_type="not-a-knot")


def spatial_frequency_grid(spatial_frequencies: np.ndarray) -> np.ndarray:
    """The 100 points, evenly spaced in log2(sf) from the lowest to the highest frequency, at which the reference
    evaluates a spatial-frequency fit (log2 cycles/degree, shape (100,))."""
    log_sf = np.log2(np.asarray(spatial_frequencies, dtype=float))
    return np.linspace(log_sf[0], log_sf[-1], num=100, endpoint=True)


def spatial_frequency_cutoffs(grid: np.ndarray, fitted: np.ndarray, threshold: float = 0.707, mode: str = "ratio"
                              ) -> tuple[np.ndarray, np.ndarray]:
    """Peak and bandwidth of spatial-frequency fits evaluated on :func:`spatial_frequency_grid`.

    The peak is the largest fitted point; the low (high) cut-off is the last point below (first above) the peak
    whose fitted value is at most ``threshold`` x the peak value.

    Parameters
    ----------
    grid : ndarray of shape (n_points,), log2 cycles/degree, ascending
    fitted : ndarray of shape (unit, n_points)
    threshold : float
    mode : {"ratio", "oct"}
        The bandwidth as ``100 * f_low / f_high`` (percent) or as ``f_high / f_low - 1``.

    Returns
    -------
    peak : ndarray of shape (unit,)
        Peak spatial frequency (cycles/degree).
    bandwidth : ndarray of shape (unit,)
        In ``mode``'s unit; NaN where a cut-off is missing.

    Raises
    ------
    ValueError
        If ``mode`` is neither "ratio" nor "oct".
    """
    if mode not in ("ratio", "oct"):
        raise ValueError(f"mode must be 'ratio' or 'oct', got {mode!r}")
    best = np.argmax(fitted, axis=1)
    below = fitted <= (fitted[np.arange(len(fitted)), best] * threshold)[:, None]
    index = np.arange(len(grid))[None, :]
    low = np.where(below & (index < best[:, None]), index, -1).max(axis=1)
    high = np.where(below & (index > best[:, None]), index, len(grid)).min(axis=1)
    valid = (low >= 0) & (high < len(grid))
    bandwidth = np.full(len(fitted), np.nan)
    f_low, f_high = 2.0 ** grid[low[valid]], 2.0 ** grid[high[valid]]
    bandwidth[valid] = f_high / f_low - 1 if mode == "oct" else f_low / f_high * 100
    return 2.0 ** grid[best], bandwidth


def spatial_frequency_tuning_fit(curves: np.ndarray, spatial_frequencies: np.ndarray, threshold: float = 0.707,
                                 kernel: np.ndarray | None = SMOOTH) -> tuple[np.ndarray, np.ndarray]:
    """Peak spatial frequency and bandwidth of tuning curves (the reference's ``calc_spatial_frequency_tuning``).

    The :func:`spatial_frequency_spline` of the curves, evaluated on :func:`spatial_frequency_grid`, cut at
    ``threshold`` x its peak (:func:`spatial_frequency_cutoffs`).

    Parameters
    ----------
    curves : ndarray of shape (unit, n_sf)
    spatial_frequencies : ndarray of shape (n_sf,), cycles/degree, ascending
    threshold : float
    kernel : ndarray of shape (5,), summing to 1, or None (see :func:`spatial_frequency_spline`)

    Returns
    -------
    peak : ndarray of shape (unit,)
        Peak spatial frequency (cycles/degree).
    bandwidth : ndarray of shape (unit,)
        ``100 * f_low / f_high`` (percent); NaN where a cut-off is missing.
    """
    grid = spatial_frequency_grid(spatial_frequencies)
    fitted = spatial_frequency_spline(curves, spatial_frequencies, kernel)(grid)
    return spatial_frequency_cutoffs(grid, fitted, threshold)


def _dc_ac_stack(responses: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    """(unit, a, b, c, 2): DC minus baseline and AC of (unit, a, b, c, phase) responses."""
    dc, ac = dc_ac(responses)
    return np.stack([dc - baseline.reshape((-1,) + (1,) * (dc.ndim - 1)), ac], axis=-1)


def peak_spatial_frequency(responses: np.ndarray, baseline: np.ndarray, spatial_frequencies: np.ndarray,
                           threshold: float = RESPONSE_THRESHOLD) -> tuple[np.ndarray, np.ndarray]:
    """Peak spatial frequency of each unit (De Valois, Albrecht & Thorell 1982, as Marques et al. 2021 measure it).

    Of DC - baseline and AC, the (radius, orientation, component) of the unit's largest response
    gives its spatial-frequency curve, whose fitted peak (:func:`spatial_frequency_tuning_fit`) is
    the value.

    Parameters
    ----------
    responses : ndarray of shape (unit, n_radius, n_sf, n_orientation, n_phase)
        Firing rates to the spatial-frequency set.
    baseline : ndarray of shape (unit,)
    spatial_frequencies : ndarray of shape (n_sf,)

    Returns
    -------
    values : ndarray of shape (unit,), cycles/degree
    kept : ndarray of bool, shape (unit,)
        Units whose largest response (DC - baseline or AC) exceeds ``threshold``.
    """
    stacked = _dc_ac_stack(responses, baseline)
    n, n_radius, n_sf, n_orientation, _ = stacked.shape
    best = np.unravel_index(np.argmax(stacked.reshape(n, -1), axis=1), stacked.shape[1:])
    curves = stacked[np.arange(n)[:, None], best[0][:, None], np.arange(n_sf)[None, :], best[2][:, None],
                     best[3][:, None]]
    peak, _ = spatial_frequency_tuning_fit(curves, spatial_frequencies)
    return peak, stacked.reshape(n, -1).max(axis=1) > threshold


def spatial_frequency_bandwidth(responses: np.ndarray, baseline: np.ndarray, spatial_frequencies: np.ndarray,
                                threshold: float = RESPONSE_THRESHOLD) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Spatial-frequency selectivity and bandwidth (Schiller, Finlay & Volman 1976, as Marques et al. 2021 measure them).

    The DC spatial-frequency curve at the (radius, orientation) of the unit's largest DC response
    is fitted (:func:`spatial_frequency_tuning_fit`); bandwidth = ``100 * f_low / f_high`` at 70.7 %
    of the peak; a unit without both cut-offs is not selective (0) and has no bandwidth (NaN).

    Parameters
    ----------
    responses : ndarray of shape (unit, n_radius, n_sf, n_orientation, n_phase)
    baseline : ndarray of shape (unit,)
    spatial_frequencies : ndarray of shape (n_sf,)

    Returns
    -------
    selective : ndarray of shape (unit,), 0 or 1
    bandwidth : ndarray of shape (unit,), percent or NaN
    kept : ndarray of bool, shape (unit,)
        Units whose largest DC response exceeds ``baseline + threshold``.
    """
    dc = responses.mean(axis=-1)
    n, _, n_sf, _ = dc.shape
    best = np.unravel_index(np.argmax(dc.reshape(n, -1), axis=1), dc.shape[1:])
    curves = dc[np.arange(n)[:, None], best[0][:, None], np.arange(n_sf)[None, :], best[2][:, None]]
    _, bandwidth = spatial_frequency_tuning_fit(curves, spatial_frequencies)
    selective = np.where(np.isnan(bandwidth), 0.0, 1.0)
    return selective, bandwidth, dc.reshape(n, -1).max(axis=1) > baseline + threshold


def size_tuning_curve_properties(curves: np.ndarray, radii: np.ndarray) -> dict[str, np.ndarray]:
    """Surround suppression from size tuning curves (the reference's ``calc_size_tuning``).

    With peak = max r, plateau = r at the largest radius: SSI = (peak - plateau) / peak. Where
    peak > 0 and SSI > 0.1: grating summation field = 2 x the smallest radius with r >= 0.95 peak;
    surround diameter = 2 x the first radius beyond the preferred one with
    r <= plateau + 0.05 |plateau|; ratio = surround diameter / GSF; elsewhere these three are NaN.

    Parameters
    ----------
    curves : ndarray of shape (unit, n_radius)
    radii : ndarray of shape (n_radius,), degrees, ascending

    Returns
    -------
    dict of ndarray of shape (unit,)
        ``surround_suppression_index``, ``strongly_suppressed`` (SSI >= 0.1), ``grating_summation_field``
        and ``surround_diameter`` (degrees, diameters), ``surround_grating_summation_field_ratio``.
    """
    radii = np.asarray(radii, dtype=float)
    n, k = curves.shape
    preferred = np.argmax(curves, axis=1)
    peak = curves.max(axis=1)
    plateau = curves[:, -1]
    with np.errstate(invalid="ignore", divide="ignore"):
        ssi = (peak - plateau) / peak
    suppressed = (peak > 0) & (ssi > 0.1)
    index = np.arange(k)[None, :]
    first_gsf = np.argmax(curves >= 0.95 * peak[:, None], axis=1)
    beyond = (curves <= (plateau + 0.05 * np.abs(plateau))[:, None]) & (index > preferred[:, None])
    first_surround = np.argmax(beyond, axis=1)
    gsf = np.where(suppressed, 2 * radii[first_gsf], np.nan)
    surround = np.where(suppressed & beyond.any(axis=1), 2 * radii[first_surround], np.nan)
    return {"surround_suppression_index": ssi, "strongly_suppressed": (ssi >= 0.1).astype(float),
            "grating_summation_field": gsf, "surround_diameter": surround,
            "surround_grating_summation_field_ratio": surround / gsf}


def size_tuning(responses: np.ndarray, baseline: np.ndarray, radii: np.ndarray,
                threshold: float = RESPONSE_THRESHOLD) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Surround suppression properties of each unit (Cavanaugh, Bair & Movshon 2002, as Marques et al. 2021 measure them).

    Of DC - baseline and AC, the (spatial frequency, orientation, component) of the unit's largest
    response gives its size tuning curve (:func:`size_tuning_curve_properties`).

    Parameters
    ----------
    responses : ndarray of shape (unit, n_radius, n_sf, n_orientation, n_phase)
        Firing rates to the size set.
    baseline : ndarray of shape (unit,)
    radii : ndarray of shape (n_radius,), degrees

    Returns
    -------
    values : dict of ndarray of shape (unit,)
        See :func:`size_tuning_curve_properties`.
    kept : ndarray of bool, shape (unit,)
        Units whose largest response (DC - baseline or AC) exceeds ``threshold``.
    """
    stacked = _dc_ac_stack(responses, baseline)
    n, n_radius = stacked.shape[:2]
    best = np.unravel_index(np.argmax(stacked.reshape(n, -1), axis=1), stacked.shape[1:])
    curves = stacked[np.arange(n)[:, None], np.arange(n_radius)[None, :], best[1][:, None], best[2][:, None],
                     best[3][:, None]]
    return size_tuning_curve_properties(curves, radii), stacked.reshape(n, -1).max(axis=1) > threshold


# ------------------------------------------------------------------------------------------------------------------
# Per-unit property functions (the reference's ``calc_*`` of ``properties_common.py``): each works on one unit's
# tuning curve, through the vectorised fits above.

#: Smoothing kernels of the reference's tuning fits, by ``filt_type`` (normalised to sum 1 where applied).
SMOOTHING_KERNELS = {"hanning": (0, 2 / 5, 1, 2 / 5, 0), "flat": (1, 1, 1, 1, 1), "smooth": (0, 1 / 5, 1, 1 / 5, 0),
                     "triangle": (0.5, 0.75, 1, 0.75, 0.5)}


def smoothing_kernel(filt_type: str | None) -> np.ndarray | None:
    """The 5-tap kernel of :data:`SMOOTHING_KERNELS` named ``filt_type``, normalised to sum 1 (None: no smoothing).

    Raises
    ------
    ValueError
        For a name not in :data:`SMOOTHING_KERNELS`.
    """
    if filt_type is None:
        return None
    if filt_type not in SMOOTHING_KERNELS:
        raise ValueError(f"unknown filt_type {filt_type!r}; one of {sorted(SMOOTHING_KERNELS)} or None")
    weights = np.asarray(SMOOTHING_KERNELS[filt_type], dtype=float)
    return weights / weights.sum()


def is_nested_grid(activations: Any, names: Sequence[str], n_stimuli: int) -> bool:
    """Whether the presentations' values of the coordinates ``names`` run through their full grid (last name
    fastest), repeated ``n_stimuli / grid size`` times.

    Parameters
    ----------
    activations : DataAssembly with the coordinates ``names`` on ``presentation``
    names : sequence of str
    n_stimuli : int
        The number of presentations.
    """
    columns = [np.asarray(activations[name].values) for name in names]
    levels = [np.unique(c) for c in columns]
    size = int(np.prod([len(v) for v in levels]))
    if size == 0 or n_stimuli % size:
        return False
    grid = np.meshgrid(*levels, indexing="ij")
    return all(np.array_equal(np.tile(g.ravel(), n_stimuli // size), c) for g, c in zip(grid, columns))


def check_grating_order(activations: Any) -> None:
    """Check that grating responses are ordered as the per-unit property code reshapes them.

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
    if is_nested_grid(activations, full, n_stimuli) or \
            is_nested_grid(activations, ("spatial_frequency", "orientation", "phase"), n_stimuli):
        return
    raise ValidationError(f"the {n_stimuli} grating presentations are not a grid over {full} nested in that order "
                          f"(phase fastest), nor repeated cycles over (spatial_frequency, orientation, phase); "
                          f"record the stimulus set in its own order")


def check_texture_order(activations: Any) -> None:
    """Check that texture responses (``type``, ``family``, ``sample`` on ``presentation``), sorted by the three, are
    their full grid.

    Raises
    ------
    ValidationError
        If a (type, family, sample) combination is missing or repeated.
    """
    ordered = activations.sortby(["type", "family", "sample"])
    if not is_nested_grid(ordered, ("type", "family", "sample"), ordered.sizes["presentation"]) or \
            ordered.sizes["presentation"] != int(np.prod([len(np.unique(ordered[n].values))
                                                          for n in ("type", "family", "sample")])):
        raise ValidationError("the texture presentations are not exactly one of each (type, family, sample)")


def unit_circular_variance(orientation_curve: np.ndarray, orientation: np.ndarray) -> float:
    """Circular variance ``1 - |sum r exp(2i theta)| / sum |r|`` of one orientation curve (Ringach et al. 2002).

    ``orientation_curve`` and ``orientation`` (degrees) of shape (n_orientations,); 0 for a unit responding at one
    orientation only, 1 for a flat curve.
    """
    curve = np.asarray(orientation_curve, dtype=float)
    resultant = np.abs(np.sum(curve * np.exp(2j * np.deg2rad(np.asarray(orientation, dtype=float)))))
    return float(1 - resultant / np.sum(np.abs(curve)))


def unit_orientation_bandwidth(orientation_curve: np.ndarray, orientation: np.ndarray,
                               filt_type: str | None = "hanning", thrsh: float = 0.5, mode: str = "full"):
    """Orientation bandwidth (degrees) of one curve over [0, 180) degrees, from a smoothed spline fit.

    The fit is :func:`orientation_tuning_fit` with the ``filt_type`` kernel (:func:`smoothing_kernel`; every degree
    from -180 to 359). The preferred orientation is the fit's argmax over 0-179; the bandwidth is the distance
    between the nearest degrees on either side where the fit falls to ``thrsh`` x its peak (NaN if either is
    missing or it exceeds 180); halved for ``mode='half'``.

    Returns
    -------
    (bandwidth, preferred orientation index 0-179, degrees 0-179, the fit over them)

    Raises
    ------
    ValueError
        For an unknown ``filt_type``.
    """
    curve = np.asarray(orientation_curve, dtype=float).reshape(1, -1)
    degrees, fitted = orientation_tuning_fit(curve, np.asarray(orientation, dtype=float), smoothing_kernel(filt_type))
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


def unit_orthogonal_preferred_ratio(orientation_curve: np.ndarray, orientation: np.ndarray) -> float:
    """Response at the orthogonal orientation (half the samples away) over the response at the preferred one, for
    one curve of shape (n_orientations,) over evenly spaced ``orientation``."""
    curve = np.asarray(orientation_curve, dtype=float)
    preferred = int(np.argmax(curve))
    orthogonal = (preferred + len(orientation) // 2) % len(orientation)
    return float(curve[orthogonal] / curve[preferred])


def unit_spatial_frequency_tuning(y: np.ndarray, sf: np.ndarray, filt_type: str | None = "triangle",
                                  thrsh: float = 0.707, mode: str = "ratio"):
    """Peak and bandwidth of one spatial-frequency tuning curve ``y`` over ``sf`` (ascending, cycles/degree).

    The spline of :func:`spatial_frequency_spline` with the ``filt_type`` kernel (:func:`smoothing_kernel`), cut by
    :func:`spatial_frequency_cutoffs`: bandwidth ``f_high / f_low - 1`` for ``mode='oct'``, else (as the
    reference) ``100 f_low / f_high``, at ``thrsh`` x the peak, NaN without a cut-off.

    Returns
    -------
    (bandwidth, peak frequency, r² of the fit at the measured frequencies, the 100 frequencies, the fit)

    Raises
    ------
    ValueError
        For an unknown ``filt_type``.
    """
    y = np.asarray(y, dtype=float).reshape(1, -1)
    spline = spatial_frequency_spline(y, sf, smoothing_kernel(filt_type))
    grid = spatial_frequency_grid(sf)
    fitted = spline(grid)
    peak, bandwidth = spatial_frequency_cutoffs(grid, fitted, thrsh, "oct" if mode == "oct" else "ratio")
    r2 = 1 - np.sum((y[0] - spline(np.log2(np.asarray(sf, dtype=float)))[0]) ** 2) / np.sum((y[0] - y.mean()) ** 2)
    return bandwidth[0], peak[0], r2, 2 ** grid, fitted[0]


def unit_size_tuning(size_curve: np.ndarray, radius: np.ndarray):
    """Surround suppression of one size tuning curve over ``radius`` (degrees; Cavanaugh, Bair & Movshon 2002), by
    :func:`size_tuning_curve_properties`.

    Returns
    -------
    (grating summation field, surround diameter, their ratio, SSI); the first three NaN unless peak > 0 and SSI > 0.1
    """
    values = size_tuning_curve_properties(np.asarray(size_curve, dtype=float).reshape(1, -1), radius)
    return tuple(values[name][0] for name in ("grating_summation_field", "surround_diameter",
                                              "surround_grating_summation_field_ratio", "surround_suppression_index"))


def texture_modulation(response: np.ndarray):
    """Texture modulation per family, ``(texture - noise) / (texture + noise)`` (rows 1 and 0 of ``response``,
    shape (2, n_family)), and its nan-mean (Freeman, Ziemba et al. 2013). Returns (mean, per family)."""
    response = np.asarray(response, dtype=float)
    per_family = (response[1] - response[0]) / (response[1] + response[0])
    return np.nanmean(per_family), per_family


def sparseness(response: np.ndarray) -> float:
    """Sparseness of responses over stimuli (Vinje & Gallant 2000): ``(1 - mean(r)² / mean(r²)) / (1 - 1/n)``."""
    r = np.asarray(response, dtype=float).ravel()
    n = r.size
    return float((1 - r.mean() ** 2 / np.mean(r ** 2)) / (1 - 1 / n))


def nested_anova_mean_squares(response: np.ndarray):
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


def texture_variance_ratio(response: np.ndarray):
    """Family over sample variance (each a share of the total, + 0.02) from the nested ANOVA of
    :func:`nested_anova_mean_squares` on ``(family, sample[, repetition])`` responses (Freeman, Ziemba et al. 2013).
    Returns (ratio, sample share, family share)."""
    response = np.asarray(response, dtype=float)
    residual_ms, sample_ms, family_ms = nested_anova_mean_squares(response)
    if response.ndim == 3:
        residual = residual_ms
        sample = (sample_ms - residual_ms) / response.shape[2]
        family = (family_ms - sample_ms) / (response.shape[2] * response.shape[1])
    else:
        residual, sample = 0.0, sample_ms
        family = (family_ms - sample_ms) / response.shape[1]
    total = residual + sample + family
    return (family / total + 0.02) / (sample / total + 0.02), sample / total, family / total
