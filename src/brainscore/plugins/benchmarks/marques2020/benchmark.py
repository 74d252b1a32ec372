"""Construction of the Marques 2020 V1 property benchmarks (settings in ``__init__``).

Every benchmark records the model's V1 on the same 9097 images (``Marques2020_V1``: the blank,
the receptive-field grid, the orientation, spatial-frequency and size sets), so a model's
activations are computed in one pass and shared, through the activation cache, by all seven. From
the responses, :func:`study_properties` maps receptive fields, keeps the units centred on the
gratings, calibrates firing rates and computes the study's properties (:mod:`.properties`).
"""
from __future__ import annotations

from functools import partial

import numpy as np

from brainscore.benchmarks.properties import PropertiesBenchmark
from brainscore.data.assemblies import DataAssembly, PropertiesAssembly
from brainscore.errors import ValidationError
from brainscore.registry import load_ceiling, load_dataset, load_metric, load_stimulus_set

from . import properties as prop

VERSION = 1
REGION = "V1"
TIME_BINS = [(70, 170)]
VISUAL_DEGREES = 12
NUMBER_OF_TRIALS = 20
STIMULUS_SET = "Marques2020_V1"
STIMULUS_POSITION = (0.5, 0.5)  # (y, x) degrees: the centre of the orientation, sf and size gratings
#: Units per chunk when mapping receptive fields (bounds memory for layers of 10^5 units).
CHUNK = 8192

#: study -> (stimulus set it measures with, the grid axes of that set between unit and phase)
STUDIES = {
    "DeValois1982a": ("Marques2020_orientation", ("number_of_cycles", "spatial_frequency", "orientation")),
    "DeValois1982b": ("Marques2020_spatial_frequency", ("radius", "spatial_frequency", "orientation")),
    "Schiller1976c": ("Marques2020_spatial_frequency", ("radius", "spatial_frequency", "orientation")),
    "Cavanaugh2002a": ("Marques2020_size", ("radius", "spatial_frequency", "orientation")),
}


def _grid(table, axes: tuple[str, ...]) -> list[np.ndarray]:
    """The ascending values of ``axes`` (+ phase) of a stimulus table; checks that rows nest in that order.

    Raises
    ------
    ValidationError
        If the rows are not the full factorial grid with the last axis varying fastest (the
        property code reshapes responses on this order, as the reference asserts).
    """
    axes = tuple(axes) + ("phase",)
    values = [np.unique(np.asarray(table[a], dtype=float)) for a in axes]
    expected = np.stack([g.ravel() for g in np.meshgrid(*values, indexing="ij")], axis=1)
    actual = np.stack([np.asarray(table[a], dtype=float) for a in axes], axis=1)
    if actual.shape != expected.shape or not np.array_equal(actual, expected):
        raise ValidationError(f"stimulus rows must be the full grid over {axes}, nested in that order "
                              f"(phase fastest); got {len(actual)} rows")
    return values


def _rows(stimuli, name: str) -> slice:
    index = np.flatnonzero(np.asarray(stimuli["stimulus_set"]) == name)
    if not len(index) or not np.array_equal(index, np.arange(index[0], index[-1] + 1)):
        raise ValidationError(f"the stimuli must hold set {name!r} as one block of consecutive rows "
                              f"(column 'stimulus_set'); load the stimulus set {STIMULUS_SET!r}")
    return slice(int(index[0]), int(index[-1]) + 1)


def select_units(values: np.ndarray, stimuli) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the units whose receptive-field centre is within 0.15 degrees of the gratings' centre.

    Parameters
    ----------
    values : ndarray of shape (presentation, unit)
        Responses to ``stimuli`` (rows in the order of ``stimuli``).
    stimuli : DataFrame
        With the ``stimulus_set`` column of ``Marques2020_V1``.

    Returns
    -------
    indices : ndarray of int
    centres : ndarray of shape (unit, 2)
        Every unit's receptive-field centre (y, x) in degrees (NaN: no response).
    """
    rf = _rows(stimuli, "Marques2020_receptive_field")
    blank = _rows(stimuli, "Marques2020_blank")
    table = stimuli.iloc[rf]
    position_y, position_x, orientations, phases = _grid(table, ("position_y", "position_x", "orientation"))
    conditions = len(orientations) * len(phases)
    n_units = values.shape[1]
    centres = np.empty((n_units, 2))
    for start in range(0, n_units, CHUNK):
        units = slice(start, min(start + CHUNK, n_units))
        responses = np.asarray(values[rf, units], dtype=float).T.reshape(-1, len(position_y), len(position_x),
                                                                          conditions)
        centres[units] = prop.receptive_field_centres(responses, np.asarray(values[blank.start, units], dtype=float),
                                                      position_y, position_x)
    return np.flatnonzero(prop.near(centres, STIMULUS_POSITION)), centres


def study_properties(responses: DataAssembly, stimuli, study: str) -> PropertiesAssembly:
    """The properties of ``study`` measured on every selected, responsive model unit.

    Parameters
    ----------
    responses : DataAssembly
        ``presentation x neuroid`` responses to ``stimuli`` (the ``Marques2020_V1`` set, placed
        on the model's screen).
    stimuli : StimulusSet
    study : str
        ``DeValois1982a``, ``DeValois1982b``, ``Schiller1976c`` or ``Cavanaugh2002a``.

    Returns
    -------
    PropertiesAssembly
        ``neuroid x neuronal_property`` over the kept units; attrs ``n_units`` (in the layer),
        ``n_selected`` (receptive field at the gratings' centre), ``n_kept`` (responsive),
        ``firing_rate_slope``, ``firing_rate_offset``.

    Raises
    ------
    ValidationError
        If no unit's receptive field is centred on the gratings, or the stimuli are not ``Marques2020_V1``.
    """
    set_name, axes = STUDIES[study]
    values = responses.transpose("presentation", "neuroid").values
    units, _ = select_units(values, stimuli)
    if not len(units):
        raise ValidationError(f"no unit of the model's V1 layer has its receptive field within {prop.RF_DELTA} "
                              f"degrees of the gratings' centre {STIMULUS_POSITION}: the layer's units may not "
                              f"respond to small gratings; commit V1 to another layer")
    blank = np.asarray(values[_rows(stimuli, "Marques2020_blank").start, units], dtype=float)
    orientation_rows = _rows(stimuli, "Marques2020_orientation")
    orientation_axes = _grid(stimuli.iloc[orientation_rows], STUDIES["DeValois1982a"][1])
    orientation = np.asarray(values[orientation_rows][:, units], dtype=float).T.reshape(
        (len(units),) + tuple(len(a) for a in orientation_axes))
    slope, offset = prop.firing_rate_affine(orientation, blank)
    rows = _rows(stimuli, set_name)
    grid = _grid(stimuli.iloc[rows], axes)
    rates = prop.firing_rates(np.asarray(values[rows][:, units], dtype=float).T.reshape(
        (len(units),) + tuple(len(a) for a in grid)), slope, offset)
    baseline = prop.firing_rates(blank, slope, offset)
    if study == "DeValois1982a":
        value, kept = prop.preferred_orientation(rates, baseline, grid[2])
        columns = {"preferred_orientation": value}
    elif study == "DeValois1982b":
        value, kept = prop.peak_spatial_frequency(rates, baseline, grid[1])
        columns = {"peak_spatial_frequency": value}
    elif study == "Schiller1976c":
        selective, bandwidth, kept = prop.spatial_frequency_bandwidth(rates, baseline, grid[1])
        columns = {"spatial_frequency_selective": selective, "spatial_frequency_bandwidth": bandwidth}
    else:
        columns, kept = prop.size_tuning(rates, baseline, grid[0])
    if not kept.any():
        raise ValidationError(f"none of the {len(units)} units centred on the gratings responds more than "
                              f"{prop.RESPONSE_THRESHOLD:g} spikes/s above its baseline, so {study}'s properties are "
                              f"undefined for this model's V1 layer; commit V1 to another layer")
    names = list(columns)
    data = np.stack([columns[n][kept] for n in names], axis=1)
    neuroid_ids = np.asarray(responses["neuroid_id"].values)[units][kept]
    assembly = PropertiesAssembly(data, dims=("neuroid", "neuronal_property"),
                                  coords={"neuroid_id": ("neuroid", neuroid_ids.astype(object)),
                                          "region": ("neuroid", np.full(len(data), REGION, dtype=object)),
                                          "neuronal_property": names})
    assembly.attrs.update(n_units=int(values.shape[1]), n_selected=int(len(units)), n_kept=int(kept.sum()),
                          firing_rate_slope=slope, firing_rate_offset=offset)
    return assembly


def benchmark(identifier: str, study: str, property_name: str, parent: str, bibtex: str) -> PropertiesBenchmark:
    """The V1 property benchmark ``identifier``: ``property_name`` of ``study`` by ``ks_similarity``."""
    return PropertiesBenchmark(
        identifier=identifier, version=VERSION, assembly=lambda: load_dataset(study),
        stimulus_set=lambda: load_stimulus_set(STIMULUS_SET), property_func=partial(study_properties, study=study),
        similarity_metric=load_metric("ks_similarity", property_name),
        ceiling_func=load_ceiling("ks_similarity", property_name), visual_degrees=VISUAL_DEGREES,
        number_of_trials=NUMBER_OF_TRIALS, region=REGION, parent=parent, bibtex=bibtex, time_bins=TIME_BINS)
