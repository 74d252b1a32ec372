"""Packaging of the data plugin ``compat_cowley2026``, as the reference's benchmark tutorial shows: the raw
files of Cowley et al. (2026) session 210325 become a StimulusSet, a NeuroidAssembly and a PropertiesAssembly,
packaged locally with ``package_stimulus_set_locally`` / ``package_data_assembly_locally``; the printed sha1s
are those registered in ``__init__.py``.

Run: ``python data_packaging.py /path/to/shared/data`` (the folder holding ``cowley2026_v4/``).

Data: Cowley, Stan, Pillow & Smith, "Compact deep neural network models of the visual cortex", Nature 652:947
(2026); github.com/cowleygroup/V4_compact_models (GPL-3.0). 50 V4 neurons, 640 images, 6-10 repeats, spike
counts in a 50-150 ms window.
"""
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from brainscore_core.supported_data_standards.brainio.assemblies import NeuroidAssembly, PropertiesAssembly
from brainscore_core.supported_data_standards.brainio.packaging import (package_data_assembly_locally,
                                                                        package_stimulus_set_locally)
from brainscore_core.supported_data_standards.brainio.stimuli import StimulusSet

IDENTIFIER = 'CompatCowley2026.210325'
SPARSENESS = 'CompatCowley2026.210325.sparseness'


def lifetime_sparseness(responses):
    """Lifetime sparseness of each neuroid over the images (Vinje & Gallant 2000, Science 287:1273):
    ``(1 - mean(r)^2 / mean(r^2)) / (1 - 1/n)`` of its non-negative responses ``r`` to ``n`` images; 0 for a
    neuroid answering all images alike, 1 for one answering a single image. ``responses``: images x neuroids."""
    responses = np.clip(np.asarray(responses, dtype=float), 0, None)
    n = responses.shape[0]
    with np.errstate(invalid='ignore', divide='ignore'):
        ratio = responses.mean(axis=0) ** 2 / (responses ** 2).mean(axis=0)
    return (1 - ratio) / (1 - 1 / n)


def package(source_folder, downloads_path=None):
    """Package the three items from ``source_folder`` (holding ``cowley2026_v4/``); returns the packaging dicts."""
    source = Path(source_folder) / 'cowley2026_v4'
    images = Path(tempfile.mkdtemp(prefix='compat_cowley_images_'))
    with zipfile.ZipFile(source / 'images' / 'images_210325.zip') as archive:
        archive.extractall(images)
    files = sorted(images.rglob('image*.jpg'))
    stimuli = StimulusSet([{'stimulus_id': f.stem, 'object_name': f.stem[len('image'):]} for f in files])
    stimuli.stimulus_paths = {f.stem: f for f in files}
    stimuli.name = IDENTIFIER
    assert len(stimuli) == 640

    responses = np.load(source / 'responses_raw' / 'responses_210325.npy')  # neurons x images x repeats
    n_neurons = responses.shape[0]
    image, repeat = np.nonzero(~np.isnan(responses).all(axis=0))  # image-major; NaN repeats dropped
    assembly = NeuroidAssembly(responses[:, image, repeat].T[:, :, np.newaxis], coords={
        'stimulus_id': ('presentation', [f'image{i + 1:04d}' for i in image]),
        'object_name': ('presentation', [f'{i + 1:04d}' for i in image]),
        'repetition': ('presentation', repeat),
        'neuroid_id': ('neuroid', [f'neuron_{i}' for i in range(n_neurons)]),
        'region': ('neuroid', ['V4'] * n_neurons),
        'time_bin_start': ('time_bin', [50]),
        'time_bin_end': ('time_bin', [150]),
    }, dims=['presentation', 'neuroid', 'time_bin'])
    assert assembly.shape == (4840, 50, 1)

    # the property of each neuron, over its repeat-averaged responses to the 640 images
    averaged = np.nanmean(responses, axis=2).T  # images x neurons
    properties = PropertiesAssembly(lifetime_sparseness(averaged)[:, np.newaxis], coords={
        'neuroid_id': ('neuroid', [f'neuron_{i}' for i in range(n_neurons)]),
        'region': ('neuroid', ['V4'] * n_neurons),
        'neuronal_property': ('neuronal_property', ['lifetime_sparseness']),
    }, dims=['neuroid', 'neuronal_property'])

    return [package_stimulus_set_locally(stimuli, IDENTIFIER, downloads_path=downloads_path),
            package_data_assembly_locally(assembly, IDENTIFIER, IDENTIFIER, assembly_class_name='NeuroidAssembly',
                                          downloads_path=downloads_path),
            package_data_assembly_locally(properties, SPARSENESS, IDENTIFIER, assembly_class_name='PropertiesAssembly',
                                          downloads_path=downloads_path)]


if __name__ == '__main__':
    for packaged in package(sys.argv[1]):
        print(packaged)
