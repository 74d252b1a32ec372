"""Activations of a PyTorch network's layers on a stimulus set: the PyTorch part of the extractor.

The batching, the cache and the assemblies are framework-neutral (:mod:`brainscore.models.extraction.core`,
as the reference's ``activations/core.py``); this module runs the network (as its ``pytorch.py``).

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
import os
import sys
import warnings
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from brainscore import caching, config
from brainscore import device as _devices
from brainscore.caching import CacheWarning
from brainscore.errors import SEED_HINT, BrainScoreError, ValidationError, WeightsChangedWarning
from brainscore.models import identity as _identity
from brainscore.models.extraction.core import LOGITS, ActivationsCore, BatchRunner
from brainscore.models.preprocessing import Preprocessing

__all__ = ["ActivationsExtractor", "state_dict_hash", "note_weights", "get_module", "translate", "DEFAULT_BATCH_SIZE",
           "DEFAULT_GPU_BATCH_SIZE", "last_leaf_module", "forward_outputs"]

#: Images per forward pass on the CPU, measured fastest for EfficientNet-Lite0 on the 2-core machine
#: (benchmarks/extraction.py): 16 ms/image at 4 against 27 at 16 and 42 at 64 (2 threads,
#: channels-last). Larger batches make activation tensors larger than glibc's 32 MB mmap
#: threshold, so every forward pass page-faults them in again (half the time was kernel time).
DEFAULT_BATCH_SIZE = 4
#: Images per forward pass on a GPU whose memory cannot be read; otherwise sized to the card
#: (:func:`brainscore.device.gpu_batch_size`: 512 on an 80 GB H100).
DEFAULT_GPU_BATCH_SIZE = 64

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


_BUILT_WEIGHTS: dict[str, str] = {}


def note_weights(identifier: str, weights_hash: str) -> None:
    """Remember the weights sha256 computed for model ``identifier`` in this process; warn when a later build's differs.

    Only weights hashed from the network itself (no declared weights file) are noted: a network initialised at
    random without a seed gets new weights at every build, so two scores of "the same" model in one process (a
    pattern of benchmarks) or in two processes differ (issue 29: 0.1481 against 0.1584).

    Warns
    -----
    WeightsChangedWarning
        With both hashes and how to seed the network.
    """
    before = _BUILT_WEIGHTS.setdefault(str(identifier), weights_hash)
    if before != weights_hash:
        _BUILT_WEIGHTS[str(identifier)] = weights_hash
        warnings.warn(f"model {identifier!r}: its weights changed between two builds in this process (sha256 "
                      f"{before[:12]}… then {weights_hash[:12]}…), so its scores are of different networks. A "
                      f"network initialised at random without a seed (weights=None) is another one at every build "
                      f"and in every process: {SEED_HINT}", WeightsChangedWarning, stacklevel=3)


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


def last_leaf_module(model):
    """The module reached from ``model`` by following each module's last child to a leaf (the reference's temporal
    models' ``"logits"`` layer); ``model`` itself when it has no children."""
    module = model
    while list(module.children()):
        module = list(module.children())[-1]
    return module


def forward_outputs(modules: Mapping[str, Any], forward: Callable[[], Any],
                    process: Callable[[Any, str, Any, Any], Any]) -> dict[str, np.ndarray]:
    """Each named module's output in one call of ``forward()`` (under ``torch.no_grad``), read by forward hooks that
    are removed afterwards, also when ``forward`` raises.

    Parameters
    ----------
    modules : mapping of str to torch.nn.Module
        Layer name -> the module whose output is read.
    forward : callable () -> Any
        Runs the network once (its result is not used).
    process : callable (module, name, inputs, output) -> torch.Tensor
        The hook's view of the output (e.g. the first element of a tuple output).

    Returns
    -------
    dict of str to numpy.ndarray
        In ``modules``' order: ``process``'s tensor, detached, on the CPU.
    """
    import torch

    results: dict[str, np.ndarray] = {}

    def hook_of(name: str):
        def hook(module, inputs, output):
            results[name] = process(module, name, inputs, output).detach().cpu().numpy()
        return hook

    handles = [module.register_forward_hook(hook_of(name)) for name, module in modules.items()]
    try:
        with torch.no_grad():
            forward()
    finally:
        for handle in handles:
            handle.remove()
    return {name: results[name] for name in modules}


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
# the extractor
# ------------------------------------------------------------------------------------------------
class ActivationsExtractor(ActivationsCore):
    """Runs a PyTorch network on stimulus sets and returns (cached) activations of its layers.

    Batching, caching and assemblies: :class:`~brainscore.models.extraction.core.ActivationsCore`.

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
        2-core machine; on a GPU sized to its memory by :func:`brainscore.device.gpu_batch_size`,
        :data:`DEFAULT_GPU_BATCH_SIZE` where that cannot be read).
    device : str or torch.device, optional
        Default ``"cuda"`` when available, else ``"cpu"``.
    progress : bool
        Report each pass over the images (:func:`brainscore.progress.stage`).
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
        self._device_spec = device
        self._device = None
        if batch_size is None:
            batch_size = self._gpu_batch_size() if self.device_type == "cuda" else DEFAULT_BATCH_SIZE
        super().__init__(identifier, preprocessing, batch_size, progress=progress, prefetch=prefetch,
                         background_writes=background_writes)
        self._weights_hash = weights_hash or (self._recipe.weights_hash if self._recipe is not None else None)
        self._fingerprint: tuple[tuple, str] | None = None
        self._moved = False

    def _gpu_batch_size(self) -> int:
        """Images per forward pass on this extractor's GPU, from its memory (:func:`brainscore.device.gpu_batch_size`)."""
        import torch

        try:
            return _devices.gpu_batch_size(torch.cuda.get_device_properties(self.device).total_memory)
        except (RuntimeError, AssertionError):  # no usable CUDA device: the fixed default
            return DEFAULT_GPU_BATCH_SIZE

    # ---- the network, built on demand ---------------------------------------------------------
    @property
    def model(self):
        """The ``torch.nn.Module``; built from the recipe on first use (imports torch).

        A network built from a recipe is compared with the recipe's stored identity: a difference
        discards the entry (warned) and every key is then taken from the built network.
        """
        if self._model is None and self._recipe is not None:
            recipe = self._recipe
            key_before = _identity.identity_key(recipe, settled=True)  # stored only for settled files
            model = recipe.build()
            built = _identity.network_identity(model, self._weights_hash or state_dict_hash(model))
            self._model = model
            if self._weights_hash is None:
                self._weights_hash = built.weights_hash
                note_weights(self.identifier, built.weights_hash)
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
    def device_spec(self) -> Any:
        """The device asked for (``"cpu"``, ``"cuda:1"``; None: ``cuda`` when available), used when the network is
        first placed; set it before then (``--device``, :func:`brainscore.scoring.load_model`)."""
        return self._device_spec

    @device_spec.setter
    def device_spec(self, device: Any) -> None:
        self._device_spec = device

    @property
    def placed_device(self):
        """The ``torch.device`` the network was placed on, or None while it is not (no torch imported)."""
        return self._device

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
            note_weights(self.identifier, self._weights_hash)
        return self._weights_hash

    @property
    def parameter_count(self) -> int | None:
        """Number of parameters of the network (``sum(p.numel())`` over ``parameters()``, shared tensors once),
        counted once; None while the network is not built (counting never builds it)."""
        if self._model is None:
            return None
        cached = getattr(self, "_parameter_count", None)
        if cached is None or cached[0] is not self._model:
            self._parameter_count = (self._model, int(sum(p.numel() for p in self._model.parameters())))
        return self._parameter_count[1]

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

    # ---- what the core asks of the framework ----------------------------------------------------
    def _check_layers(self, layers: Sequence[str]) -> None:
        """Each layer must name a sub-module (or be ``"logits"``); known from the stored identity without a build.

        Raises
        ------
        ValidationError
            From :func:`get_module`, naming the children found where the path breaks off.
        """
        stored = self._stored_identity()
        for layer in layers:
            if stored is None or (layer != LOGITS and layer not in stored.modules):
                get_module(self.model, layer)
                stored = self._stored_identity()

    def _ready_to_compute(self) -> bool:
        """Build a recipe's network now, checked against the identity the keys came from; False if they disagreed."""
        if self._stored_identity() is None:
            return True
        self.model  # noqa: B018 - build it now
        if self._identity_disagreed:  # every key the core used may be wrong: it starts again on the built network
            self._identity_disagreed = False
            return False
        return True

    # ---- the forward passes -------------------------------------------------------------------
    def _prepare(self):
        import torch

        if not self._moved:
            self.model.to(self.device)
            if self.preprocessing.channels_last:
                self.model.to(memory_format=torch.channels_last)
            self._moved = True
        self.model.eval()

    def _run(self, paths, targets, shifts, trials, checksum: bool = True) -> None:
        """:meth:`ActivationsCore._run`, on the CPU with :func:`brainscore.config.torch_threads` threads.

        The thread count is the one in the keys; torch's own count is restored afterwards.
        """
        import torch

        if self.device.type != "cpu":
            return super()._run(paths, targets, shifts, trials, checksum)
        before = torch.get_num_threads()
        torch.set_num_threads(config.torch_threads())
        try:
            return super()._run(paths, targets, shifts, trials, checksum)
        finally:
            torch.set_num_threads(before)

    @contextlib.contextmanager
    def _batches(self, layers: Sequence[str]) -> Iterator[BatchRunner]:
        """The network on its device in ``eval()`` mode, a forward hook on each layer's module; yields the runner.

        The runner shifts the batch by the microsaccade (:func:`translate`), runs it under
        ``torch.inference_mode()`` and returns each layer's output as float32 numpy. Once every hooked
        layer has answered, the last hook stops the forward pass (unless the logits are wanted, or a
        module runs more than once per pass: then its last output is kept, as the reference does,
        and a warning says so). The hooks are removed on leaving.
        """
        import torch

        self._prepare()
        outputs: dict[str, Any] = {}
        calls: dict[str, int] = {}
        want_logits = LOGITS in layers
        hooked = [layer for layer in layers if layer != LOGITS]
        stop_early = {"enabled": False}
        first = [True]

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

        def run(batch, shift_x: float, shift_y: float) -> dict[str, np.ndarray]:
            inputs = translate(batch, shift_x, shift_y)
            inputs = _devices.host_to_device(inputs, self.device)   # pinned, non-blocking on a GPU
            outputs.clear()
            calls.clear()
            with torch.inference_mode():
                try:
                    logits = self.model(inputs)
                except _StopForward:
                    logits = None
            self.forward_passes += 1
            if first[0]:
                first[0] = False
                repeated = [name for name, count in calls.items() if count > 1]
                if repeated:
                    warnings.warn(f"modules {repeated} ran more than once per forward pass; their last "
                                  f"output is kept (as the reference does)", stacklevel=4)
                stop_early["enabled"] = not repeated and not want_logits
            if want_logits:
                if isinstance(logits, (tuple, list)):
                    logits = logits[0]
                outputs[LOGITS] = logits.detach()
            arrays = {layer: outputs[layer].float().cpu().numpy() for layer in layers}
            outputs.clear()
            return arrays

        handles = [get_module(self.model, layer).register_forward_hook(make_hook(layer)) for layer in hooked]
        try:
            yield run
        finally:
            for handle in handles:
                handle.remove()
