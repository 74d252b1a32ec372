"""Seed 003, "Submitting Benchmarks": its code blocks run as written, data swapped for ours.

Swapped: the image files are the 92 Kriegeskorte et al. (2008) images in ../shared/data (the
tutorial's ``/path/to/image1.jpg``...), the identifiers are ``Seed003Experiment2024`` (for
``MyExperiment2024``, so that no other test's registration clashes), and the S3 bucket/version
ids are placeholders: the loaders resolve the files from the local packages by sha1, never from S3.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import brainscore

IDENTIFIER = "Seed003Experiment2024"


@pytest.fixture(scope="module")
def images():
    stimuli = brainscore.load_stimulus_set("Kriegeskorte2008")
    return {sid: str(stimuli.get_stimulus(sid)) for sid in stimuli["stimulus_id"][:10]}


@pytest.fixture(scope="module")
def stimulus_set(images):
    # --- "Stimulus Set Preparation", as written ---
    from brainscore_core.supported_data_standards.brainio.stimuli import StimulusSet

    # 1. Create metadata DataFrame
    stimuli_data = [{'stimulus_id': sid, 'category': 'face' if i % 2 else 'object', 'condition': 'AB'[i % 2]}
                    for i, sid in enumerate(images)]
    stimulus_set = StimulusSet(stimuli_data)
    # 2. Map stimulus IDs to file paths
    stimulus_set.stimulus_paths = dict(images)
    # 3. Set unique identifier
    stimulus_set.name = IDENTIFIER
    return stimulus_set


@pytest.fixture(scope="module")
def assembly(stimulus_set):
    # --- "Data Assembly Creation", as written ---
    from brainscore_core.supported_data_standards.brainio.assemblies import BehavioralAssembly

    stimulus_ids = np.repeat(stimulus_set['stimulus_id'].values, 3)
    subject_ids = np.tile(['s1', 's2', 's3'], len(stimulus_set))
    conditions = np.repeat(stimulus_set['condition'].values, 3)
    response_data = np.where(np.arange(len(stimulus_ids)) % 4 == 0, 'face', 'object')
    assembly = BehavioralAssembly(
        response_data,
        coords={
            'stimulus_id': ('presentation', stimulus_ids),
            'subject': ('presentation', subject_ids),
            'condition': ('presentation', conditions),
        },
        dims=['presentation']
    )
    return assembly


def test_validation_checklist(stimulus_set, assembly):
    assert stimulus_set['stimulus_id'].nunique() == len(stimulus_set)
    assert all(Path(p).is_file() for p in stimulus_set.stimulus_paths.values())
    assert not (assembly.values == None).any()  # noqa: E711 (choices are strings: the checklist's isnan, for text)
    assert set(assembly['stimulus_id'].values) == set(stimulus_set['stimulus_id'])


@pytest.fixture(scope="module")
def packaged(stimulus_set, assembly):
    # --- "1. Package Your Data Locally", as written ---
    from brainscore_core.supported_data_standards.brainio.packaging import package_stimulus_set_locally
    from brainscore_core.supported_data_standards.brainio import packaging

    # Package stimulus set
    stimuli = package_stimulus_set_locally(
        proto_stimulus_set=stimulus_set,
        stimulus_set_identifier=IDENTIFIER,
    )
    # Package data assembly
    data = packaging.package_data_assembly_locally(
        proto_data_assembly=assembly,
        assembly_identifier=IDENTIFIER,
        stimulus_set_identifier=IDENTIFIER,
        assembly_class_name='BehavioralAssembly',  # or 'BehavioralAssembly'
    )
    return stimuli, data


def test_packaging_output_is_the_tutorials(packaged):
    stimuli, data = packaged
    assert stimuli['identifier'] == IDENTIFIER
    assert Path(stimuli['csv_path']).name == f'stimulus_{IDENTIFIER}.csv'
    assert Path(stimuli['zip_path']).name == f'stimulus_{IDENTIFIER}.zip'
    assert len(stimuli['csv_sha1']) == len(stimuli['zip_sha1']) == 40
    assert data['identifier'] == IDENTIFIER and data['cls'] == 'BehavioralAssembly'
    assert Path(data['path']).name == f'assy_{IDENTIFIER}.nc' and len(data['sha1']) == 40


@pytest.fixture(scope="module")
def registered(packaged):
    stimuli, data = packaged
    # --- "3. Register in Data Plugin", as written (hashes from packaging, placeholder S3 locations) ---
    from brainscore_vision import data_registry, stimulus_set_registry, load_stimulus_set
    from brainscore_core.supported_data_standards.brainio.s3 import load_stimulus_set_from_s3, load_assembly_from_s3
    from brainscore_core.supported_data_standards.brainio.assemblies import BehavioralAssembly

    stimulus_set_registry[IDENTIFIER] = lambda: load_stimulus_set_from_s3(
        identifier=IDENTIFIER,
        bucket='brainscore-storage/brainscore-vision/data/seed003',  # S3 path (from upload)
        csv_sha1=stimuli['csv_sha1'],  # From packaging
        zip_sha1=stimuli['zip_sha1'],  # From packaging
        csv_version_id='U405jdh2ECWCzwoZauxh0VNDSAHAb.2s',  # From upload
        zip_version_id='cTVQxPGpom_seCpwN2ltG_LK7eYGbZid',  # From upload
        filename_prefix='stimulus_'
    )
    data_registry[IDENTIFIER] = lambda: load_assembly_from_s3(
        identifier=IDENTIFIER,
        bucket='brainscore-storage/brainscore-vision/data/seed003',  # S3 path (from upload)
        sha1=data['sha1'],  # From packaging
        version_id='yusgi5xpyrNzU10cjk69Z49G.CSyujXO',  # From upload
        cls=BehavioralAssembly,
        stimulus_set_loader=lambda: load_stimulus_set(IDENTIFIER)
    )
    yield
    del stimulus_set_registry[IDENTIFIER]
    del data_registry[IDENTIFIER]


def test_registered_data_load(registered, assembly, stimulus_set):
    loaded = brainscore.load_dataset(IDENTIFIER)
    assert list(loaded.values) == list(assembly.values)
    assert list(loaded['subject'].values) == list(assembly['subject'].values)
    assert list(loaded['category'].values[::3][:2]) == ['object', 'face']  # merged from the stimulus set
    assert loaded.stimulus_set is not None and len(loaded.stimulus_set) == len(stimulus_set)
    first = stimulus_set['stimulus_id'].iloc[0]
    assert Path(loaded.stimulus_set.get_stimulus(first)).read_bytes() == Path(stimulus_set.stimulus_paths[first]).read_bytes()


def test_benchmark_class_and_its_tests(registered):
    # --- "Benchmark Class", as written (its __call__ and ceiling are the tutorial's stubs) ---
    from brainscore_vision import load_dataset, load_stimulus_set, load_metric
    from brainscore_vision.benchmarks import BenchmarkBase
    from brainscore_vision.model_interface import BrainModel
    from brainscore_core.metrics import Score

    BIBTEX = """
    @article{author2024,
      title={Your Paper Title},
      author={Author, A. and Coauthor, B.},
      journal={Journal Name},
      year={2024}
    }
    """

    class MyExperiment2024Benchmark(BenchmarkBase):
        def __init__(self):
            self._assembly = load_dataset(IDENTIFIER)
            self._stimulus_set = load_stimulus_set(IDENTIFIER)
            self._metric = load_metric('accuracy')
            self._visual_degrees = 8
            super().__init__(
                identifier=f'{IDENTIFIER}-accuracy',
                version=1,
                ceiling_func=lambda: self._compute_ceiling(),
                parent='behavior',  # or 'V1', 'V4', 'IT', etc.
                bibtex=BIBTEX
            )

        def __call__(self, candidate: BrainModel) -> Score:
            # Implementation here
            pass

        def _compute_ceiling(self) -> Score:
            # Ceiling calculation here
            pass

    # --- "Registration", as written ---
    from brainscore_vision import benchmark_registry
    benchmark_registry[f'{IDENTIFIER}-accuracy'] = MyExperiment2024Benchmark
    try:
        # --- "2. Create Unit Tests": test_benchmark_loads, as written ---
        from brainscore_vision import load_benchmark
        benchmark = load_benchmark(f'{IDENTIFIER}-accuracy')
        assert benchmark is not None
        assert benchmark.identifier == f'{IDENTIFIER}-accuracy'
        assert benchmark.version == 1 and benchmark.parent == 'behavior'
        # the stub ceiling returns None: brainscore says what is wrong instead of caching None
        with pytest.raises(TypeError, match="a ceiling must be a number or a Score"):
            benchmark.ceiling
    finally:
        del benchmark_registry[f'{IDENTIFIER}-accuracy']
