"""``LayerPCA``: the reference's hook, :class:`brainscore.models.extraction.hooks.PrincipalComponents` fitted on the
reference's ImageNet validation images (:func:`imagenet_validation_images`).

The images come from the reference's ``imagenet2012-val.hdf5`` (dataset ``val/images``, one ``H x W x 3`` uint8
image per row), found, in order, at ``$MT_IMAGENET_PATH``, at ``$MT_HOME/imagenet2012.hdf5`` (``~/.model-tools``),
else by :func:`brainscore_core.supported_data_standards.brainio.s3.load_file` (weights and data mirrors, the store,
else downloaded once from the bucket ``brain-score-models``; refused offline). The chosen images are written as PNG
files under ``$BRAINSCORE_HOME/imagenet2012-val/<sha256 of the file>/``.
"""
from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import numpy as np

from brainscore.models.extraction.hooks import PrincipalComponents

__all__ = ["LayerPCA", "imagenet_validation_images"]

#: The reference's file of ImageNet validation images and the bucket it downloads it from.
IMAGENET_FILE, IMAGENET_BUCKET = "imagenet2012-val.hdf5", "brain-score-models"


class LayerPCA(PrincipalComponents):
    """The reference's ``LayerPCA(activations_extractor, n_components)``: see
    :class:`~brainscore.models.extraction.hooks.PrincipalComponents`; fitted on :func:`imagenet_validation_images`."""

    def __init__(self, activations_extractor: Any, n_components: int):
        super().__init__(activations_extractor, n_components, imagenet_validation_images)

    @classmethod
    def hook(cls, activations_extractor: Any, n_components: int) -> Any:
        """Register a ``LayerPCA`` on ``activations_extractor``; its handle (``remove``, ``disable``, ``enable``).

        Raises
        ------
        AssertionError
            If a ``LayerPCA`` is already registered there (the reference's check).
        """
        hook = LayerPCA(activations_extractor=activations_extractor, n_components=n_components)
        assert not cls.is_hooked(activations_extractor), "PCA already hooked"
        hook.handle = activations_extractor.register_batch_activations_hook(hook)
        return hook.handle

    @classmethod
    def is_hooked(cls, activations_extractor: Any) -> bool:
        """Whether a ``LayerPCA`` is registered on ``activations_extractor`` (enabled or not)."""
        hooks = getattr(getattr(activations_extractor, "batch_hooks", None), "hooks", {})
        return any(isinstance(hook, cls) for hook in hooks.values())


def imagenet_indices(num_images: int) -> list[int]:
    """The reference's choice of ``num_images`` validation images (50 per class, in class order): the first
    ``num_images // 1000`` of each class, then one more from each of the first ``num_images % 1000`` classes."""
    per_class = (num_images - 1) // 1000
    indices = [50 * i + j for i in range(1000) for j in range(per_class)]
    indices += [50 * i + per_class for i in range((num_images - 1) % 1000 + 1)]
    return indices


def _imagenet_file() -> Path:
    configured = os.getenv("MT_IMAGENET_PATH")
    if configured and Path(configured).expanduser().is_file():
        return Path(configured).expanduser()
    reference_home = Path(os.path.expanduser(os.getenv("MT_HOME", "~/.model-tools"))) / "imagenet2012.hdf5"
    if reference_home.is_file():
        return reference_home
    from brainscore_core.supported_data_standards.brainio.s3 import load_file

    return Path(load_file(IMAGENET_BUCKET, IMAGENET_FILE, folder_name=""))


def imagenet_validation_images(num_images: int) -> list[str]:
    """PNG files of the reference's ``num_images`` ImageNet validation images, in its order (see the module notes).

    Raises
    ------
    DataNotFoundError
        If the file is nowhere and cannot be downloaded (offline, no mirror holds it).
    ValueError
        If the file has fewer images than the choice needs (a partial mirror), naming both counts.
    """
    import h5py
    from PIL import Image

    from brainscore import config
    from brainscore.caching import file_hashes
    from brainscore.caching.atomic import atomic_write_bytes

    source = _imagenet_file()
    indices = imagenet_indices(int(num_images))
    folder = config.home() / "imagenet2012-val" / file_hashes(source)["sha256"][:16]
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    with h5py.File(source, "r") as handle:
        images = handle["val/images"]
        if max(indices) >= len(images):
            raise ValueError(f"{source} holds {len(images)} images in val/images; {num_images} principal components "
                             f"need image {max(indices)} (the reference's choice: 50 per class); use the whole "
                             f"{IMAGENET_FILE} or fewer components")
        for index in indices:
            path = folder / f"{index}.png"
            if not path.is_file():
                encoded = io.BytesIO()
                Image.fromarray(np.asarray(images[index])).save(encoded, format="PNG")
                atomic_write_bytes(path, encoded.getvalue())
            paths.append(str(path))
    return paths
