"""One broken plugin folder (a model or a benchmark) on the plugin path breaks only its own identifiers: another
model still scores, and its layers are still chosen by layer selection, exactly as without the broken folders;
the broken identifiers raise one line naming the folder and the cause. (A broken benchmark folder broke another
model's layer selection: reading which benchmarks serve a region's selection imported every benchmark folder.)"""
from __future__ import annotations

import os
import shutil
import textwrap
from pathlib import Path

import pytest

from brainscore import registry
from brainscore.errors import PluginImportError

SMALLNET = Path(__file__).resolve().parent / "plugin_folder" / "models" / "compat_smallnet"
BENCHMARK = "Cowley2026.210325.V4-pls"  # V4: chosen by layer selection on the other Cowley sessions


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture
def folders(tmp_path):
    """``good``: the reference-style small network without its region_layer_map (so V4 is chosen by selection);
    ``broken``: a benchmark folder and a model folder that fail while imported."""
    good = tmp_path / "good"
    shutil.copytree(SMALLNET, good / "models" / "compat_smallnet", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.rmtree(good / "models" / "compat_smallnet" / "region_layer_map")
    broken = tmp_path / "broken"
    write(broken / "benchmarks" / "broken_bench" / "__init__.py", """
        from brainscore_vision import benchmark_registry
        raise RuntimeError('this benchmark folder is broken on purpose')
        benchmark_registry['BrokenBench2026.V4-pls'] = lambda: None
        """)
    write(broken / "models" / "broken_model" / "__init__.py", """
        from brainscore_vision import model_registry
        import a_package_that_is_not_installed
        model_registry['broken-model'] = lambda: None
        """)
    saved = os.environ.get("BRAINSCORE_PLUGIN_DIRS")

    def use(*roots):
        os.environ["BRAINSCORE_PLUGIN_DIRS"] = os.pathsep.join(str(r) for r in roots)
        registry._discovery.reset()
    yield good, broken, use
    if saved is None:
        os.environ.pop("BRAINSCORE_PLUGIN_DIRS", None)
    else:
        os.environ["BRAINSCORE_PLUGIN_DIRS"] = saved
    registry._discovery.reset()


def test_broken_folders_break_neither_another_models_scoring_nor_its_layer_selection(folders):
    import brainscore

    good, broken, use = folders
    use(broken, good)  # the broken folders first on the path
    assert {"BrokenBench2026.V4-pls"} <= set(registry.benchmarks.list())
    with_broken = brainscore.score("compat-smallnet", BENCHMARK, bootstrap=0)
    assert registry.benchmarks.declaring("selection_for")  # the selection benchmarks are still found
    use(good)
    alone = brainscore.score("compat-smallnet", BENCHMARK, bootstrap=0)
    assert with_broken.attrs["layers"]["V4"] == alone.attrs["layers"]["V4"]  # chosen by selection, the same layer
    assert float(with_broken) == float(alone) and 0 < float(alone) < 1


def test_a_broken_folders_identifiers_raise_one_line_naming_the_folder_and_the_cause(folders):
    good, broken, use = folders
    use(broken, good)
    with pytest.raises(PluginImportError) as benchmark:
        registry.benchmarks.load("BrokenBench2026.V4-pls")
    message = str(benchmark.value)
    assert "\n" not in message and str(broken / "benchmarks" / "broken_bench") in message
    assert "RuntimeError: this benchmark folder is broken on purpose" in message and "__init__.py:3" in message
    with pytest.raises(PluginImportError) as model:
        registry.models.load("broken-model")
    assert "needs the package 'a_package_that_is_not_installed', which is not installed" in str(model.value)
    assert registry.models.load("compat-smallnet").identifier == "compat-smallnet"
