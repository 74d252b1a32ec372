"""``load_weight_file``: the reference's weights download, resolved from local folders by name and sha1.

Model plugins written for the reference fetch their weights with::

    weights_path = load_weight_file(bucket='brainscore-storage', folder_name='brainscore-vision/models',
                                    relative_path='mymodel/weights.pth', version_id='...', sha1='...')

Here nothing is downloaded from S3: the file is looked up as ``<folder_name>/<relative_path>``,
``<relative_path>`` and its bare name in ``save_path`` (when given), every data mirror,
``$BRAINSCORE_HOME/sources`` and ``$BRAINSCORE_HOME/packages``, each also under the bucket's key
prefix (see :func:`brainscore_core.supported_data_standards.brainio.s3.locate_by_sha1`), and used
only if its sha1 is the registered one.
"""
from __future__ import annotations

from pathlib import Path

from brainscore_core.supported_data_standards.brainio.s3 import _hashes, locate_by_sha1

__all__ = ["load_weight_file"]


def load_weight_file(bucket: str, folder_name: str, relative_path: str, version_id: str | None = None,
                     sha1: str | None = None, save_path: str | Path | None = None) -> Path:
    """Path of the weights file ``folder_name/relative_path`` with this ``sha1``, from a local folder.

    Parameters
    ----------
    bucket, folder_name, relative_path : str
        The reference's S3 location of the file (used as local sub-folder names only).
    version_id : str, optional
        Accepted and ignored.
    sha1 : str
        The registered sha1 of the file (required: an unverified file is never used).
    save_path : path, optional
        A folder searched first.

    Raises
    ------
    ValueError
        Without ``sha1``.
    DataNotFoundError
        If no local folder holds the file; names it, its sha1, the folders searched and the fix.
    HashMismatchError
        If the files found have another sha1.
    """
    if not sha1:
        raise ValueError(f"load_weight_file({relative_path!r}) needs the file's sha1 to check it")
    names = list(dict.fromkeys([f"{folder_name.strip('/')}/{relative_path}" if folder_name else relative_path,
                                relative_path, Path(relative_path).name]))
    if save_path is not None:
        for name in names:
            candidate = Path(save_path).expanduser() / name
            if candidate.is_file() and _hashes(candidate)[0] == sha1:
                return candidate
    return locate_by_sha1(names, sha1, bucket)[0]
