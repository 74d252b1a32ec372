"""The data plugin's own test, as the reference's tutorial asks for."""
import numpy as np


def test_stimulus_set():
    from brainscore_vision import load_stimulus_set

    stimulus_set = load_stimulus_set('CompatCowley2026.210325')
    assert len(stimulus_set) == 640
    assert len(set(stimulus_set['stimulus_id'])) == 640


def test_assembly():
    from brainscore_vision import load_dataset

    assembly = load_dataset('CompatCowley2026.210325')
    np.testing.assert_array_equal(assembly.dims, ['presentation', 'neuroid', 'time_bin'])
    assert len(set(assembly['stimulus_id'].values)) == 640
    assert assembly.shape == (4840, 50, 1)
    assert assembly.stimulus_set is not None and len(assembly.stimulus_set) == 640
