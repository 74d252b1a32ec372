"""Seed 001, the benchmark tutorial (2020): the blocks that need no S3 data, with our data and today's names.

This tutorial predates the plugin API: it imports ``brainio.stimuli``, ``brainio.assemblies``,
``brainio.packaging`` and ``brainscore.benchmarks`` / ``brainscore.model_interface`` /
``brainscore.utils``. Those module paths are not provided here (the later seeds' names are:
``brainscore_core.supported_data_standards.brainio.*`` and ``brainscore_vision.*``), so the module
paths are swapped for those; the code is otherwise as written. ``brainscore.get_assembly`` (which the
tutorial's data tests call) is provided as written. Swapped data: ``<authoryear>`` is
``Geirhos2019.cue-conflict`` (human choices on 1,280 cue-conflict images, ../shared/data), and the
legacy ``image_id`` is ``stimulus_id``. The upload calls (``package_stimulus_set(..., bucket)``) go to
S3 and are replaced by the local packaging of seed 003; the I2n benchmark needs Rajalingham et al.'s
data, which are not here.
"""
from __future__ import annotations

import numpy as np

import brainscore


def test_behavioral_assembly_block():
    from brainscore_core.supported_data_standards.brainio.assemblies import BehavioralAssembly  # brainio.assemblies

    assembly = BehavioralAssembly(['dog', 'dog', 'cat', 'dog'],
                                  coords={
                                      'stimulus_id': ('presentation', ['image1', 'image2', 'image3', 'image4']),
                                      'sample_object': ('presentation', ['dog', 'cat', 'cat', 'dog']),
                                      'distractor_object': ('presentation', ['cat', 'dog', 'dog', 'cat']),
                                  },
                                  dims=['presentation'])
    assembly.name = 'authoryear'  # give the assembly an identifier name
    assembly = assembly.assign_coords(choice=('presentation', assembly.values))
    # make sure the assembly is what you would expect
    assert len(assembly['presentation']) == 4
    assert len(set(assembly['stimulus_id'].values)) == 4
    assert len(set(assembly['choice'].values)) == len(set(assembly['sample_object'].values)) \
        == len(set(assembly['distractor_object'].values)) == 2


def test_stimulus_set_unit_test_block():
    # "in test_stimuli.py", with brainscore.get_stimulus_set for brainio.get_stimulus_set
    stimulus_set = brainscore.get_stimulus_set('Geirhos2019.cue-conflict')
    assert len(stimulus_set) == 1280  # check number of stimuli
    assert len(set(stimulus_set['stimulus_id'])) == 1280  # check number of unique stimuli
    assert len(set(stimulus_set['category'])) == 16


def test_assembly_unit_test_block():
    # "in test_assemblies.py", as written
    assembly = brainscore.get_assembly('Geirhos2019.cue-conflict')
    np.testing.assert_array_equal(assembly.dims, ['presentation'])
    assert len(set(assembly['stimulus_id'].values)) == 1280  # check number of stimuli
    assert len(assembly) == 12800  # check number of trials
    assert assembly.stimulus_set is not None
    assert len(assembly.stimulus_set) == 1280  # make sure number of stimuli in stimulus_set lines up with assembly


def test_benchmark_base_and_lazy_load_of_the_example():
    """The example's scaffolding with today's names: BenchmarkBase keywords, LazyLoad data, ceiling_func."""
    from brainscore_vision.benchmarks import BenchmarkBase
    from brainscore_vision.model_interface import BrainModel
    from brainscore_vision.utils import LazyLoad

    loaded = []

    class AuthorYearAccuracy(BenchmarkBase):
        def __init__(self):
            self._assembly = LazyLoad(lambda: loaded.append(1) or brainscore.get_assembly('Geirhos2019.cue-conflict'))
            self._visual_degrees = 8
            self._number_of_trials = 2
            super(AuthorYearAccuracy, self).__init__(
                identifier='Seed001AuthorYear-accuracy', version=1, ceiling_func=lambda: 1.0,
                parent='behavior', bibtex='@article{AuthorYear}')

        def __call__(self, candidate: BrainModel):
            raise NotImplementedError

    benchmark = AuthorYearAccuracy()
    assert loaded == [] and float(benchmark.ceiling) == 1.0
    assert len(benchmark._assembly.stimulus_set) == 1280 and loaded == [1]
