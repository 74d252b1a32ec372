"""A video model's activations to stimulus sets and paths, stored by content (:class:`TemporalExtractor`).

The extractor runs an inferencer of :mod:`brainscore.models.extraction.temporal` and stores each layer's result
(values, channel coordinates, time bins) in the content-keyed cache (namespace ``temporal-activations``), under a
key of everything the values come from:

- the model (``model_key``, given by the model's wrapper: e.g. the network's weights hash and the content of the
  plugin folder that defines its preprocessing, :func:`brainscore.models.extraction.function.function_source_key`);
  a model without one is computed on every call, never stored;
- the inferencer: its identifier (class, dtype, visual degrees, spatial cap, time alignment, frame rate, image
  duration, temporal context), batch size and padding, and the layer's activation format;
- the stimuli: the sha256 of every file, in order (a layer's time bins and NaN padding depend on all of them);
- the layer, and the code that computes them (the cache's code hash).

Layers already stored are read; the others are computed together in one pass.

For layer selection (:class:`brainscore.models.candidates.LayerCandidates`) the extractor streams instead
(:meth:`TemporalExtractor.stream`): stimuli in chunks of the batch size, every candidate layer averaged over the
benchmark's window as the commitment averages a recording, handed to the selection's sinks and not stored; what the
selection stores is keyed by :meth:`TemporalExtractor.cache_paths`.
"""
from __future__ import annotations

import itertools
import logging
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from brainscore.caching import Cache, content_key, file_hashes
from brainscore.data.assemblies import NeuroidAssembly
from brainscore.models.extraction.temporal import Inferencer
from brainscore.models.time_bins import DEFAULT_TIME_BINS, average_time_bins

__all__ = ["TemporalExtractor"]

_logger = logging.getLogger(__name__)
_hook_ids = itertools.count()
_CACHE = Cache("temporal-activations")


class TemporalExtractor:
    """An inferencer's activations to a stimulus set (``presentation x neuroid [x time_bin]``) or to paths.

    The reference's temporal ``ActivationsExtractor``. A path listed twice is run once.

    Parameters
    ----------
    inferencer : Inferencer
    identifier : str or False
        The model's name; :attr:`identifier` is ``<identifier>@<inferencer identifier>``.
    visual_degrees : float
        Given to the inferencer (default 8).
    model_key : callable, optional
        ``() -> str or None``: the content key of the model (weights and code); None (or no callable): the
        activations are computed on every call and not stored (see the module notes).
    """

    def __init__(self, inferencer: Inferencer, identifier: str | bool = False, visual_degrees: float = 8,
                 model_key: Callable[[], str | None] | None = None):
        from brainscore.models.extraction.hooks import BatchHooks

        self._identifier = identifier
        self.inferencer = inferencer
        self.model_key = model_key
        self._stimulus_set_hooks = BatchHooks()  # its dict and HookHandle; these hooks take no keys
        self.set_visual_degrees(visual_degrees)

    #: Its activations have time bins (layer selection averages them over the benchmark's window).
    records_time = True

    @property
    def identifier(self) -> str | bool:
        return f"{self._identifier}@{self.inferencer.identifier}" if self._identifier else False

    @property
    def cacheable(self) -> bool:
        """Whether anything computed for this model may be stored: it has a model key (and caching is on)."""
        from brainscore.caching import enabled

        return enabled() and self.model_key is not None and self.model_key() is not None

    def set_visual_degrees(self, visual_degrees: float) -> None:
        self.inferencer.set_visual_degrees(visual_degrees)

    def insert_attrs(self, wrapper: Any) -> None:
        """Give ``wrapper`` this extractor's ``from_stimulus_set``, ``from_paths`` and hook registration."""
        wrapper.from_stimulus_set = self.from_stimulus_set
        wrapper.from_paths = self.from_paths
        wrapper.register_batch_activations_hook = self.register_batch_activations_hook
        wrapper.register_stimulus_set_hook = self.register_stimulus_set_hook
        wrapper.stream, wrapper.cache_paths, wrapper.records_time = self.stream, self.cache_paths, True
        wrapper.model_key = self.model_key

    def __call__(self, stimuli: Any, layers: Sequence[str], stimuli_identifier: str | None = None,
                 number_of_trials: int = 1, require_variance: bool = False, **_ignored: Any) -> NeuroidAssembly:
        """Activations to a stimulus set (:meth:`from_stimulus_set`) or a list of paths (:meth:`from_paths`).

        More than one trial, or variance, is not modelled: one (deterministic) response per stimulus, with a
        warning, as the reference."""
        if (number_of_trials is not None and number_of_trials > 1) or require_variance:
            _logger.warning("a video model gives one response per stimulus: number_of_trials > 1 and "
                            "require_variance are not modelled (as in the reference)")
        if hasattr(stimuli, "get_stimulus") and hasattr(stimuli, "columns"):
            return self.from_stimulus_set(stimuli, layers, stimuli_identifier=stimuli_identifier)
        return self.from_paths(stimuli, layers, stimuli_identifier=stimuli_identifier)

    def from_stimulus_set(self, stimulus_set: Any, layers: Sequence[str],
                          stimuli_identifier: str | None = None) -> NeuroidAssembly:
        """``presentation x neuroid [x time_bin]``, with ``stimulus_id`` and every column of ``stimulus_set`` on
        ``presentation`` in its row order (after the registered stimulus-set hooks)."""
        stimulus_set = self._hooked(stimulus_set)
        ids = list(stimulus_set["stimulus_id"])
        paths = [str(stimulus_set.get_stimulus(stimulus_id)) for stimulus_id in ids]
        activations = self.from_paths(paths, layers, stimuli_identifier=stimuli_identifier)
        activations = activations.drop_vars("stimulus_path").rename({"stimulus_path": "presentation"})
        columns = {column: ("presentation", np.asarray(stimulus_set[column].values)) for column in stimulus_set.columns}
        return type(activations)(activations.assign_coords(columns))

    def from_paths(self, stimuli_paths: Sequence, layers: Sequence[str] | None,
                   stimuli_identifier: str | None = None) -> NeuroidAssembly:
        """``stimulus_path x neuroid [x time_bin]`` in the order of ``stimuli_paths`` (``layers`` None: ``logits``).

        Raises
        ------
        ValueError
            For no layers.
        KeyError
            For a layer without an activation format.
        """
        layers = self.inferencer.checked_layers(["logits"] if layers is None else layers)
        if not layers:
            raise ValueError("no layers passed to retrieve activations from")
        paths = [str(path) for path in stimuli_paths]
        unique = list(dict.fromkeys(paths))
        activations = self.inferencer.package(self._layers(unique, layers), unique)
        if len(unique) == len(paths):
            return activations
        position = {path: index for index, path in enumerate(unique)}
        return activations.isel(stimulus_path=[position[path] for path in paths])

    def layer_keys(self, paths: Sequence[str], layers: Sequence[str]) -> dict[str, str] | None:
        """The cache key of each layer's result on ``paths`` (see the module notes), or None when the model has no
        key or caching is off."""
        from brainscore.caching import enabled

        model = self.model_key() if self.model_key is not None else None
        if model is None or not enabled():
            return None
        common = dict(kind="temporal-activations", model=model, inferencer=self.inferencer.identifier,
                      batch=list(self.inferencer.batching),
                      stimuli=[file_hashes(path)["sha256"] for path in paths])
        return {layer: content_key(**common, layer=layer, format=self.inferencer.layer_activation_format[layer])
                for layer in layers}

    def _hooked(self, stimulus_set: Any) -> Any:
        """``stimulus_set`` after the registered stimulus-set hooks, in order."""
        for hook in self._stimulus_set_hooks.active():
            stimulus_set = hook(stimulus_set)
        return stimulus_set

    def _selection_paths(self, stimuli: Any) -> list[str]:
        """The stimulus files in sorted ``stimulus_id`` order (after the stimulus-set hooks): a selection's rows."""
        stimuli = self._hooked(stimuli)
        return [str(stimuli.get_stimulus(stimulus_id)) for stimulus_id in sorted(map(str, stimuli["stimulus_id"]))]

    def cache_paths(self, stimuli: Any, layers: Sequence[str],
                    time_bins: Sequence[tuple[float, float]] = DEFAULT_TIME_BINS) -> dict[str, Path] | None:
        """Names (never files) whose stems key a layer selection's entries: each layer's activations on the stimuli
        in sorted id order (:meth:`layer_keys`) averaged over ``time_bins``; None when nothing may be stored."""
        layers = self.inferencer.checked_layers(layers)
        keys = self.layer_keys(self._selection_paths(stimuli), layers)
        if keys is None:
            return None
        window = [[float(start), float(end)] for start, end in time_bins]
        return {layer: _CACHE.path(content_key(kind="temporal-window", activations=keys[layer], time_bins=window),
                                   "npy") for layer in layers}

    def stream(self, stimuli: Any, sinks: Mapping[str, Callable],
               time_bins: Sequence[tuple[float, float]] = DEFAULT_TIME_BINS) -> None:
        """One pass handing each layer's activations, averaged over ``time_bins``, to a sink; nothing is stored.

        The protocol of :meth:`brainscore.models.extraction.ActivationsExtractor.stream`: ``sinks`` maps a layer to
        a factory ``rows -> sink`` (``append(batch)``, ``commit()``, ``abort()``); rows come in sorted
        ``stimulus_id`` order, ``float32 (b, neuroid, len(time_bins))`` squeezed to ``(b, neuroid)`` for one bin,
        each the overlap average :func:`~brainscore.models.time_bins.average_time_bins` of the layer's bins, as
        :meth:`ModelCommitment.look_at` records it. Stimuli run in chunks of the batch size, so only a chunk's
        activations are held.

        Raises
        ------
        ValueError
            For no layers; KeyError for a layer without an activation format; ValidationError for a window
            the layer's time bins do not cover.
        """
        layers = self.inferencer.checked_layers(list(sinks))
        if not layers:
            raise ValueError("no layers given to stream; pass e.g. {'logits': factory}")
        paths = self._selection_paths(stimuli)
        window = [tuple(b) for b in time_bins]
        made: dict[str, Any] = {}
        try:
            for layer in layers:
                made[layer] = sinks[layer](len(paths))
            chunk = self.inferencer.batching[0]
            for start in range(0, len(paths), chunk):
                computed = self.inferencer.run_layers(paths[start:start + chunk], layers)
                for layer in layers:
                    result = computed.pop(layer)
                    values = result["values"]
                    if result["time_bins"] is not None:
                        values = average_time_bins(values, result["time_bins"], window)
                        values = values[..., 0] if len(window) == 1 else values
                    made[layer].append(np.asarray(values, dtype=np.float32))
            for sink in made.values():
                sink.commit()
        except BaseException:
            for sink in made.values():
                sink.abort()
            raise

    def _layers(self, paths: list[str], layers: list[str]) -> "OrderedDict[str, dict]":
        keys = self.layer_keys(paths, layers)
        if keys is None:
            return self.inferencer.run_layers(paths, layers)
        found = {layer: _CACHE.load(keys[layer]) for layer in layers}
        missing = [layer for layer in layers if found[layer] is None]
        if missing:
            computed = self.inferencer.run_layers(paths, missing)
            for layer in missing:
                found[layer] = computed[layer]
                try:
                    _CACHE.save(keys[layer], computed[layer])
                except OSError as error:  # a computed result is never lost to the disk
                    _logger.warning(f"temporal activations of layer {layer!r} not stored: {error}")
        return OrderedDict((layer, found[layer]) for layer in layers)

    def register_stimulus_set_hook(self, hook: Callable) -> Any:
        """``hook(stimulus_set) -> stimulus_set``, applied before every stimulus set; returns its handle
        (``remove``/``disable``/``enable``)."""
        from brainscore.models.extraction.hooks import HookHandle

        handle = HookHandle(self._stimulus_set_hooks, next(_hook_ids))
        self._stimulus_set_hooks.hooks[handle.id] = hook
        return handle

    def register_batch_activations_hook(self, hook: Callable) -> Any:
        """Not supported for video models (the reference registers such hooks here and never applies them).

        Raises
        ------
        NotImplementedError
            Always, rather than ignore the hook.
        """
        raise NotImplementedError("the temporal extractor does not apply batch-activations hooks (the reference "
                                  "accepts and ignores them); reduce a video model's layers in its get_activations")
