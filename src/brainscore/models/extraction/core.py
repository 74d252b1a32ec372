"""Activations of a network's layers on a stimulus set, streamed to a content-keyed cache: the framework-neutral part.

The reference (Schrimpf et al. 2020) splits its extractor into ``activations/core.py`` (batching,
caching, packaging; no framework) and ``activations/pytorch.py`` (the network's hooks). So does this
package: this module holds everything that does not know the network's framework, and
:mod:`brainscore.models.extraction.pytorch` the PyTorch part (hooks on modules, tensors, devices).

- :class:`ActivationsCore`: what an extractor does with a stimulus set: which layers are cached
  (keys of content, :meth:`~ActivationsCore.cache_paths`), one pass for all missing layers under a
  lock per entry (:meth:`~ActivationsCore.extract`), images in batches with the next batch loaded in
  a background thread and each batch's features written in another, identical files run once,
  microsaccade trials; a framework subclass supplies the forward pass of one batch
  (:meth:`~ActivationsCore._batches`) and what identifies the network (weights, architecture,
  numerics);
- :class:`LayerFeatures`, :func:`package_features`: one layer's features on disk (a ``.npy`` file,
  rows in sorted ``stimulus_id`` order) and their ``presentation x neuroid`` assembly
  (:mod:`brainscore.models.extraction.features`, re-exported here);
- :func:`microsaccade_shifts`: the reference's microsaccade spiral (Rolfs 2009; Brain-Score's
  MicrosaccadeHelper);
- :class:`NpyWriter` and the features files' reads: :mod:`brainscore.models.extraction.npy_files`
  (re-exported here).
"""
from __future__ import annotations

import contextlib
import tempfile
from abc import ABC, abstractmethod
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, ContextManager, Mapping, Sequence

import numpy as np

from brainscore import caching
from brainscore.caching import Cache, content_key, locked_entry, verified
from brainscore.data.assemblies import NeuroidAssembly
from brainscore.data.stimuli import StimulusSet
from brainscore.errors import ValidationError
from brainscore.models.extraction.features import LayerBlocks, LayerFeatures, package_features  # noqa: F401
from brainscore.models.extraction.hooks import BatchHooks, HookHandle
from brainscore.models.extraction.npy_files import (COPY_BLOCK_BYTES, NpyWriter, expand_rows, npy_layout,  # noqa: F401
                                                    read_npy_rows, read_rows)
from brainscore.models.preprocessing import Preprocessing

__all__ = ["ActivationsCore", "LayerFeatures", "LayerBlocks", "package_features", "microsaccade_shifts", "NpyWriter",
           "read_npy_rows", "read_rows", "expand_rows", "LOGITS", "MICROSACCADE_EXTENT_DEGREES", "COPY_BLOCK_BYTES"]

#: How far models microsaccade, in degrees of visual angle (the reference's default).
MICROSACCADE_EXTENT_DEGREES = 0.05
#: The layer name of the network's output.
LOGITS = "logits"
_CACHE_NAMESPACE = "activations"

#: One batch through the network: ``(batch, shift_x, shift_y) -> {layer: float32 array (b, *unit_shape)}``.
BatchRunner = Callable[[Any, float, float], "dict[str, np.ndarray]"]


def microsaccade_shifts(number_of_trials: int, image_size: int, visual_degrees: float,
                        extent_degrees: float = MICROSACCADE_EXTENT_DEGREES) -> np.ndarray:
    """Sub-pixel shifts of the reference's microsaccade spiral.

    Trial ``i`` of ``n`` lies at radius ``R sqrt(i / n)`` and angle ``2 pi sqrt(i / n)``, with
    ``R = extent_degrees / visual_degrees * image_size`` pixels: the points fill a disc evenly
    (Brain-Score's MicrosaccadeHelper; Rolfs 2009 on microsaccade amplitudes). Trial 0 is unshifted.

    Parameters
    ----------
    number_of_trials : int
        ``n``, at least 1.
    image_size : int
        Height of the preprocessed image in pixels.
    visual_degrees : float
        The model's field of view in degrees.
    extent_degrees : float
        Largest shift in degrees (default 0.05).

    Returns
    -------
    ndarray of shape (n, 2)
        ``(x, y)`` shifts in pixels.
    """
    if number_of_trials < 1:
        raise ValueError(f"number_of_trials must be at least 1, got {number_of_trials}")
    if visual_degrees is None or not np.isfinite(visual_degrees) or visual_degrees <= 0:
        raise ValueError(f"microsaccades need the model's visual degrees (finite, > 0), got {visual_degrees!r}")
    radius = extent_degrees / visual_degrees * image_size
    fraction = np.sqrt(np.arange(number_of_trials) / number_of_trials)
    r, theta = fraction * radius, 2 * np.pi * fraction
    return np.stack([r * np.cos(theta), r * np.sin(theta)], axis=1)




# ------------------------------------------------------------------------------------------------
# the extractor, less its framework
# ------------------------------------------------------------------------------------------------
class ActivationsCore(ABC):
    """What an activations extractor does with stimulus sets, whatever runs the network.

    A subclass for a framework (:class:`brainscore.models.extraction.pytorch.ActivationsExtractor`
    for PyTorch) supplies :attr:`weights_hash`, :attr:`architecture_fingerprint`, :meth:`numerics`
    (the content of the cache keys), :meth:`_check_layers` and :meth:`_batches` (one forward pass
    of a batch, its layers' outputs as arrays).

    Parameters
    ----------
    identifier : str
        The model's name (goes into the ``model`` coordinate; *not* into cache keys).
    preprocessing : Preprocessing, optional
        How files become the network's inputs (default: the reference's, ImageNet normalisation at 224 px).
    batch_size : int
        Images per forward pass, at least 1.
    progress : bool
        Report each pass over the images (:func:`brainscore.progress.stage`: a bar on a terminal, start and
        end lines in a log, for passes over two seconds).
    prefetch : bool
        Load and preprocess the next batch in a background thread while the network runs.
    background_writes : bool
        Write each batch's features to disk in a background thread (at most two batches queued).

    Raises
    ------
    ValueError
        If ``batch_size`` is below 1.
    """

    #: False when nothing identifies this model's code well enough to store its activations: each call computes
    #: them afresh and nothing derived from them is stored (:class:`~brainscore.models.extraction.function.FunctionExtractor`)
    cacheable = True

    def __init__(self, identifier: str, preprocessing: Preprocessing | None, batch_size: int,
                 progress: bool = True, prefetch: bool = True, background_writes: bool = True):
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.identifier = identifier
        self.preprocessing = preprocessing or Preprocessing()
        self.batch_size = int(batch_size)
        self.progress = progress
        self.prefetch = prefetch
        self.background_writes = background_writes
        self.forward_passes = 0  # batches run through the network (for tests and reports)
        self.visual_degrees: float | None = None  # set by a ModelCommitment for microsaccades
        self.batch_hooks = BatchHooks()  # changes of each batch's outputs, keyed (brainscore.models.extraction.hooks)

    # ---- what the framework supplies ------------------------------------------------------------
    @property
    @abstractmethod
    def weights_hash(self) -> str:
        """sha256 identifying the network's weights (part of every cache key)."""

    @property
    @abstractmethod
    def architecture_fingerprint(self) -> str:
        """sha256 of the network's structure and forward code (part of every cache key)."""

    @abstractmethod
    def numerics(self) -> dict:
        """What decides the floating-point result besides the inputs (device, dtypes, threads)."""

    @abstractmethod
    def _check_layers(self, layers: Sequence[str]) -> None:
        """Raise :class:`~brainscore.errors.ValidationError` for a layer the network does not have."""

    @abstractmethod
    def _batches(self, layers: Sequence[str]) -> ContextManager[BatchRunner]:
        """A context in which the network is ready and ``layers`` are observed; yields a :data:`BatchRunner`.

        The runner takes one preprocessed batch (what :attr:`preprocessing` returns for a list of
        files) and a microsaccade shift in pixels, and returns each layer's outputs as float32
        arrays on the host; it counts :attr:`forward_passes`. Leaving the context removes whatever
        observed the layers.
        """

    def _ready_to_compute(self) -> bool:
        """Called before missing layers are computed: False when the keys just used were wrong (start again)."""
        return True

    # ---- the public entry points ----------------------------------------------------------------
    def register_batch_activations_hook(self, hook: Any) -> HookHandle:
        """Apply ``hook`` to every batch's layer outputs before they are stored (the reference's hook of the same
        name; see :mod:`brainscore.models.extraction.hooks`). Its keys enter every cache key while it is enabled.

        Returns
        -------
        HookHandle
            ``remove()``, ``disable()``, ``enable()``.

        Raises
        ------
        TypeError
            If ``hook`` is not callable or has no ``keys(layers)`` method.
        """
        return self.batch_hooks.register(hook)

    def set_visual_degrees(self, visual_degrees: float) -> None:
        """Field of view (degrees) used to size microsaccades."""
        self.visual_degrees = float(visual_degrees)

    def _key(self, stimuli_hash: str, layer: str, plan: dict, architecture: str | None = None,
             numerics: dict | None = None) -> str:
        return content_key(kind="activations", weights=self.weights_hash,
                           architecture=architecture or self.architecture_fingerprint,
                           preprocessing=self.preprocessing.key(), stimuli=stimuli_hash, layer=layer, plan=plan,
                           numerics=numerics or self.numerics())

    # ---- main entry points --------------------------------------------------------------------
    def __call__(self, stimuli: StimulusSet, layers: Sequence[str], number_of_trials: int = 1,
                 require_variance: bool = False, visual_degrees: float | None = None) -> NeuroidAssembly:
        """Activations of ``layers`` on ``stimuli`` as one ``presentation x neuroid`` assembly.

        Layers are concatenated along ``neuroid`` in the given order; presentations follow the rows of
        ``stimuli`` (times ``number_of_trials`` with ``require_variance``). Holds all requested
        layers in memory; use :meth:`extract` to stream layer by layer.
        """
        features = self.extract(stimuli, layers, number_of_trials=number_of_trials,
                                require_variance=require_variance, visual_degrees=visual_degrees)
        parts = [features[layer].assembly(stimuli, self.identifier) for layer in layers]
        if len(parts) == 1:
            return parts[0]
        import xarray as xr

        return NeuroidAssembly(xr.concat(parts, dim="neuroid"))

    def extract(self, stimuli: StimulusSet, layers: Sequence[str], number_of_trials: int = 1,
                require_variance: bool = False, visual_degrees: float | None = None) -> dict[str, LayerFeatures]:
        """Compute (or find in the cache) each layer's features on ``stimuli``; one pass for all missing layers.

        Parameters
        ----------
        stimuli : StimulusSet
            With unique ``stimulus_id`` and existing files.
        layers : sequence of str
            Dotted module names, or ``"logits"`` for the network's output.
        number_of_trials : int
            With ``require_variance``, presentations per stimulus (each with its microsaccade).
            Otherwise ignored: a deterministic network answers identically.
        require_variance : bool
            Shift the image by a microsaccade per trial so trials differ.
        visual_degrees : float, optional
            Field of view for microsaccades (default: :attr:`visual_degrees`).

        Returns
        -------
        dict of str to LayerFeatures
            Per layer, the on-disk features (rows in sorted stimulus-id order).

        Raises
        ------
        ValidationError
            For an unknown layer, duplicate stimulus ids, missing files, or no layers.
        """
        layers = list(dict.fromkeys(layers))
        if not layers:
            raise ValidationError("no layers given to extract activations from; pass e.g. layers=['logits']")
        self._check_layers(layers)  # fail early on a typo
        stimuli.validate()
        ids = np.asarray(sorted(map(str, stimuli["stimulus_id"])))
        trials = int(number_of_trials) if require_variance else 1
        degrees = visual_degrees if visual_degrees is not None else self.visual_degrees
        if require_variance:
            shifts = microsaccade_shifts(trials, self.preprocessing.image_size, degrees)
            plan = {"microsaccades": trials, "visual_degrees": float(degrees),
                    "extent_degrees": MICROSACCADE_EXTENT_DEGREES}
        else:
            shifts, plan = np.zeros((1, 2)), {}
        size = self.preprocessing.image_size
        if not self.cacheable:  # (else the cache paths below ask the hooks' keys) a hook fits what it needs now
            self.batch_hooks.keys(layers)
        use_cache = caching.enabled() and self.cacheable
        result: dict[str, LayerFeatures] = {}
        missing: dict[str, Path] = {}
        entries = (self._cache_paths(stimuli.content_hash(), layers, plan) if self.cacheable
                   else dict.fromkeys(layers))
        for layer, path in entries.items():
            if use_cache and verified(path):
                result[layer] = LayerFeatures(layer, path, ids, trials, shifts, degrees, size)
            else:
                if not use_cache:
                    path = Path(tempfile.mkdtemp(prefix="brainscore-activations-")) / f"{len(missing)}.npy"
                missing[layer] = path
        if missing and not self._ready_to_compute():  # every key above may be wrong: start again
            return self.extract(stimuli, layers, number_of_trials=number_of_trials,
                                require_variance=require_variance, visual_degrees=visual_degrees)
        with contextlib.ExitStack() as locks:
            if missing and use_cache:
                # one lock per entry, taken in a fixed order (no deadlock between processes); a process
                # that waited here finds the other one's verified files and computes only the rest
                for path in sorted(missing.values()):
                    locks.enter_context(locked_entry(path))
                for layer, path in list(missing.items()):
                    if verified(path):
                        result[layer] = LayerFeatures(layer, path, ids, trials, shifts, degrees, size)
                        del missing[layer]
            if missing:
                paths = [stimuli.get_stimulus(i) for i in ids]
                try:
                    self._run(paths, missing, shifts, trials, checksum=use_cache)
                except ValidationError as error:  # an unreadable image: name its stimulus ids too
                    named = [str(i) for i, p in zip(ids, paths) if str(p) in str(error)]
                    if not named:
                        raise
                    raise ValidationError(f"stimulus {', '.join(named[:5])}: {error}") from error
        if missing:
            for layer, path in missing.items():
                features = LayerFeatures(layer, path, ids, trials, shifts, degrees, size)
                if not use_cache:
                    features.in_memory = np.load(path)
                    features.path = None
                    path.unlink(missing_ok=True)
                    try:
                        path.parent.rmdir()
                    except OSError:
                        pass
                result[layer] = features
        return {layer: result[layer] for layer in layers}

    def cache_paths(self, stimuli: StimulusSet, layers: Sequence[str]) -> dict[str, Path]:
        """The cache file that holds, or would hold, each layer's features on ``stimuli`` (one trial).

        The same paths :meth:`extract` uses (their names are the full content keys); nothing is
        computed or read. A caller that reduces features without storing them (layer selection)
        keys its own entries on these names.
        """
        return self._cache_paths(stimuli.content_hash(), layers, {})

    def store_features(self, path: Path, values: np.ndarray) -> Path:
        """Write a layer's features, computed by :meth:`stream`, as the cache entry ``path`` of :meth:`cache_paths`.

        The file is the one :meth:`extract` writes there (same header and bytes, sha256 stored beside it), so a
        later :meth:`extract` of that layer on the same stimuli (one trial) reads it instead of running the
        network; layer selection keeps its small candidate layers this way. The caller holds the entry's lock
        (:func:`brainscore.caching.locked_entry`), as :meth:`extract` does while it writes.

        Parameters
        ----------
        path : Path
            ``cache_paths(stimuli, [layer])[layer]``.
        values : ndarray of float32, shape (rows, *unit_shape)
            Every row the sinks of :meth:`stream` received for the layer on those stimuli, in that order.

        Raises
        ------
        OSError
            If the file cannot be written (nothing is left behind).
        """
        writer = NpyWriter(path, len(values))
        try:
            writer.append(values)
            return writer.commit()
        except BaseException:
            writer.abort()
            raise

    def _cache_paths(self, stimuli_hash: str, layers: Sequence[str], plan: dict) -> dict[str, Path]:
        # keyed on the code of the framework's module too (it imports this one)
        cache = Cache(_CACHE_NAMESPACE, code=[type(self).__module__])
        architecture, numerics = self.architecture_fingerprint, self.numerics()
        hooked = self.batch_hooks.keys(layers)
        paths = {}
        for layer in layers:
            key = self._key(stimuli_hash, layer, plan, architecture, numerics)
            if hooked[layer]:  # features changed by hooks: their own entries (without hooks, keys as before)
                key = content_key(kind="hooked-activations", activations=key, hooks=hooked[layer])
            paths[layer] = cache.path(key, "npy")
        return paths

    def stream(self, stimuli: StimulusSet, sinks: Mapping[str, Any]) -> None:
        """One forward pass over ``stimuli`` handing each layer's batches to a sink; nothing is cached.

        Parameters
        ----------
        stimuli : StimulusSet
            With unique ``stimulus_id`` and existing files. Rows reach the sinks in sorted
            ``stimulus_id`` order (the order of :meth:`extract`'s files); identical files are run once.
        sinks : dict of str to callable
            Per layer (as in :meth:`extract`), a factory ``rows -> sink`` called before the first
            batch with the number of rows to come (one per distinct file). A sink has
            ``append(batch)`` (float32, ``(b, *unit_shape)``), ``commit()`` (all rows given),
            ``abort()`` (the pass failed) and ``expand_rows(first_of, trials)``, called after
            ``commit`` only when files repeat: row ``i`` of the result is row ``first_of[i]``.

        Raises
        ------
        ValidationError
            For an unknown layer, duplicate stimulus ids or missing files.
        """
        if not sinks:
            raise ValidationError("no layers given to stream; pass e.g. {'logits': factory}")
        self._check_layers(list(sinks))
        stimuli.validate()
        ids = np.asarray(sorted(map(str, stimuli["stimulus_id"])))
        self.batch_hooks.keys(list(sinks))  # a hook fits what it needs before the pass
        self._run([stimuli.get_stimulus(i) for i in ids], dict(sinks), np.zeros((1, 2)), 1, checksum=False)

    # ---- the batches --------------------------------------------------------------------------
    def _run(self, paths: Sequence[Path], targets: Mapping[str, Any], shifts: np.ndarray, trials: int,
             checksum: bool = True) -> None:
        """Run the network over ``paths`` (unique files once) and stream each target layer to its file or sink.

        A target is a file path, or a sink factory ``rows -> sink`` (see :meth:`stream`). Images are
        loaded and preprocessed in batches of :attr:`batch_size` (the next one in a background
        thread with :attr:`prefetch`), shown once per trial with that trial's microsaccade, and each
        batch's features written in another thread (:attr:`background_writes`, at most two batches
        queued). On an error, every file being written is removed and the error raised.
        """
        from brainscore.progress import Stage, stage

        with self._batches(list(targets)) as run_batch, contextlib.ExitStack() as shown:
            # identical files are run once
            unique: dict[str, int] = {}
            first_of = np.empty(len(paths), dtype=np.int64)
            for i, p in enumerate(paths):
                first_of[i] = unique.setdefault(str(Path(p).resolve()), len(unique))
            unique_paths = list(unique)
            duplicates = len(unique_paths) != len(paths)
            rows = len(unique_paths) * trials
            writers = {layer: (target(rows) if callable(target)  # a sink factory (see :meth:`stream`)
                               else NpyWriter(target.with_suffix(".unique.npy"), rows, checksum=False) if duplicates
                               else NpyWriter(target, rows, checksum=checksum))
                       for layer, target in targets.items()}
            pool = ThreadPoolExecutor(max_workers=1) if self.prefetch else None
            # writes go to a second thread, so the network computes the next batch while the kernel
            # flushes this one (writing 18 layers of EfficientNet-Lite0 is 2.6 MB per image)
            writer_pool = ThreadPoolExecutor(max_workers=1) if self.background_writes else None
            written: list = []
            load = lambda chunk: self.preprocessing(chunk)  # noqa: E731

            def write(arrays_per_layer):
                for layer, arrays in arrays_per_layer.items():
                    stacked = (arrays[0] if trials == 1
                               else np.stack(arrays, axis=1).reshape((-1,) + arrays[0].shape[1:]))
                    writers[layer].append(stacked)
            starts = list(range(0, len(unique_paths), self.batch_size))
            layers = f"{len(targets)} layer{'s' if len(targets) != 1 else ''}"
            what = (f"{self.identifier}: activations of {layers}, {len(unique_paths)} images in batches of "
                    f"{self.batch_size}" + (f", {trials} trials each" if trials > 1 else ""))
            bar = shown.enter_context(stage(what, total=rows, unit="image")) if self.progress else Stage()
            try:
                pending = pool.submit(load, unique_paths[0:self.batch_size]) if pool else None
                for number, start in enumerate(starts):
                    chunk = unique_paths[start:start + self.batch_size]
                    batch = pending.result() if pool else load(chunk)
                    if pool and number + 1 < len(starts):
                        nxt = starts[number + 1]
                        pending = pool.submit(load, unique_paths[nxt:nxt + self.batch_size])
                    per_trial: dict[str, list[np.ndarray]] = {layer: [] for layer in targets}
                    for trial in range(trials):
                        arrays = run_batch(batch, float(shifts[trial, 0]), float(shifts[trial, 1]))
                        if self.batch_hooks.hooks:
                            arrays = self.batch_hooks.apply({layer: arrays[layer] for layer in targets})
                        for layer in targets:
                            per_trial[layer].append(arrays[layer])
                    if writer_pool:
                        written.append(writer_pool.submit(write, per_trial))
                        while len(written) > 2:  # at most two batches wait to be written
                            written.pop(0).result()
                    else:
                        write(per_trial)
                    bar.update(len(chunk) * trials)
                for future in written:
                    future.result()
                written.clear()
                for layer, writer in writers.items():
                    writer.commit()
            except BaseException:
                if writer_pool:
                    writer_pool.shutdown(wait=True, cancel_futures=True)
                for writer in writers.values():
                    writer.abort()
                raise
            finally:
                if pool:
                    pool.shutdown(wait=True, cancel_futures=True)
                if writer_pool:
                    writer_pool.shutdown(wait=True, cancel_futures=True)
        if duplicates:
            for layer, target in targets.items():
                if callable(target):
                    writers[layer].expand_rows(first_of, trials)
                else:
                    expand_rows(writers[layer].target, target, first_of, trials, checksum)
