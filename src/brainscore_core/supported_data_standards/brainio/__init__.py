"""``brainscore_core.supported_data_standards.brainio``: BrainIO's stimulus sets, assemblies, packaging and
loading (:mod:`.stimuli`, :mod:`.assemblies`, :mod:`.packaging`, :mod:`.s3`, :mod:`.fetch`), as thin adapters over
:mod:`brainscore.data` (the same file formats: packaged files load in both); files are found by
:mod:`brainscore.data.catalogue`.
"""
