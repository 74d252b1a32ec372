"""A package a plugin folder lacks gives one line, whether its import or its build needs it (issue 37: ``cornet_s``
built to a 52-line traceback), and the install hint names only a package that exists: the folder's
requirements.txt line that provides it (``CORnet @ git+https://...``, ``vonenet @ git+https://...``), or a known
PyPI name; never ``pip install vonenet``, which PyPI does not have."""
from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from brainscore import registry
from brainscore.errors import PluginImportError
from brainscore.plugin_imports import install_hint


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture
def plugin_dir(tmp_path):
    root = tmp_path / "plugins"
    write(root / "models" / "lazy_cornet" / "__init__.py", """
        from brainscore_vision import model_registry

        def build():
            import cornet  # the reference's cornet_s imports it only while building
            return cornet.cornet_s()

        model_registry['lazy-cornet'] = build
        """)
    write(root / "models" / "lazy_cornet" / "requirements.txt",
          "torch\nCORnet @ git+https://github.com/dicarlolab/CORnet.git\n")
    write(root / "models" / "eager_vone" / "__init__.py", """
        from brainscore_vision import model_registry
        import vonenet
        model_registry['eager-vone'] = lambda: None
        """)
    write(root / "models" / "eager_vone" / "requirements.txt", "vonenet @ git+https://github.com/dicarlolab/vonenet\n")
    write(root / "models" / "bare_clip" / "__init__.py", """
        from brainscore_vision import model_registry

        def build():
            import clip  # OpenAI's CLIP: PyPI's 'clip' is another package
            return clip

        model_registry['bare-clip'] = build
        """)
    saved = os.environ.get("BRAINSCORE_PLUGIN_DIRS")
    os.environ["BRAINSCORE_PLUGIN_DIRS"] = str(root)
    registry._discovery.reset()
    yield root
    if saved is None:
        os.environ.pop("BRAINSCORE_PLUGIN_DIRS", None)
    else:
        os.environ["BRAINSCORE_PLUGIN_DIRS"] = saved
    registry._discovery.reset()


def test_a_package_missing_at_build_time_is_one_line_with_the_requirements_line(plugin_dir, capsys):
    with pytest.raises(PluginImportError) as built:
        registry.models.load("lazy-cornet")
    message = str(built.value)
    assert "\n" not in message
    assert "model 'lazy-cornet' cannot be built" in message and str(plugin_dir / "models" / "lazy_cornet") in message
    assert "needs the package 'cornet', which is not installed here" in message
    assert "pip install 'CORnet @ git+https://github.com/dicarlolab/CORnet.git'" in message
    from brainscore.cli import main

    code = main(["score", "--model", "lazy-cornet", "--benchmark", "Cowley2026.210325.V4-pls", "--no-record",
                 "--plugin-dir", str(plugin_dir)])
    captured = capsys.readouterr()
    assert code not in (0, None)
    assert "Traceback" not in captured.err and "needs the package 'cornet'" in captured.err
    assert "pip install 'CORnet @ git+https://github.com/dicarlolab/CORnet.git'" in captured.err


def test_install_hints_name_only_packages_that_exist(plugin_dir):
    with pytest.raises(PluginImportError) as imported:
        registry.models.load("eager-vone")
    message = str(imported.value)
    assert "pip install 'vonenet @ git+https://github.com/dicarlolab/vonenet'" in message
    assert "pip install vonenet " not in message and "pip install vonenet)" not in message
    with pytest.raises(PluginImportError) as bare:
        registry.models.load("bare-clip")
    assert "needs the package 'clip'" in str(bare.value) and "pip install" not in str(bare.value)
    assert install_hint("cv2") == "pip install opencv-python"
    assert install_hint("sklearn", plugin_dir / "models" / "bare_clip") == "pip install scikit-learn"


def test_an_error_of_the_plugin_s_own_modules_at_build_time_is_not_called_a_missing_package(tmp_path):
    root = tmp_path / "plugins"
    write(root / "models" / "own_typo" / "__init__.py", """
        from brainscore_vision import model_registry

        def build():
            from .helpers_typo import X  # the folder's own module, misspelt: the plugin's fault
            return X

        model_registry['own-typo'] = build
        """)
    write(root / "models" / "own_typo" / "helpers.py", "X = 1\n")
    saved = os.environ.get("BRAINSCORE_PLUGIN_DIRS")
    os.environ["BRAINSCORE_PLUGIN_DIRS"] = str(root)
    registry._discovery.reset()
    try:
        with pytest.raises(ModuleNotFoundError) as raw:
            registry.models.load("own-typo")
        assert not isinstance(raw.value, PluginImportError)
    finally:
        if saved is None:
            os.environ.pop("BRAINSCORE_PLUGIN_DIRS", None)
        else:
            os.environ["BRAINSCORE_PLUGIN_DIRS"] = saved
        registry._discovery.reset()
