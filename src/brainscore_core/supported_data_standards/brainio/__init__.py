"""``brainscore_core.supported_data_standards.brainio``: BrainIO's stimulus sets, assemblies, packaging and
loading, as thin adapters over :mod:`brainscore.data` (the same file formats: packaged files load in both).

Submodules: :mod:`.stimuli` (``StimulusSet``), :mod:`.assemblies` (``DataAssembly``,
``NeuroidAssembly``, ``BehavioralAssembly``, ``PropertiesAssembly``), :mod:`.packaging`
(``package_stimulus_set_locally``, ``package_data_assembly_locally``) and :mod:`.s3`
(``load_stimulus_set_from_s3``, ``load_assembly_from_s3``, resolved from local folders: the data
mirror, the store and the folder of locally packaged files; never from S3 itself).
"""
