"""Where the metrics compute: numpy on the host by default, or torch on a device for ``--device``.

A metric or ceiling that has a ``device`` parameter computes with numpy when it is None (the
default, the tested reference path) and with the torch namespace of
:mod:`brainscore.metrics.kernels.backend` on that device otherwise: its arrays go to the
kernels as tensors on the device, in the dtypes the numpy path uses (float64 wherever it computes
in float64, e.g. every eigendecomposition; a float32 RDM stays float32), and results come back as
numpy. Torch on the CPU equals numpy to rounding (~1e-12 relative in float64, tested on real data).

A metric left at ``device=None`` takes the device of the innermost :func:`computing_on` context,
which is how ``brainscore score --device`` and ``brainscore run --device`` put a benchmark's metric
and ceiling on the model's device without rebuilding the benchmark::

    with computing_on("cuda"):
        score = benchmark(model)   # metric and ceiling on the GPU

A ceiling computed on a device is cached under its own key (:func:`current`), never served for the
numpy path or the reverse.
"""
from __future__ import annotations

import contextlib
from contextvars import ContextVar
from typing import Iterator

from brainscore.metrics.kernels.backend import check_device

__all__ = ["computing_on", "current", "resolve", "check_device"]

_DEVICE: ContextVar[str | None] = ContextVar("brainscore_metric_device", default=None)


def current() -> str | None:
    """The device of the innermost :func:`computing_on` context, or None (numpy) outside any."""
    return _DEVICE.get()


def resolve(device: str | None) -> str | None:
    """The device a metric computes on: its own ``device`` if given, else :func:`current`."""
    return device if device is not None else _DEVICE.get()


@contextlib.contextmanager
def computing_on(device: str | None) -> Iterator[str | None]:
    """Within this context, metrics and ceilings with ``device=None`` compute on ``device`` (None: numpy).

    Raises
    ------
    ValidationError
        From :func:`check_device`, on entering.
    """
    token = _DEVICE.set(check_device(device))
    try:
        yield _DEVICE.get()
    finally:
        _DEVICE.reset(token)
