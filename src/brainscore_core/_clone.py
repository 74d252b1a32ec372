"""A clone of the reference's repository as the current folder: its plugin folders on brainscore's API.

In a clone of ``brainscore-vision``, ``python -m pytest brainscore_vision/models/NAME/test.py`` puts the clone first
on ``sys.path``, so ``import brainscore_vision`` would run the reference's framework ``__init__.py``, which cannot
run here. :func:`adopt`, run when ``brainscore_core`` is first imported (brainscore's pytest plugin does so before
collecting), makes ``brainscore_vision`` brainscore's adapter package and puts the clone on
``BRAINSCORE_PLUGIN_DIRS``, as ``--plugin-dir CLONE`` would. Only a source tree is adopted, never an installed
distribution of the reference. Standard library only; the clone's code is never imported.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent
"""The folder holding brainscore's own ``brainscore``, ``brainscore_vision`` and ``brainscore_core``."""
OURS = SOURCE / "brainscore_vision"
KIND_FOLDERS = ("models", "benchmarks", "data", "metrics")


def is_clone(folder: Path) -> bool:
    """Whether ``folder`` (a ``brainscore_vision`` package folder) is the reference's, in a source tree of its
    repository: not brainscore's own, holding plugin kind folders, not inside an installed environment's
    ``site-packages``, and no installed ``brainscore-vision`` distribution (which the user chose to use)."""
    folder = Path(folder)
    if folder.resolve() == OURS.resolve() or folder.name != "brainscore_vision":
        return False
    if not any((folder / kind).is_dir() for kind in KIND_FOLDERS):
        return False
    if any(part in ("site-packages", "dist-packages") for part in folder.resolve().parts):
        return False
    for name in ("brainscore-vision", "brainscore_vision"):
        try:
            installed = distribution(name)
        except PackageNotFoundError:
            continue
        if (installed.metadata.get("Name") or "").lower().replace("_", "-") != "brainscore":
            return False
    return True


def _add_plugin_dir(root: Path) -> None:
    """Put ``root`` (the clone) first on ``BRAINSCORE_PLUGIN_DIRS`` (this process and those it starts)."""
    current = [p for p in os.environ.get("BRAINSCORE_PLUGIN_DIRS", "").split(os.pathsep) if p]
    if any(Path(p).resolve() == root.resolve() for p in current):
        return
    os.environ["BRAINSCORE_PLUGIN_DIRS"] = os.pathsep.join([str(root), *current])
    registry = sys.modules.get("brainscore.registry")
    if registry is not None:
        registry.reset_discovery()


def adopt() -> Path | None:
    """Make ``brainscore_vision`` brainscore's where a clone's would be imported, the clone on the plugin path;
    the clone's root, or None. ImportError if the clone's own ``brainscore_vision`` is already being imported
    (``python -c 'import brainscore_vision'`` in the clone), saying what works instead."""
    loaded = sys.modules.get("brainscore_vision")
    if loaded is not None:
        file = getattr(loaded, "__file__", None)
        folder = Path(file).resolve().parent if file else None
        if folder is not None and folder != OURS.resolve() and is_clone(folder):
            raise ImportError(
                f"brainscore_vision is being imported from {folder}, a clone of the reference Brain-Score's "
                f"repository (its folder comes first on sys.path), whose own framework code does not run on brainscore. "
                f"Run its tests with pytest (brainscore's pytest plugin, installed with brainscore, makes the clone's "
                f"plugin folders brainscore's plugins; where `pip install` predates it, give `-p "
                f"brainscore_core._pytest_plugin`), or run from another folder with `--plugin-dir {folder.parent}` "
                f"(BRAINSCORE_PLUGIN_DIRS={folder.parent})")
        return None
    try:
        spec = importlib.util.find_spec("brainscore_vision")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    folder = Path(spec.origin).resolve().parent
    if not is_clone(folder):
        return None
    ours = importlib.util.spec_from_file_location("brainscore_vision", OURS / "__init__.py",
                                                  submodule_search_locations=[str(OURS)])
    module = importlib.util.module_from_spec(ours)
    sys.modules["brainscore_vision"] = module
    _add_plugin_dir(folder.parent)
    try:
        ours.loader.exec_module(module)
    except BaseException:
        sys.modules.pop("brainscore_vision", None)
        raise
    return folder.parent
