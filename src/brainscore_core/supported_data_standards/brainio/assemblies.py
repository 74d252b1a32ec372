"""BrainIO's assembly classes, as thin subclasses of :mod:`brainscore.data.assemblies`' own.

``DataAssembly``, ``NeuroidAssembly`` (and its reference alias ``NeuronRecordingAssembly``),
``BehavioralAssembly`` and ``PropertiesAssembly`` (and ``PropertyAssembly``) are subclasses of the ``brainscore`` classes of the same names (``isinstance`` checks against those
hold, and every ``brainscore`` metric and benchmark takes them) that add one thing the reference's
tutorials rely on: **averaging over a presentation coordinate by name**,
``assembly.mean(dim='repetition')``, where ``repetition`` is a coordinate along ``presentation``
(the reference kept it as a level of a ``presentation`` MultiIndex; here it is a plain
coordinate). That call is :func:`brainscore.data.assemblies.average_repetition`, so it equals
``average_repetition(assembly, repetition_coord='repetition')`` exactly. Any other ``mean`` is
xarray's.

Build them as the tutorials do::

    assembly = BehavioralAssembly(['dog', 'cat'], coords={'stimulus_id': ('presentation', ['a', 'b'])},
                                  dims=['presentation'])

:func:`as_reference_class` turns an assembly ``brainscore`` loaded (``brainscore.load_dataset``)
into the class of the same name here. ``walk_coords``, ``merge_data_arrays`` and
``array_is_element`` are the reference's helper functions over these classes (see each).
"""
from __future__ import annotations

from typing import Any

from brainscore.data import assemblies as _native
from brainscore.data.assemblies import average_repetition

__all__ = ["DataAssembly", "NeuroidAssembly", "NeuronRecordingAssembly", "BehavioralAssembly", "PropertiesAssembly",
           "PropertyAssembly", "as_reference_class", "walk_coords", "merge_data_arrays", "array_is_element"]


class _ReferenceMean:
    """``mean(dim=<presentation coordinate>)`` averages repeated presentations (see the module notes)."""

    __slots__ = ()

    def mean(self, dim: Any = None, *args, **kwargs):
        """xarray's ``mean``; for ``dim`` a non-dimension coordinate along one dim, the mean over its values.

        Parameters
        ----------
        dim : str, sequence of str or None
            A dimension (xarray's mean) or a coordinate such as ``'repetition'`` lying along
            ``presentation``: then presentations that differ only in that coordinate are averaged
            (NaN ignored), as :func:`brainscore.data.assemblies.average_repetition` does.

        Raises
        ------
        ValueError
            If ``dim`` names neither a dimension nor a coordinate of the assembly.
        """
        if isinstance(dim, str) and dim not in self.dims:
            if dim not in self.coords:
                raise ValueError(f"cannot average over {dim!r}: it is neither a dimension {tuple(self.dims)} nor a "
                                 f"coordinate {sorted(map(str, self.coords))} of the assembly")
            if self[dim].dims != ("presentation",) or args or kwargs:
                raise ValueError(f"mean(dim={dim!r}) averages over a coordinate along 'presentation' only (with no "
                                 f"other arguments); {dim!r} lies along {self[dim].dims}")
            return average_repetition(self, repetition_coord=dim)
        return super().mean(dim, *args, **kwargs)


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
    """``assembly`` as the class of the same name here (values, coordinates and attrs shared, not copied).

    An assembly already of a class here, a subclass ``brainscore`` does not know, or anything that is
    not an assembly (e.g. a stimulus set) is returned unchanged.
    """
    for native, ours in _BY_NATIVE.items():
        if type(assembly) is native:
            return ours(assembly)
    return assembly


def walk_coords(assembly: Any):
    """Yield ``(name, dims, values)`` for every coordinate of ``assembly`` that holds metadata.

    A stacked dimension (a pandas ``MultiIndex``, e.g. after ``assembly.stack(neuroid=['neuroid_id'])``)
    is not itself yielded: its levels are, each as a coordinate along that dimension, as in the
    reference. Otherwise this is :func:`brainscore.data.assemblies.walk_coords`.

    Parameters
    ----------
    assembly : xarray.DataArray

    Yields
    ------
    tuple of (str, tuple of str, numpy.ndarray)
    """
    import pandas as pd

    for name, dims, values in _native.walk_coords(assembly):
        if isinstance(assembly.indexes.get(name), pd.MultiIndex):
            continue
        yield name, dims, values


def array_is_element(array: Any, values: Any) -> Any:
    """Boolean mask: which entries of ``array`` are among ``values`` (``numpy.isin``), the reference's helper
    for selecting presentations by a list of ids (``assembly.isel(presentation=array_is_element(ids, wanted))``)."""
    import numpy as np

    return np.isin(np.asarray(array), np.asarray(list(values) if not hasattr(values, "__len__") else values))


def merge_data_arrays(data_arrays: Any) -> Any:
    """One assembly from several that hold different parts of it (other stimuli, neuroids or time bins).

    Coordinates are aligned by their values (an outer join, :func:`xarray.merge`); an entry present in
    two inputs must hold the same value in both. The result has the class of the first input.

    Parameters
    ----------
    data_arrays : sequence of DataArray
        With the same dims; at least one.

    Returns
    -------
    DataArray
        Of ``type(data_arrays[0])``.

    Raises
    ------
    ValueError
        If ``data_arrays`` is empty, or two inputs disagree on an entry (xarray's ``MergeError``).
    """
    import xarray as xr

    arrays = list(data_arrays)
    if not arrays:
        raise ValueError("merge_data_arrays needs at least one assembly")
    cls = type(arrays[0])
    name = "__merged__"
    merged = xr.merge([xr.DataArray(a).rename(name).to_dataset() for a in arrays], compat="no_conflicts",
                      join="outer", combine_attrs="override")[name]
    merged.name = arrays[0].name
    return cls(merged)
