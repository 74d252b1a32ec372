"""The reference's plugin code imports here as it does there: torchvision in any process that may import a plugin,
the reference's absolute names of plugin folders (``brainscore_vision.models.X.model``), the kind folders of a clone
of its tree without running its framework's ``__init__`` files, and hashing a plugin's code never runs it."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from brainscore import registry
from brainscore.plugin_sources import package_name

SRC = Path(__file__).resolve().parents[2] / "src"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def run(code: str, plugin_dir: Path, **env) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter (nothing imported yet) with ``plugin_dir`` on the plugin path."""
    environment = {**os.environ, "PYTHONPATH": str(SRC), "BRAINSCORE_PLUGIN_DIRS": str(plugin_dir), **env}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=environment, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture
def tree(tmp_path):
    """A folder laid out like the reference's brainscore_vision/, with its framework's kind-level __init__ files."""
    root = tmp_path / "brainscore_vision"
    write(root / "benchmarks" / "__init__.py", "import result_caching_of_the_reference  # its framework: never run\n")
    write(root / "metrics" / "__init__.py", "raise RuntimeError('the reference framework ran')\n")
    write(root / "models" / "tv_model" / "__init__.py", """
        from brainscore_vision import model_registry
        from .model import build
        model_registry['tv-model'] = build
        """)
    write(root / "models" / "tv_model" / "model.py", """
        import torchvision.models  # at the top, as nearly every reference model plugin does

        def build():
            return torchvision.models.resnet18(weights=None)
        """)
    write(root / "models" / "uses_other" / "__init__.py", """
        from brainscore_vision import model_registry
        from brainscore_vision.models.tv_model.model import build  # the reference's absolute name of another folder
        model_registry['uses-other'] = build
        """)
    return tmp_path


def test_plugin_code_imports_torchvision_in_a_fresh_process(tree):
    result = run("""
        from brainscore import registry
        network = registry.models.load('tv-model')
        print(type(network).__name__)
        """, tree)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split()[-1] == "ResNet"


def test_torchvision_imports_after_the_registry_in_any_process(tree):
    result = run("import brainscore_vision, torchvision, timm; print(torchvision.models.alexnet().features[0])", tree)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Conv2d(3, 64" in result.stdout


def test_absolute_reference_names_are_the_plugin_folders_and_the_kind_inits_never_run(tree):
    result = run("""
        import sys
        from brainscore import registry
        registry.models.load('uses-other')
        import brainscore_vision.models.tv_model.model as by_reference_name
        own = [m for m in sys.modules.values() if getattr(m, '__name__', '').endswith('.models.tv_model.model')]
        print(len({id(m) for m in own}), by_reference_name.__name__.startswith('brainscore_plugindir_'))
        """, tree)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split()[-2:] == ["1", "True"]  # one module object under both names


def test_a_folder_named_like_a_builtin_plugin_runs_its_own_code(tmp_path, monkeypatch):
    write(tmp_path / "metrics" / "rdm" / "__init__.py", """
        from brainscore_vision import metric_registry
        metric_registry['rdm'] = lambda: 'the reference copy'
        metric_registry['rdm_only_here'] = lambda: 'its own'
        """)
    monkeypatch.setenv("BRAINSCORE_PLUGIN_DIRS", str(tmp_path))
    registry._discovery.reset()
    try:
        assert not registry.plugin_conflicts()
        assert registry.load_metric("rdm") == "the reference copy"  # the user's folder, as on PATH
        assert registry.load_metric("rdm_only_here") == "its own"
        assert type(registry.load_metric("builtin:rdm")).__module__.startswith("brainscore.")
    finally:
        monkeypatch.delenv("BRAINSCORE_PLUGIN_DIRS")
        registry._discovery.reset()
        registry.metrics._factories.pop("rdm_only_here", None)


def test_hashing_a_plugins_code_never_imports_it(tmp_path, monkeypatch):
    from brainscore.caching.code import code_hash

    write(tmp_path / "models" / "explodes" / "__init__.py", """
        from brainscore_vision import model_registry
        from .model import build
        model_registry['explodes'] = build
        """)
    write(tmp_path / "models" / "explodes" / "model.py", "raise RuntimeError('operator torchvision::nms does not exist')\n")
    monkeypatch.setenv("BRAINSCORE_PLUGIN_DIRS", str(tmp_path))
    registry._discovery.reset()
    try:
        module = f"{package_name(tmp_path)}.models.explodes"
        first = code_hash(module)
        assert module not in sys.modules and f"{module}.model" not in sys.modules
        (tmp_path / "models" / "explodes" / "model.py").write_text("def build():\n    return None\n")
        from brainscore.caching import code

        code._parsed.cache_clear()
        code._module_file.cache_clear()
        code.module_closure.cache_clear()
        assert code_hash(module) != first  # model.py is in the closure: found without importing
    finally:
        monkeypatch.delenv("BRAINSCORE_PLUGIN_DIRS")
        registry._discovery.reset()
