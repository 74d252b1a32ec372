"""Cowley et al. (2026) session 210325 as a Brain-Score data plugin, written as the reference's benchmark-submission
guide shows; the files were made by ``data_packaging.py`` (package_*_locally) and are found by their sha1."""
from brainscore_vision import data_registry, stimulus_set_registry, load_stimulus_set
from brainscore_core.supported_data_standards.brainio.s3 import load_stimulus_set_from_s3, load_assembly_from_s3
from brainscore_core.supported_data_standards.brainio.assemblies import NeuroidAssembly, PropertiesAssembly

BUCKET = 'brainscore-storage/brainscore-vision/data/compat_cowley2026'

stimulus_set_registry['CompatCowley2026.210325'] = lambda: load_stimulus_set_from_s3(
    identifier='CompatCowley2026.210325',
    bucket=BUCKET,
    csv_sha1='275f8f272feb431fc0151f71d2b9353e696bdfd3',
    zip_sha1='5a08df3ad6fe37b7818090751991a7f06d0a86b3',
    csv_version_id='null',
    zip_version_id='null',
    filename_prefix='stimulus_')

data_registry['CompatCowley2026.210325'] = lambda: load_assembly_from_s3(
    identifier='CompatCowley2026.210325',
    bucket=BUCKET,
    sha1='e9acf61fc081d358b0d132904b11f7ce655cbf61',
    version_id='null',
    cls=NeuroidAssembly,
    stimulus_set_loader=lambda: load_stimulus_set('CompatCowley2026.210325'))

data_registry['CompatCowley2026.210325.sparseness'] = lambda: load_assembly_from_s3(
    identifier='CompatCowley2026.210325.sparseness',
    bucket=BUCKET,
    sha1='ba5515872a83b42e2a5b3472d865c5ad175c80ba',
    version_id='null',
    cls=PropertiesAssembly,
    stimulus_set_loader=lambda: load_stimulus_set('CompatCowley2026.210325'),
    merge_stimulus_set_meta=False)
