"""Responses read a block of neuroids at a time: what a per-neuroid analysis needs of a layer too large to hold.

A ``presentation x neuroid`` recording of a wide layer on many stimuli may not fit in memory
(ResNet-18's ``layer1.1`` on the 9097 gratings of Marques et al. 2021: 64 x 56 x 56 = 200,704
neuroids, 7.3 GB of float32). An analysis that treats every neuroid alone (a single-neuron
property) can read it in column blocks instead: :class:`NeuroidBlocks` is that view. The model layer
implements it on its on-disk features (``brainscore.models.extraction.core``); :class:`ArrayBlocks`
and :class:`AssemblyBlocks` wrap values already in memory, so one analysis serves both and gives the same numbers.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from brainscore.data.assemblies import DataAssembly
from brainscore.errors import ValidationError

__all__ = ["NeuroidBlocks", "ArrayBlocks", "AssemblyBlocks"]


class NeuroidBlocks(ABC):
    """``presentation x neuroid`` responses, read one block of neuroids at a time.

    Attributes
    ----------
    shape : tuple of int
        ``(n_presentations, n_neuroids)``; presentations in the order of the stimuli shown.
    dtype : numpy dtype
        Of the values :meth:`read` returns (as the in-memory assembly would hold them).
    """

    shape: tuple[int, int]
    dtype: np.dtype

    @abstractmethod
    def read(self, neuroids: slice | np.ndarray, presentations: slice | np.ndarray | None = None) -> np.ndarray:
        """The values of ``neuroids`` (a slice or an index array) at ``presentations`` (default: all).

        Returns
        -------
        ndarray of shape (n_presentations_read, n_neuroids_read), :attr:`dtype`
            A new array (never a view of a file); rows in the order of ``presentations``.
        """

    @abstractmethod
    def neuroid_coord(self, name: str) -> np.ndarray:
        """The ``neuroid`` coordinate ``name`` (length ``n_neuroids``).

        Raises
        ------
        KeyError
            If there is no such coordinate.
        """

    @property
    def n_neuroids(self) -> int:
        return int(self.shape[1])

    @property
    def n_presentations(self) -> int:
        return int(self.shape[0])


class ArrayBlocks(NeuroidBlocks):
    """:class:`NeuroidBlocks` over a ``(presentation, neuroid)`` array in memory.

    Parameters
    ----------
    values : ndarray of shape (n_presentations, n_neuroids)
    neuroid_coords : mapping of str to array, optional
        Coordinates along ``neuroid`` (one value per neuroid each).

    Raises
    ------
    ValidationError
        If ``values`` is not 2-D or a coordinate has the wrong length.
    """

    def __init__(self, values: np.ndarray, neuroid_coords=None):
        values = np.asarray(values)
        if values.ndim != 2:
            raise ValidationError(f"responses read in neuroid blocks must be 2-D (presentation, neuroid); got shape "
                                  f"{values.shape}")
        self._values = values
        self.shape = tuple(int(n) for n in values.shape)
        self.dtype = values.dtype
        self._coords = {name: np.asarray(coord) for name, coord in dict(neuroid_coords or {}).items()}
        for name, coord in self._coords.items():
            if coord.shape != (self.shape[1],):
                raise ValidationError(f"neuroid coordinate {name!r} has shape {coord.shape}; expected "
                                      f"({self.shape[1]},), one value per neuroid")

    def read(self, neuroids, presentations=None) -> np.ndarray:
        presentations = slice(None) if presentations is None else presentations
        if isinstance(presentations, slice) or isinstance(neuroids, slice):
            return np.array(self._values[presentations, neuroids])
        return self._values[np.ix_(np.asarray(presentations), np.asarray(neuroids))]

    def neuroid_coord(self, name: str) -> np.ndarray:
        if name not in self._coords:
            raise KeyError(f"no neuroid coordinate {name!r}")
        return self._coords[name]


class AssemblyBlocks(ArrayBlocks):
    """:class:`NeuroidBlocks` over an assembly in memory (``presentation x neuroid``, or with one ``time_bin``).

    Its ``neuroid`` coordinates are the block's coordinates; :attr:`assembly` keeps the assembly.

    Raises
    ------
    ValidationError
        If the assembly is not ``presentation x neuroid`` after dropping a single ``time_bin``.
    """

    def __init__(self, assembly: DataAssembly):
        if "time_bin" in assembly.dims and assembly.sizes["time_bin"] == 1:
            assembly = assembly.squeeze("time_bin", drop=False)
        if set(assembly.dims) != {"presentation", "neuroid"}:
            raise ValidationError(f"responses read in neuroid blocks must be presentation x neuroid (one time bin at "
                                  f"most); got dims {assembly.dims}")
        self.assembly = assembly
        super().__init__(assembly.transpose("presentation", "neuroid").values,
                         {name: coord.values for name, coord in assembly.coords.items() if coord.dims == ("neuroid",)})
