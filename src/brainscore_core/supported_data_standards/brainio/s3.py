"""The reference's S3 loaders, over :mod:`brainscore.data.catalogue` (the files' names, the folders searched and
their order, the sha1 check, the download from S3, offline and the provenance are documented there).

Differences from the reference: a file in a data or weights mirror, the store or the local packages is used
without any request; a path is returned where the file lies, not at the reference's download location.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from brainscore.data import catalogue
from brainscore.data.catalogue import candidate_paths, locate_by_sha1

from .assemblies import NeuroidAssembly, as_reference_class

__all__ = ["load_stimulus_set_from_s3", "load_assembly_from_s3", "locate_by_sha1", "candidate_paths", "get_path",
           "load_weight_file", "load_file", "load_file_from_s3", "load_folder_from_s3", "download_file_if_not_exists",
           "sha1_hash"]


def get_path(identifier: str, file_type: str, bucket: str, version_id: str | None = None, sha1: str | None = None,
             filename_prefix: str | None = None, folder_name: str | None = None) -> Path:
    """The reference's ``get_path``: :func:`brainscore.data.catalogue.locate_catalogue_file`.

    Raises ``ValueError`` without ``sha1`` (a file is only used once its content is known)."""
    if not sha1:
        raise ValueError(f"get_path({identifier!r}, {file_type!r}) needs the file's sha1")
    return catalogue.locate_catalogue_file(identifier, file_type, bucket, sha1, version_id, filename_prefix,
                                           folder_name)


def load_stimulus_set_from_s3(identifier: str, bucket: str | None = None, csv_sha1: str | None = None,
                              zip_sha1: str | None = None, csv_version_id: str | None = None,
                              zip_version_id: str | None = None, filename_prefix: str | None = None):
    """The reference's loader: :func:`brainscore.data.catalogue.load_catalogue_stimulus_set`.

    Raises ``ValueError`` without both sha1s."""
    if not csv_sha1 or not zip_sha1:
        raise ValueError(f"load_stimulus_set_from_s3({identifier!r}) needs csv_sha1 and zip_sha1 (printed by "
                         f"package_stimulus_set_locally)")
    return catalogue.load_catalogue_stimulus_set(identifier, csv_sha1, zip_sha1, bucket, csv_version_id,
                                                 zip_version_id, "stimulus_" if filename_prefix is None
                                                 else filename_prefix)


def load_assembly_from_s3(identifier: str, version_id: str | None = None, sha1: str | None = None,
                          bucket: str | None = None, cls: type | str = NeuroidAssembly,
                          stimulus_set_loader: Callable[[], object] | None = None,
                          merge_stimulus_set_meta: bool = True, filename_prefix: str = "assy_"):
    """The reference's loader: :func:`brainscore.data.catalogue.load_catalogue_assembly`, the result of the class
    here of the same name as ``cls`` (so ``mean(dim='repetition')`` works as in the reference).

    Raises ``ValueError`` without ``sha1``."""
    if not sha1:
        raise ValueError(f"load_assembly_from_s3({identifier!r}) needs sha1 (printed by package_data_assembly_locally)")
    return as_reference_class(catalogue.load_catalogue_assembly(
        identifier, sha1, bucket, version_id, cls, stimulus_set_loader, merge_stimulus_set_meta, filename_prefix))


def sha1_hash(file_path: str | Path) -> str:
    """The reference's ``sha1_hash``: :func:`brainscore.data.catalogue.file_sha1`."""
    return catalogue.file_sha1(file_path)


def load_weight_file(bucket: str, relative_path: str, version_id: str | None = None, sha1: str | None = None,
                     folder_name: str | None = None, save_path: str | Path | None = None) -> Path:
    """The reference's ``load_weight_file``: :func:`brainscore.data.catalogue.locate_weights_file`."""
    return catalogue.locate_weights_file(bucket, relative_path, sha1, version_id, folder_name, save_path)


def load_file(bucket: str, relative_path: str, version_id: str | None = None, folder_name: str | None = None) -> Path:
    """The reference's ``load_file`` (no sha1): :func:`brainscore.data.catalogue.locate_weights_file` with
    ``sha1=None``."""
    return catalogue.locate_weights_file(bucket, relative_path, None, version_id, folder_name)


def load_file_from_s3(bucket: str, path: str, local_filepath: str | Path, sha1: str | None = None,
                      version_id: str | None = None) -> None:
    """The reference's ``load_file_from_s3``: :func:`brainscore.data.catalogue.copy_bucket_file`."""
    catalogue.copy_bucket_file(bucket, path, local_filepath, sha1, version_id)


def load_folder_from_s3(bucket: str, folder_path: str, filename_version_sha, save_directory: str | Path) -> None:
    """The reference's ``download_weights``: :func:`load_file_from_s3` for each ``(filename, version_id, sha1)``."""
    for filename, version_id, sha1 in filename_version_sha:
        load_file_from_s3(bucket, f"{folder_path.strip('/')}/{filename}", Path(save_directory) / filename, sha1=sha1,
                          version_id=version_id)


def download_file_if_not_exists(local_path: str | Path, bucket: str, remote_filepath: str) -> None:
    """The reference's name: nothing if ``local_path`` exists, else :func:`load_file_from_s3` there."""
    if Path(local_path).is_file():
        return
    load_file_from_s3(bucket, remote_filepath, local_path)
