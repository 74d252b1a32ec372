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

from brainscore import config
from brainscore.benchmarks.properties import PropertiesBenchmark
from brainscore.data.assemblies import DataAssembly, PropertiesAssembly
from brainscore.data.blocks import ArrayBlocks, AssemblyBlocks, NeuroidBlocks
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
#: Most units read at a time when mapping receptive fields (fewer where memory is short: :func:`units_per_block`).
CHUNK = 8192
#: Bytes the unit blocks may take (None: a quarter of :func:`brainscore.config.usable_memory`, issue 22).
MEMORY_BYTES: int | None = None

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


def units_per_block(n_presentations: int, n_receptive_field: int, budget: int | None = None) -> int:
    """Units read at a time when selecting units: at most :data:`CHUNK`, and as many as ``budget`` bytes hold.

    A unit costs its float32 responses to every presentation (the block read) plus three float64
    copies of its receptive-field responses (the conversion, the unit-first reshape, the map).
    ``budget`` None: :data:`MEMORY_BYTES`, else a quarter of :func:`brainscore.config.usable_memory`
    (what is left of a Dask worker's ``memory_limit`` inside one).
    """
    if budget is None:
        budget = MEMORY_BYTES if MEMORY_BYTES is not None else config.usable_memory() // 4
    per_unit = 4 * int(n_presentations) + 24 * int(n_receptive_field)
    return int(max(1, min(CHUNK, int(budget) // max(1, per_unit))))


def _as_blocks(responses) -> NeuroidBlocks:
    if isinstance(responses, NeuroidBlocks):
        return responses
    if isinstance(responses, DataAssembly):
        return AssemblyBlocks(responses)
    return ArrayBlocks(np.asarray(responses))


def _select_and_gather(blocks: NeuroidBlocks, stimuli, chunk: int | None = None
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One pass over the units in blocks: receptive-field centres, the selected units and their responses.

    Returns
    -------
    indices : ndarray of int
        The units whose centre is within :data:`~.properties.RF_DELTA` degrees of the gratings' centre.
    centres : ndarray of shape (unit, 2)
    selected : ndarray of shape (presentation, len(indices))
        The selected units' responses to every presentation (the blocks' dtype).
    """
    rf = _rows(stimuli, "Marques2020_receptive_field")
    blank = _rows(stimuli, "Marques2020_blank")
    table = stimuli.iloc[rf]
    position_y, position_x, orientations, phases = _grid(table, ("position_y", "position_x", "orientation"))
    conditions = len(orientations) * len(phases)
    n_units = blocks.n_neuroids
    if chunk is None:
        chunk = units_per_block(blocks.n_presentations, rf.stop - rf.start)
    centres = np.empty((n_units, 2))
    kept_indices, kept_values = [], []
    for start in range(0, n_units, chunk):
        units = slice(start, min(start + chunk, n_units))
        block = blocks.read(units)
        responses = np.asarray(block[rf], dtype=float).T.reshape(-1, len(position_y), len(position_x), conditions)
        centres[units] = prop.receptive_field_centres(responses, np.asarray(block[blank.start], dtype=float),
                                                      position_y, position_x)
        del responses
        near = np.flatnonzero(prop.near(centres[units], STIMULUS_POSITION))
        kept_indices.append(start + near)
        kept_values.append(block[:, near])
        del block
    indices = np.concatenate(kept_indices) if kept_indices else np.zeros(0, dtype=np.int64)
    # column-major, the layout ``values[:, units]`` gives a whole layer in memory: the later reductions then run
    # in the same order, so the numbers do not depend on the block size down to the last bit
    selected = np.empty((blocks.n_presentations, len(indices)), dtype=blocks.dtype, order="F")
    column = 0
    for part in kept_values:
        selected[:, column:column + part.shape[1]] = part
        column += part.shape[1]
    return indices, centres, selected


def select_units(values, stimuli) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the units whose receptive-field centre is within 0.15 degrees of the gratings' centre.

    Parameters
    ----------
    values : ndarray of shape (presentation, unit), or NeuroidBlocks
        Responses to ``stimuli`` (rows in the order of ``stimuli``); read :func:`units_per_block` units
        at a time.
    stimuli : DataFrame
        With the ``stimulus_set`` column of ``Marques2020_V1``.

    Returns
    -------
    indices : ndarray of int
    centres : ndarray of shape (unit, 2)
        Every unit's receptive-field centre (y, x) in degrees (NaN: no response).
    """
    indices, centres, _ = _select_and_gather(_as_blocks(values), stimuli)
    return indices, centres


def study_properties(responses, stimuli, study: str) -> PropertiesAssembly:
    """The properties of ``study`` measured on every selected, responsive model unit.

    Memory: the units are read :func:`units_per_block` at a time (sized from the process's usable
    memory) to map their receptive fields, and only the selected units' responses are kept, so a
    layer larger than memory (given as NeuroidBlocks read from disk) can be measured. The numbers
    do not depend on the block size: every step before the selection is per unit, and everything
    after it sees all selected units at once, as with the whole layer in memory.

    Parameters
    ----------
    responses : DataAssembly or NeuroidBlocks
        ``presentation x neuroid`` responses to ``stimuli`` (the ``Marques2020_V1`` set, placed
        on the model's screen), in memory or read in blocks
        (:meth:`~brainscore.benchmarks.base.Presentation.show_blocks`).
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
    blocks = _as_blocks(responses)
    units, _, values = _select_and_gather(blocks, stimuli)   # values: (presentation, selected unit)
    if not len(units):
        raise ValidationError(f"no unit of the model's V1 layer has its receptive field within {prop.RF_DELTA} "
                              f"degrees of the gratings' centre {STIMULUS_POSITION}: the layer's units may not "
                              f"respond to small gratings; commit V1 to another layer")
    blank = np.asarray(values[_rows(stimuli, "Marques2020_blank").start], dtype=float)
    orientation_rows = _rows(stimuli, "Marques2020_orientation")
    orientation_axes = _grid(stimuli.iloc[orientation_rows], STUDIES["DeValois1982a"][1])
    orientation = np.asarray(values[orientation_rows], dtype=float).T.reshape(
        (len(units),) + tuple(len(a) for a in orientation_axes))
    slope, offset = prop.firing_rate_affine(orientation, blank)
    rows = _rows(stimuli, set_name)
    grid = _grid(stimuli.iloc[rows], axes)
    rates = prop.firing_rates(np.asarray(values[rows], dtype=float).T.reshape(
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
    neuroid_ids = np.asarray(blocks.neuroid_coord("neuroid_id"))[units][kept]
    assembly = PropertiesAssembly(data, dims=("neuroid", "neuronal_property"),
                                  coords={"neuroid_id": ("neuroid", neuroid_ids.astype(object)),
                                          "region": ("neuroid", np.full(len(data), REGION, dtype=object)),
                                          "neuronal_property": names})
    assembly.attrs.update(n_units=int(blocks.n_neuroids), n_selected=int(len(units)), n_kept=int(kept.sum()),
                          firing_rate_slope=slope, firing_rate_offset=offset)
    return assembly


def benchmark(identifier: str, study: str, property_name: str, parent: str, bibtex: str) -> PropertiesBenchmark:
    """The V1 property benchmark ``identifier``: ``property_name`` of ``study`` by ``ks_similarity``."""
    return PropertiesBenchmark(
        identifier=identifier, version=VERSION, assembly=lambda: load_dataset(study),
        stimulus_set=lambda: load_stimulus_set(STIMULUS_SET), property_func=partial(study_properties, study=study),
        similarity_metric=load_metric("ks_similarity", property_name),
        ceiling_func=load_ceiling("ks_similarity", property_name), visual_degrees=VISUAL_DEGREES,
        number_of_trials=NUMBER_OF_TRIALS, region=REGION, parent=parent, bibtex=bibtex, time_bins=TIME_BINS,
        streams=True)
