"""Importing torchvision next to a CPU build of torch (the one place that works around it).

The torchvision wheel on PyPI is built against the CUDA build of torch; with the CPU build its
compiled operators fail to load, and ``import torchvision`` then fails while registering fake
kernels for ``torchvision::nms`` and ``torchvision::qnms`` (pytorch/vision issue 9085). Defining
the two operator schemas first lets the pure-Python parts (models, transforms) import; the
detection operators stay unusable, which brainscore does not need.
"""
from __future__ import annotations

import threading

from brainscore.errors import ZOO_INSTALL, MissingDependencyError

_lock = threading.Lock()
_library = None  # keeps the torch.library.Library defining the schemas alive
_SCHEMAS = {"nms": "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
            "qnms": "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor"}


def import_torchvision():
    """``import torchvision``, defining its missing operator schemas first if needed.

    Raises
    ------
    MissingDependencyError
        If torchvision is not installed; the message gives the install command of the model zoo.
    """
    global _library
    import torch

    with _lock:
        try:
            import torchvision  # noqa: F401
            return torchvision
        except ImportError:
            raise MissingDependencyError(f"torchvision is not installed; install the model zoo: {ZOO_INSTALL}") from None
        except RuntimeError:
            pass
        import sys

        for name in [n for n in sys.modules if n == "torchvision" or n.startswith("torchvision.")]:
            del sys.modules[name]
        if _library is None:
            _library = torch.library.Library("torchvision", "FRAGMENT")
            for op, schema in _SCHEMAS.items():
                if not _has_schema(op):
                    _library.define(schema)
        import torchvision  # noqa: F811
        return torchvision


def _has_schema(op: str) -> bool:
    import torch

    try:
        torch._C._get_schema(f"torchvision::{op}", "")
        return True
    except RuntimeError:
        return False
