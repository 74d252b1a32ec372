"""BrainIO's assembly classes, as thin subclasses of :mod:`brainscore.data.assemblies`' own.

``DataAssembly``, ``NeuroidAssembly``, ``BehavioralAssembly`` and ``PropertiesAssembly`` are
subclasses of the ``brainscore`` classes of the same names (``isinstance`` checks against those
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
into the class of the same name here.
"""
from __future__ import annotations

from typing import Any

from brainscore.data import assemblies as _native
from brainscore.data.assemblies import average_repetition

__all__ = ["DataAssembly", "NeuroidAssembly", "BehavioralAssembly", "PropertiesAssembly", "as_reference_class"]


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
