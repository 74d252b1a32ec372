"""``benchmark_helpers.cache_contract`` (the reference's check, called by its ``laion_fmri`` tests): here every stimulus
identifier is cacheable, because stored activations are keyed by the stimuli's content, never by the identifier.
On main (5f3b684) the module did not exist."""
from __future__ import annotations

import numpy as np
from PIL import Image

from brainscore.data.stimuli import StimulusSet


def test_the_identifier_never_reaches_the_activations_key(tmp_path):
    from brainscore_vision.benchmark_helpers.cache_contract import (assert_stimulus_identifier_is_cacheable,
                                                                     stimulus_identifier_is_cacheable)

    path = tmp_path / "a.png"
    Image.fromarray(np.full((8, 8, 3), 7, dtype=np.uint8)).save(path)
    registered = StimulusSet({"stimulus_id": ["a"]}, stimulus_paths={"a": path})
    registered.identifier = "Zerbe2026_fmri_stim_full"
    synthesised = StimulusSet({"stimulus_id": ["a"]}, stimulus_paths={"a": path})
    synthesised.identifier = "Zerbe2026_fmri_rdm_full_sub-01"  # the name the reference's check refuses
    before = registered.content_hash()
    assert synthesised.content_hash() == before
    assert stimulus_identifier_is_cacheable(synthesised.identifier)
    assert_stimulus_identifier_is_cacheable(synthesised.identifier)

    Image.fromarray(np.full((8, 8, 3), 8, dtype=np.uint8)).save(path)  # the same name, changed in place
    changed = StimulusSet({"stimulus_id": ["a"]}, stimulus_paths={"a": path})
    changed.identifier = registered.identifier
    assert changed.content_hash() != before
