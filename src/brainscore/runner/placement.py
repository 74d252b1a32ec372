"""Where each task of a run on GPUs computes: which worker resource it asks for, and on which device.

On a GPU node (:func:`brainscore.runner.clusters.worker_layout`) three kinds of worker hold three
Dask resources: ``MODEL`` (one per GPU: layer selection and activations, the forward passes),
``GPU`` (a second process per GPU: scores, and the metric kernels that gain on a GPU) and ``CPU``
(the other cores, GPUs hidden: ceilings and metrics on the host with numpy). A metric kernel goes to
the GPU when issue 24's measurement found it clearly faster there than numpy on the node's 16 cores
(:data:`GPU_GAIN`, at least :data:`CROSSOVER`); otherwise it stays on the CPU, whose workers are
many and otherwise idle.

A score must read the activations the model worker cached, keyed by the GPU's numerics, so it
always runs on a ``GPU`` worker with the model on the run's device; only its metric (and the
benchmark's ceiling, which must be computed where the score's is, since a ceiling is cached per
device) moves to numpy when the kernel does not gain.

Without GPUs nothing here applies: forward passes ask for ``MODEL`` where a worker holds it and the
rest runs anywhere. On a cluster whose workers do not hold these resources (an existing scheduler, a
batch system whose workers advertise only ``GPU=1``) a task asks only for what some worker holds.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Collection

from brainscore.runner.clusters import CPU, GPU, MODEL

__all__ = ["GPU_GAIN", "CROSSOVER", "Placement", "kernel_of", "gains_on_gpu", "place"]

#: Speed-up of each metric kernel on one H100 over numpy on 16 CPU cores, measured in issue 24
#: (ridge 30x, RDM 10.5x, PLS 3200x20000 10 splits 2.9x before its folds were batched, internal
#: consistency 1.7x, CKA 1.0x). Kernels not listed were not measured and stay on the CPU.
GPU_GAIN = {"ridge": 30.0, "ridgecv": 30.0, "rdm": 10.5, "pls": 2.9, "internal_consistency": 1.7, "cka": 1.0}
#: A kernel moves to the GPU when it gains at least this much (ridge, RDM and PLS do; CKA and the
#: split-half ceiling do not: one GPU process would queue what many CPU workers do side by side).
CROSSOVER = 2.0

#: The stages of a run (:mod:`brainscore.runner.engine`).
STAGES = ("plan", "select", "activations", "ceiling", "score")


@dataclass(frozen=True)
class Placement:
    """Where a task runs: the Dask ``resources`` it asks for (None: any worker) and the ``device`` of its work.

    ``device`` is the model's device for the forward-pass stages; for ``ceiling`` and ``score`` it is
    the metric's (None: numpy on the host). ``model_device`` is the device the score's model is
    loaded on (the run's), None elsewhere.
    """

    resources: dict[str, int] | None
    device: str | None
    model_device: str | None = None


def kernel_of(metric: Any) -> str | None:
    """The kernel a benchmark's metric spends its time in (a key of :data:`GPU_GAIN`), or None when unknown.

    A cross-validated regression names its ``regression`` (``"pls"``, ``"ridge"``, ...); an RDM
    metric is ``"rdm"``, a CKA metric ``"cka"``. Anything else (behavioural metrics, distributions,
    a metric of another package) is None, and stays on the CPU.
    """
    if metric is None:
        return None
    regression = getattr(metric, "regression", None)
    if isinstance(regression, str):
        return regression
    name = type(metric).__name__
    if "RDM" in name:
        return "rdm"
    if "CKA" in name:
        return "cka"
    return None


def gains_on_gpu(kernel: str | None) -> bool:
    """Whether ``kernel`` is measured at least :data:`CROSSOVER` times faster on a GPU (see :data:`GPU_GAIN`)."""
    return GPU_GAIN.get(kernel or "", 0.0) >= CROSSOVER


def place(stage: str, device: str | None, gpu: bool, held: Collection[str], kernel: str | None = None) -> Placement:
    """The :class:`Placement` of a task of ``stage`` in a run on ``device`` (pure).

    Parameters
    ----------
    stage : str
        One of :data:`STAGES`.
    device : str or None
        The run's device (``"cuda"`` on a GPU run).
    gpu : bool
        Whether the run uses GPUs (its cluster is laid out for them).
    held : collection of str
        The resources some worker of the cluster holds (:func:`held_resources`).
    kernel : str, optional
        The benchmark's metric kernel (:func:`kernel_of`), for ``ceiling`` and ``score``.

    Raises
    ------
    ValueError
        For an unknown stage.
    """
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; expected one of {', '.join(STAGES)}")

    def ask(*names: str) -> dict[str, int] | None:
        for name in names:  # the first of these that some worker holds
            if name in held:
                return {name: 1}
        return None

    if stage == "plan":
        return Placement(None, None)
    if stage in ("select", "activations"):
        return Placement(ask(MODEL, GPU) if gpu else ask(MODEL), device)
    if not gpu:
        return Placement(None, device, device if stage == "score" else None)
    on_gpu = gains_on_gpu(kernel)
    metric_device = device if on_gpu else None
    if stage == "ceiling":
        return Placement(ask(GPU) if on_gpu else ask(CPU), metric_device)
    return Placement(ask(GPU), metric_device, device)


def held_resources(client) -> set[str]:
    """The names of the resources at least one worker of ``client``'s cluster holds."""
    return held_by(client.scheduler_info(n_workers=-1).get("workers", {}))


def held_by(workers: dict) -> set[str]:
    """The names of the resources at least one of ``workers`` (address -> the scheduler's info) holds."""
    return {name for info in workers.values() for name, amount in (info.get("resources") or {}).items() if amount}
