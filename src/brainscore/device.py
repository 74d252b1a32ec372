"""Where a score is computed: one device name, parsed, checked and resolved once (per process).

A device is ``None`` (the default: the model on its own device, the metrics and ceilings with numpy,
the tested reference path) or a torch device name: ``"cpu"`` (torch on the host), ``"cuda"`` or
``"cuda:N"``. :func:`resolve` checks it once, where a job starts (:func:`brainscore.scoring.score`,
``brainscore run``'s grid, a benchmark called with ``device=``), so that a request torch cannot
serve (``"cuda"`` on a machine without a GPU, a misspelt name) fails at once with one clear message,
before any model is built or any data loaded, never deep inside torch. The checked name is then
passed down as an argument: to the model's factory (``device=``) and to the benchmark, whose
metrics and ceiling compute there (:mod:`brainscore.metrics.device`).

:func:`for_worker` places ``"cuda"`` on one GPU per Dask worker of a machine with several GPUs.
:func:`host_to_device` copies a host tensor to a device as the GPU wants it fed (pinned memory,
non-blocking copy), and :func:`gpu_batch_size` sizes forward-pass batches to a GPU's memory.

This module imports nothing of brainscore but :mod:`brainscore.errors`; torch is imported only when a
device is named.
"""
from __future__ import annotations

from typing import Any

from brainscore.errors import ValidationError

__all__ = ["Device", "DeviceError", "resolve", "named", "is_cuda", "for_worker", "host_to_device", "gpu_batch_size",
           "GPU_BYTES_PER_IMAGE", "GPU_BATCH_LIMITS"]

#: Device memory one image of a batch may take (input, activations of the hooked layers and the
#: network's workspace): 128 MiB, a generous bound for ImageNet-sized networks at 224 px.
GPU_BYTES_PER_IMAGE = 128 << 20
#: Smallest and largest batch :func:`gpu_batch_size` gives (beyond 512 images a forward pass is no faster).
GPU_BATCH_LIMITS = (64, 512)


class Device(str):
    """A device name :func:`resolve` has checked (a ``str``: ``"cpu"``, ``"cuda"``, ``"cuda:1"``).

    Passed down through the layers of one process, it is never checked again: :func:`resolve`
    returns it as it is. It compares, hashes and serialises as its text, and pickles as plain text,
    so another process (a Dask worker, with GPUs of its own) checks it once more where it is used.
    """

    __slots__ = ()

    def __reduce__(self):
        return (str, (str(self),))


class DeviceError(ValidationError):
    """A device torch cannot serve: an unknown name, or a CUDA device without (enough) GPUs.

    Attributes
    ----------
    device : str
        The device as asked for.
    """

    def __init__(self, message: str, device: str):
        super().__init__(message)
        self.device = device


def resolve(device: Any, *, option: str = "device") -> Device | None:
    """``device`` checked, as a torch device name (``"cpu"``, ``"cuda"``, ``"cuda:1"``); None stays None.

    Parameters
    ----------
    device : str, torch.device or None
        None: no device (the model's own, numpy for the metrics). Otherwise any name torch knows.
    option : str
        How the caller's user names this setting in the error message: ``"device"`` (the Python
        API's keyword, the default), or e.g. ``"--device"`` on the command line.

    Returns
    -------
    Device or None
        The name as given (so records and cache keys read as the user wrote it), marked as checked:
        resolving a :class:`Device` again returns it at once, without torch. None stays None.

    Raises
    ------
    DeviceError
        (a :class:`~brainscore.errors.ValidationError`) if torch does not know the device name, or it
        names a CUDA device while torch sees no GPU (no CUDA build, no driver, or
        ``CUDA_VISIBLE_DEVICES`` hides them all) or fewer GPUs than its index.
    """
    if device is None or isinstance(device, Device):
        return device
    return _checked(str(device), option)


def _checked(name: str, option: str, here: bool = True) -> Device:
    """``name`` checked against torch (see :func:`resolve`; ``here`` False: the name only, :func:`named`);
    the one place a device name meets torch."""
    flag = option.startswith("-")  # a command-line option: "--device cuda"; the API's keyword: "device='cuda'"
    shown = f"{option} {name}" if flag else f"{option}={name!r}"
    leave_out = f"leave out {option}" if flag else f"leave {option}=None"
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency; kept for a clear message
        raise DeviceError(f"{shown} needs torch, which is not installed; install it or {leave_out} to "
                          f"compute with numpy", name) from None
    try:
        parsed = torch.device(name)
    except (RuntimeError, TypeError) as error:
        raise DeviceError(f"{shown} is not a torch device ({error}); use e.g. cpu, cuda or cuda:0",
                          name) from None
    if parsed.type == "cuda" and here:
        if not torch.cuda.is_available():
            build = f"built with CUDA {torch.version.cuda}" if torch.version.cuda else "built without CUDA"
            raise DeviceError(f"{shown}: torch {torch.__version__} ({build}) sees no CUDA GPU on this "
                              f"machine; run on a machine with a GPU, or {leave_out} to compute on the CPU", name)
        count = torch.cuda.device_count()
        if parsed.index is not None and parsed.index >= count:
            raise DeviceError(f"{shown}: torch sees {count} CUDA GPU(s), numbered 0 to {count - 1}", name)
    return Device(name)


def named(device: Any, *, option: str = "device") -> Device | None:
    """``device`` checked as a name only (torch knows it), for work that runs on other machines; None stays None.

    A run on a cluster is started from a machine (a login node) that need not have the GPU its
    workers have, so there only the name is checked; each worker resolves it again where it
    computes (a :class:`Device` pickles as plain text), and ``brainscore run`` asks the workers first
    (:func:`brainscore.runner.watch.check_device`).

    Raises
    ------
    DeviceError
        If torch does not know the name (e.g. ``"cdua"``).
    """
    if device is None or isinstance(device, Device):
        return device
    return _checked(str(device), option, here=False)


def is_cuda(device: str | None) -> bool:
    """Whether the (resolved) ``device`` names a CUDA GPU: ``"cuda"`` or ``"cuda:N"``."""
    return device is not None and (device == "cuda" or device.startswith("cuda:"))


def for_worker(device: Device | None) -> Device | None:
    """The device this process uses for a run's ``device``: one GPU per Dask worker.

    ``"cuda"`` on a Dask worker of a machine with several GPUs becomes ``cuda:<worker number mod
    GPUs>`` (LocalCluster names its workers 0, 1, ...); anything else, or outside a worker, is returned
    unchanged (on a cluster job, the scheduler's ``CUDA_VISIBLE_DEVICES`` already shows each worker one
    GPU). ``device`` must already be :func:`resolve`-d.
    """
    if device != "cuda":
        return device
    try:
        from distributed import get_worker

        name = get_worker().name
    except (ImportError, ValueError):
        return device
    import torch

    count = torch.cuda.device_count()
    if count > 1 and isinstance(name, int):
        return Device(f"cuda:{name % count}")  # within the GPUs resolve() counted
    return device


def host_to_device(tensor: Any, device: Any) -> Any:
    """``tensor`` (a host torch tensor) on ``device``, copied as a GPU is best fed.

    On CUDA the tensor is first placed in pinned (page-locked) memory and copied with
    ``non_blocking=True``, so the copy runs by DMA while the host prepares the next batch (a copy
    from ordinary pageable memory is synchronous whatever ``non_blocking`` says). Elsewhere it is
    ``tensor.to(device)``: no copy on the CPU. The values are the same either way.
    """
    import torch

    device = torch.device(device) if not hasattr(device, "type") else device
    if device.type == "cuda":
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)


def gpu_batch_size(total_memory: int) -> int:
    """Images per forward pass on a GPU of ``total_memory`` bytes.

    One image per :data:`GPU_BYTES_PER_IMAGE` of the card's memory, rounded down to a power of two
    and kept within :data:`GPU_BATCH_LIMITS` (64 on an 8 GiB card, 512 on an 80 GB H100).

    Raises
    ------
    ValueError
        If ``total_memory`` is not positive.
    """
    if total_memory <= 0:
        raise ValueError(f"a GPU's memory must be a positive number of bytes, got {total_memory}")
    low, high = GPU_BATCH_LIMITS
    fits = max(1, int(total_memory) // GPU_BYTES_PER_IMAGE)
    return max(low, min(high, 1 << (fits.bit_length() - 1)))
