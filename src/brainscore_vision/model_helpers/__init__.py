"""The reference's model helpers (activations wrappers, brain transformation, submission checks, weights),
on :mod:`brainscore.models`. ``download_weights`` is the reference's name for ``load_folder_from_s3``."""
from __future__ import annotations


def __getattr__(name: str):
    """``download_weights`` and ``load_weight_file`` (the reference exports both here), imported on first use."""
    if name in ("download_weights", "load_weight_file", "load_folder_from_s3"):
        from brainscore_core.supported_data_standards.brainio import s3

        value = s3.load_folder_from_s3 if name == "download_weights" else getattr(s3, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'brainscore_vision.model_helpers' has no attribute {name!r}")
