"""Batch-activations hooks: a change of each batch's layer outputs that the stored activations' key sees.

The reference (Schrimpf et al. 2020, ``ActivationsExtractorHelper.register_batch_activations_hook``) lets
a hook replace each batch's ``{layer: array}`` before it is stored; its ``LayerPCA`` reduces every layer
to its first principal components that way. Its cache is keyed by the model's name, so a hook changes
stored activations under an unchanged key. Here a hook must say what it does to each layer:

- ``hook(batch) -> batch``: ``batch`` maps each extracted layer to a float32 array ``(b, *unit_shape)``;
  the result maps the same layers to arrays of ``b`` rows (any unit shape). Hooks run in the order they
  were registered, on every batch of every trial, before anything is written.
- ``hook.keys(layers) -> {layer: str}``: for each layer, a string that changes whenever the hook's
  output on it could (e.g. the sha256 of fitted components). It is called once before a pass, so a
  hook that fits something (and may extract activations itself, with its handle disabled) does it
  there and never inside the pass.

The keys of the enabled hooks become part of each layer's cache key (an extractor without hooks keeps
its keys), so an entry stored with a hook is never served without it, nor without it with one.
"""
from __future__ import annotations

import hashlib
import itertools
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from brainscore.errors import ValidationError

__all__ = ["BatchHooks", "HookHandle", "PrincipalComponents"]

_ids = itertools.count()


class HookHandle:
    """What :meth:`BatchHooks.register` returns: :meth:`remove` the hook, or :meth:`disable` and :meth:`enable` it
    (the reference's ``HookHandle``). A disabled hook neither changes batches nor enters keys."""

    def __init__(self, hooks: "BatchHooks", hook_id: int):
        self._hooks = hooks
        self.id = hook_id

    def remove(self) -> None:
        """Unregister the hook (nothing if already removed)."""
        self._hooks.hooks.pop(self.id, None)
        self._hooks.disabled.discard(self.id)

    def disable(self) -> None:
        """Stop applying the hook until :meth:`enable`."""
        self._hooks.disabled.add(self.id)

    def enable(self) -> None:
        """Apply the hook again."""
        self._hooks.disabled.discard(self.id)


class BatchHooks:
    """An extractor's batch-activations hooks, in registration order (see the module notes).

    Attributes
    ----------
    hooks : dict of int to hook
        Every registered hook by its handle's id (disabled ones included).
    disabled : set of int
    """

    def __init__(self):
        self.hooks: dict[int, Any] = {}
        self.disabled: set[int] = set()

    def register(self, hook: Any) -> HookHandle:
        """Add ``hook`` (applied after those registered before).

        Raises
        ------
        TypeError
            If ``hook`` is not callable or has no ``keys(layers)`` method: stored activations are keyed by
            content, and a hook that cannot name its change would be served from entries made without it.
        """
        if not callable(hook):
            raise TypeError(f"a batch-activations hook must be callable as hook({{layer: array}}) -> "
                            f"{{layer: array}}, got {type(hook).__name__}")
        if not callable(getattr(hook, "keys", None)):
            raise TypeError(f"batch-activations hook {type(hook).__name__} has no keys(layers) method: stored "
                            f"activations are keyed by what made them, so a hook must return, for each layer, a "
                            f"string that changes whenever its output could (see brainscore.models.extraction.hooks)")
        handle = HookHandle(self, next(_ids))
        self.hooks[handle.id] = hook
        return handle

    def active(self) -> list[Any]:
        """The enabled hooks, in order."""
        return [hook for hook_id, hook in self.hooks.items() if hook_id not in self.disabled]

    def keys(self, layers: Sequence[str]) -> dict[str, list[str]]:
        """Per layer, the enabled hooks' keys in order (empty lists without hooks); fits what the hooks fit.

        Raises
        ------
        ValidationError
            If a hook's ``keys`` misses a layer or gives a non-string.
        """
        result: dict[str, list[str]] = {layer: [] for layer in layers}
        for hook in self.active():
            keys = hook.keys(list(layers))
            for layer in layers:
                key = keys.get(layer) if isinstance(keys, Mapping) else None
                if not isinstance(key, str):
                    raise ValidationError(f"batch-activations hook {type(hook).__name__}: keys() gave {key!r} for "
                                          f"layer {layer!r}; it must give a string for every layer asked")
                result[layer].append(key)
        return result

    def apply(self, batch: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """``batch`` through every enabled hook, each layer's result as a float32 array of the same rows.

        Raises
        ------
        ValidationError
            If a hook drops a layer or changes its number of rows, or gives a non-numeric or non-finite array.
        """
        batch = dict(batch)
        for hook in self.active():
            answer = hook(dict(batch))
            changed = {}
            for layer, values in batch.items():
                if not isinstance(answer, Mapping) or layer not in answer:
                    raise ValidationError(f"batch-activations hook {type(hook).__name__} gave no output for layer "
                                          f"{layer!r}; it must return every layer it is given")
                array = np.asarray(answer[layer])
                if array.ndim < 1 or array.shape[0] != values.shape[0] or not np.issubdtype(array.dtype, np.number):
                    raise ValidationError(f"batch-activations hook {type(hook).__name__}: layer {layer!r} must stay "
                                          f"a numeric array of {values.shape[0]} rows, got dtype {array.dtype} and "
                                          f"shape {array.shape}")
                array = np.ascontiguousarray(array, dtype=np.float32)
                if array.ndim == 1:
                    array = array[:, None]
                if not np.isfinite(array).all():
                    raise ValidationError(f"batch-activations hook {type(hook).__name__}: layer {layer!r} has NaN or "
                                          f"infinite values; they would be scored as numbers")
                changed[layer] = array
            batch = changed
        return batch


class PrincipalComponents:
    """A batch-activations hook: each layer projected on its first ``n_components`` principal components of a set of
    fitting images (Schrimpf et al. 2018, "Brain-Score": the layer-selection PCA; the reference's ``LayerPCA``).

    Per layer, ``sklearn.decomposition.PCA(n_components, random_state=0)`` is fitted on the layer's flattened
    activations to ``fitting_paths(n_components)`` (extracted once for all the layers asked, with :attr:`handle`
    disabled); from then on every batch is reduced to those components. A layer with at most ``n_components``
    units is only flattened (as the reference). Its :meth:`keys` hold the sha256 of each layer's fitted mean and
    components, so reduced activations are never served without the hook, for another ``n_components`` or for
    components fitted on other images.

    Parameters
    ----------
    extractor : callable (paths, layers=list of str) -> NeuroidAssembly
        What the hook is registered on; its assemblies carry a ``layer`` coordinate along ``neuroid``.
    n_components : int
        Components kept per layer (at least 1).
    fitting_paths : callable (int) -> list of str
        The image files to fit on, given ``n_components``.

    Attributes
    ----------
    handle : HookHandle or None
        The registration's handle (set by whoever registers the hook), disabled while fitting.

    Raises
    ------
    ValueError
        If ``n_components`` is below 1.
    """

    def __init__(self, extractor: Any, n_components: int, fitting_paths: Callable[[int], Sequence[str]]):
        if int(n_components) < 1:
            raise ValueError(f"{type(self).__name__}: n_components must be at least 1, got {n_components}")
        self._extractor = extractor
        self._n_components = int(n_components)
        self._fitting_paths = fitting_paths
        self._layer_pcas: dict[str, Any] = {}
        self._keys: dict[str, str] = {}
        self.handle: Any = None

    def __call__(self, batch_activations: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """``{layer: (b, ...)}`` -> ``{layer: (b, n_components)}`` (flattened, unreduced where the layer is small)."""
        self._ensure_initialized(list(batch_activations))
        reduced = {}
        for layer, activations in batch_activations.items():
            activations = np.asarray(activations)
            pca, flat = self._layer_pcas[layer], activations.reshape(activations.shape[0], -1)
            reduced[layer] = flat if pca is None else pca.transform(flat)
        return reduced

    def keys(self, layers: Sequence[str]) -> dict[str, str]:
        """Per layer, ``LayerPCA/<n_components>/<sha256 of the fitted mean and components>`` (``.../flat`` for a
        layer kept whole; the reference's name, so stored entries keep their keys); fits the missing layers first."""
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
        """Fit each layer's PCA on the fitting images' activations (extracted once for all ``layers``, unhooked)."""
        from sklearn.decomposition import PCA

        paths = self._fitting_paths(self._n_components)
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
