"""BrainIO's assembly classes, as thin subclasses of :mod:`brainscore.data.assemblies`' classes of the same names
(``NeuronRecordingAssembly`` and ``PropertyAssembly`` the reference's aliases), so every brainscore metric and
benchmark takes them. They keep three behaviours of the reference's ``presentation`` MultiIndex without one:
``mean(dim='repetition')`` over a coordinate along ``presentation`` (exactly
:func:`brainscore.data.assemblies.average_repetition`), ``sel`` on several coordinates of one dim, and arithmetic and
comparisons aligned by value (:func:`align_by_coordinates`). :func:`as_reference_class` turns an assembly brainscore
loaded into the class here; ``walk_coords``, ``merge_data_arrays`` and ``array_is_element`` are the reference's
helpers.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from brainscore.data import assemblies as _native
from brainscore.data.assemblies import average_repetition

__all__ = ["DataAssembly", "NeuroidAssembly", "NeuronRecordingAssembly", "BehavioralAssembly", "PropertiesAssembly",
           "PropertyAssembly", "as_reference_class", "align_by_coordinates", "walk_coords", "merge_data_arrays",
           "array_is_element",
           "AssemblyLoader", "StimulusMergeAssemblyLoader", "StimulusReferenceAssemblyLoader"]


class _ReferenceMean:
    """``mean(dim=<presentation coordinate>)`` averages repeated presentations (see the module notes)."""

    __slots__ = ()

    def mean(self, dim: Any = None, *args, **kwargs):
        """xarray's ``mean``; for ``dim`` a coordinate along ``presentation`` (``'repetition'``),
        :func:`brainscore.data.assemblies.average_repetition` over it. ValueError if ``dim`` is neither a dimension
        nor such a coordinate (or comes with other arguments)."""
        if isinstance(dim, str) and dim not in self.dims:
            if dim not in self.coords:
                raise ValueError(f"cannot average over {dim!r}: it is neither a dimension {tuple(self.dims)} nor a "
                                 f"coordinate {sorted(map(str, self.coords))} of the assembly")
            if self[dim].dims != ("presentation",) or args or kwargs:
                raise ValueError(f"mean(dim={dim!r}) averages over a coordinate along 'presentation' only (with no "
                                 f"other arguments); {dim!r} lies along {self[dim].dims}")
            return average_repetition(self, repetition_coord=dim)
        return super().mean(dim, *args, **kwargs)

    def sel(self, indexers: Any = None, method: Any = None, tolerance: Any = None, drop: bool = False,
            **indexers_kwargs: Any):
        """xarray's ``sel``, except that scalar labels of several coordinates along one dim (the reference's
        MultiIndex levels: ``target.sel(subject='A', condition=1)``, which xarray refuses) select the positions
        where all of them hold, the dim and its coordinates kept (KeyError if none does)."""
        selection = dict(indexers or {}, **indexers_kwargs)
        along: dict[str, list[str]] = {}
        for name, value in selection.items():
            if isinstance(name, str) and name not in self.dims and name in self.coords \
                    and len(self[name].dims) == 1 and np.ndim(value) == 0:
                along.setdefault(self[name].dims[0], []).append(name)
        several = {dim: names for dim, names in along.items() if len(names) > 1}
        if not several or method is not None or tolerance is not None:
            return super().sel(indexers, method=method, tolerance=tolerance, drop=drop, **indexers_kwargs)
        result = self
        for dim, names in several.items():
            mask = np.logical_and.reduce([result[name].values == selection[name] for name in names])
            if not mask.any():
                raise KeyError(f"no {dim} holds {', '.join(f'{n}={selection[n]!r}' for n in names)}")
            result = result.isel({dim: np.flatnonzero(mask)})
        rest = {k: v for k, v in selection.items() if not any(k in names for names in several.values())}
        return result.sel(rest, drop=drop) if rest else result


#: xarray's binary operators that align their operands first (here by :func:`align_by_coordinates`)
_ALIGNING_OPERATORS = ("__add__", "__sub__", "__mul__", "__pow__", "__truediv__", "__floordiv__", "__mod__",
                       "__and__", "__xor__", "__or__", "__lshift__", "__rshift__",
                       "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__")


def _aligning(name: str):
    operator = getattr(xr.DataArray, name)

    def aligned(self, other: Any):
        if isinstance(other, xr.DataArray) and xr.get_options()["arithmetic_join"] == "inner":
            self, other = align_by_coordinates(self, other)
        return operator(self, other)

    aligned.__name__ = aligned.__qualname__ = name
    aligned.__doc__ = f"xarray's ``{name}`` after :func:`align_by_coordinates` (see the module notes)."
    return aligned


for _name in _ALIGNING_OPERATORS:
    setattr(_ReferenceMean, _name, _aligning(_name))
del _name


def _same_entries(left: np.ndarray, right: np.ndarray) -> bool:
    """Whether two coordinates hold equal values position by position (NaN equal to NaN)."""
    return left is right or pd.Index(left).equals(pd.Index(right))


def _coordinates_along(assembly: xr.DataArray, dim: str) -> list[str]:
    return sorted(str(name) for name, coord in assembly.coords.items() if coord.dims == (dim,) and name != dim)


def align_by_coordinates(left: xr.DataArray, right: xr.DataArray) -> tuple[xr.DataArray, xr.DataArray]:
    """``left`` and ``right`` reduced, along every dim they share, to the entries both hold, in ``left``'s order, as
    the reference's MultiIndexes aligned them (xarray's inner join); each returned unchanged where nothing moves.

    A dim is aligned when neither operand has an index on it and both carry the same coordinates along it (an
    entry: the tuple of their values); a dim with an index, or other coordinates on each side, is left to xarray.
    ValueError if an operand holds an entry twice along a dim whose entries differ between the two (ambiguous, as
    pandas refuses for a MultiIndex), or if the two share no entry there (the reference's empty result, later NaN).
    """
    for dim in left.dims:
        if dim not in right.dims or dim in left.indexes or dim in right.indexes:
            continue
        names = _coordinates_along(left, dim)
        if not names or names != _coordinates_along(right, dim):
            continue
        if left.sizes[dim] == right.sizes[dim] and all(_same_entries(left[name].values, right[name].values)
                                                       for name in names):
            continue
        keys = [pd.MultiIndex.from_arrays([operand[name].values for name in names], names=names)
                for operand in (left, right)]
        for operand, key in zip(("left", "right"), keys):
            if not key.is_unique:
                raise ValueError(f"cannot align the two assemblies along {dim!r} by {names}: the {operand} operand "
                                 f"holds the same entry more than once; make the entries unique (or give both the "
                                 f"same order) before combining them")
        common = keys[0].intersection(keys[1], sort=False)
        if len(common) == 0:
            raise ValueError(f"cannot combine the two assemblies along {dim!r}: no entry of {names} is held by both "
                             f"(e.g. left {tuple(keys[0][0])}, right {tuple(keys[1][0])}); an empty result would "
                             f"only turn into NaN later. Select the entries both hold, or compare their values with "
                             f".values")
        left = left.isel({dim: keys[0].get_indexer(common)})
        right = right.isel({dim: keys[1].get_indexer(common)})
    return left, right


class DataAssembly(_ReferenceMean, _native.DataAssembly):
    """:class:`brainscore.data.assemblies.DataAssembly` with ``mean(dim='repetition')`` (see the module notes)."""

    __slots__ = ()


class NeuroidAssembly(_ReferenceMean, _native.NeuroidAssembly):
    """Neural responses ``presentation x neuroid [x time_bin]``: :class:`brainscore.data.assemblies.NeuroidAssembly`
    with ``mean(dim='repetition')``."""

    __slots__ = ()


class BehavioralAssembly(_ReferenceMean, _native.BehavioralAssembly):
    """Behavioural responses, one per ``presentation``: :class:`brainscore.data.assemblies.BehavioralAssembly`
    with ``mean(dim='repetition')``."""

    __slots__ = ()


class PropertiesAssembly(_ReferenceMean, _native.PropertiesAssembly):
    """Per-neuroid properties ``neuroid x neuronal_property``: :class:`brainscore.data.assemblies.PropertiesAssembly`."""

    __slots__ = ()


class NeuronRecordingAssembly(NeuroidAssembly):
    """The reference's name for recordings of single neurons: a :class:`NeuroidAssembly` (same dims and coords)."""

    __slots__ = ()


class PropertyAssembly(PropertiesAssembly):
    """The reference's assembly of measured properties (per-neuroid tuning properties, per-subject psychophysical
    thresholds ``subject``, ...): a :class:`PropertiesAssembly`, whose dims are not checked unless validated."""

    __slots__ = ()


_BY_NATIVE = {_native.NeuroidAssembly: NeuroidAssembly, _native.BehavioralAssembly: BehavioralAssembly,
              _native.PropertiesAssembly: PropertiesAssembly, _native.DataAssembly: DataAssembly}


def as_reference_class(assembly: Any) -> Any:
    """``assembly`` as the class of the same name here (values, coordinates and attrs shared, not copied); anything
    else (a class here, a subclass brainscore does not know, a stimulus set) unchanged."""
    for native, ours in _BY_NATIVE.items():
        if type(assembly) is native:
            return ours(assembly)
    return assembly


def walk_coords(assembly: Any):
    """:func:`brainscore.data.assemblies.walk_coords`, except that a stacked dimension (a pandas ``MultiIndex``) is
    not yielded itself, only its levels, as in the reference."""
    for name, dims, values in _native.walk_coords(assembly):
        if isinstance(assembly.indexes.get(name), pd.MultiIndex):
            continue
        yield name, dims, values


def array_is_element(array: Any, values: Any) -> Any:
    """Boolean mask: which entries of ``array`` are among ``values`` (``numpy.isin``)."""
    return np.isin(np.asarray(array), np.asarray(list(values) if not hasattr(values, "__len__") else values))


def merge_data_arrays(data_arrays: Any) -> Any:
    """One assembly, of the first's class, from several with the same dims holding different parts of it: an outer
    join by coordinate values (:func:`xarray.merge`). ValueError if none is given or two disagree on an entry."""
    arrays = list(data_arrays)
    if not arrays:
        raise ValueError("merge_data_arrays needs at least one assembly")
    cls = type(arrays[0])
    name = "__merged__"
    merged = xr.merge([xr.DataArray(a).rename(name).to_dataset() for a in arrays], compat="no_conflicts",
                      join="outer", combine_attrs="override")[name]
    merged.name = arrays[0].name
    return cls(merged)


class AssemblyLoader:
    """The reference's loader of a packaged assembly file (``assy_<id>.nc``), on
    :func:`brainscore.data.packaging.load_packaged_assembly`; ``cls`` an assembly class (here or brainscore's) or
    its name."""

    merge_stimulus_set = False

    def __init__(self, cls: Any, file_path: Any, stimulus_set_identifier: str | None = None, stimulus_set: Any = None):
        self.cls, self.file_path = cls, file_path
        self.stimulus_set_identifier, self.stimulus_set = stimulus_set_identifier, stimulus_set

    def load(self) -> Any:
        """The assembly, of ``cls`` here, the stimulus set merged on (by ``stimulus_id``) or kept in
        ``attrs['stimulus_set']`` as the loader says (ValueError for a ``cls`` brainscore does not package)."""
        from brainscore.data.packaging import ASSEMBLY_CLASSES, load_packaged_assembly

        name = self.cls if isinstance(self.cls, str) else self.cls.__name__
        name = {"NeuronRecordingAssembly": "NeuroidAssembly", "PropertyAssembly": "PropertiesAssembly"}.get(name, name)
        if name not in ASSEMBLY_CLASSES:
            raise ValueError(f"cls must be one of {sorted(ASSEMBLY_CLASSES)}, got {self.cls!r}")
        merge = self.stimulus_set is not None and self.merge_stimulus_set
        assembly = load_packaged_assembly(self.file_path, stimulus_set=self.stimulus_set if merge else None,
                                          cls=ASSEMBLY_CLASSES[name])
        if self.stimulus_set is not None and not merge:
            assembly.attrs["stimulus_set"] = self.stimulus_set
        if self.stimulus_set is not None:
            assembly.attrs["stimulus_set_identifier"] = (self.stimulus_set_identifier
                                                         or getattr(self.stimulus_set, "identifier", None))
        assembly = as_reference_class(assembly)
        if not isinstance(self.cls, str) and isinstance(assembly, _native.DataAssembly) \
                and issubclass(self.cls, type(assembly)) and self.cls is not type(assembly):
            assembly = self.cls(assembly)  # e.g. NeuronRecordingAssembly, a subclass of NeuroidAssembly here
        return assembly


class StimulusMergeAssemblyLoader(AssemblyLoader):
    """:class:`AssemblyLoader` that merges the stimulus set's columns onto ``presentation`` (by ``stimulus_id``)."""

    merge_stimulus_set = True


class StimulusReferenceAssemblyLoader(AssemblyLoader):
    """:class:`AssemblyLoader` that keeps the stimulus set in ``attrs['stimulus_set']`` without merging its columns."""
