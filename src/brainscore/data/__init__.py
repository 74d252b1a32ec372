"""Data standards (stimulus sets, assemblies), their files, and the local store.

This layer knows nothing of models, metrics or benchmarks.
"""
from brainscore.data.assemblies import (BehavioralAssembly, DataAssembly, NeuroidAssembly, PropertiesAssembly,
                                        align_presentations, attach_stimulus_set, average_repetition,
                                        presentation_order)
from brainscore.data.io import load_packaged_stimulus_set, read_netcdf, write_netcdf
from brainscore.data.stimuli import StimulusSet, file_sha256
from brainscore.data.store import Source, declare, declared, extract_zip, fetch, verify

__all__ = ["StimulusSet", "DataAssembly", "NeuroidAssembly", "BehavioralAssembly", "PropertiesAssembly",
           "average_repetition", "align_presentations", "presentation_order", "attach_stimulus_set", "read_netcdf",
           "write_netcdf",
           "load_packaged_stimulus_set", "Source", "declare", "declared", "fetch", "verify", "extract_zip", "file_sha256"]
