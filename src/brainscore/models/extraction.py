"""Activations of a PyTorch network's layers on a stimulus set, streamed to a content-keyed cache.

The reference (Schrimpf et al. 2020; its ``ActivationsExtractorHelper``) runs all images through
the network, keeps every requested layer of every image in memory, and caches the result under
the model's *name*. Here:

- forward hooks sit on the requested modules only (dotted names walk sub-modules; ``"logits"`` is
  the network's output), the network runs in ``eval()`` mode under ``torch.inference_mode()``,
  on a GPU when one is present, in batches;
- each batch's flattened features go straight to one ``.npy`` file per layer on disk, so memory
  holds one batch of the hooked layers, never all layers of all images; a file is written under a
  temporary name and renamed into place when complete (safe for two processes at once);
- the file's cache key is the *content* of everything that determines it: weights hash, the
  architecture fingerprint (module tree, constructor settings, forward code:
  :mod:`brainscore.models.fingerprint`), preprocessing (memory format included), the stimulus
  set's content hash (ids and file bytes), layer, the microsaccade plan, the numerics (device, the
  parameters' dtypes, torch's CPU thread count) and the code of this module and those it imports
  (:func:`brainscore.caching.code_hash`). Cached layers are never recomputed, and a run whose
  layers are all cached does no forward pass. Each file is written with its sha256 and verified
  when read (a bad file is reported, deleted and recomputed); a layer is computed under an
  inter-process lock, so a second process waits for the first one's file;
- **thread count**: PyTorch's CPU kernels split sums across threads, so the same network gives
  activations that differ in the last bits with 1 and with 2 threads (up to 5e-5 on
  EfficientNet-Lite0; scores move by ~3e-8). Rather than force one thread (several times slower),
  the network runs on the CPU with the setting ``torch_threads`` (:func:`brainscore.config.torch_threads`,
  default the usable cores; set with ``torch.set_num_threads`` for the forward passes and restored
  after) and the key includes that count: a cache shared by machines with other thread counts
  keeps one entry per count, and every entry is exactly what a fresh run with that count computes;
- **no network for cached activations**: given a :class:`~brainscore.models.identity.NetworkRecipe`
  instead of a built network, the extractor keys activations on the recipe's stored identity
  (weights hash, fingerprint, dtypes; :mod:`brainscore.models.identity`) and builds the network
  (importing torch) only when a layer is missing, checking it against that identity first;
- rows of a cached file are in sorted ``stimulus_id`` order (the order of
  :meth:`StimulusSet.content_hash`), so stimulus sets with the same content in another row order
  share the file;
- identical files under several stimulus ids are run once; deterministic networks ignore
  ``number_of_trials`` (one presentation per stimulus, as the reference);
- ``require_variance=True`` shows each image ``number_of_trials`` times with sub-pixel
  *microsaccades*: translations on the reference's spiral of radius up to 0.05 degrees
  (Rolfs 2009; Brain-Score's MicrosaccadeHelper), emulating OpenCV's bilinear ``warpAffine``
  (shifts quantised to 1/32 pixel, border replicated).
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import os
import sys
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from brainscore import caching, config
from brainscore.caching import Cache, CacheWarning, content_key, locked_entry, verified
from brainscore.data.assemblies import NeuroidAssembly
from brainscore.data.stimuli import StimulusSet
from brainscore.errors import BrainScoreError, ValidationError
from brainscore.models import identity as _identity
from brainscore.models.preprocessing import Preprocessing

#: Images per forward pass on the CPU, measured fastest for EfficientNet-Lite0 on the 2-core machine
#: (benchmarks/extraction.py): 16 ms/image at 4 against 27 at 16 and 42 at 64 (2 threads,
#: channels-last). Larger batches make activation tensors larger than glibc's 32 MB mmap
#: threshold, so every forward pass page-faults them in again (half the time was kernel time).
DEFAULT_BATCH_SIZE = 4
#: Images per forward pass on a GPU.
DEFAULT_GPU_BATCH_SIZE = 64
#: How far models microsaccade, in degrees of visual angle (the reference's default).
MICROSACCADE_EXTENT_DEGREES = 0.05
LOGITS = "logits"
_CACHE_NAMESPACE = "activations"

# Two settings read once when torch starts, so they take effect only if brainscore is imported
# before torch (an explicit value in the environment always wins):
# - THP_MEM_ALLOC_ENABLE=1: PyTorch's CPU allocator backs large tensors with transparent huge
#   pages: 15x fewer page faults, a 1.2-1.5x faster forward pass on the 2-core machine;
# - OMP_WAIT_POLICY=PASSIVE: OpenMP threads sleep at barriers instead of spinning. With another
#   process on the cores, spinning threads made EfficientNet-Lite0's forward pass 18x slower
#   (450 against 25 ms per image on the shared 2-core machine).
if "torch" not in sys.modules:
    os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


class _StopForward(Exception):
    """Raised by the last hook to skip the rest of the network when its output is not needed."""


# ------------------------------------------------------------------------------------------------
# weights, layers
# ------------------------------------------------------------------------------------------------
def state_dict_hash(model) -> str:
    """sha256 over a module's parameters and buffers (names, dtypes, shapes and bytes).

    Identifies untrained or in-memory weights for cache keys when no weights file hash is declared.
    """
    import torch

    digest = hashlib.sha256()
    for name, tensor in model.state_dict().items():
        if not isinstance(tensor, torch.Tensor):
            continue
        array = tensor.detach().cpu().contiguous()
        digest.update(f"{name}|{array.dtype}|{tuple(array.shape)}".encode())
        digest.update(array.reshape(-1).view(torch.uint8).numpy().tobytes() if array.numel() else b"")
    return digest.hexdigest()


def get_module(model, layer: str):
    """The sub-module of ``model`` named ``layer`` (dotted path, e.g. ``"_blocks.3"``), or None for logits.

    Raises
    ------
    ValidationError
        If a part of the path names no sub-module; the message lists the children found there.
    """
    if layer == LOGITS:
        return None
    module = model
    for part in layer.split("."):
        child = module._modules.get(part)
        if child is None:
            children = list(module._modules)
            raise ValidationError(f"layer {layer!r}: no sub-module {part!r} in {type(module).__name__} "
                                  f"(children: {children[:20]}{'…' if len(children) > 20 else ''}). "
                                  f"List the model's layers with [n for n, _ in model.named_modules()].")
        module = child
    return module


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


def _quantised_offset(shift: float) -> tuple[int, float]:
    """Source offset of ``dst(x) = src(x - shift)`` as OpenCV's warpAffine quantises it (1/32 px)."""
    units = int(np.floor((np.rint(-shift * 1024) + 16) / 32))  # AB_BITS=10, INTER_BITS=5
    return units >> 5, (units & 31) / 32.0


def translate(images, shift_x: float, shift_y: float):
    """Shift a batch by a sub-pixel amount with bilinear interpolation and replicated borders.

    Emulates ``cv2.warpAffine(image, [[1, 0, x], [0, 1, y]], INTER_LINEAR, BORDER_REPLICATE)`` as
    the reference applies it to each preprocessed image: the fractional part of the shift is
    quantised to 1/32 pixel.

    Parameters
    ----------
    images : torch.Tensor of shape (N, C, H, W)
    shift_x, shift_y : float
        Shift in pixels (positive: content moves right / down).

    Returns
    -------
    torch.Tensor of shape (N, C, H, W)
    """
    import torch

    if shift_x == 0 and shift_y == 0:
        return images
    height, width = images.shape[-2:]
    ix, ax = _quantised_offset(shift_x)
    iy, ay = _quantised_offset(shift_y)
    device = images.device
    xs = torch.arange(width, device=device) + ix
    ys = torch.arange(height, device=device) + iy
    x0, x1 = xs.clamp(0, width - 1), (xs + 1).clamp(0, width - 1)
    y0, y1 = ys.clamp(0, height - 1), (ys + 1).clamp(0, height - 1)
    rows0, rows1 = images[..., y0, :], images[..., y1, :]
    top = rows0[..., x0] * (1 - ax) + rows0[..., x1] * ax
    bottom = rows1[..., x0] * (1 - ax) + rows1[..., x1] * ax
    return top * (1 - ay) + bottom * ay


# ------------------------------------------------------------------------------------------------
# features on disk
# ------------------------------------------------------------------------------------------------
@dataclass
class LayerFeatures:
    """One layer's features on a stimulus set, kept in a ``.npy`` file on disk.

    Attributes
    ----------
    layer : str
    path : Path
        The ``.npy`` file: float32, shape ``(n_stimuli * trials, *unit_shape)``; rows in sorted
        ``stimulus_id`` order, trials innermost.
    stimulus_ids : ndarray of str, shape (n_stimuli,)
        Sorted stimulus ids of the rows.
    trials : int
        Presentations per stimulus (1 unless microsaccades were used).
    shifts : ndarray of shape (trials, 2)
        Microsaccade shift (x, y) in pixels of each trial.
    visual_degrees : float or None
        Field of view the shifts were computed for (degrees).
    image_size : int or None
        Side of the preprocessed image in pixels (to convert shifts to degrees).
    in_memory : ndarray, optional
        The values, when caching is disabled (no file is kept).
    """

    layer: str
    path: Path | None
    stimulus_ids: np.ndarray
    trials: int = 1
    shifts: np.ndarray = field(default_factory=lambda: np.zeros((1, 2)))
    visual_degrees: float | None = None
    image_size: int | None = None
    in_memory: np.ndarray | None = None

    def raw(self) -> np.ndarray:
        """The values as stored, ``(rows, *unit_shape)`` (a read-only memory map of the file)."""
        if self.in_memory is not None:
            return self.in_memory
        return np.load(self.path, mmap_mode="r")

    @property
    def unit_shape(self) -> tuple[int, ...]:
        """Shape of one image's output (e.g. ``(channels, height, width)``)."""
        return tuple(self.raw().shape[1:])

    @property
    def n_features(self) -> int:
        return int(np.prod(self.unit_shape))

    def matrix(self) -> np.ndarray:
        """Flattened values ``(rows, n_features)`` as a memory map (row order as stored)."""
        raw = self.raw()
        return raw.reshape(raw.shape[0], -1)

    def rows_for(self, stimulus_ids: Sequence[str]) -> np.ndarray:
        """Row indices (all trials, trials innermost) of ``stimulus_ids`` in the file.

        Raises
        ------
        KeyError
            If an id is not in the file.
        """
        ids = np.asarray([str(i) for i in stimulus_ids])
        position = np.searchsorted(self.stimulus_ids, ids)
        position = np.clip(position, 0, len(self.stimulus_ids) - 1)
        missing = ids[self.stimulus_ids[position] != ids]
        if len(missing):
            raise KeyError(f"layer {self.layer!r} has no features for stimulus ids {list(missing[:5])}")
        return (position[:, None] * self.trials + np.arange(self.trials)[None, :]).ravel()

    def neuroid_coords(self, model_identifier: str | None = None) -> dict[str, tuple[str, np.ndarray]]:
        """Coordinates along ``neuroid``: neuroid_id ``"layer.num"``, layer, neuroid_num, model and channels.

        ``channel``/``channel_x``/``channel_y`` for (C, H, W) outputs (x along the height axis, as the
        reference names them), ``channel`` (with NaN x, y) for vectors, ``channel``/``embedding`` for
        (tokens, features) outputs.
        """
        shape = self.unit_shape
        n = int(np.prod(shape))
        num = np.arange(n)
        coords: dict[str, tuple[str, np.ndarray]] = {
            "neuroid_id": ("neuroid", np.char.add(f"{self.layer}.", num.astype(str)).astype(object)),
            "neuroid_num": ("neuroid", num),
            "layer": ("neuroid", np.full(n, self.layer, dtype=object)),
        }
        if model_identifier is not None:
            coords["model"] = ("neuroid", np.full(n, model_identifier, dtype=object))
        if len(shape) == 3:
            index = np.unravel_index(num, shape)
            coords.update(channel=("neuroid", index[0]), channel_x=("neuroid", index[1]),
                          channel_y=("neuroid", index[2]))
        elif len(shape) == 1:
            coords.update(channel=("neuroid", num), channel_x=("neuroid", np.full(n, np.nan)),
                          channel_y=("neuroid", np.full(n, np.nan)))
        elif len(shape) == 2:
            index = np.unravel_index(num, shape)
            coords.update(channel=("neuroid", index[0]), embedding=("neuroid", index[1]))
        return coords

    def assembly(self, stimuli: StimulusSet, model_identifier: str | None = None) -> NeuroidAssembly:
        """The features as a ``presentation x neuroid`` assembly in the row order of ``stimuli``.

        Presentation coordinates: every column of the stimulus set (``stimulus_id`` first); with
        microsaccades, one presentation per trial and the coordinates
        ``microsaccade_shift_{x,y}_{pixels,degrees}``.
        """
        ids = stimuli["stimulus_id"].astype(str).to_numpy()
        rows = self.rows_for(ids)
        values = np.asarray(self.matrix()[rows], dtype=np.float32)
        return package_features(values, stimuli, self.neuroid_coords(model_identifier), self.trials,
                                self.shifts, self.visual_degrees, self.image_size)


def package_features(values: np.ndarray, stimuli: StimulusSet, neuroid_coords: Mapping[str, tuple[str, np.ndarray]],
                     trials: int = 1, shifts: np.ndarray | None = None, visual_degrees: float | None = None,
                     image_size: int | None = None) -> NeuroidAssembly:
    """Wrap ``values`` (``(len(stimuli) * trials, n_neuroids)``) as a ``presentation x neuroid`` assembly.

    Presentation coordinates are every stimulus-set column (``stimulus_id`` first, as str), each
    repeated ``trials`` times; with ``trials > 1`` also ``microsaccade_shift_{x,y}_pixels`` and, given
    ``visual_degrees`` and ``image_size``, ``microsaccade_shift_{x,y}_degrees``.
    """
    coords = _presentation_coords(stimuli, trials, np.zeros((1, 2)) if shifts is None else shifts,
                                  visual_degrees, image_size)
    coords.update(neuroid_coords)
    return NeuroidAssembly(values, dims=("presentation", "neuroid"), coords=coords)


def _presentation_coords(stimuli, trials, shifts, visual_degrees, image_size):
    coords: dict[str, tuple[str, np.ndarray]] = {}
    columns = ["stimulus_id"] + [c for c in stimuli.columns if c != "stimulus_id"]
    for column in columns:
        values = stimuli[column].to_numpy()
        if column == "stimulus_id":
            values = values.astype(str).astype(object)
        coords[str(column)] = ("presentation", np.repeat(values, trials))
    if trials > 1:
        pixels = np.tile(np.asarray(shifts, dtype=float), (len(stimuli), 1))
        coords["microsaccade_shift_x_pixels"] = ("presentation", pixels[:, 0])
        coords["microsaccade_shift_y_pixels"] = ("presentation", pixels[:, 1])
        if visual_degrees and image_size:
            per_degree = image_size / visual_degrees
            coords["microsaccade_shift_x_degrees"] = ("presentation", pixels[:, 0] / per_degree)
            coords["microsaccade_shift_y_degrees"] = ("presentation", pixels[:, 1] / per_degree)
    return coords


class _NpyWriter:
    """Appends rows to a ``.npy`` file written under a temporary name; ``commit`` renames it into place.

    With ``checksum=True`` the file's sha256 is computed while writing and stored beside it
    (:func:`brainscore.caching.commit_file`) before the rename.
    """

    def __init__(self, target: Path, rows: int, checksum: bool = True):
        self.target = Path(target)
        self.rows = rows
        self.written = 0
        self.checksum = checksum
        self.digest = hashlib.sha256()
        self.target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.target.parent, prefix=f".{self.target.name}.", suffix=".part")
        self.tmp = Path(tmp)
        self.file = os.fdopen(fd, "wb", buffering=0)
        self.unit_shape: tuple[int, ...] | None = None

    def _write(self, data) -> None:
        self.digest.update(data)
        view = memoryview(data).cast("B")
        while len(view):  # unbuffered: each batch is on disk (and in the file's size) once written
            view = view[self.file.write(view):]

    def append(self, batch: np.ndarray) -> None:
        batch = np.ascontiguousarray(batch, dtype="<f4")
        if self.unit_shape is None:
            self.unit_shape = tuple(batch.shape[1:])
            header = {"descr": "<f4", "fortran_order": False, "shape": (self.rows, *self.unit_shape)}
            buffer = io.BytesIO()
            np.lib.format.write_array_header_2_0(buffer, header)
            self._write(buffer.getvalue())
        elif tuple(batch.shape[1:]) != self.unit_shape:
            raise BrainScoreError(f"layer output changed shape between batches: {self.unit_shape} then "
                                  f"{tuple(batch.shape[1:])}; images must all be preprocessed to one size")
        self._write(memoryview(batch).cast("B"))
        self.written += batch.shape[0]

    def commit(self) -> Path:
        self.file.close()
        if self.written != self.rows:
            self.abort()
            raise BrainScoreError(f"wrote {self.written} rows to {self.target.name}, expected {self.rows}")
        if self.checksum:
            caching.commit_file(self.tmp, self.target, self.digest.hexdigest())
        else:
            os.replace(self.tmp, self.target)
        return self.target

    def abort(self) -> None:
        if not self.file.closed:
            self.file.close()
        self.tmp.unlink(missing_ok=True)


# ------------------------------------------------------------------------------------------------
# the extractor
# ------------------------------------------------------------------------------------------------
class ActivationsExtractor:
    """Runs a PyTorch network on stimulus sets and returns (cached) activations of its layers.

    Parameters
    ----------
    model : torch.nn.Module or NetworkRecipe
        Any network taking a float batch ``(N, 3, S, S)``, or a
        :class:`~brainscore.models.identity.NetworkRecipe` that builds it when a layer is missing
        from the cache (its stored identity keys the cache until then).
    identifier : str
        The model's name (goes into the ``model`` coordinate; *not* into cache keys).
    preprocessing : Preprocessing, optional
        How files become inputs (default: the reference's, ImageNet normalisation at 224 px).
    weights_hash : str, optional
        sha256 of the weights file. Default: the recipe's declared hash, else :func:`state_dict_hash`
        of the model's weights.
    batch_size : int, optional
        Images per forward pass (default :data:`DEFAULT_BATCH_SIZE` on the CPU, measured on the
        2-core machine, and :data:`DEFAULT_GPU_BATCH_SIZE` on a GPU).
    device : str or torch.device, optional
        Default ``"cuda"`` when available, else ``"cpu"``.
    progress : bool
        Show a tqdm progress bar over images (only on terminals).
    prefetch : bool
        Load and preprocess the next batch in a background thread while the network runs.
    background_writes : bool
        Write each batch's features to disk in a background thread (at most two batches queued).

    Examples
    --------
    >>> extractor = ActivationsExtractor(net, "my-net", Preprocessing("imagenet", 224))  # doctest: +SKIP
    >>> features = extractor(stimuli, layers=["layer3", "logits"])                      # doctest: +SKIP
    >>> features.dims
    ('presentation', 'neuroid')
    """

    def __init__(self, model, identifier: str, preprocessing: Preprocessing | None = None,
                 weights_hash: str | None = None, batch_size: int | None = None, device=None,
                 progress: bool = True, prefetch: bool = True, background_writes: bool = True):
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self._recipe = model if isinstance(model, _identity.NetworkRecipe) else None
        self._model = None if self._recipe is not None else model
        self._identity_state: tuple[str | None, _identity.NetworkIdentity | None] | None = None
        self._identity_disagreed = False
        self.identifier = identifier
        self.preprocessing = preprocessing or Preprocessing()
        self._device_spec = device
        self._device = None
        if batch_size is None:
            batch_size = DEFAULT_GPU_BATCH_SIZE if self.device_type == "cuda" else DEFAULT_BATCH_SIZE
        self.batch_size = int(batch_size)
        self.progress = progress
        self.prefetch = prefetch
        self.background_writes = background_writes
        self._weights_hash = weights_hash or (self._recipe.weights_hash if self._recipe is not None else None)
        self._fingerprint: tuple[tuple, str] | None = None
        self._moved = False
        self.forward_passes = 0  # batches run through the network (for tests and reports)
        self.visual_degrees: float | None = None  # set by a ModelCommitment for microsaccades

    # ---- the network, built on demand ---------------------------------------------------------
    @property
    def model(self):
        """The ``torch.nn.Module``; built from the recipe on first use (imports torch).

        A network built from a recipe is compared with the recipe's stored identity: a difference
        discards the entry (warned) and every key is then taken from the built network.
        """
        if self._model is None and self._recipe is not None:
            recipe = self._recipe
            key_before = _identity.identity_key(recipe)
            model = recipe.build()
            built = _identity.network_identity(model, self._weights_hash or state_dict_hash(model))
            self._model = model
            if self._weights_hash is None:
                self._weights_hash = built.weights_hash
            _, stored = self._identity_state or (None, None)
            if stored is not None and stored != built:
                self._identity_disagreed = True
                _identity.discard_identity(recipe, self._identity_state[0])
                warnings.warn(f"model {self.identifier!r}: the stored identity {_identity.describe(stored)} differs "
                              f"from the network built now {_identity.describe(built)}; it is discarded and the "
                              f"activations are keyed on the built network", CacheWarning, stacklevel=2)
            elif key_before is not None and key_before == _identity.identity_key(recipe) and caching.enabled():
                _identity.store_identity(recipe, key_before, built)
        return self._model

    @model.setter
    def model(self, value) -> None:
        self._model = value
        self._moved = False
        self._fingerprint = None

    def _stored_identity(self) -> "_identity.NetworkIdentity | None":
        """The recipe's stored identity while the network is not built (None: build it to know)."""
        if self._model is not None or self._recipe is None or not caching.enabled():
            return None
        if self._identity_state is None:
            # the numerics of a GPU (its name, TF32 flags) need torch: only the CPU is keyed without it
            self._identity_state = (_identity.cached_identity(self._recipe) if self.device_type == "cpu"
                                    else (None, None))
        return self._identity_state[1]

    @property
    def device_type(self) -> str:
        """``"cpu"`` or ``"cuda"``; known without importing torch for ``device="cpu"`` or a CPU-only torch."""
        if self._device is not None:
            return self._device.type
        if self._device_spec == "cpu" or (self._device_spec is None and _identity.cpu_only_torch()):
            return "cpu"
        return self.device.type

    @property
    def device(self):
        """The ``torch.device`` the network runs on (default ``cuda`` when available, else ``cpu``)."""
        if self._device is None:
            import torch

            spec = self._device_spec
            self._device = torch.device(spec if spec is not None else ("cuda" if torch.cuda.is_available() else "cpu"))
        return self._device

    @property
    def device_label(self) -> str:
        """The device as text (``"cpu"``, ``"cuda"``, ``"cuda:1"``), without torch where it is the CPU."""
        if self._device is None and self._device_spec in (None, "cpu") and self.device_type == "cpu":
            return "cpu"
        return str(self.device)

    @property
    def weights_hash(self) -> str:
        """sha256 identifying the weights (declared, stored for the recipe, or computed once from the state dict)."""
        if self._weights_hash is None:
            stored = self._stored_identity()
            if stored is not None:
                return stored.weights_hash
            self._weights_hash = state_dict_hash(self.model)
        return self._weights_hash

    @property
    def architecture_fingerprint(self) -> str:
        """sha256 of the network's module tree, settings and forward code, in ``eval()`` mode.

        See :func:`brainscore.models.fingerprint.architecture_fingerprint`. Computed on first use and
        again whenever the module tree changes (a sub-module replaced, added or removed); a setting
        changed in place on an existing module after the first extraction (``conv.stride = 1``) is
        not noticed within this extractor: build a new one after editing a network, as for its
        weights. The network is put in ``eval()`` mode first, as extraction runs it.
        """
        from brainscore.models.fingerprint import architecture_fingerprint

        stored = self._stored_identity()
        if stored is not None:
            return stored.architecture
        structure = tuple((name, id(module), type(module)) for name, module in self.model.named_modules())
        if self._fingerprint is None or self._fingerprint[0] != structure:
            self.model.eval()
            self._fingerprint = (structure, architecture_fingerprint(self.model))
        return self._fingerprint[1]

    def set_visual_degrees(self, visual_degrees: float) -> None:
        """Field of view (degrees) used to size microsaccades."""
        self.visual_degrees = float(visual_degrees)

    def layers(self) -> list[str]:
        """Names of every named sub-module (candidates for ``layers``), plus ``"logits"``."""
        stored = self._stored_identity()
        if stored is not None:
            return list(stored.modules) + [LOGITS]
        return [name for name, _ in self.model.named_modules() if name] + [LOGITS]

    # ---- cache keys ---------------------------------------------------------------------------
    def numerics(self) -> dict:
        """What decides the floating-point result besides the inputs: device, parameter dtypes, CPU threads.

        On the CPU the thread count the network runs with (the setting ``torch_threads``, see the
        module notes); on a GPU the device name and TF32 flags.
        """
        stored = self._stored_identity()
        if stored is not None:
            dtypes = list(stored.dtypes)
        else:
            dtypes = sorted({str(p.dtype) for p in self.model.parameters()} | {str(b.dtype) for b in self.model.buffers()})
        values: dict[str, Any] = {"device": self.device_type, "dtypes": dtypes}
        if self.device_type == "cpu":
            values["threads"] = config.torch_threads()
        elif self.device_type == "cuda":
            import torch

            values["device_name"] = torch.cuda.get_device_name(self.device)
            values["tf32"] = [torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32]
        return values

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
        stored = self._stored_identity()
        for layer in layers:
            if stored is None or (layer != LOGITS and layer not in stored.modules):
                get_module(self.model, layer)  # fail early on a typo
                stored = self._stored_identity()
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
        use_cache = caching.enabled()
        result: dict[str, LayerFeatures] = {}
        missing: dict[str, Path] = {}
        for layer, path in self._cache_paths(stimuli.content_hash(), layers, plan).items():
            if use_cache and verified(path):
                result[layer] = LayerFeatures(layer, path, ids, trials, shifts, degrees, size)
            else:
                if not use_cache:
                    path = Path(tempfile.mkdtemp(prefix="brainscore-activations-")) / f"{len(missing)}.npy"
                missing[layer] = path
        if missing and stored is not None:
            self.model  # noqa: B018 - build it now, checked against the identity the keys above came from
            if self._identity_disagreed:  # every key above may be wrong: start again on the built network
                self._identity_disagreed = False
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

    def _cache_paths(self, stimuli_hash: str, layers: Sequence[str], plan: dict) -> dict[str, Path]:
        cache = Cache(_CACHE_NAMESPACE)
        architecture, numerics = self.architecture_fingerprint, self.numerics()
        return {layer: cache.path(self._key(stimuli_hash, layer, plan, architecture, numerics), "npy")
                for layer in layers}

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
        for layer in sinks:
            get_module(self.model, layer)
        stimuli.validate()
        ids = np.asarray(sorted(map(str, stimuli["stimulus_id"])))
        self._run([stimuli.get_stimulus(i) for i in ids], dict(sinks), np.zeros((1, 2)), 1, checksum=False)

    # ---- the forward passes -------------------------------------------------------------------
    def _prepare(self):
        import torch

        if not self._moved:
            self.model.to(self.device)
            if self.preprocessing.channels_last:
                self.model.to(memory_format=torch.channels_last)
            self._moved = True
        self.model.eval()

    def _run(self, paths: Sequence[Path], targets: Mapping[str, Any], shifts: np.ndarray, trials: int,
             checksum: bool = True) -> None:
        """Run the network over ``paths`` (unique files once) and stream each target layer to its file or sink.

        A target is a file path, or a sink factory ``rows -> sink`` (see :meth:`stream`). On the CPU
        with :func:`brainscore.config.torch_threads` threads (the count in the keys), restoring
        torch's thread count afterwards.
        """
        import torch

        if self.device.type != "cpu":
            return self._forward(paths, targets, shifts, trials, checksum)
        before = torch.get_num_threads()
        torch.set_num_threads(config.torch_threads())
        try:
            return self._forward(paths, targets, shifts, trials, checksum)
        finally:
            torch.set_num_threads(before)

    def _forward(self, paths, targets, shifts, trials, checksum) -> None:
        import torch
        from tqdm.auto import tqdm

        self._prepare()
        # identical files are run once
        unique: dict[str, int] = {}
        first_of = np.empty(len(paths), dtype=np.int64)
        for i, p in enumerate(paths):
            first_of[i] = unique.setdefault(str(Path(p).resolve()), len(unique))
        unique_paths = list(unique)
        duplicates = len(unique_paths) != len(paths)
        rows = len(unique_paths) * trials
        writers = {layer: (target(rows) if callable(target)  # a sink factory (see :meth:`stream`)
                           else _NpyWriter(target.with_suffix(".unique.npy"), rows, checksum=False) if duplicates
                           else _NpyWriter(target, rows, checksum=checksum))
                   for layer, target in targets.items()}
        outputs: dict[str, Any] = {}
        calls: dict[str, int] = {}
        handles = []
        want_logits = LOGITS in targets
        hooked = [layer for layer in targets if layer != LOGITS]
        stop_early = {"enabled": False}

        def make_hook(name):
            def hook(_module, _inputs, output):
                if isinstance(output, (tuple, list)):
                    output = output[0]
                if not isinstance(output, torch.Tensor):
                    raise BrainScoreError(f"layer {name!r} returned {type(output).__name__}, not a tensor; "
                                          f"hook a sub-module that returns a tensor")
                outputs[name] = output.detach()
                calls[name] = calls.get(name, 0) + 1
                if stop_early["enabled"] and len(outputs) == len(hooked) and not want_logits:
                    raise _StopForward
            return hook

        for layer in hooked:
            handles.append(get_module(self.model, layer).register_forward_hook(make_hook(layer)))
        pool = ThreadPoolExecutor(max_workers=1) if self.prefetch else None
        # writes go to a second thread, so the network computes the next batch while the kernel
        # flushes this one (writing 18 layers of EfficientNet-Lite0 is 2.6 MB per image)
        writer_pool = ThreadPoolExecutor(max_workers=1) if self.background_writes else None
        written: list = []
        load = lambda chunk: self.preprocessing(chunk)  # noqa: E731

        def write(arrays_per_layer):
            for layer, arrays in arrays_per_layer.items():
                stacked = arrays[0] if trials == 1 else np.stack(arrays, axis=1).reshape((-1,) + arrays[0].shape[1:])
                writers[layer].append(stacked)
        starts = list(range(0, len(unique_paths), self.batch_size))
        bar = tqdm(total=len(unique_paths), desc=f"activations {self.identifier}", unit="img",
                   disable=None if self.progress else True, leave=False)
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
                    inputs = translate(batch, float(shifts[trial, 0]), float(shifts[trial, 1]))
                    inputs = inputs.to(self.device, non_blocking=True)
                    outputs.clear()
                    calls.clear()
                    with torch.inference_mode():
                        try:
                            logits = self.model(inputs)
                        except _StopForward:
                            logits = None
                    self.forward_passes += 1
                    if number == 0 and trial == 0:
                        repeated = [name for name, count in calls.items() if count > 1]
                        if repeated:
                            warnings.warn(f"modules {repeated} ran more than once per forward pass; their last "
                                          f"output is kept (as the reference does)", stacklevel=3)
                        stop_early["enabled"] = not repeated and not want_logits
                    if want_logits:
                        if isinstance(logits, (tuple, list)):
                            logits = logits[0]
                        outputs[LOGITS] = logits.detach()
                    for layer in targets:
                        per_trial[layer].append(outputs[layer].float().cpu().numpy())
                outputs.clear()
                if writer_pool:
                    written.append(writer_pool.submit(write, per_trial))
                    while len(written) > 2:  # at most two batches wait to be written
                        written.pop(0).result()
                else:
                    write(per_trial)
                bar.update(len(chunk))
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
            bar.close()
            for handle in handles:
                handle.remove()
            if pool:
                pool.shutdown(wait=True, cancel_futures=True)
            if writer_pool:
                writer_pool.shutdown(wait=True, cancel_futures=True)
        if duplicates:
            for layer, target in targets.items():
                if callable(target):
                    writers[layer].expand_rows(first_of, trials)
                else:
                    _expand_rows(writers[layer].target, target, first_of, trials, checksum)


def _expand_rows(unique_file: Path, target: Path, first_of: np.ndarray, trials: int, checksum: bool = True) -> None:
    """Write ``target`` with one row block per stimulus from a file of unique images' rows, then delete it."""
    source = np.load(unique_file, mmap_mode="r")
    writer = _NpyWriter(target, len(first_of) * trials, checksum=checksum)
    try:
        step = 256
        for start in range(0, len(first_of), step):
            index = first_of[start:start + step]
            rows = (index[:, None] * trials + np.arange(trials)[None, :]).ravel()
            writer.append(np.asarray(source[rows]))
        writer.commit()
    except BaseException:
        writer.abort()
        raise
    finally:
        del source
        Path(unique_file).unlink(missing_ok=True)
