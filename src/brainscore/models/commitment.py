"""From a network to a brain model: commit layers to regions and read out behaviour.

A :class:`ModelCommitment` (Schrimpf et al. 2020, Brain-Score's model-to-brain commitment) wraps an
activations model (an :class:`~brainscore.models.extraction.ActivationsExtractor`) as a
:class:`~brainscore.models.interface.BrainModel`:

- *recording*: ``start_recording("V4", time_bins)`` then ``look_at(stimuli)`` returns the features
  of the layer committed to V4, ``presentation x neuroid x time_bin``. A static network answers
  every time bin with the same response; a network whose activations carry a ``time_bin`` dim is
  aligned to the requested bins by an overlap-weighted average (:func:`align_time_bins`);
- *layer selection*: a region missing from ``region_layer_map`` is mapped by calling
  ``layer_scorer(region, candidates)`` (supplied by the caller, e.g. a benchmark-based scorer;
  this layer does not import benchmarks) and taking the best-scoring layer. The choice is stored
  in the cache by (weights, preprocessing, candidate layers, region, scorer identity), so it is
  computed once. A region the scorer has no selection data for (it raises
  :class:`~brainscore.errors.NoSelectionDataError`), or any region when there is no scorer, is
  committed by the relative-depth rule of :mod:`brainscore.models.layer_rule`, which never looks at
  a benchmark. How each region's layer was chosen is kept in ``layer_methods``;
- *candidate layers*: given by the plugin, or (``layers=None``) the outputs of the network's
  top-level blocks (:func:`brainscore.models.structure.structural_candidates`);
- *behaviour*: ``start_task("label" | "probabilities" | "odd_one_out" | "passive", ...)`` with
  the readouts of :mod:`brainscore.models.readouts`.

During layer selection, layers with more than 1000 features are reduced to their first 1000
principal components, as the reference does. **Deviation**: the reference fits that PCA on 1000
ImageNet validation images (one per class), which are not available here; we fit it on the
selection stimuli themselves, exactly, from the Gram matrix of the centred features (the
``presentation x presentation`` matrix, computed block by block of features). With fewer than 1000
selection stimuli this keeps every direction the features vary in, so rotation-invariant metrics
(PLS, ridge, RDM, CKA) see the same information as the raw features. The unreduced layers are held
only during the selection's one pass (in memory, or in unlinked temporary files when large), never
written to the activations cache; what is cached per layer is its PCA scores (or its features when
it has at most 1000 units), keyed by the content key its activations would have.
"""
from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from brainscore import caching
from brainscore.caching import Cache, content_key, locked_entry, verified
from brainscore.data.assemblies import BehavioralAssembly, NeuroidAssembly
from brainscore.data.stimuli import StimulusSet
from brainscore.errors import BrainScoreError, NoSelectionDataError, ValidationError
from brainscore.models import layer_rule, readouts
from brainscore.models.structure import CANDIDATE_DEFINITION, structural_candidates
from brainscore.models.extraction import LOGITS, LayerFeatures, package_features
from brainscore.models.interface import BrainModel, Task

#: Principal components kept per layer during layer selection (the reference's LayerPCA).
SELECTION_PCA_COMPONENTS = 1000
#: Bytes of unreduced layer features a layer-selection pass may hold in memory (None: a quarter of the
#: memory available when the pass starts); the rest of its layers wait for their PCA in unlinked
#: temporary files under the cache, which the kernel writes back to disk once they are large.
SELECTION_MEMORY_BYTES: int | None = None
#: Time bin recorded when ``start_recording`` is given none (ms), as the reference.
DEFAULT_TIME_BINS = ((70, 170),)
_PCA_VERSION = "gram-eigh/2"  # 2: all eigenpairs (syevd), then the top k


# ------------------------------------------------------------------------------------------------
# PCA from the Gram matrix
# ------------------------------------------------------------------------------------------------
def gram_pca(features: np.ndarray, n_components: int = SELECTION_PCA_COMPONENTS,
             block_bytes: int = 64 << 20, eigensolver: str = "all") -> np.ndarray:
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

    Returns
    -------
    ndarray of float32, shape (n_samples, k)
    """
    from scipy.linalg import eigh

    n, p = features.shape
    k = int(min(n_components, n, p))
    gram = np.zeros((n, n), dtype=np.float64)
    step = max(1, block_bytes // max(1, n * 4))
    for start in range(0, p, step):
        block = np.asarray(features[:, start:start + step], dtype=np.float32)
        block = block - block.mean(axis=0, dtype=np.float64).astype(np.float32)
        gram += block @ block.T
    if eigensolver == "all":
        values, vectors = eigh(gram, driver="evd")
    elif eigensolver == "subset":
        values, vectors = eigh(gram, subset_by_index=[n - k, n - 1])
    else:
        raise ValueError(f"eigensolver must be 'all' or 'subset', got {eigensolver!r}")
    values, vectors = values[::-1][:k], vectors[:, ::-1][:, :k]
    scores = vectors * np.sqrt(np.clip(values, 0, None))
    flip = np.sign(scores[np.argmax(np.abs(scores), axis=0), np.arange(k)])
    flip[flip == 0] = 1
    return (scores * flip).astype(np.float32)


# ------------------------------------------------------------------------------------------------
# time bins
# ------------------------------------------------------------------------------------------------
def _bins(time_bins) -> list[tuple[int, int]]:
    bins = [tuple(int(v) for v in b) for b in time_bins]
    for start, end in bins:
        if end <= start:
            raise ValidationError(f"time bin ({start}, {end}) must end after it starts (ms)")
    return bins


def repeat_time_bins(assembly: NeuroidAssembly, time_bins: Sequence[tuple[int, int]]) -> NeuroidAssembly:
    """A static response for every time bin: ``presentation x neuroid x time_bin`` (a broadcast view).

    Coordinates ``time_bin_start`` and ``time_bin_end`` (ms) lie on ``time_bin``.
    """
    bins = _bins(time_bins)
    expanded = assembly.expand_dims(time_bin=len(bins), axis=-1)
    expanded = expanded.assign_coords(time_bin_start=("time_bin", np.array([b[0] for b in bins])),
                                      time_bin_end=("time_bin", np.array([b[1] for b in bins])))
    return type(assembly)(expanded)


def align_time_bins(assembly: NeuroidAssembly, time_bins: Sequence[tuple[int, int]]) -> NeuroidAssembly:
    """Average a temporal model's time bins into the requested ones, weighted by their overlap.

    For each requested bin ``[a, b)`` every source bin ``[s, e)`` gets weight
    ``max(0, min(b, e) - max(a, s))`` and the weighted mean of the source responses is taken (the
    reference's ``assembly_time_align``, "portion" mode).

    Raises
    ------
    ValidationError
        If a requested bin overlaps no source bin.
    """
    bins = _bins(time_bins)
    starts = np.atleast_1d(assembly["time_bin_start"].values).astype(float)
    ends = np.atleast_1d(assembly["time_bin_end"].values).astype(float)
    weights = np.zeros((len(starts), len(bins)))
    for j, (a, b) in enumerate(bins):
        weights[:, j] = np.clip(np.minimum(b, ends) - np.maximum(a, starts), 0, None)
        if weights[:, j].sum() == 0:
            raise ValidationError(f"requested time bin ({a}, {b}) ms overlaps none of the model's time bins "
                                  f"{list(zip(starts.astype(int), ends.astype(int)))}")
    weights /= weights.sum(axis=0, keepdims=True)
    source = assembly.transpose("presentation", "neuroid", "time_bin")
    values = np.tensordot(np.asarray(source.values, dtype=float), weights, axes=([2], [0]))
    coords = {name: coord for name, coord in source.coords.items() if "time_bin" not in coord.dims}
    coords["time_bin_start"] = ("time_bin", np.array([b[0] for b in bins]))
    coords["time_bin_end"] = ("time_bin", np.array([b[1] for b in bins]))
    return type(assembly)(values, dims=("presentation", "neuroid", "time_bin"), coords=coords)


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
    """

    def __init__(self, commitment: "ModelCommitment", layers: Sequence[str],
                 n_components: int = SELECTION_PCA_COMPONENTS):
        self._commitment = commitment
        self.layers = list(layers)
        self.n_components = n_components
        self.identifier = f"{commitment.identifier}-pca_{n_components}"

    def visual_degrees(self) -> float:
        """Field of view of the model (degrees)."""
        return self._commitment.visual_degrees()

    def look_at_layers(self, stimuli: StimulusSet, number_of_trials: int = 1) -> dict[str, NeuroidAssembly]:
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
        layer small enough to keep), keyed by the content key of the activations it comes from.
        """
        extractor = self._commitment.activations_model
        if not hasattr(extractor, "stream"):
            features = extractor.extract(stimuli, self.layers, number_of_trials=number_of_trials)
            return {layer: self._reduced(features[layer], stimuli) for layer in self.layers}
        return self._streamed(extractor, stimuli)

    # ---- the streamed pass --------------------------------------------------------------------
    def _selection_entry(self, activations: Path) -> str:
        """Cache key of a layer's selection features, from the name (full content key) of its activations file."""
        return content_key(kind="selection-features", activations=activations.stem,
                           n_components=self.n_components, method=_PCA_VERSION)

    def _streamed(self, extractor, stimuli: StimulusSet) -> dict[str, NeuroidAssembly]:
        paths = extractor.cache_paths(stimuli, self.layers)
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
                    entries.update(self._compute_entries(extractor, stimuli, missing, paths, cache))
        ids = np.asarray(sorted(map(str, stimuli["stimulus_id"])))
        return {layer: self._package(entries[layer], layer, ids, extractor, stimuli) for layer in self.layers}

    def _compute_entries(self, extractor, stimuli: StimulusSet, layers: Sequence[str], paths: Mapping[str, Path],
                         cache: Cache) -> dict[str, dict]:
        """One pass for ``layers`` (those already in the activations cache are read from there); entries cached."""
        stored = [layer for layer in layers if caching.enabled() and verified(paths[layer])]
        sinks: dict[str, _RowSink] = {}
        folder = Path(cache.root) if caching.enabled() else Path(tempfile.gettempdir())
        budget = _MemoryBudget(SELECTION_MEMORY_BYTES if SELECTION_MEMORY_BYTES is not None
                               else _available_memory() // 4)
        streamed = [layer for layer in layers if layer not in stored]
        entries: dict[str, dict] = {}
        try:
            if streamed:
                def factory(layer):
                    def make(rows):
                        sinks[layer] = _RowSink(rows, folder, budget)
                        return sinks[layer]
                    return make
                extractor.stream(stimuli, {layer: factory(layer) for layer in streamed})
            for layer in layers:
                if layer in stored:
                    entries[layer] = self._entry(np.load(paths[layer], mmap_mode="r"))
                else:
                    sink = sinks.pop(layer)
                    try:
                        entries[layer] = self._entry(sink.values)
                    finally:
                        sink.close()  # frees its memory (or file) before the next layer's PCA
                cache.save(self._selection_entry(paths[layer]), entries[layer])
        finally:
            for sink in sinks.values():
                sink.close()
        return entries

    def _entry(self, values: np.ndarray) -> dict:
        """What is cached for one layer: its PCA scores when it has more features than components, else its values."""
        matrix = values.reshape(values.shape[0], -1)
        if matrix.shape[1] > self.n_components:
            return {"scores": gram_pca(matrix, self.n_components)}
        return {"values": np.array(values, dtype=np.float32)}

    def _package(self, entry: dict, layer: str, ids: np.ndarray, extractor, stimuli: StimulusSet) -> NeuroidAssembly:
        model_id = self._commitment.identifier
        if "values" in entry:
            features = LayerFeatures(layer, None, ids, visual_degrees=getattr(extractor, "visual_degrees", None),
                                     image_size=extractor.preprocessing.image_size, in_memory=entry["values"])
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
                              n_components=self.n_components, method=_PCA_VERSION)
            scores = cache.get_or_compute(key, lambda: gram_pca(features.matrix(), self.n_components))
        else:
            scores = gram_pca(features.matrix(), self.n_components)
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


def _available_memory() -> int:
    """Bytes of memory available to a new allocation (``psutil.virtual_memory().available``)."""
    import psutil

    return int(psutil.virtual_memory().available)


class _MemoryBudget:
    """Bytes a streamed selection pass may hold in memory; larger layers go to temporary files."""

    def __init__(self, available: int):
        self.available = int(available)

    def take(self, nbytes: int) -> bool:
        if nbytes > self.available:
            return False
        self.available -= nbytes
        return True


class _RowSink:
    """One layer's rows during a streamed pass (:meth:`ActivationsExtractor.stream`'s sink protocol).

    Held in memory while the pass's :class:`_MemoryBudget` allows, else appended to an unlinked
    temporary file under ``folder`` (plain writes, then read back as a read-only memory map; nothing
    is left behind if the process dies). Not a cache entry: it lives only until its PCA is fitted.
    """

    def __init__(self, rows: int, folder: Path, budget: _MemoryBudget):
        self.rows, self.folder, self.budget = int(rows), Path(folder), budget
        self._memory: np.ndarray | None = None
        self._file = None
        self.unit_shape: tuple[int, ...] | None = None
        self.written = 0

    def append(self, batch: np.ndarray) -> None:
        batch = np.ascontiguousarray(batch, dtype=np.float32)
        if self.unit_shape is None:
            self.unit_shape = tuple(batch.shape[1:])
            if self.budget.take(4 * self.rows * int(np.prod(self.unit_shape))):
                self._memory = np.empty((self.rows, *self.unit_shape), dtype=np.float32)
            else:
                self.folder.mkdir(parents=True, exist_ok=True)
                self._file = tempfile.TemporaryFile(dir=self.folder, prefix=".selection-rows-")
        elif tuple(batch.shape[1:]) != self.unit_shape:
            raise BrainScoreError(f"layer output changed shape between batches: {self.unit_shape} then "
                                  f"{tuple(batch.shape[1:])}; images must all be preprocessed to one size")
        if self.written + len(batch) > self.rows:
            raise BrainScoreError(f"a streamed layer got more than the {self.rows} rows announced")
        if self._memory is not None:
            self._memory[self.written:self.written + len(batch)] = batch
        else:
            self._file.write(memoryview(batch).cast("B"))
        self.written += len(batch)

    def commit(self) -> None:
        if self.written != self.rows:
            raise BrainScoreError(f"a streamed layer got {self.written} rows, expected {self.rows}")
        if self._file is not None:
            self._file.flush()

    @property
    def values(self) -> np.ndarray:
        """The rows, ``(rows, *unit_shape)`` float32 (a read-only memory map when they went to a file)."""
        if self._memory is not None:
            return self._memory
        return np.memmap(self._file, dtype=np.float32, mode="r", shape=(self.rows, *self.unit_shape))

    def expand_rows(self, first_of: np.ndarray, trials: int) -> None:
        """Row ``i`` becomes the old row ``first_of[i]`` (files shown under several stimulus ids)."""
        rows = (np.asarray(first_of)[:, None] * trials + np.arange(trials)[None, :]).ravel()
        source, old_file = self.values, self._file
        self._memory, self._file, self.unit_shape, self.written, self.rows = None, None, None, 0, len(rows)
        try:
            for start in range(0, len(rows), 256):
                self.append(np.asarray(source[rows[start:start + 256]]))
            self.commit()
        finally:
            del source
            if old_file is not None:
                old_file.close()

    def abort(self) -> None:
        self.close()

    def close(self) -> None:
        self._memory = None
        if self._file is not None:
            self._file.close()
            self._file = None


def _scorer_identity(scorer: Callable) -> dict[str, Any]:
    identifier = getattr(scorer, "identifier", None)
    if identifier is None:
        target = getattr(scorer, "func", scorer)
        identifier = f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', type(target).__name__)}"
    return {"identifier": str(identifier), "version": str(getattr(scorer, "version", ""))}


# ------------------------------------------------------------------------------------------------
# the commitment
# ------------------------------------------------------------------------------------------------
class ModelCommitment(BrainModel):
    """A network committed to brain regions and behavioural readouts.

    Parameters
    ----------
    identifier : str
        The model's name, e.g. ``"efficientnet-lite0"``.
    activations_model : ActivationsExtractor
        Computes layer activations (``extract`` and ``__call__``; see
        :class:`~brainscore.models.extraction.ActivationsExtractor`).
    layers : sequence of str, optional
        Candidate layers for regions, in depth order. None: the outputs of the network's top-level
        blocks (:func:`~brainscore.models.structure.structural_candidates` of
        ``activations_model.model``), recorded as ``candidates_source``.
    region_layer_map : dict of str to str, optional
        Region (``V1``, ``V2``, ``V4``, ``IT``) -> committed layer (method ``declared``). Missing
        regions are selected with ``layer_scorer`` on first use (method ``selection``), or, where
        it has no selection data or there is no scorer, committed by the layer rule (``rule``).
    visual_degrees : float
        Field of view in degrees (8 as the reference).
    behavioral_readout_layer : str, optional
        Layer read by the probabilities and odd-one-out tasks (default: the last of ``layers``).
    layer_scorer : callable (region, LayerCandidates) -> dict of str to float, optional
        Scores candidate layers for a region; the best is committed. ``brainscore.load_model``
        supplies the standard benchmark-based one.

    Attributes
    ----------
    region_layer_map : dict of str to str
        The committed layers (grows as regions are selected).
    layer_scores : dict of str to dict of str to float
        Per selected region, the scores of the candidates.
    layer_methods : dict of str to dict
        Per committed region, how its layer was chosen: ``{"method": "declared"}``,
        ``{"method": "selection", "scorer": ..., "benchmarks": [...]}`` (scores in ``layer_scores``)
        or ``{"method": "rule", "rule", "relative_depth", "maps", "index", "n_candidates"}``.
    candidates_source : str
        ``"declared"`` (the plugin listed them) or the structural definition used
        (:data:`~brainscore.models.structure.CANDIDATE_DEFINITION`).
    """

    def __init__(self, identifier: str, activations_model, layers: Sequence[str] | None = None,
                 region_layer_map: Mapping[str, str] | None = None, visual_degrees: float = 8,
                 behavioral_readout_layer: str | None = None,
                 layer_scorer: Callable[[str, LayerCandidates], Mapping[str, float]] | None = None):
        self._identifier = identifier
        self.activations_model = activations_model
        if layers is None:
            network = getattr(activations_model, "model", None)
            if network is None:
                raise ValidationError(f"model {identifier!r} lists no candidate layers and its activations model "
                                      f"has no network to take them from; give layers=[...]")
            self.layers = structural_candidates(network)
            self.candidates_source = CANDIDATE_DEFINITION
        else:
            self.layers = list(layers)
            self.candidates_source = "declared"
        if not self.layers:
            raise ValidationError(f"model {identifier!r} needs at least one candidate layer")
        self.region_layer_map: dict[str, str] = dict(region_layer_map or {})
        self.layer_methods: dict[str, dict[str, Any]] = {region: {"method": "declared"}
                                                         for region in self.region_layer_map}
        if not isinstance(visual_degrees, (int, float, np.integer, np.floating)) or isinstance(visual_degrees, bool) \
                or not np.isfinite(visual_degrees) or visual_degrees <= 0:
            raise ValidationError(f"visual_degrees must be a finite number of degrees > 0 (the model's field of "
                                  f"view, 8 by default), got {visual_degrees!r}")
        self._visual_degrees = float(visual_degrees)
        self.behavioral_readout_layer = behavioral_readout_layer or self.layers[-1]
        self.layer_scorer = layer_scorer
        self.layer_scores: dict[str, dict[str, float]] = {}
        self.recording_target: str | None = None
        self.time_bins: list[tuple[int, int]] = list(DEFAULT_TIME_BINS)
        self.task: str | None = None
        self._labels: Any = None
        self._classifier: readouts.ProbabilitiesClassifier | None = None
        if hasattr(activations_model, "set_visual_degrees"):
            activations_model.set_visual_degrees(self._visual_degrees)

    # ---- BrainModel ---------------------------------------------------------------------------
    @property
    def identifier(self) -> str:
        return self._identifier

    def visual_degrees(self) -> float:
        """Width of the model's field of view in degrees (the side of its square input)."""
        return self._visual_degrees

    @property
    def weights_hash(self) -> str | None:
        """sha256 of the weights of the activations model, or None when it is not a torch network."""
        return getattr(self.activations_model, "weights_hash", None)

    @property
    def architecture_fingerprint(self) -> str | None:
        """sha256 of the network's architecture and forward code (see
        :func:`brainscore.models.fingerprint.architecture_fingerprint`), or None when the activations
        model is not a torch network."""
        return getattr(self.activations_model, "architecture_fingerprint", None)

    def start_recording(self, recording_target: str, time_bins: Sequence[tuple[int, int]] | None = None) -> None:
        """Record from ``recording_target`` in ``time_bins`` ((start, end) ms; default 70-170) from now on.

        The region's layer is resolved (and selected, if needed) at the next :meth:`look_at`.
        """
        self.recording_target = str(recording_target)
        self.time_bins = _bins(time_bins) if time_bins is not None else list(DEFAULT_TIME_BINS)
        self.task = None

    def start_task(self, task: str, fitting_stimuli=None) -> None:
        """Prepare to answer ``task`` from now on.

        Parameters
        ----------
        task : {"passive", "label", "probabilities", "odd_one_out"}
        fitting_stimuli
            ``label``: ``"imagenet"`` or a list of labels among the 16 categories of Geirhos et al.
            (2019); ``probabilities``: a StimulusSet with an ``image_label`` column to fit the readout
            on; otherwise ignored.

        Raises
        ------
        ValidationError
            For an unknown task or missing fitting stimuli.
        """
        if task == Task.passive:
            self.task = None
            return
        if task == Task.label:
            if fitting_stimuli is None:
                raise ValidationError("the label task needs fitting_stimuli='imagenet' or a list of labels")
            if isinstance(fitting_stimuli, str):
                if fitting_stimuli != "imagenet":
                    raise ValidationError(f"label task: fitting_stimuli must be 'imagenet' or a list of labels, "
                                          f"got {fitting_stimuli!r}")
                self._labels = "imagenet"
            else:
                self._labels = list(fitting_stimuli)
                readouts.category_probabilities(np.zeros((1, 1000)), self._labels)  # validates labels
        elif task == Task.probabilities:
            if not isinstance(fitting_stimuli, StimulusSet) or "image_label" not in fitting_stimuli.columns:
                raise ValidationError("the probabilities task needs fitting_stimuli: a StimulusSet with an "
                                      "'image_label' column")
            features = self._features(fitting_stimuli, self.behavioral_readout_layer)
            self._classifier = readouts.ProbabilitiesClassifier().fit(
                features.values, fitting_stimuli["image_label"].to_numpy())
        elif task != Task.odd_one_out:
            raise ValidationError(f"unknown task {task!r}; expected one of passive, label, probabilities, "
                                  f"odd_one_out")
        self.task = task

    def look_at(self, stimuli: StimulusSet, number_of_trials: int = 1, require_variance: bool = False):
        """Show ``stimuli`` and answer the current task or recording.

        Returns
        -------
        NeuroidAssembly
            When recording: ``presentation x neuroid x time_bin`` features of the region's layer.
        BehavioralAssembly
            ``label``: one label per presentation (ImageNet synset ids, with ``label_name``; or
            categories); ``probabilities``: ``presentation x choice``; ``odd_one_out``: per triplet
            (consecutive rows of ``stimuli``), the index 0, 1 or 2 of the odd one out.

        Raises
        ------
        BrainScoreError
            If neither a task nor a recording was started.
        """
        if self.task == Task.label:
            return self._look_label(stimuli, number_of_trials, require_variance)
        if self.task == Task.probabilities:
            features = self._features(stimuli, self.behavioral_readout_layer, number_of_trials, require_variance)
            probabilities = self._classifier.predict_proba(features.values)
            coords = {n: c for n, c in features.coords.items() if c.dims == ("presentation",)}
            return BehavioralAssembly(probabilities, dims=("presentation", "choice"),
                                      coords={**coords, "choice": np.asarray(self._classifier.labels_, dtype=object)})
        if self.task == Task.odd_one_out:
            return self._look_odd_one_out(stimuli, number_of_trials)
        if self.recording_target is None:
            raise BrainScoreError(f"model {self.identifier!r}: call start_recording(region, time_bins) or "
                                  f"start_task(task) before look_at")
        layer = self.layer_for(self.recording_target)
        features = self._features(stimuli, layer, number_of_trials, require_variance)
        features = features.assign_coords(region=("neuroid", np.full(features.sizes["neuroid"],
                                                                     self.recording_target, dtype=object)))
        if "time_bin" in features.dims:
            return align_time_bins(features, self.time_bins)
        return repeat_time_bins(features, self.time_bins)

    # ---- layers -------------------------------------------------------------------------------
    def candidates(self) -> LayerCandidates:
        """The candidate layers as a scorer sees them (one pass, PCA-reduced)."""
        return LayerCandidates(self, self.layers)

    def layer_for(self, region: str) -> str:
        """The layer committed to ``region``: declared, else selected by ``layer_scorer`` (once, then
        cached), else (no scorer, or no selection data for the region) by the layer rule.

        Raises
        ------
        BrainScoreError
            If the scorer returns no finite score; ValidationError for a region the rule does not
            know (the reference maps V1, V2, V4 and IT) when it cannot be selected either.
        """
        if region in self.region_layer_map:
            self.layer_methods.setdefault(region, {"method": "declared"})
            return self.region_layer_map[region]
        near = [key for key in self.region_layer_map if str(key).casefold() == str(region).casefold()]
        if near:
            raise ValidationError(f"model {self.identifier!r} has a layer for region {near[0]!r} but is asked for "
                                  f"{region!r}: region names are case-sensitive; use "
                                  f"region_layer_map={{{region!r}: {self.region_layer_map[near[0]]!r}}}")
        if self.layer_scorer is not None:
            try:
                selection = self._select(region)
            except NoSelectionDataError:
                pass
            else:
                self.region_layer_map[region] = selection["layer"]
                self.layer_scores[region] = dict(selection["scores"])
                benchmarks = getattr(self.layer_scorer, "benchmarks", None)
                self.layer_methods[region] = {"method": "selection", "scorer": dict(selection["scorer"]),
                                              "benchmarks": list(benchmarks(region)) if callable(benchmarks) else []}
                return selection["layer"]
        return self.commit_by_rule(region)

    def commit_by_rule(self, region: str) -> str:
        """Commit ``region`` by the relative-depth rule (:func:`brainscore.models.layer_rule.rule_layer`).

        Returns
        -------
        str
            The committed layer; ``layer_methods[region]`` records the rule and its parameters.

        Raises
        ------
        ValidationError
            For a region the rule has no data for.
        """
        if region not in layer_rule.load()["rule"]["relative_depth"]:
            middle = self.layers[len(self.layers) // 2]
            raise ValidationError(
                f"model {self.identifier!r} has no layer committed to region {region!r}, no selection data for it "
                f"and no layer rule for region {region!r} (the rule knows {layer_rule.REGIONS}). Give a map, e.g. "
                f"region_layer_map={{{region!r}: {middle!r}}} (candidates: {self.layers}), or `--layer {middle}` on "
                f"the command line (it commits the benchmark's region).")
        layer, parameters = layer_rule.rule_layer(region, self.layers)
        self.region_layer_map[region] = layer
        self.layer_methods[region] = {"method": "rule", **parameters, "candidates": self.candidates_source}
        return layer

    def layer_commitments(self) -> dict[str, dict[str, Any]]:
        """Region -> ``{"layer", "method", ...}`` for every committed region: the layer and how it was chosen.

        ``selection`` entries carry ``scores`` (every candidate's selection score, depth order).
        """
        table: dict[str, dict[str, Any]] = {}
        for region, layer in self.region_layer_map.items():
            entry = {"layer": layer, **self.layer_methods.get(region, {"method": "declared"})}
            if entry["method"] == "selection" and region in self.layer_scores:
                entry["scores"] = [[candidate, float(self.layer_scores[region][candidate])] for candidate in self.layers
                                   if candidate in self.layer_scores[region]]
            table[str(region)] = entry
        return table

    def _selection_key(self, region: str) -> str:
        model = self.activations_model
        preprocessing = getattr(model, "preprocessing", None)
        return content_key(kind="layer_selection", weights=getattr(model, "weights_hash", self.identifier),
                           architecture=getattr(model, "architecture_fingerprint", None),
                           numerics=model.numerics() if hasattr(model, "numerics") else None,
                           preprocessing=preprocessing.key() if preprocessing is not None else None,
                           layers=self.layers, region=region, visual_degrees=self._visual_degrees,
                           scorer=_scorer_identity(self.layer_scorer), pca=[SELECTION_PCA_COMPONENTS, _PCA_VERSION])

    def _selection_cache(self) -> Cache:
        # keyed on this module's code and the scorer's (its module and what that imports)
        return Cache("layer_selection", code=[self.layer_scorer])

    def selection_cached(self, region: str) -> bool:
        """Whether the layer choice for ``region`` is in the cache (so committing it runs no selection)."""
        return self._selection_cache().load(self._selection_key(region)) is not None

    def _select(self, region: str) -> dict[str, Any]:
        return self._selection_cache().get_or_compute(self._selection_key(region), lambda: self._score_layers(region))

    def _score_layers(self, region: str) -> dict[str, Any]:
        scores = self.layer_scorer(region, self.candidates())
        scores = {str(layer): float(score) for layer, score in dict(scores).items()}
        unknown = [layer for layer in scores if layer not in self.layers]
        if unknown:
            raise BrainScoreError(f"layer scorer returned scores for layers {unknown} that are not candidates "
                                  f"of {self.identifier!r}: {self.layers}")
        ordered = [layer for layer in self.layers if layer in scores and np.isfinite(scores[layer])]
        if not ordered:
            raise BrainScoreError(f"layer scorer gave no finite score for region {region!r} of "
                                  f"{self.identifier!r} (scores: {scores})")
        best = max(ordered, key=lambda layer: scores[layer])  # first of equal maxima, in depth order
        return {"layer": best, "scores": scores, "region": region, "scorer": _scorer_identity(self.layer_scorer)}

    # ---- helpers ------------------------------------------------------------------------------
    def _features(self, stimuli: StimulusSet, layer: str, number_of_trials: int = 1,
                  require_variance: bool = False) -> NeuroidAssembly:
        kwargs = dict(number_of_trials=number_of_trials, require_variance=require_variance)
        if require_variance:
            kwargs["visual_degrees"] = self._visual_degrees
        return self.activations_model(stimuli, layers=[layer], **kwargs)

    def _look_label(self, stimuli, number_of_trials, require_variance) -> BehavioralAssembly:
        logits = self._features(stimuli, LOGITS, number_of_trials, require_variance)
        coords = {n: c for n, c in logits.coords.items() if c.dims == ("presentation",)}
        values = logits.transpose("presentation", "neuroid").values
        if self._labels == "imagenet":
            choices = readouts.imagenet_labels(values)
            names = np.asarray(readouts.imagenet_class_names(), dtype=object)[np.argmax(values, axis=1)]
            coords["label_name"] = ("presentation", names)
        else:
            choices = readouts.choose_labels(values, self._labels)
        return BehavioralAssembly(np.asarray(choices, dtype=object), dims=("presentation",), coords=coords)

    def _look_odd_one_out(self, stimuli: StimulusSet, number_of_trials: int) -> BehavioralAssembly:
        ids = stimuli["stimulus_id"].astype(str).to_numpy()
        if len(ids) % 3:
            raise ValidationError(f"odd_one_out: stimuli must list triplets as consecutive rows (a multiple of 3), "
                                  f"got {len(ids)} rows")
        unique = stimuli.drop_duplicates(subset="stimulus_id")
        unique = StimulusSet(unique, identifier=stimuli.identifier, stimulus_paths=stimuli.stimulus_paths)
        features = self._features(unique, self.behavioral_readout_layer, number_of_trials)
        order = {sid: i for i, sid in enumerate(features["stimulus_id"].values)}
        triplets = np.array([order[sid] for sid in ids]).reshape(-1, 3)
        similarity = readouts.similarity_matrix(features.transpose("presentation", "neuroid").values, "dot")
        choice = readouts.odd_one_out(similarity, triplets)
        grid = ids.reshape(-1, 3)
        coords = {"stimulus_id": ("presentation", np.array(["|".join(t) for t in grid], dtype=object)),
                  "stimulus_id_0": ("presentation", grid[:, 0].astype(object)),
                  "stimulus_id_1": ("presentation", grid[:, 1].astype(object)),
                  "stimulus_id_2": ("presentation", grid[:, 2].astype(object)),
                  "odd_one_out_id": ("presentation", grid[np.arange(len(grid)), choice].astype(object))}
        return BehavioralAssembly(choice, dims=("presentation",), coords=coords)

    def __repr__(self) -> str:
        return f"<ModelCommitment {self.identifier} layers={len(self.layers)} map={self.region_layer_map}>"


# ------------------------------------------------------------------------------------------------
# helpers for model plugins
# ------------------------------------------------------------------------------------------------
def load_region_layer_map(plugin_dir, identifier: str) -> dict[str, str]:
    """The stored map ``<plugin_dir>/region_layer_map/<identifier>.json`` (region -> layer), or {}.

    Raises
    ------
    ValidationError
        If the file is not a JSON object of strings.
    """
    import json
    from pathlib import Path

    path = Path(plugin_dir) / "region_layer_map" / f"{identifier}.json"
    if not path.is_file() or not path.read_text(encoding="utf-8").strip():
        return {}
    mapping = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(mapping, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()):
        raise ValidationError(f"{path} must hold a JSON object mapping regions to layer names, e.g. "
                              f'{{"V4": "_blocks.5"}}')
    return mapping


def pytorch_commitment(identifier: str, model, layers: Sequence[str] | None = None, preprocessing=None,
                       weights_hash: str | None = None, region_layer_map: Mapping[str, str] | None = None,
                       plugin_dir=None, visual_degrees: float = 8, behavioral_readout_layer: str | None = None,
                       layer_scorer=None, batch_size: int | None = None, device=None) -> ModelCommitment:
    """A :class:`ModelCommitment` of a PyTorch network: the usual body of a model plugin's factory.

    The committed map is the plugin's stored ``region_layer_map/<identifier>.json`` (when
    ``plugin_dir`` is given) updated with ``region_layer_map`` (explicit entries win).

    Parameters
    ----------
    identifier : str
    model : torch.nn.Module or NetworkRecipe
        The network, or a :class:`~brainscore.models.identity.NetworkRecipe` that builds it only
        when an activation is not cached.
    layers : sequence of str, optional
        Candidate layers in depth order (None: the outputs of the network's top-level blocks).
    preprocessing : Preprocessing, optional
    weights_hash : str, optional
        sha256 of the weights file (default: hash of the state dict).
    region_layer_map : dict, optional
    plugin_dir : path, optional
        Folder of the plugin (``Path(__file__).parent``).
    visual_degrees, behavioral_readout_layer, layer_scorer : see :class:`ModelCommitment`
    batch_size : int, optional
        Default: :data:`~brainscore.models.extraction.DEFAULT_BATCH_SIZE` on the CPU,
        :data:`~brainscore.models.extraction.DEFAULT_GPU_BATCH_SIZE` on a GPU.
    device : str, optional
    """
    from brainscore.models.extraction import ActivationsExtractor

    mapping = load_region_layer_map(plugin_dir, identifier) if plugin_dir is not None else {}
    mapping.update(region_layer_map or {})
    extractor = ActivationsExtractor(model, identifier, preprocessing, weights_hash=weights_hash,
                                     batch_size=batch_size, device=device)
    return ModelCommitment(identifier, extractor, layers, region_layer_map=mapping, visual_degrees=visual_degrees,
                           behavioral_readout_layer=behavioral_readout_layer, layer_scorer=layer_scorer)
