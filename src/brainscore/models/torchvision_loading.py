"""Importing torchvision next to a CPU build of torch (the one place that works around it).

The torchvision wheel on PyPI is built against the CUDA build of torch; with the CPU build its
compiled operators fail to load, and ``import torchvision`` then fails while registering fake
kernels for ``torchvision::nms`` and ``torchvision::qnms`` (pytorch/vision issue 9085). Defining
the two operator schemas first lets the pure-Python parts (models, transforms) import; the
detection operators stay unusable, which brainscore does not need.

:func:`prepare` does it before the first ``import torchvision`` of a process: brainscore's import hook
calls it (:mod:`brainscore.plugin_imports`, installed by every process that imports the registry), so
plugin code that imports torchvision itself works exactly as brainscore's own models.
"""
from __future__ import annotations

import sys
import threading
from pathlib import Path

from brainscore.errors import ZOO_INSTALL, MissingDependencyError

_lock = threading.Lock()
_library = None  # keeps the torch.library.Library defining the schemas alive
_SCHEMAS = {"nms": "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
            "qnms": "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor"}


def prepare() -> None:
    """Define ``torchvision::nms``/``qnms`` if torchvision's compiled operators cannot load here; else nothing.

    Called before ``torchvision`` is first imported in a process, by brainscore's import hook
    (:mod:`brainscore.plugin_imports`), so that any code's ``import torchvision`` works (plugin folders' too).
    Imports torch only when torchvision is installed. Safe to call again.
    """
    global _library
    import importlib.machinery

    with _lock:
        if _library is not None or "torchvision" in sys.modules:
            return
        spec = importlib.machinery.PathFinder.find_spec("torchvision")  # not through sys.meta_path: no recursion
        if spec is None or not spec.submodule_search_locations:
            return
        import torch

        if all(_has_schema(op) for op in _SCHEMAS):
            return
        libraries = [p for folder in spec.submodule_search_locations for p in Path(folder).glob("_C*.so")]
        libraries += [p for folder in spec.submodule_search_locations for p in Path(folder).glob("_C*.pyd")]
        for library in libraries[:1]:
            try:
                torch.ops.load_library(str(library))  # what torchvision does itself; works where the builds match
                if all(_has_schema(op) for op in _SCHEMAS):
                    return
            except (OSError, RuntimeError):
                pass
        _library = torch.library.Library("torchvision", "FRAGMENT")
        for op, schema in _SCHEMAS.items():
            if not _has_schema(op):
                _library.define(schema)


def import_torchvision():
    """``import torchvision``, defining its missing operator schemas first if needed (:func:`prepare`).

    Raises
    ------
    MissingDependencyError
        If torchvision is not installed; the message gives the install command of the model zoo.
    """
    prepare()
    try:
        import torchvision
    except ImportError:
        raise MissingDependencyError(f"torchvision is not installed; install the model zoo: {ZOO_INSTALL}") from None
    return torchvision


def _has_schema(op: str) -> bool:
    import torch

    try:
        torch._C._get_schema(f"torchvision::{op}", "")
        return True
    except RuntimeError:
        return False
