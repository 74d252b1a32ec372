"""brainscore's pytest plugin (entry point ``pytest11``): a plugin folder's ``test.py`` runs on its own folder's code.
Importing it adopts a clone of the reference's repository (:func:`brainscore_core._clone.adopt`); ``pytest
TREE/<kind>/NAME/test.py`` of a tree laid out like the reference's ``brainscore_vision/`` puts ``TREE`` on
``BRAINSCORE_PLUGIN_DIRS`` (its folder then declares its identifiers, also a built-in's twins); other paths are
left alone.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from brainscore_core._clone import KIND_FOLDERS, SOURCE


def plugin_tree_of(path: Path) -> Path | None:
    """The tree (laid out like the reference's ``brainscore_vision/``) holding the plugin folder that ``path`` is in
    or is, or None; brainscore's own built-in plugins are no such tree."""
    path = Path(path).resolve()
    own = (SOURCE / "brainscore" / "plugins").resolve()
    for folder in [path, *path.parents]:
        if folder.parent.name in KIND_FOLDERS and (folder / "__init__.py").is_file():
            tree = folder.parent.parent
            return None if tree == own else tree
    return None


def pytest_configure(config) -> None:
    """Put the trees of the plugin folders named on the command line on the plugin path (once each)."""
    current = [Path(p).resolve() for p in os.environ.get("BRAINSCORE_PLUGIN_DIRS", "").split(os.pathsep) if p]
    added = []
    for argument in config.args:
        tree = plugin_tree_of(Path(str(argument).split("::")[0]))
        if tree is None:
            continue
        clone = tree.parent if tree.name == "brainscore_vision" else None
        if any(c in (tree, clone) for c in current) or tree in added:
            continue
        added.append(tree)
    if added:
        os.environ["BRAINSCORE_PLUGIN_DIRS"] = os.pathsep.join([*map(str, added), *map(str, current)])
        registry = sys.modules.get("brainscore.registry")
        if registry is not None:
            registry.reset_discovery()
