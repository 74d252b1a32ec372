"""``load_weight_file`` (its older home): see :mod:`brainscore_core.supported_data_standards.brainio.s3`."""
from __future__ import annotations

from brainscore_core.supported_data_standards.brainio.s3 import (load_file, load_folder_from_s3, load_weight_file,
                                                                 sha1_hash)

__all__ = ["load_weight_file", "load_file", "load_folder_from_s3", "sha1_hash"]
