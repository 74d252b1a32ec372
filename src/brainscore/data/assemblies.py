"""Assemblies: labelled arrays of neural or behavioural data, built on :class:`xarray.DataArray`.

Conventions (Brain-Score's data standard, Schrimpf et al. 2018):

- dimension ``presentation``: one entry per shown stimulus (a stimulus shown 10 times gives 10
  presentations), with coordinates ``stimulus_id`` and optionally ``repetition``, ``object_name``…
- dimension ``neuroid``: one entry per recorded unit (neuron, site, voxel or model unit), with
  ``neuroid_id`` and optionally ``region``.
- dimension ``time_bin``: with ``time_bin_start`` and ``time_bin_end`` in milliseconds after
  stimulus onset.

Metadata live in plain non-dimension coordinates (no MultiIndex), so the assemblies work on a
current xarray. Use :meth:`DataAssembly.sel_coords` (or ``set_xindex``) to select by value.
"""
from __future__ import annotations

from typing import Hashable, Iterable

import numpy as np
import pandas as pd
import xarray as xr

from brainscore.errors import AlignmentError, ValidationError


def _defer_dask_array_import() -> bool:
    """Let xarray import dask only once something uses it (0.6 s of CPU saved on every command).

    xarray asks ``isinstance(data, dask.array.Array)`` of every array it wraps, and imports
    ``dask.array`` for it when dask is installed. No object can be a dask array before
    ``dask.array`` is imported, so until then the answer is "no" without importing it; afterwards
    (and for dask's version and module) xarray's own record of dask is used. Installed in xarray's
    private table of duck-array modules; returns False (nothing changed) if that table is missing.

    Likewise xarray's ``is_dask_collection(x)`` imports ``dask.base`` to ask it; dask's answer is
    False for a class or an object without a callable ``__dask_graph__``, which is decided here
    without importing dask (any other object is passed on to dask).
    """
    import sys

    try:
        from xarray.namedarray import pycompat
    except ImportError:
        return False
    table = getattr(pycompat, "_cached_duck_array_modules", None)
    module_class = getattr(pycompat, "DuckArrayModule", None)
    if not isinstance(table, dict) or module_class is None or "dask" in table:
        return False

    class _DaskUntilImported(module_class):
        def __init__(self):  # noqa: D107 - imports nothing
            self._real = None

        def _resolved(self):
            if self._real is None:
                self._real = module_class("dask")
                table["dask"] = self._real
            return self._real

        @property
        def type(self):
            return self._resolved().type if "dask.array" in sys.modules else ()

        @property
        def module(self):
            return self._resolved().module

        @property
        def version(self):
            return self._resolved().version

        @property
        def available(self):
            return self._resolved().available

    table["dask"] = _DaskUntilImported()
    try:
        from xarray.namedarray import utils
    except ImportError:
        return True
    asks_dask = getattr(utils, "is_dask_collection", None)
    if callable(asks_dask) and not getattr(asks_dask, "_brainscore_deferred", False):
        def is_dask_collection(x) -> bool:
            if isinstance(x, type) or not callable(getattr(x, "__dask_graph__", None)):
                return False  # dask.base.is_dask_collection's own first test
            return asks_dask(x)

        is_dask_collection._brainscore_deferred = True
        utils.is_dask_collection = is_dask_collection
    return True


_defer_dask_array_import()


class DataAssembly(xr.DataArray):
    """Base assembly: an :class:`xarray.DataArray` with Brain-Score conventions and helpers.

    Operations (``isel``, arithmetic, ``mean``) return the same subclass.
    """

    __slots__ = ()
    REQUIRED_DIMS: tuple[str, ...] = ()
    REQUIRED_COORDS: dict[str, str] = {}

    # ---- metadata -----------------------------------------------------------------------------
    def coords_on(self, dim: str) -> list[str]:
        """Names of the coordinates that lie along ``dim`` only (in their stored order)."""
        return [name for name, coord in self.coords.items() if coord.dims == (dim,)]

    def coord_frame(self, dim: str) -> pd.DataFrame:
        """The coordinates along ``dim`` as a DataFrame with one row per entry of ``dim``."""
        names = [n for n in self.coords_on(dim) if n != dim]
        return pd.DataFrame({name: self[name].values for name in names})

    def sel_coords(self, **values) -> "DataAssembly":
        """Select entries by coordinate value, e.g. ``sel_coords(stimulus_id=["a", "b"])``.

        Each keyword is a coordinate along one dimension and a value or list of values. Entries keep
        the assembly's order (not the order of the given values).

        Raises
        ------
        KeyError
            If a coordinate does not exist.
        """
        indexers: dict[str, np.ndarray] = {}
        for name, wanted in values.items():
            if name not in self.coords:
                raise KeyError(f"assembly has no coordinate {name!r}; coordinates: {list(self.coords)}")
            (dim,) = self[name].dims
            wanted = [wanted] if np.isscalar(wanted) else list(wanted)
            mask = np.isin(self[name].values, wanted)
            indexers[dim] = mask if dim not in indexers else indexers[dim] & mask
        return self.isel({dim: np.flatnonzero(mask) for dim, mask in indexers.items()})

    def validate(self) -> "DataAssembly":
        """Check the dims and required coordinates of this assembly type.

        Raises
        ------
        ValidationError
            Naming the missing dims or coordinates, or the coordinates with missing values.
        """
        missing_dims = [d for d in self.REQUIRED_DIMS if d not in self.dims]
        if missing_dims:
            raise ValidationError(f"{type(self).__name__} needs dims {self.REQUIRED_DIMS}, is missing "
                                  f"{missing_dims} (has {self.dims})")
        for coord, dim in self.REQUIRED_COORDS.items():
            if coord not in self.coords:
                raise ValidationError(f"{type(self).__name__} needs coordinate {coord!r} on dim {dim!r}; "
                                      f"coordinates are {list(self.coords)}")
            if self[coord].dims != (dim,):
                raise ValidationError(f"coordinate {coord!r} must lie along {dim!r}, lies along {self[coord].dims}")
        return self


class NeuroidAssembly(DataAssembly):
    """Neural (or model) responses: ``presentation x neuroid [x time_bin]``.

    Required coordinates: ``stimulus_id`` on ``presentation`` and ``neuroid_id`` on ``neuroid``;
    with a ``time_bin`` dim, ``time_bin_start`` and ``time_bin_end`` (ms).
    """

    __slots__ = ()
    REQUIRED_DIMS = ("presentation", "neuroid")
    REQUIRED_COORDS = {"stimulus_id": "presentation", "neuroid_id": "neuroid"}

    def validate(self) -> "NeuroidAssembly":
        super().validate()
        if "time_bin" in self.dims:
            for coord in ("time_bin_start", "time_bin_end"):
                if coord not in self.coords:
                    raise ValidationError(f"a time_bin dim needs coordinate {coord!r} (ms)")
        ids = self["neuroid_id"].values
        if len(np.unique(ids)) != len(ids):
            raise ValidationError("neuroid_id values must be unique")
        return self


class BehavioralAssembly(DataAssembly):
    """Behavioural responses: one value (choice, probability, ...) per ``presentation``.

    Required coordinate: ``stimulus_id`` on ``presentation``.
    """

    __slots__ = ()
    REQUIRED_DIMS = ("presentation",)
    REQUIRED_COORDS = {"stimulus_id": "presentation"}


class PropertiesAssembly(DataAssembly):
    """Per-neuroid response properties (e.g. orientation bandwidth): ``neuroid x neuronal_property``."""

    __slots__ = ()
    REQUIRED_DIMS = ("neuroid",)
    REQUIRED_COORDS = {"neuroid_id": "neuroid"}


def nan_group_mean(values: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """Mean over the rows of each group, per column, ignoring NaN.

    Parameters
    ----------
    values : ndarray of shape (n_rows, n_columns)
    groups : ndarray of int, shape (n_rows,)
        Group code of each row, in ``0 .. n_groups - 1``.
    n_groups : int

    Returns
    -------
    ndarray of shape (n_groups, n_columns)
        NaN where a group has no finite value in a column.
    """
    valid = ~np.isnan(values)
    sums = np.zeros((n_groups, values.shape[1]))
    counts = np.zeros((n_groups, values.shape[1]))
    np.add.at(sums, groups, np.where(valid, values, 0.0))
    np.add.at(counts, groups, valid)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts


def average_repetition(assembly: DataAssembly, repetition_coord: str = "repetition") -> DataAssembly:
    """Average over repeated presentations of each stimulus.

    Presentations are grouped by every presentation coordinate except ``repetition_coord`` (and
    coordinates that vary within a stimulus, which are dropped: for example ``trial_id``). Groups
    come out in the lexicographic order of their coordinate tuples (coordinates in stored order), as
    in the reference implementation, which fixes the order cross-validation splits see.

    Parameters
    ----------
    assembly : DataAssembly
        With a ``presentation`` dim; may contain NaN, which is ignored in the mean.
    repetition_coord : str
        Coordinate that numbers the repetitions.

    Returns
    -------
    DataAssembly
        Same type, one presentation per group; float values.
    """
    if repetition_coord not in assembly.coords:
        return assembly
    frame = assembly.coord_frame("presentation").drop(columns=[repetition_coord])
    # drop coords that vary within a stimulus (they would split groups into single trials)
    if "stimulus_id" in frame:
        varying = [c for c in frame.columns if c != "stimulus_id"
                   and frame.groupby("stimulus_id", sort=False)[c].nunique(dropna=False).max() > 1]
        frame = frame.drop(columns=varying)
    keys = list(frame.columns)
    grouper = frame.groupby(keys, sort=True, dropna=False)
    codes = grouper.ngroup().to_numpy()
    n_groups = grouper.ngroups
    axis = assembly.get_axis_num("presentation")
    values = np.moveaxis(np.asarray(assembly.values, dtype=float), axis, 0)
    flat = values.reshape(values.shape[0], -1)
    means = nan_group_mean(flat, codes, n_groups).reshape((n_groups,) + values.shape[1:])
    first = pd.Series(np.arange(len(codes))).groupby(codes).first().to_numpy()  # one row per group
    coords = {name: ("presentation", frame[name].to_numpy()[first]) for name in keys}
    for name, coord in assembly.coords.items():
        if "presentation" not in coord.dims:
            coords[name] = coord
    dims = ("presentation",) + tuple(d for d in assembly.dims if d != "presentation")
    result = type(assembly)(means, dims=dims, coords=coords, attrs=dict(assembly.attrs))
    return result.transpose(*assembly.dims)


def _id_kind(ids: np.ndarray) -> str | None:
    """``"numbers"`` or ``"strings"`` when every value of ``ids`` is one of them, else None."""
    ids = np.asarray(ids)
    if ids.dtype.kind in "iuf":
        return "numbers"
    if ids.dtype.kind in "US":
        return "strings"
    kinds = {"strings" if isinstance(v, str) else "numbers" if isinstance(v, (int, float, np.number))
             and not isinstance(v, bool) else "other" for v in ids.ravel().tolist()}
    return kinds.pop() if len(kinds) == 1 and "other" not in kinds else None


def check_id_types(ids1, ids2, coord: str = "stimulus_id",
                   names: tuple[str, str] = ("first assembly", "second assembly")) -> None:
    """Raise when the ``coord`` values of one assembly are all numbers and the other's all strings: ``3`` never
    equals ``"3"``, so no stimulus would match, and the error would blame the stimuli instead of their type.

    Raises
    ------
    AlignmentError
        Naming both types, examples of each and the fix.
    """
    kinds = _id_kind(ids1), _id_kind(ids2)
    if None in kinds or kinds[0] == kinds[1] or 0 in (len(ids1), len(ids2)):
        return
    examples = [list(np.asarray(ids)[:2].tolist()) for ids in (ids1, ids2)]
    raise AlignmentError(f"the {names[0]}'s {coord} values are {kinds[0]} (e.g. {examples[0]}) and the "
                         f"{names[1]}'s are {kinds[1]} (e.g. {examples[1]}): a number never equals a string, so no "
                         f"stimulus matches. Give both the same type (e.g. assign_coords({coord}="
                         f"assembly['{coord}'].astype(str)))")


#: how :func:`presentation_order` treats a value that ``values`` holds more than once
REPEATS = ("error", "first", "aligned")


def presentation_order(values, wanted, name: str = "stimulus_id", *, repeats: str = "error",
                       complete: bool = False, sides: tuple[str, str] = ("source", "target"),
                       wanted_unique: bool = False, entry: str = "presentation") -> np.ndarray:
    """Positions in ``values`` of each of ``wanted``: the one implementation of alignment by id.

    ``values[order]`` equals ``wanted`` element by element. Values are compared as they are (``"3"``
    never equals ``3``: cast both first where the types may differ; one side all numbers and the other
    all strings raises, see :func:`check_id_types`). ``wanted`` may name a value more than once (its
    position repeats) unless ``wanted_unique``.

    Parameters
    ----------
    values : array-like of shape (n,)
        The ids of the side being reordered (e.g. the model's ``stimulus_id`` per presentation).
    wanted : array-like of shape (m,)
        The ids in the order wanted (e.g. the target's ``stimulus_id`` per presentation).
    name : str
        The coordinate's name, for the messages.
    repeats : {"error", "first", "aligned"}
        A value that ``values`` holds more than once: ``"error"`` raises (one presentation per stimulus,
        e.g. a model against averaged data); ``"first"`` matches its first occurrence (a look-up in a
        table such as a stimulus set that may list an image twice); ``"aligned"`` raises too, unless
        ``values`` already equals ``wanted`` position by position, when the order is ``arange(n)``
        (repetitions of the same trials in the same order, as ``XarrayCorrelation`` compares them).
    complete : bool
        Also raise when ``values`` holds a value ``wanted`` lacks (the two hold the same set of ids);
        otherwise such values are left out of the order.
    sides : (str, str)
        What ``values`` and ``wanted`` belong to, for the messages (e.g. ``("source (model)", "target")``).
    wanted_unique : bool
        Also raise when ``wanted`` repeats a value.
    entry : str
        What one element of ``values`` is, for the messages (``"presentation"``, ``"row"``).

    Returns
    -------
    ndarray of int, shape (m,)
        ``order`` with ``values[order[k]] == wanted[k]``.

    Raises
    ------
    AlignmentError
        If one side's ids are numbers and the other's strings; if ``values`` (or, with
        ``wanted_unique``, ``wanted``) repeats an id (``repeats="error"``/``"aligned"``), naming up to
        five and the fix (average over repetitions); if ``values`` lacks ids of ``wanted`` (or, with
        ``complete``, holds ids ``wanted`` lacks), naming how many and up to five.
    ValueError
        If ``repeats`` is not one of :data:`REPEATS`.
    """
    if repeats not in REPEATS:
        raise ValueError(f"repeats must be one of {REPEATS}, not {repeats!r}")
    values, wanted = np.asarray(values), np.asarray(wanted)
    if repeats == "aligned" and values.shape == wanted.shape and np.array_equal(values, wanted):
        return np.arange(len(values))  # already aligned (repetitions included)
    check_id_types(values, wanted, name, sides)
    index = pd.Index(values)
    checked = [(sides[0], index)] + ([(sides[1], pd.Index(wanted))] if wanted_unique else [])
    for side, ids in checked:
        if (repeats != "first" or ids is not index) and not ids.is_unique:
            repeated = pd.unique(ids[ids.duplicated()])[:5].tolist()
            raise AlignmentError(f"the {side} repeats {name} values {repeated}; average over repetitions first "
                                 f"(one {entry} per {name})")
    if not index.is_unique:  # repeats == "first": each value's first occurrence
        index = index[~index.duplicated()]
        first = np.flatnonzero(~pd.Index(values).duplicated())
        order = index.get_indexer(wanted)
        order = np.where(order < 0, -1, first[np.maximum(order, 0)])
    else:
        order = index.get_indexer(wanted)
    if (order < 0).any():
        missing = pd.unique(wanted[order < 0])
        raise AlignmentError(f"the {sides[0]} has no {entry} for {len(missing)} {name} values of the {sides[1]}, "
                             f"e.g. {missing[:5].tolist()}; both must hold the same {name} values"
                             + ("; was the model shown the benchmark's stimuli?" if entry == "presentation" else ""))
    if complete:
        extra = pd.unique(values[~pd.Index(values).isin(wanted)])
        if len(extra):
            raise AlignmentError(f"the {sides[1]} has no {entry} for {len(extra)} {name} values of the "
                                 f"{sides[0]}, e.g. {extra[:5].tolist()}; both must hold the same {name} values")
    return order


def align_presentations(source: DataAssembly, target: DataAssembly,
                        coord: str = "stimulus_id") -> tuple[DataAssembly, DataAssembly]:
    """Put ``source`` in the presentation order of ``target``, matching by ``coord``.

    Both must hold each value of ``coord`` once (average repetitions first); source presentations
    of stimuli the target lacks are left out (:func:`presentation_order`).

    Returns
    -------
    (DataAssembly, DataAssembly)
        ``source`` with one presentation per target presentation, in the target's order; ``target``
        as given.

    Raises
    ------
    AlignmentError
        If a value is missing from the source, or repeated on either side (the message names examples),
        or one side's values are numbers and the other's strings (:func:`check_id_types`).
    """
    position = presentation_order(source[coord].values, target[coord].values, coord,
                                  sides=("source (model)", "target"), wanted_unique=True)
    return source.isel(presentation=position), target


def attach_stimulus_set(assembly: DataAssembly, stimulus_set) -> DataAssembly:
    """Keep ``stimulus_set`` with ``assembly`` (``attrs['stimulus_set']`` and its identifier), checking ids.

    Parameters
    ----------
    assembly : DataAssembly
        With a ``stimulus_id`` coordinate.
    stimulus_set : StimulusSet

    Returns
    -------
    DataAssembly
        ``assembly``, with ``attrs['stimulus_set']`` and ``attrs['stimulus_set_identifier']`` set.

    Raises
    ------
    AlignmentError
        If the assembly names stimuli the stimulus set lacks (first five named).
    """
    missing = np.setdiff1d(assembly["stimulus_id"].values, stimulus_set["stimulus_id"].values)
    if len(missing):
        raise AlignmentError(f"{assembly.attrs.get('identifier')}: stimulus ids {list(missing[:5])} have no "
                             f"image in stimulus set {stimulus_set.identifier}")
    assembly.attrs["stimulus_set_identifier"] = stimulus_set.identifier
    assembly.attrs["stimulus_set"] = stimulus_set
    return assembly


def walk_coords(assembly: xr.DataArray) -> Iterable[tuple[Hashable, tuple[str, ...], np.ndarray]]:
    """Yield ``(name, dims, values)`` for every coordinate."""
    for name, coord in assembly.coords.items():
        yield name, coord.dims, coord.values


def _has_coord(assembly: xr.DataArray, name: str) -> bool:
    """Whether ``assembly[name]`` exists (a coordinate, or a dim's implicit index)."""
    try:
        assembly[name]
    except (KeyError, AttributeError, ValueError):
        return False
    return True


def block_diagonal_concat(slices: Iterable[xr.DataArray], presentation_coords: Iterable[str] | None = None,
                          neuroid_coords: Iterable[str] | None = None) -> NeuroidAssembly:
    """Stack per-subject ``presentation x neuroid`` slices on the diagonal: subject ``i``'s presentations hold
    values only in subject ``i``'s neuroids, NaN everywhere else.

    For data sets whose subjects each saw their own stimuli (or whose neuroids are each subject's own
    voxels): one assembly holds them all without inventing responses, and a per-subject analysis (e.g.
    :class:`brainscore.benchmarks.aggregate.SubjectMeanBenchmark`) takes each block back out.

    Parameters
    ----------
    slices : iterable of DataArray
        Each ``presentation x neuroid`` (in either order; other dims are refused), in subject order.
    presentation_coords, neuroid_coords : iterable of str, optional
        Coordinates concatenated along each dim (in slice order); a name missing from any slice is left
        out of the result. None (default): every coordinate that lies along that dim only in the first
        slice and that every slice has.

    Returns
    -------
    NeuroidAssembly
        Shape ``(sum of presentations, sum of neuroids)``, named ``"data"``; of the first slice's float dtype
        (float32 when it is not a float), NaN off the diagonal blocks.

    Raises
    ------
    ValueError
        If ``slices`` is empty or a slice is not ``presentation x neuroid``.
    """
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
        if names is None:
            names = [name for name, coord in slices[0].coords.items() if coord.dims == (dim,) and name != dim]
        for name in names:
            if all(_has_coord(part, name) for part in slices):
                coords[name] = (dim, np.concatenate([np.asarray(part[name].values) for part in slices]))
    return NeuroidAssembly(xr.DataArray(data, dims=("presentation", "neuroid"), coords=coords, name="data"))
