"""Layer selection's view of a model: every candidate layer's features in one pass, PCA-reduced and cached.

:class:`LayerCandidates` is what a :class:`~brainscore.models.commitment.ModelCommitment` hands its
``layer_scorer`` (:func:`brainscore.scoring.selection.layer_scorer`): ``look_at_layers(stimuli)``
returns each candidate layer's features on the selection stimuli, reduced to their first
:data:`SELECTION_PCA_COMPONENTS` principal components as the reference's LayerPCA does.

**Deviation**: the reference fits that PCA on 1000 ImageNet validation images (one per class),
which are not available here; we fit it on the selection stimuli themselves, exactly, from the Gram
matrix of the centred features (:func:`gram_pca`: the ``presentation x presentation`` matrix,
computed block by block of features). With fewer than 1000 selection stimuli this keeps every
direction the features vary in, so rotation-invariant metrics (PLS, ridge, RDM, CKA) see the same
information as the raw features. The unreduced layers are held only during the selection's one
pass (in memory up to a budget, :data:`SELECTION_MEMORY_BYTES`, the rest in unlinked temporary
files), never written to the activations cache; what is cached per layer is its PCA scores (or its
features when it has at most 1000 units), keyed by the content key its activations would have. A layer of
at most 1000 units is also stored as the activations entry ``extract`` would write on those stimuli (a few
MB): when the selection chooses it, the benchmarks it selected on read it instead of running the network again.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from brainscore import caching, config
from brainscore.caching import Cache, content_key, locked_entry, verified
from brainscore.data.assemblies import NeuroidAssembly
from brainscore.data.stimuli import StimulusSet
from brainscore.errors import BrainScoreError
from brainscore.models.extraction.core import LayerFeatures, package_features
from brainscore.progress import stage

__all__ = ["LayerCandidates", "gram_pca", "selection_window", "SELECTION_PCA_COMPONENTS", "SELECTION_PCA_METHOD",
           "SELECTION_MEMORY_BYTES"]

#: Principal components kept per layer during layer selection (the reference's LayerPCA).
SELECTION_PCA_COMPONENTS = 1000
#: Bytes of unreduced layer features a layer-selection pass may hold in memory (None: a quarter of
#: :func:`brainscore.config.usable_memory` when the pass starts, i.e. of what is left of a Dask worker's
#: ``memory_limit`` inside a worker, not of the machine's memory, which killed workers in issue 24; the
#: bytes the process's :class:`_RowArena` keeps from its last pass count as usable;
#: the other three quarters are room for the network's forward pass and the PCA); the rest of its layers wait for their PCA in unlinked
#: temporary files under the cache, which the kernel writes back to disk once they are large.
SELECTION_MEMORY_BYTES: int | None = None
#: Names the PCA method in cache keys (2: all eigenpairs by syevd, then the top k); a new method, a new name.
SELECTION_PCA_METHOD = "gram-eigh/2"


# ------------------------------------------------------------------------------------------------
# PCA from the Gram matrix
# ------------------------------------------------------------------------------------------------
def gram_pca(features: np.ndarray, n_components: int = SELECTION_PCA_COMPONENTS,
             block_bytes: int = 64 << 20, eigensolver: str = "all", device: str | None = None) -> np.ndarray:
    """Principal-component scores of the rows of ``features``, from the Gram matrix of the centred data.

    Equals ``sklearn.decomposition.PCA(k, svd_solver="full").fit_transform(features)`` up to the
    sign of each component, with ``k = min(n_components, n_samples, n_features)``. Only the
    ``n_samples x n_samples`` Gram matrix is held in memory: the features (which may be a memory
    map of a file on disk) are read in blocks of columns. Signs are fixed so that the largest
    absolute score of each component is positive.

    Parameters
    ----------
    features : ndarray of shape (n_samples, n_features)
    n_components : int
    block_bytes : int
        Size of the column blocks read at a time.
    eigensolver : {"all", "subset"}
        ``"all"``: every eigenpair by divide and conquer (LAPACK syevd), then the top k; with k
        close to n, as in layer selection (1000 of ~1100 stimuli), 2-4x faster on the 2-core
        machine than ``"subset"``: only the top k (syevr; the method before). They agree to rounding.
    device : str, optional
        A torch device (e.g. ``"cuda"``): each column block is copied there (pinned, non-blocking:
        :func:`brainscore.device.host_to_device`), the Gram matrix is accumulated there in float64 and
        decomposed by one ``torch.linalg.eigh`` (issue 24: the selection's PCA on the host took 25 s of
        a new model's first V4 score). ``eigensolver`` is then ignored. Equal to the numpy path to
        rounding (signs fixed the same way). None (default): numpy and LAPACK.

    Returns
    -------
    ndarray of float32, shape (n_samples, k)
    """
    from scipy.linalg import eigh

    n, p = features.shape
    k = int(min(n_components, n, p))
    if device is not None:
        return _top_scores(*_gram_eigh_on(features, device, block_bytes), k)
    gram = np.zeros((n, n), dtype=np.float64)
    step = max(1, block_bytes // max(1, n * 4))
    for start in range(0, p, step):
        block = _column_block(features, start, min(p, start + step))
        block = block - block.mean(axis=0, dtype=np.float64).astype(np.float32)
        gram += block @ block.T
    if eigensolver == "all":
        values, vectors = eigh(gram, driver="evd")
    elif eigensolver == "subset":
        values, vectors = eigh(gram, subset_by_index=[n - k, n - 1])
    else:
        raise ValueError(f"eigensolver must be 'all' or 'subset', got {eigensolver!r}")
    return _top_scores(values, vectors, k)


def _top_scores(values: np.ndarray, vectors: np.ndarray, k: int) -> np.ndarray:
    """Scores of the top ``k`` of ascending eigenpairs, each sign fixed by its largest absolute score (float32)."""
    values, vectors = values[::-1][:k], vectors[:, ::-1][:, :k]
    scores = vectors * np.sqrt(np.clip(values, 0, None))
    flip = np.sign(scores[np.argmax(np.abs(scores), axis=0), np.arange(k)])
    flip[flip == 0] = 1
    return (scores * flip).astype(np.float32)


def _gram_eigh_on(features: np.ndarray, device: str, block_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """All eigenpairs (ascending) of the centred Gram matrix of ``features``, computed in torch on ``device``."""
    import torch

    from brainscore.device import host_to_device

    n, p = features.shape
    gram = torch.zeros((n, n), dtype=torch.float64, device=device)
    step = max(1, block_bytes // max(1, n * 4))
    for start in range(0, p, step):
        host = np.ascontiguousarray(_column_block(features, start, min(p, start + step)), dtype=np.float32)
        block = host_to_device(torch.from_numpy(host), device)
        block = block - block.mean(dim=0, dtype=torch.float64).to(torch.float32)
        gram += block @ block.T
    values, vectors = torch.linalg.eigh(gram)
    return values.cpu().numpy(), vectors.cpu().numpy()


#: Bytes of whole rows of a memory-mapped layer that :func:`gram_pca` maps at a time (see :func:`_column_block`).
MAPPED_ROWS_BYTES = 32 << 20


def _column_block(features: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Columns ``start:stop`` of ``features`` as a float32 array, holding few mapped pages when it is a memory map.

    Pages of a file mapping that a process has touched count in its resident memory (RSS), which
    is what a Dask worker's memory limit is checked against, and the kernel maps file pages in
    large folios: reading a column block of a 1 GB layer row by row mapped about half of the file
    at once. The rows are therefore copied a few at a time (about :data:`MAPPED_ROWS_BYTES` of
    whole rows) and unmapped after each group (``madvise(MADV_DONTNEED)``: the pages stay in the
    kernel's file cache). Same values as ``np.asarray(features[:, start:stop])`` (issue 24).
    """
    import mmap

    raw = getattr(features, "_mmap", None) if isinstance(features, np.memmap) else None
    if raw is None or not hasattr(raw, "madvise") or not hasattr(mmap, "MADV_DONTNEED"):
        return np.asarray(features[:, start:stop], dtype=np.float32)
    n = features.shape[0]
    out = np.empty((n, stop - start), dtype=np.float32)
    group = max(1, MAPPED_ROWS_BYTES // max(1, features.shape[1] * features.itemsize))
    for first in range(0, n, group):
        out[first:first + group] = features[first:first + group, start:stop]
        raw.madvise(mmap.MADV_DONTNEED)
    return out


# ------------------------------------------------------------------------------------------------
# layer candidates for selection
# ------------------------------------------------------------------------------------------------
class LayerCandidates:
    """What a layer scorer sees: the candidate layers of one model and a way to record them all at once.

    Attributes
    ----------
    layers : list of str
        Candidate layer names, in depth order.
    identifier : str
        ``"<model identifier>-pca_1000"``: the features are PCA-reduced.

    Parameters
    ----------
    commitment : ModelCommitment
        The model (its ``identifier``, ``visual_degrees()`` and ``activations_model``, the extractor);
        not imported here, so that this module stays below :mod:`brainscore.models.commitment`.
    layers : sequence of str
    n_components : int
        Principal components kept per layer (default :data:`SELECTION_PCA_COMPONENTS`).
    """

    def __init__(self, commitment: Any, layers: Sequence[str],
                 n_components: int = SELECTION_PCA_COMPONENTS):
        self._commitment = commitment
        self.layers = list(layers)
        self.n_components = n_components
        self.identifier = f"{commitment.identifier}-pca_{n_components}"

    def visual_degrees(self) -> float:
        """Field of view of the model (degrees)."""
        return self._commitment.visual_degrees()

    def look_at_layers(self, stimuli: StimulusSet, number_of_trials: int = 1,
                       time_bins: Sequence[tuple[float, float]] | None = None) -> dict[str, NeuroidAssembly]:
        """Features of every candidate layer on ``stimuli``, from one pass over the images.

        Layers with more than :attr:`n_components` features are reduced to that many principal
        components (fitted on ``stimuli``; see the module notes). Each assembly is
        ``presentation x neuroid`` in the row order of ``stimuli``, with the stimulus-set columns on
        presentation and ``neuroid_id``, ``layer``, ``neuroid_num`` on neuroid (plus ``pca_component``
        when reduced).

        With an extractor that can stream (:meth:`ActivationsExtractor.stream`), the unreduced layers
        are never written to the activations cache: each layer's batches are held (in memory, or in
        an unlinked temporary file under the cache when large) only until its PCA is fitted, and
        what is cached is the selection's result per layer (the PCA scores, or the features of a
        layer small enough to keep), keyed by the content key of the activations it comes from; a layer
        small enough to keep is also stored as those activations (:meth:`ActivationsCore.store_features`).

        A video model (an extractor with ``records_time``, e.g. :class:`~brainscore.models.extraction.temporal_store.
        TemporalExtractor`) is streamed the same way, each layer averaged over the window the benchmark records
        (``time_bins``, in ms from stimulus onset: one window from the first start to the last end; default
        ``[(70, 170)]``) as :meth:`ModelCommitment.look_at` averages it (:func:`~brainscore.models.time_bins.
        average_time_bins`); without a model key nothing is stored.
        """
        extractor = self._commitment.activations_model
        if getattr(extractor, "records_time", False):
            return self._streamed(extractor, stimuli, time_bins=selection_window(time_bins))
        if not hasattr(extractor, "stream") and not hasattr(extractor, "extract"):
            raise BrainScoreError(f"model {self._commitment.identifier!r}: its activations model "
                                  f"({type(extractor).__name__}) cannot choose its layers here "
                                  f"yet (it keeps no per-layer features); commit one: `brainscore score --layer LAYER`, or a "
                                  f"region_layer_map in the plugin folder")
        if not hasattr(extractor, "stream") or not getattr(extractor, "cacheable", True):
            features = extractor.extract(stimuli, self.layers, number_of_trials=number_of_trials)
            return {layer: self._reduced(features[layer], stimuli) for layer in self.layers}
        return self._streamed(extractor, stimuli)

    # ---- the streamed pass --------------------------------------------------------------------
    def _selection_entry(self, activations: Path) -> str:
        """Cache key of a layer's selection features, from the name (full content key) of its activations file."""
        return content_key(kind="selection-features", activations=activations.stem,
                           n_components=self.n_components, method=SELECTION_PCA_METHOD, **self._pca_key())

    def _pca_device(self) -> str | None:
        """The torch device the selection's PCA runs on: the model's, when it is not the CPU (issue 24).

        On the CPU the numpy/LAPACK path is kept (its cached entries and numbers stay as they were);
        on a GPU the Gram matrix is accumulated and decomposed there (:func:`gram_pca`'s ``device``).
        """
        extractor = self._commitment.activations_model
        device_type = getattr(extractor, "device_type", "cpu")
        return None if device_type == "cpu" else str(extractor.device)

    def _pca_device_argument(self) -> dict:
        """``gram_pca``'s ``device`` argument: given only off the CPU, so the CPU call is the one it always was."""
        device = self._pca_device()
        return {} if device is None else {"device": device}

    def _pca_key(self) -> dict:
        """Extra cache-key items for a PCA computed on a device: equal to numpy only to rounding, so kept apart."""
        device = self._pca_device()
        return {} if device is None else {"pca_device": device.split(":")[0]}

    def _streamed(self, extractor, stimuli: StimulusSet, **window: Any) -> dict[str, NeuroidAssembly]:
        ids = np.asarray(sorted(map(str, stimuli["stimulus_id"])))
        paths = extractor.cache_paths(stimuli, self.layers, **window)
        if paths is None:  # a model nothing identifies: computed, never stored
            entries = self._compute_entries(extractor, stimuli, self.layers, None, None, **window)
            return {layer: self._package(entries[layer], layer, ids, extractor, stimuli) for layer in self.layers}
        cache = Cache("activations_pca")
        entries: dict[str, dict] = {}
        for layer in self.layers:
            entry = cache.load(self._selection_entry(paths[layer]))
            if entry is not None:
                entries[layer] = entry
        missing = [layer for layer in self.layers if layer not in entries]
        if missing:
            with contextlib.ExitStack() as locks:
                if caching.enabled():  # the locks of the activation entries, in extract's order
                    for path in sorted(paths[layer] for layer in missing):
                        locks.enter_context(locked_entry(path))
                for layer in list(missing):  # another process may have finished them meanwhile
                    entry = cache.load(self._selection_entry(paths[layer]))
                    if entry is not None:
                        entries[layer] = entry
                        missing.remove(layer)
                if missing:
                    entries.update(self._compute_entries(extractor, stimuli, missing, paths, cache, **window))
        return {layer: self._package(entries[layer], layer, ids, extractor, stimuli) for layer in self.layers}

    def _compute_entries(self, extractor, stimuli: StimulusSet, layers: Sequence[str],
                         paths: Mapping[str, Path] | None, cache: Cache | None, **window: Any) -> dict[str, dict]:
        """One pass for ``layers`` (those already in the activations cache are read from there); entries cached
        (``cache`` None: nothing read or stored)."""
        stored = [layer for layer in layers if cache is not None and caching.enabled() and verified(paths[layer])]
        sinks: dict[str, _RowSink] = {}
        folder = Path(cache.root) if cache is not None and caching.enabled() else Path(tempfile.gettempdir())
        # the rows held in the arena are gone when the lease ends (the entries are copies or PCA scores)
        with _ARENA.lease() as arena:
            budget = _MemoryBudget(SELECTION_MEMORY_BYTES if SELECTION_MEMORY_BYTES is not None
                                   else (config.usable_memory() + arena.held) // 4, arena)
            streamed = [layer for layer in layers if layer not in stored]
            entries: dict[str, dict] = {}
            try:
                if streamed:
                    def factory(layer):
                        def make(rows):
                            sinks[layer] = _RowSink(rows, folder, budget)
                            return sinks[layer]
                        return make
                    extractor.stream(stimuli, {layer: factory(layer) for layer in streamed}, **window)
                what = f"{self._commitment.identifier}: principal components of {len(layers)} candidate layers"
                with stage(what, total=len(layers), unit="layer") as step:
                    for layer in layers:
                        if layer in stored:
                            entries[layer] = self._entry(np.load(paths[layer], mmap_mode="r"))
                        else:
                            sink = sinks.pop(layer)
                            try:
                                entries[layer] = self._entry(sink.values)
                            finally:
                                sink.close()  # its file goes (its rows in the arena stay for the next pass)
                            if cache is not None and not window and "values" in entries[layer]:
                                _keep_activations(extractor, paths[layer], entries[layer]["values"])
                        if cache is not None:
                            cache.save(self._selection_entry(paths[layer]), entries[layer])
                        step.update()
            finally:
                for sink in sinks.values():
                    sink.close()
        return entries

    def _entry(self, values: np.ndarray) -> dict:
        """What is cached for one layer: its PCA scores when it has more features than components, else its values."""
        matrix = values.reshape(values.shape[0], -1)
        if matrix.shape[1] > self.n_components:
            return {"scores": gram_pca(matrix, self.n_components, **self._pca_device_argument())}
        return {"values": np.array(values, dtype=np.float32)}

    def _package(self, entry: dict, layer: str, ids: np.ndarray, extractor, stimuli: StimulusSet) -> NeuroidAssembly:
        model_id = self._commitment.identifier
        if "values" in entry:
            features = LayerFeatures(layer, None, ids, visual_degrees=getattr(extractor, "visual_degrees", None),
                                     image_size=getattr(getattr(extractor, "preprocessing", None), "image_size", None),
                                     in_memory=entry["values"])
            return features.assembly(stimuli, model_id)
        features = LayerFeatures(layer, None, ids, in_memory=entry["scores"])
        return self._package_scores(entry["scores"], features, stimuli)

    # ---- from the activations cache (an extractor that cannot stream) -------------------------------
    def _reduced(self, features: LayerFeatures, stimuli: StimulusSet) -> NeuroidAssembly:
        model_id = self._commitment.identifier
        if features.n_features <= self.n_components:
            return features.assembly(stimuli, model_id)
        cache = Cache("activations_pca")
        if features.path is not None:  # the activation file's name is its full key (content and code)
            key = content_key(kind="selection-pca", activations=features.path.stem,
                              n_components=self.n_components, method=SELECTION_PCA_METHOD, **self._pca_key())
            scores = cache.get_or_compute(key, lambda: gram_pca(features.matrix(), self.n_components,
                                                                **self._pca_device_argument()))
        else:
            scores = gram_pca(features.matrix(), self.n_components, **self._pca_device_argument())
        return self._package_scores(scores, features, stimuli)

    def _package_scores(self, scores: np.ndarray, features: LayerFeatures, stimuli: StimulusSet) -> NeuroidAssembly:
        """PCA scores (rows in ``features``' order) as a ``presentation x neuroid`` assembly in ``stimuli``'s order."""
        model_id = self._commitment.identifier
        rows = features.rows_for(stimuli["stimulus_id"].astype(str).to_numpy())
        k = scores.shape[1]
        num = np.arange(k)
        neuroid_coords = {
            "neuroid_id": ("neuroid", np.char.add(f"{features.layer}.pca", num.astype(str)).astype(object)),
            "neuroid_num": ("neuroid", num),
            "pca_component": ("neuroid", num),
            "layer": ("neuroid", np.full(k, features.layer, dtype=object)),
            "model": ("neuroid", np.full(k, model_id, dtype=object)),
        }
        return package_features(scores[rows], stimuli, neuroid_coords, features.trials, features.shifts,
                                features.visual_degrees, features.image_size)


def _keep_activations(extractor, path: Path, values: np.ndarray) -> None:
    """Store a small candidate layer's features (at most ``n_components`` units, kept unreduced) from the selection's
    own pass as the activations entry a benchmark on these stimuli reads (:meth:`ActivationsCore.store_features`):
    when layer selection chooses such a layer (an ``avgpool``, a classifier), the benchmarks that select on these
    stimuli run no second forward pass. A few MB per layer; a write that fails (a full disk) loses nothing but the
    shortcut, with a warning."""
    store = getattr(extractor, "store_features", None)  # (the caller holds the entry's lock and found it missing)
    if store is None or not caching.enabled():
        return
    try:
        store(path, values)
    except OSError as error:
        import warnings

        warnings.warn(f"layer selection could not keep a candidate layer's features as activations ({error}); "
                      f"a benchmark on these stimuli will compute them again", RuntimeWarning, stacklevel=2)


def selection_window(time_bins: Sequence[tuple[float, float]] | None) -> list[tuple[float, float]]:
    """The one time bin (ms from onset) a video model's candidate layers are averaged over for a benchmark recorded in
    ``time_bins``: from the first bin's start to the last bin's end
    (:data:`~brainscore.models.time_bins.DEFAULT_TIME_BINS` for None).

    Raises
    ------
    ValidationError
        For an empty list, a bin that is not a finite (start, end), or an end not after its start
        (:func:`~brainscore.models.time_bins.checked_time_bins`).
    """
    from brainscore.models.time_bins import DEFAULT_TIME_BINS, checked_time_bins

    bins = checked_time_bins(DEFAULT_TIME_BINS if time_bins is None else time_bins)
    return [(min(start for start, _ in bins), max(end for _, end in bins))]


#: Seconds a process keeps the memory that held its last selection pass's rows, for its next pass (:class:`_RowArena`).
ARENA_KEEP_S = 60.0


class _RowArena:
    """The memory a process's streamed selection passes hold their rows in, kept for the next pass a while.

    A selection touches gigabytes of fresh memory per session (ResNet-18's 10 candidate layers over 1,200
    images: 7.4 GB). Where a virtual machine hands freed memory back to its host (KVM's virtio-balloon free
    page reporting, as on the 2-core machine), touching memory freed more than a few seconds ago costs 0.1-0.3
    GiB/s against 8 GiB/s for memory touched since: most of the time a selection spent above its forward pass
    (issue 39). Each layer held in memory gets a chunk (the smallest one kept from the pass before that is large
    enough, else a new one of its size); when the pass ends the chunks it used stay, touched, for
    :data:`ARENA_KEEP_S` seconds, so the next session's pass (a Dask worker's next selection task, the next
    region's benchmark) reuses the same pages; then they are freed. The bytes kept count as usable by the next
    pass (they are in the process's resident memory). Rows that do not fit in memory go to regions of one kept
    unlinked temporary file, whose pages the page cache holds from the pass before.

    One pass at a time uses it (a lock); a concurrent pass gets plain allocations. Rows carved from it
    never outlive their pass: what a pass keeps (PCA scores, a small layer's values) are copies. Where no thread
    can be started for the timer (a sandboxed model server limits its threads), nothing is kept after a pass.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._chunks: list[np.ndarray] = []  # uint8, kept from the last pass
        self._file = None  # an unlinked temporary file (buffering=0), and its folder
        self._folder: Path | None = None
        self._busy = False
        self._timer: threading.Timer | None = None

    @contextlib.contextmanager
    def lease(self):
        """A :class:`_ArenaLease` for one pass (without memory of its own when another pass holds the arena)."""
        with self._lock:
            mine = not self._busy
            if mine:
                self._busy = True
                if self._timer is not None:
                    self._timer.cancel()
                    self._timer = None
        lease = _ArenaLease(self if mine else None, sum(c.nbytes for c in self._chunks) if mine else 0)
        try:
            yield lease
        finally:
            if mine:
                with self._lock:
                    self._chunks = lease.chunks  # the ones this pass did not use go
                    self._busy = False
                    timer = threading.Timer(ARENA_KEEP_S, self.free)
                    timer.daemon = True
                    try:
                        timer.start()
                        self._timer = timer
                    except RuntimeError:  # no thread to spare (a sandboxed model server's limit): nothing is kept
                        self._release()

    def _release(self) -> None:
        """Drop the kept chunks and close the kept file (the caller holds the lock)."""
        self._chunks = []
        if self._file is not None:
            self._file.close()
        self._file, self._folder = None, None

    def free(self) -> None:
        """Let the buffer and the file go (unless a pass holds them)."""
        with self._lock:
            if not self._busy:
                self._release()

    def _temporary_file(self, folder: Path):
        """The kept temporary file (a new one when none is kept, or the kept one is in another folder)."""
        if self._file is None or self._folder != folder:
            if self._file is not None:
                self._file.close()
            self._file, self._folder = _temporary_rows_file(folder), folder
        return self._file

    def _take_chunk(self, nbytes: int) -> np.ndarray | None:
        """The smallest kept chunk of at least ``nbytes`` (taken out of the kept ones), or None."""
        fits = [i for i, chunk in enumerate(self._chunks) if chunk.nbytes >= nbytes]
        if not fits:
            return None
        return self._chunks.pop(min(fits, key=lambda i: self._chunks[i].nbytes))


#: The process's arena (one per process; see :class:`_RowArena`).
_ARENA = _RowArena()


class _ArenaLease:
    """One pass's use of a :class:`_RowArena`: a chunk per layer held in memory, a file region per layer that is not."""

    PAGE = 4096

    def __init__(self, arena: _RowArena | None, held: int):
        self._arena, self.held = arena, int(held)
        self.chunks: list[np.ndarray] = []  # the chunks this pass used
        self._file_used = 0

    def carve(self, shape: tuple[int, ...]) -> np.ndarray | None:
        """A float32 array of ``shape`` (contents undefined): a kept chunk, else a new one; None without an arena."""
        if self._arena is None:
            return None
        nbytes = 4 * int(np.prod(shape))
        chunk = self._arena._take_chunk(nbytes)
        if chunk is None:
            chunk = np.empty(nbytes, dtype=np.uint8)
        self.chunks.append(chunk)
        return chunk[:nbytes].view(np.float32).reshape(shape)

    def file_region(self, folder: Path, nbytes: int) -> tuple[Any, int, bool]:
        """(an unbuffered temporary file, the offset of ``nbytes`` of it for one layer's rows, whether the caller
        closes it): a region of the arena's kept file, whose pages a pass before wrote (in the page cache, not
        fresh memory); without an arena, a file of its own at offset 0."""
        if self._arena is None:
            return _temporary_rows_file(folder), 0, True
        offset = self._file_used
        self._file_used += -(-int(nbytes) // self.PAGE) * self.PAGE
        return self._arena._temporary_file(Path(folder)), offset, False


def _temporary_rows_file(folder: Path):
    """An unlinked, unbuffered temporary file under ``folder`` for held rows (nothing is left if the process dies)."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    return tempfile.TemporaryFile(dir=folder, prefix=".selection-rows-", buffering=0)


class _MemoryBudget:
    """Bytes a streamed selection pass may hold in memory; larger layers go to temporary files.

    With an arena lease (:class:`_RowArena`), the arrays it allows come from the process's arena where it has room;
    without one (``arena`` None), from a lease without an arena: plain allocations and files of their own.
    """

    def __init__(self, available: int, arena: _ArenaLease | None = None):
        self.available = int(available)
        self._arena = arena if arena is not None else _ArenaLease(None, 0)

    def array(self, shape: tuple[int, ...]) -> np.ndarray:
        """A float32 array of ``shape`` for bytes already taken (:meth:`take`): from the arena, else allocated."""
        out = self._arena.carve(shape)
        return out if out is not None else np.empty(shape, dtype=np.float32)

    def file_region(self, folder: Path, nbytes: int) -> tuple[Any, int, bool]:
        """Where rows that do not fit go: see :meth:`_ArenaLease.file_region`."""
        return self._arena.file_region(folder, nbytes)

    def take(self, nbytes: int) -> bool:
        """Reserve ``nbytes``; False (nothing reserved) when fewer are left."""
        if nbytes > self.available:
            return False
        self.available -= nbytes
        return True

    def give(self, nbytes: int) -> None:
        """Return ``nbytes`` taken before (their array was freed)."""
        self.available += int(nbytes)


class _RowSink:
    """One layer's rows during a streamed pass (:meth:`ActivationsExtractor.stream`'s sink protocol).

    Held in memory while the pass's :class:`_MemoryBudget` allows, else appended to an unlinked
    temporary file under ``folder`` (plain writes, then read back as a read-only memory map; nothing
    is left behind if the process dies). Not a cache entry: it lives only until its PCA is fitted.
    """

    def __init__(self, rows: int, folder: Path, budget: _MemoryBudget):
        self.rows, self.folder, self.budget = int(rows), Path(folder), budget
        self._memory: np.ndarray | None = None
        self._file = None  # an unbuffered file, the rows' offset in it, whether this sink closes it
        self._offset, self._owns_file = 0, False
        self.unit_shape: tuple[int, ...] | None = None
        self.written = 0

    def append(self, batch: np.ndarray) -> None:
        batch = np.ascontiguousarray(batch, dtype=np.float32)
        if self.unit_shape is None:
            self.unit_shape = tuple(batch.shape[1:])
            if self.budget.take(4 * self.rows * int(np.prod(self.unit_shape))):
                self._memory = self.budget.array((self.rows, *self.unit_shape))
            else:
                self._file, self._offset, self._owns_file = self.budget.file_region(
                    self.folder, 4 * self.rows * int(np.prod(self.unit_shape)))
        elif tuple(batch.shape[1:]) != self.unit_shape:
            raise BrainScoreError(f"layer output changed shape between batches: {self.unit_shape} then "
                                  f"{tuple(batch.shape[1:])}; images must all be preprocessed to one size")
        if self.written + len(batch) > self.rows:
            raise BrainScoreError(f"a streamed layer got more than the {self.rows} rows announced")
        if self._memory is not None:
            self._memory[self.written:self.written + len(batch)] = batch
        else:
            data = memoryview(batch).cast("B")
            at = self._offset + 4 * self.written * int(np.prod(self.unit_shape))
            while len(data):
                done = os.pwrite(self._file.fileno(), data, at)
                data, at = data[done:], at + done
        self.written += len(batch)

    def commit(self) -> None:
        if self.written != self.rows:
            raise BrainScoreError(f"a streamed layer got {self.written} rows, expected {self.rows}")

    @property
    def values(self) -> np.ndarray:
        """The rows, ``(rows, *unit_shape)`` float32 (a read-only memory map when they went to a file)."""
        if self._memory is not None:
            return self._memory
        return np.memmap(self._file, dtype=np.float32, mode="r", offset=self._offset,
                         shape=(self.rows, *self.unit_shape))

    def expand_rows(self, first_of: np.ndarray, trials: int) -> None:
        """Row ``i`` becomes the old row ``first_of[i]`` (files shown under several stimulus ids).

        The expanded rows are written once, straight from the old ones: in memory (``np.take`` into
        the new array) when the budget has room for them beside the old rows, whose bytes then go
        back to the budget; else to a new temporary file, :data:`~brainscore.models.extraction.core.COPY_BLOCK_BYTES`
        of rows at a time, read from the old file by positional reads (no memory map of it).
        """
        from brainscore.models.extraction.core import COPY_BLOCK_BYTES, read_rows

        rows = (np.asarray(first_of, dtype=np.int64)[:, None] * trials + np.arange(trials)[None, :]).ravel()
        unit_shape, old_rows = self.unit_shape, self.rows
        old_memory, old_file, old_offset, old_owned = self._memory, self._file, self._offset, self._owns_file
        width = int(np.prod(unit_shape))
        self._memory, self._file, self.unit_shape, self.written, self.rows = None, None, None, 0, len(rows)
        self._offset, self._owns_file = 0, False
        try:
            if old_memory is not None and self.budget.take(4 * len(rows) * width):
                self._memory = np.take(old_memory, rows, axis=0)
                self.unit_shape, self.written = unit_shape, len(rows)
                self.budget.give(4 * old_rows * width)
            else:
                step = max(1, COPY_BLOCK_BYTES // (4 * width))
                fd = old_file.fileno() if old_file is not None else None
                for start in range(0, len(rows), step):
                    index = rows[start:start + step]
                    block = (old_memory[index] if old_memory is not None
                             else read_rows(fd, index, old_rows, width, np.float32,
                                            offset=old_offset).reshape((-1,) + unit_shape))
                    self.append(block)
                if old_memory is not None:
                    self.budget.give(4 * old_rows * width)
            self.commit()
        finally:
            del old_memory
            if old_file is not None and old_owned:
                old_file.close()

    def abort(self) -> None:
        self.close()

    def close(self) -> None:
        self._memory = None
        if self._file is not None and self._owns_file:
            self._file.close()
        self._file = None
