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

import itertools
from typing import Any, Mapping, Sequence

import numpy as np

from brainscore.errors import ValidationError

__all__ = ["BatchHooks", "HookHandle"]

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
