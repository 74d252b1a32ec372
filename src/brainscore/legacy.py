"""The 2019 README's loading functions: ``brainscore.get_assembly`` and ``brainscore.get_stimulus_set``.

They are :func:`brainscore.registry.load_dataset` and :func:`brainscore.registry.load_stimulus_set`
under their old names (the identifiers are this installation's: ``brainscore list datasets``).
The assembly carries its stimulus set (``assembly.stimulus_set``).
"""
from __future__ import annotations

from typing import Any

from brainscore.registry import load_dataset, load_stimulus_set

__all__ = ["get_assembly", "get_stimulus_set"]


def get_assembly(identifier: str) -> Any:
    """The assembly registered as ``identifier`` (:func:`brainscore.load_dataset`).

    Raises
    ------
    UnknownIdentifierError
        With the closest registered identifiers (the reference's S3 names such as
        ``dicarlo.Majaj2015`` are not registered here).
    DataNotFoundError, HashMismatchError
        If its files are missing or corrupt.
    """
    return load_dataset(identifier)


def get_stimulus_set(identifier: str) -> Any:
    """The stimulus set registered as ``identifier`` (:func:`brainscore.load_stimulus_set`).

    Raises
    ------
    UnknownIdentifierError
        With the closest registered identifiers.
    """
    return load_stimulus_set(identifier)
