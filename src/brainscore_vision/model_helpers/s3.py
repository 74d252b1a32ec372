"""``load_weight_file``: the reference's weights download, resolved from local folders (never from S3).

Model plugins written for the reference fetch their weights with::

    weights_path = load_weight_file(bucket='brainscore-storage', folder_name='brainscore-vision/models',
                                    relative_path='mymodel/weights.pth', version_id='...', sha1='...')

Here nothing is downloaded: the file ``<folder_name>/<relative_path>`` (``folder_name`` default
``$BRAINSCORE_S3_WEIGHT_FOLDER``, else ``models``, as the reference) is looked up, in order, in
``save_path`` (when given), in ``$BRAINSCORE_HOME`` (where the reference's own download would have
put it), and in every data mirror, ``$BRAINSCORE_HOME/sources`` and ``$BRAINSCORE_HOME/packages``
(each also under the bucket's key prefix, see
:func:`brainscore_core.supported_data_standards.brainio.s3.candidate_paths`), also as
``<relative_path>`` and under its bare name. With a ``sha1`` only a file of that sha1 is used;
without one (the reference stopped checking it in 2025) the first file found is used, with a warning.
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path

from brainscore import config
from brainscore.errors import DataNotFoundError, HashMismatchError

from brainscore_core.supported_data_standards.brainio.s3 import _hashes, candidate_paths, locate_by_sha1

__all__ = ["load_weight_file"]


def load_weight_file(bucket: str, relative_path: str, version_id: str | None = None, sha1: str | None = None,
                     folder_name: str | None = None, save_path: str | Path | None = None) -> Path:
    """Path of the weights file ``<folder_name>/<relative_path>`` from a local folder (see the module notes).

    Parameters
    ----------
    bucket : str
        The reference's S3 bucket (used as a sub-folder name only).
    relative_path : str
        Path of the file under ``folder_name``, e.g. ``'mymodel/weights.pth'``.
    version_id : str, optional
        Accepted and ignored (S3 object version).
    sha1 : str, optional
        The file's sha1: only a file with it is used.
    folder_name : str, optional
        Default ``$BRAINSCORE_S3_WEIGHT_FOLDER``, else ``'models'``.
    save_path : path, optional
        A folder searched first.

    Raises
    ------
    DataNotFoundError
        If no local folder holds the file; names it, its sha1, the folders searched and the fix.
    HashMismatchError
        If files of that name exist but none has the sha1.
    """
    folder_name = folder_name if folder_name is not None else os.getenv("BRAINSCORE_S3_WEIGHT_FOLDER", "models")
    names = list(dict.fromkeys([f"{folder_name.strip('/')}/{relative_path}" if folder_name else relative_path,
                                relative_path, Path(relative_path).name]))
    first = [Path(root).expanduser() / name for root in ([save_path] if save_path is not None else [])
             + [config.home()] for name in names]
    first = [path for path in first if path.is_file()]
    if sha1:
        for candidate in first:
            if _hashes(candidate)[0] == sha1:
                return candidate
        try:
            return locate_by_sha1(names, sha1, bucket)[0]
        except HashMismatchError:
            raise
        except DataNotFoundError as missing:
            if first:  # files of that name in save_path / $BRAINSCORE_HOME, none with the sha1
                raise HashMismatchError(f"{names[0]}: the files found are not the registered one (sha1 {sha1}): "
                                        f"{', '.join(str(p) for p in first)}") from None
            raise DataNotFoundError(f"weights {missing}") from None
    found = first + candidate_paths(names, bucket)
    if not found:
        raise DataNotFoundError(
            f"weights file {names[0]} was not found: this installation never downloads from the reference's S3. "
            f"Put it at $BRAINSCORE_HOME/{names[0]} ({config.home() / names[0]}) or <mirror>/{names[0]} with "
            f"`brainscore config set data_mirror <mirror>`.")
    warnings.warn(f"weights file {found[0]} is used without a sha1 check (load_weight_file got no sha1); pass the "
                  f"file's sha1 to make sure it is the intended file", UserWarning, stacklevel=2)
    return found[0]
