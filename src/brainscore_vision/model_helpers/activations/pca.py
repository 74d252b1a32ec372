"""``LayerPCA``: the reference's hook that reduces each layer to its first principal components.

``LayerPCA.hook(extractor, n_components)`` fits, per layer, ``sklearn.decomposition.PCA(n_components,
random_state=0)`` on the layer's flattened activations to ``n_components`` ImageNet validation images
(one per class, image ``50 * i`` first, as the reference's ``_get_imagenet_val``), and from then on every
batch the extractor computes is reduced to those components (layers with at most ``n_components`` units
are only flattened). It is :mod:`brainscore.models.extraction.hooks` underneath: the sha256 of each
layer's fitted components and mean is part of the stored activations' key, so reduced activations are
never served without the hook, for another ``n_components`` or for components fitted on other images.

The images come from the reference's ``imagenet2012-val.hdf5`` (dataset ``val/images``, one
``H x W x 3`` uint8 image per row), found, in order, at ``$MT_IMAGENET_PATH``, at
``$MT_HOME/imagenet2012.hdf5`` (``~/.model-tools``: where the reference downloads it), in the weights
and data mirrors and the store (as ``imagenet2012-val.hdf5``), else downloaded once from the
reference's bucket ``brain-score-models`` (:func:`brainscore_core.supported_data_standards.brainio.s3.load_file`;
refused offline with a line naming the file). The chosen images are written as PNG files under
``$BRAINSCORE_HOME/imagenet2012-val/<sha256 of the file>/``.
"""
from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from brainscore_vision.model_helpers.activations.core import flatten

__all__ = ["LayerPCA", "imagenet_validation_images"]

#: The reference's file of ImageNet validation images and the bucket it downloads it from.
IMAGENET_FILE, IMAGENET_BUCKET = "imagenet2012-val.hdf5", "brain-score-models"


class LayerPCA:
    """A batch-activations hook: each layer's activations projected on its first ``n_components`` principal
    components of ImageNet validation images (Schrimpf et al. 2018, Brain-Score's layer-selection PCA).

    Parameters
    ----------
    activations_extractor : extractor
        What the hook is registered on (it extracts the ImageNet images' activations with the hook disabled).
    n_components : int
        Components kept per layer, and the number of ImageNet images they are fitted on.

    Raises
    ------
    ValueError
        If ``n_components`` is below 1.
    """

    def __init__(self, activations_extractor: Any, n_components: int):
        if int(n_components) < 1:
            raise ValueError(f"LayerPCA: n_components must be at least 1, got {n_components}")
        self._extractor = activations_extractor
        self._n_components = int(n_components)
        self._layer_pcas: dict[str, Any] = {}
        self._keys: dict[str, str] = {}
        self.handle: Any = None

    def __call__(self, batch_activations: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """``{layer: (b, ...)}`` -> ``{layer: (b, n_components)}`` (flattened, unreduced where the layer is small)."""
        self._ensure_initialized(list(batch_activations))
        reduced = {}
        for layer, activations in batch_activations.items():
            pca, flat = self._layer_pcas[layer], flatten(activations)
            reduced[layer] = flat if pca is None else pca.transform(flat)
        return reduced

    def keys(self, layers: Sequence[str]) -> dict[str, str]:
        """Per layer, ``LayerPCA/<n_components>/<sha256 of the fitted mean and components>`` (``.../flat`` for a
        layer kept whole); fits the missing layers' components first."""
        self._ensure_initialized(list(layers))
        for layer in layers:
            if layer not in self._keys:
                pca = self._layer_pcas[layer]
                if pca is None:
                    self._keys[layer] = f"LayerPCA/{self._n_components}/flat"
                else:
                    digest = hashlib.sha256()
                    for array in (pca.mean_, pca.components_):
                        array = np.ascontiguousarray(array)
                        digest.update(f"{array.dtype.str}{array.shape}".encode())
                        digest.update(array.tobytes())
                    self._keys[layer] = f"LayerPCA/{self._n_components}/{digest.hexdigest()}"
        return {layer: self._keys[layer] for layer in layers}

    def _ensure_initialized(self, layers: Sequence[str]) -> None:
        missing = [layer for layer in layers if layer not in self._layer_pcas]
        if missing:
            self._layer_pcas.update(self._pcas(missing))

    def _pcas(self, layers: Sequence[str]) -> dict[str, Any]:
        """Fit each layer's PCA on the ImageNet images' activations (extracted once for all ``layers``, unhooked)."""
        from sklearn.decomposition import PCA

        paths = imagenet_validation_images(self._n_components)
        if self.handle is not None:
            self.handle.disable()
        try:
            activations = self._extractor(paths, layers=list(layers))
        finally:
            if self.handle is not None:
                self.handle.enable()
        layer_of_neuroid = np.asarray(activations["layer"].values)
        pcas: dict[str, Any] = {}
        for layer in layers:
            values = np.asarray(activations.isel(neuroid=np.flatnonzero(layer_of_neuroid == layer)).values)
            if values.shape[1] <= self._n_components:
                pcas[layer] = None  # small enough already (as the reference)
            else:
                pcas[layer] = PCA(n_components=self._n_components, random_state=0).fit(values)
        return pcas

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
    """PNG files of the reference's ``num_images`` ImageNet validation images (see the module notes).

    Returns
    -------
    list of str
        One path per image, in the reference's order.

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
