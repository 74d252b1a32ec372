"""Which (model, benchmark) pairs a run scores: shell-style patterns and comma lists, expanded by the registry."""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any

from brainscore import registry
from brainscore.device import resolve as resolve_device
from brainscore.errors import ValidationError

_GLOB = set("*?[")


def expand(spec: str | list[str], kind: str) -> list[str]:
    """Identifiers named by ``spec``: comma-separated identifiers and shell-style patterns, in order, deduplicated.

    A plain identifier is kept as given (so names a plugin builds on demand, e.g.
    ``torchvision:resnet18-untrained``, work; an unknown one fails later with the closest names).
    A pattern (``*``, ``?``, ``[``) is matched against the registered identifiers of ``kind``.

    Parameters
    ----------
    spec : str or list of str
        E.g. ``"efficientnet-lite*,pixels"`` or ``["Cowley2026*", "Kriegeskorte2008.IT-rdm"]``.
    kind : {"model", "benchmark"}

    Returns
    -------
    list of str

    Raises
    ------
    ValidationError
        If ``spec`` is empty or a pattern matches nothing (the message lists what is registered).
    """
    items = spec if isinstance(spec, list) else [spec]
    parts = [part.strip() for item in items for part in str(item).split(",") if part.strip()]
    if not parts:
        raise ValidationError(f"no {kind}s given; name identifiers or patterns, e.g. --{kind}s 'pixels,efficientnet-lite*'")
    known = registry.REGISTRIES[kind].list()
    found: list[str] = []
    for part in parts:
        if _GLOB & set(part):
            matched = [name for name in known if fnmatch.fnmatchcase(name, part)]
            if not matched:
                raise ValidationError(f"the {kind} pattern {part!r} matches no registered {kind}; "
                                      f"registered: {', '.join(known)}")
            found.extend(matched)
        else:
            found.append(part)
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class Pair:
    """One cell of the grid: a model scored on a benchmark, with the model's factory arguments and the device.

    ``device`` is a name checked by :func:`brainscore.device.resolve` (None: the model's own device and
    numpy metrics); it decides where the score is computed, never which score it is, so it is not
    part of the pair's run key.
    """

    model: str
    benchmark: str
    #: The model factory's keyword arguments as sorted ``(name, value)`` items (hashable; see :attr:`model_kwargs`).
    model_arguments: tuple[tuple[str, Any], ...] = field(default=())
    device: str | None = None

    @property
    def model_kwargs(self) -> dict[str, Any]:
        """The model factory's keyword arguments as a dict (e.g. ``{"region_layer_map": {...}}``; never the device):
        what the stages take as ``model_kwargs``."""
        return dict(self.model_arguments)


def pairs(models: str | list[str], benchmarks: str | list[str], *, device: str | None = None,
          **model_kwargs: Any) -> list[Pair]:
    """Every (model, benchmark) pair of the expanded specs, models outer, benchmarks inner.

    Raises
    ------
    DeviceError
        If torch cannot serve ``device`` (:func:`brainscore.device.resolve`), before any pattern is expanded.
    ValidationError
        From :func:`expand`.
    """
    device = resolve_device(device)
    arguments = tuple(sorted(model_kwargs.items()))
    return [Pair(m, b, arguments, device) for m in expand(models, "model") for b in expand(benchmarks, "benchmark")]
