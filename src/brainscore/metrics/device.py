"""Where the metrics compute by default: numpy on the host, or torch on the device a benchmark was given.

A metric or ceiling that has a ``device`` parameter computes with numpy when it is None (the
default, the tested reference path) and with the torch namespace of
:mod:`brainscore.metrics.kernels.backend` on that device otherwise: its arrays go to the
kernels as tensors on the device, in the dtypes the numpy path uses (float64 wherever it computes
in float64, e.g. every eigendecomposition; a float32 RDM stays float32), and results come back as
numpy. Torch on the CPU equals numpy to rounding (~1e-12 relative in float64, tested on real data).

The device is an argument everywhere above the metrics (``score(..., device=)``, ``benchmark(model,
device=)``, checked once by :func:`brainscore.device.resolve`). A benchmark builds its metric and
ceiling once, in its plugin, without knowing the device it will be called with; so a benchmark
called with ``device=`` runs its experiment inside :func:`computing_on` that device, and a metric
left at ``device=None`` takes the device of the innermost :func:`computing_on` (:func:`effective_device`).
This context is the metrics' internal default, not a second way to choose a device::

    score = benchmark(model, device="cuda")   # metric and ceiling on the GPU

A ceiling computed on a device is cached under its own key (:func:`current`), never served for the
numpy path or the reverse.
"""
from __future__ import annotations

import contextlib
from contextvars import ContextVar
from typing import Iterator

__all__ = ["computing_on", "current", "effective_device"]

_DEVICE: ContextVar[str | None] = ContextVar("brainscore_metric_device", default=None)


def current() -> str | None:
    """The device of the innermost :func:`computing_on` context, or None (numpy) outside any."""
    return _DEVICE.get()


def effective_device(device: str | None) -> str | None:
    """The device a metric computes on: its own ``device`` if given, else :func:`current` (named apart from
    :func:`brainscore.device.resolve`, which checks a device name where a job starts)."""
    return device if device is not None else _DEVICE.get()


@contextlib.contextmanager
def computing_on(device: str | None) -> Iterator[str | None]:
    """Within this context, metrics and ceilings with ``device=None`` compute on ``device`` (None: numpy).

    ``device`` is a name already checked by :func:`brainscore.device.resolve` (where the job
    started); it is not checked again here.
    """
    token = _DEVICE.set(device)
    try:
        yield device
    finally:
        _DEVICE.reset(token)
