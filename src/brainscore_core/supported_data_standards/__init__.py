"""``brainscore_core.supported_data_standards``: the data standards the reference supports (BrainIO)."""
