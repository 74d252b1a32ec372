"""Each test module of tests/compat leaves brainscore's registries as it found them.

The plugin-folder tests register identifiers (``model_registry['compat-...'] = ...``, plugin folders imported
on first use) and point ``BRAINSCORE_PLUGIN_DIRS`` at their folders. Tests elsewhere count what is registered
(the website's leaderboard benchmarks, ``brainscore list``), so what a module registered is removed when it ends.
"""
from __future__ import annotations

import os
import sys

import pytest

from brainscore import registry
from brainscore.plugin_sources import PLUGIN_DIR_PACKAGE_PREFIX


@pytest.fixture(scope="module", autouse=True)
def restore_registries():
    """Undo a module's registrations: identifiers registered while it ran that no built-in plugin declares,
    learnt metadata, tree nodes, the plugin folders' modules (so a later module pointing at the same folder
    imports and registers it again)."""
    metadata = {kind: {k: dict(v) for k, v in known._metadata.items()} for kind, known in registry.REGISTRIES.items()}
    # what other test modules registered before this one (e.g. runner_helpers' 'tiny-seeded') stays registered:
    # their modules are imported once per session and would not register it again
    registered_before = {kind: set(known._factories) for kind, known in registry.REGISTRIES.items()}
    tree_nodes = dict(registry._tree_nodes)
    plugin_dirs = os.environ.get("BRAINSCORE_PLUGIN_DIRS")
    yield
    if plugin_dirs is None:
        os.environ.pop("BRAINSCORE_PLUGIN_DIRS", None)
    else:
        os.environ["BRAINSCORE_PLUGIN_DIRS"] = plugin_dirs
    registry._discovery.reset()
    builtin = registry._discovery.index().modules
    for kind, known in registry.REGISTRIES.items():
        for identifier in [i for i in known._factories if i not in registered_before[kind]
                           and not str(builtin[kind].get(i, "")).startswith("brainscore.plugins.")]:
            del known._factories[identifier]
        known._metadata.clear()
        known._metadata.update(metadata[kind])
    registry._tree_nodes.clear()
    registry._tree_nodes.update(tree_nodes)
    for name in [m for m in sys.modules if m.startswith(PLUGIN_DIR_PACKAGE_PREFIX)]:
        del sys.modules[name]
    registry._discovery._imported = {m for m in registry._discovery._imported
                                     if not m.startswith(PLUGIN_DIR_PACKAGE_PREFIX)}


@pytest.fixture(scope="session")
def reference_tree(tmp_path_factory):
    """The ``brainscore_vision/`` folder of the reference's wheel (``brainscore-vision==2.4.2``), extracted once by
    ``tools/reference_suite.py``'s ``extract``. The wheel comes from ``.ci/run`` (``tools/reference_suite.py
    --fetch-only``); without it the test is skipped locally and fails under CI."""
    import importlib.util
    from pathlib import Path

    tools = Path(__file__).resolve().parents[2] / "tools"
    spec = importlib.util.spec_from_file_location("reference_suite", tools / "reference_suite.py")
    suite = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("reference_suite", suite)
    spec.loader.exec_module(suite)
    wheel = suite.wheel_path()
    if not wheel.is_file():
        message = f"the reference's wheel is not in {wheel.parent}: `python tools/reference_suite.py --fetch-only`"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return suite.extract(wheel, tmp_path_factory.mktemp("reference") / "wheel") / "brainscore_vision"
