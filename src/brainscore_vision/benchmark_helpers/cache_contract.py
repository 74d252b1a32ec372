"""``stimulus_identifier_is_cacheable`` and ``assert_stimulus_identifier_is_cacheable``: the reference's check that a
benchmark's stimulus-set identifier lets its activations be stored.

The reference keys stored activations by the stimulus set's *identifier* plus a revision of the data plugin that
registered it, so a synthesised stimulus set must be named ``<registered identifier>--<marker>`` or nothing is
stored for it. Here stored activations are keyed by the stimulus set's *content*
(:meth:`brainscore.data.stimuli.StimulusSet.content_hash`: its stimulus ids and the sha256 of every file), never
by its identifier: every stimulus set's activations are stored, whatever it is called, and a set changed in place
gets new entries because its bytes changed. So every identifier passes; plugins that call the check in their
tests (the reference's ``laion_fmri``) run unchanged.
"""
from __future__ import annotations

from typing import Any

__all__ = ["stimulus_identifier_is_cacheable", "assert_stimulus_identifier_is_cacheable"]


def stimulus_identifier_is_cacheable(stimuli_identifier: Any) -> bool:
    """True: activations are stored by the stimuli's content, whatever ``stimuli_identifier`` is (module notes)."""
    del stimuli_identifier
    return True


def assert_stimulus_identifier_is_cacheable(stimuli_identifier: Any) -> None:
    """Nothing: every identifier lets activations be stored here (see :func:`stimulus_identifier_is_cacheable`).

    Raises
    ------
    AssertionError
        Never (kept for the reference's signature).
    """
    assert stimulus_identifier_is_cacheable(stimuli_identifier)
