"""Plugin folders in the reference Brain-Score's layout: found through BRAINSCORE_PLUGIN_DIRS, the
plugin_dirs setting and --plugin-dir; declared identifiers read without running plugin code; imported
on first use; one broken folder never breaks the others; a clash with a built-in is an error naming both;
brainscore_vision's registries are dict-like views of brainscore's."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from brainscore import registry
from brainscore.errors import BrainScoreError, PluginConflictError, PluginImportError, UnknownIdentifierError

SRC = Path(__file__).resolve().parents[2] / "src"

MODEL_INIT = """
from brainscore_vision import model_registry
from .model import build

model_registry['{identifier}'] = lambda: build('{identifier}')
"""
# the model: a native commitment over a stand-in extractor (no network is run by these tests)
MODEL_CODE = """
from brainscore.models.commitment import ModelCommitment

IMPORTED = True


class Extractor:
    identifier = 'stand-in'


def build(identifier):
    return ModelCommitment(identifier, Extractor(), ['conv1', 'conv2', 'fc'], region_layer_map={'IT': 'fc'})
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def model_plugin(root: Path, name: str, identifier: str) -> Path:
    folder = root / "models" / name
    write(folder / "__init__.py", MODEL_INIT.replace("{identifier}", identifier))
    write(folder / "model.py", MODEL_CODE)
    return folder


@pytest.fixture
def use_dirs(monkeypatch):
    """Point BRAINSCORE_PLUGIN_DIRS at the given folders and scan anew (and again after the test); identifiers the
    test's folders registered are removed after it, so later tests (e.g. counts of benchmarks) do not see them."""
    before = {kind: set(known._factories) for kind, known in registry.REGISTRIES.items()}

    def use(*folders):
        monkeypatch.setenv("BRAINSCORE_PLUGIN_DIRS", os.pathsep.join(str(f) for f in folders))
        registry._discovery.reset()
    yield use
    monkeypatch.delenv("BRAINSCORE_PLUGIN_DIRS", raising=False)
    registry._discovery.reset()
    for kind, known in registry.REGISTRIES.items():
        for identifier in set(known._factories) - before[kind]:
            del known._factories[identifier]


def loaded_modules(prefix: str) -> list[str]:
    return [name for name in sys.modules if name.startswith(prefix)]


def test_declared_identifiers_are_listed_without_running_the_plugin(tmp_path, use_dirs):
    model_plugin(tmp_path, "lazy_model", "compat-lazy")
    use_dirs(tmp_path)
    module = registry._discovery.index().modules["model"]["compat-lazy"]
    assert module.startswith("brainscore_plugindir_") and module.endswith(".models.lazy_model")
    assert "compat-lazy" in registry.models.list()
    assert module not in sys.modules  # listed from the parsed source, the code never ran
    assert registry.plugin_folder_of("model", "compat-lazy") == (tmp_path / "models" / "lazy_model").resolve()

    model = registry.models.load("compat-lazy")  # now imported: its relative import of .model works
    assert module in sys.modules and sys.modules[module + ".model"].IMPORTED
    assert model.identifier == "compat-lazy" and model.layers == ["conv1", "conv2", "fc"]


def test_region_layer_map_json_commits_layers_explicit_entries_win(tmp_path, use_dirs):
    folder = model_plugin(tmp_path, "mapped", "compat-mapped")
    write(folder / "region_layer_map" / "compat-mapped.json", json.dumps({"V4": "conv2", "IT": "conv1"}))
    use_dirs(tmp_path)
    model = registry.models.load("compat-mapped")
    # the json fills V4; the factory's own IT -> fc wins over the json's IT -> conv1
    assert model.region_layer_map == {"IT": "fc", "V4": "conv2"}
    assert model.layer_for("V4") == "conv2"
    # --layer / region_layer_map= (what brainscore.load_model passes) win over both
    assert registry.models.load("compat-mapped", region_layer_map={"IT": "conv2"}).region_layer_map == \
        {"IT": "conv2", "V4": "conv2"}


def test_a_broken_folder_breaks_only_its_own_identifiers(tmp_path, use_dirs):
    model_plugin(tmp_path, "good", "compat-good")
    write(tmp_path / "models" / "broken" / "__init__.py", """
        from brainscore_vision import model_registry
        import a_package_that_is_not_installed
        model_registry['compat-broken'] = lambda: None
        """)
    use_dirs(tmp_path)
    assert {"compat-good", "compat-broken"} <= set(registry.models.list())
    with pytest.raises(PluginImportError) as error:
        registry.models.load("compat-broken")
    message = str(error.value)
    assert str((tmp_path / "models" / "broken").resolve()) in message and "a_package_that_is_not_installed" in message
    assert registry.models.load("compat-good").identifier == "compat-good"


def test_a_folder_with_a_dot_in_its_name_is_an_error_naming_the_dot(tmp_path, use_dirs):
    """It failed with "No module named ...models.my", which did not say why."""
    model_plugin(tmp_path, "my.model", "compat-dotted")
    use_dirs(tmp_path)
    with pytest.raises(PluginImportError) as error:
        registry.models.load("compat-dotted")
    assert str(error.value) == (
        f"the plugin folder {(tmp_path / 'models' / 'my.model').resolve()} failed to import: ImportError: its name "
        f"'my.model' has a '.', which Python reads as a module 'model' of a package 'my'; rename the folder, e.g. to "
        f"'my_model'. Fix that plugin, or remove it from the plugin path")


def test_a_factory_that_returns_none_is_an_error_naming_its_plugin(tmp_path, use_dirs):
    """It ended in a raw AttributeError ('NoneType' object has no attribute 'visual_degrees') inside a benchmark."""
    write(tmp_path / "models" / "forgetful" / "__init__.py", """
        from brainscore_vision import model_registry

        def build():
            model = 'built, but not returned'

        model_registry['compat-forgetful'] = build
        """)
    use_dirs(tmp_path)
    with pytest.raises(BrainScoreError) as error:
        registry.models.load("compat-forgetful")
    assert str(error.value) == (
        f"the model factory of 'compat-forgetful' (the plugin folder {(tmp_path / 'models' / 'forgetful').resolve()}) "
        f"returned None instead of the model it builds; make it return it")


def test_an_unreadable_folder_is_skipped_with_a_warning_naming_it(tmp_path, use_dirs):
    model_plugin(tmp_path, "fine", "compat-fine")
    write(tmp_path / "models" / "syntax" / "__init__.py", "model_registry['x' = 1\n")
    use_dirs(tmp_path)
    with pytest.warns(registry.PluginWarning, match=f"{tmp_path.resolve() / 'models' / 'syntax'} failed to import"):
        identifiers = registry.models.list()
    assert "compat-fine" in identifiers
    with pytest.raises(UnknownIdentifierError) as error:  # what it meant to declare is unknown: the error names it
        registry.models.load("x")
    assert "models/syntax (SyntaxError" in str(error.value)


def test_a_plugin_folder_replaces_a_builtin_which_stays_reachable_under_its_own_name(tmp_path, use_dirs, capsys):
    write(tmp_path / "models" / "mine" / "__init__.py", """
        from brainscore_vision import model_registry
        model_registry['pixels'] = lambda: 'the folder's pixels'
        """.replace("folder's", "folder"))
    use_dirs(tmp_path)
    assert not registry.plugin_conflicts()
    assert registry.models.load("pixels") == "the folder pixels"  # the user's choice wins, as on PATH
    notice = capsys.readouterr().err
    assert str((tmp_path / "models" / "mine").resolve()) in notice and "brainscore.plugins.models.pixels" in notice
    assert "builtin:pixels" in notice
    builtin = registry.models.load("builtin:pixels")
    assert type(builtin).__module__.startswith("brainscore.") and builtin != "the folder pixels"
    assert registry.models.load("pixels") == "the folder pixels"  # still the folder's after the built-in was imported
    assert registry.models.list("builtin:*") == ["builtin:pixels"] and "builtin:pixels" not in registry.models.list()
    source = registry.plugin_source("model", "pixels")
    assert source["folder"] == str((tmp_path / "models" / "mine").resolve())
    assert source["replaces"] == "brainscore.plugins.models.pixels"
    assert registry.plugin_source("model", "builtin:pixels") is None


def test_a_clash_between_two_plugin_folders_is_an_error_naming_both(tmp_path, use_dirs):
    model_plugin(tmp_path / "a", "one", "compat-twice")
    model_plugin(tmp_path / "b", "two", "compat-twice")
    use_dirs(tmp_path / "a", tmp_path / "b")
    with pytest.raises(PluginConflictError, match="declared twice") as error:
        registry.models.load("compat-twice")
    assert "a/models/one" in str(error.value) and "b/models/two" in str(error.value)


def test_identifiers_computed_at_run_time_are_found_by_importing_for_the_listing(tmp_path, use_dirs):
    write(tmp_path / "benchmarks" / "loop" / "__init__.py", """
        from brainscore_vision import benchmark_registry
        for region in ('V4', 'IT'):
            benchmark_registry[f'CompatLoop.{region}-pls'] = lambda region=region: region
        """)
    use_dirs(tmp_path)
    assert {"CompatLoop.V4-pls", "CompatLoop.IT-pls"} <= set(registry.benchmarks.list("CompatLoop*"))
    assert registry.load_benchmark("CompatLoop.IT-pls") == "IT"


def test_one_plugin_folder_and_a_clone_of_the_reference_repository(tmp_path, use_dirs):
    single = model_plugin(tmp_path / "single", "alone", "compat-alone")
    model_plugin(tmp_path / "clone" / "brainscore_vision", "cloned", "compat-cloned")
    use_dirs(single, tmp_path / "clone")
    assert registry.models.load("compat-alone").identifier == "compat-alone"
    assert registry.models.load("compat-cloned").identifier == "compat-cloned"


def test_a_folder_in_no_known_layout_is_skipped_with_a_warning(tmp_path, use_dirs):
    (tmp_path / "empty").mkdir()
    use_dirs(tmp_path / "empty")
    with pytest.warns(registry.PluginWarning, match="neither models/"):
        registry.models.list()


def test_the_reference_registries_are_dict_like_views_of_brainscores(tmp_path, use_dirs):
    import brainscore_vision
    from brainscore_vision import benchmark_registry, data_registry, metric_registry, model_registry

    model_plugin(tmp_path, "viewed", "compat-viewed")
    use_dirs(tmp_path)
    assert "compat-viewed" in model_registry and "pixels" in model_registry and "nope" not in model_registry
    assert len(model_registry) == len(registry.models.list()) and "compat-viewed" in list(model_registry)
    assert model_registry["compat-viewed"]().identifier == "compat-viewed"  # the factory, called as the reference
    with pytest.raises(KeyError):
        model_registry["compat-absent"]
    assert model_registry.get("compat-absent") is None

    def factory():
        return "a benchmark"
    benchmark_registry["CompatRuntime-x"] = factory  # registers into brainscore's own registry
    try:
        assert registry.load_benchmark("CompatRuntime-x") == "a benchmark"
        assert brainscore_vision.load_benchmark("CompatRuntime-x") == "a benchmark"
        assert benchmark_registry["CompatRuntime-x"] is factory
    finally:
        del benchmark_registry["CompatRuntime-x"]
    with pytest.raises(UnknownIdentifierError):
        registry.load_benchmark("CompatRuntime-x")
    with pytest.raises(TypeError, match="factory"):
        data_registry["CompatData"] = 42
    with pytest.raises(PluginConflictError, match="brainscore.plugins.models.pixels"):
        model_registry["pixels"] = lambda: None  # a built-in's identifier, from a test module
    assert metric_registry.kind == "metric"


def test_the_cli_takes_plugin_dir(tmp_path, monkeypatch, capsys):
    from brainscore.cli import main

    model_plugin(tmp_path, "cli_model", "compat-cli")
    monkeypatch.delenv("BRAINSCORE_PLUGIN_DIRS", raising=False)
    try:
        assert main(["list", "models", "compat-cli*", "--plugin-dir", str(tmp_path)]) == 0
        assert capsys.readouterr().out.split() == ["compat-cli"]
        # the folder is passed on to processes started by the command (Dask workers, scoring children)
        assert os.environ["BRAINSCORE_PLUGIN_DIRS"].split(os.pathsep)[0] == str(tmp_path.resolve())
    finally:
        monkeypatch.delenv("BRAINSCORE_PLUGIN_DIRS", raising=False)
        registry._discovery.reset()
    assert main(["list", "models", "--plugin-dir", str(tmp_path / "missing")]) == 2
    assert "does not exist" in capsys.readouterr().err
    registry._discovery.reset()


def test_the_plugin_dirs_setting(tmp_path, monkeypatch):
    from brainscore import config

    model_plugin(tmp_path, "configured", "compat-configured")
    monkeypatch.delenv("BRAINSCORE_PLUGIN_DIRS", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    config.set_value("plugin_dirs", str(tmp_path))
    registry._discovery.reset()
    try:
        assert registry.plugin_dirs() == [tmp_path.resolve()]
        assert "compat-configured" in registry.models.list()
    finally:
        registry._discovery.reset()


def test_a_worker_process_finds_plugin_folder_modules_by_name(tmp_path):
    """A process that did not scan yet (a Dask worker unpickling) imports a plugin folder's module by its name."""
    model_plugin(tmp_path, "pickled", "compat-pickled")
    env = {**os.environ, "BRAINSCORE_PLUGIN_DIRS": str(tmp_path), "PYTHONPATH": str(SRC)}
    code = ("import brainscore.registry as r, importlib; m = r._discovery.index().modules['model']['compat-pickled']; "
            "print(m)")
    module = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
                            ).stdout.strip()
    code = f"import brainscore.registry, importlib; print(importlib.import_module('{module}.model').IMPORTED)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_a_metrics_plugin_folder_registers_metrics_and_ceilings_by_the_reference_names(tmp_path, use_dirs):
    import brainscore_vision

    write(tmp_path / "metrics" / "halves" / "__init__.py", """
        from brainscore_vision import metric_registry
        from .metric import Halves

        metric_registry['compat-halves'] = Halves
        """)
    write(tmp_path / "metrics" / "halves" / "metric.py", """
        class Halves:
            def __init__(self, factor=0.5):
                self.factor = factor

            def __call__(self, value):
                return value * self.factor
        """)
    use_dirs(tmp_path)
    assert "compat-halves" in brainscore_vision.metric_registry
    assert brainscore_vision.load_metric("compat-halves")(3) == 1.5
    assert brainscore_vision.load_metric("compat-halves", factor=2)(3) == 6
    # the reference registers ceilings among its metrics: load_ceiling finds them there too
    assert brainscore_vision.load_ceiling("compat-halves")(4) == 2
    with pytest.raises(UnknownIdentifierError, match="compat-no-such-ceiling"):
        brainscore_vision.load_ceiling("compat-no-such-ceiling")


def test_benchmark_parents_are_read_from_the_reference_code_or_learnt_when_built(tmp_path, use_dirs):
    """The reference gives a benchmark's leaderboard node when building it; the leaderboard needs it beforehand."""
    write(tmp_path / "benchmarks" / "parents" / "__init__.py", """
        from brainscore_vision import benchmark_registry
        from .benchmark import MajajHongITPLS, Custom, computed, _region

        benchmark_registry['CompatParents.IT-pls'] = MajajHongITPLS
        benchmark_registry['CompatParents-custom'] = Custom
        benchmark_registry['CompatParents.V4-lambda'] = lambda: _region(region='V4', suffix='pls')
        benchmark_registry['CompatParents-computed'] = computed
        """)
    write(tmp_path / "benchmarks" / "parents" / "benchmark.py", """
        from types import SimpleNamespace


        def build(identifier, parent):
            return SimpleNamespace(identifier=identifier, parent=parent)


        def _region(region, suffix):  # the seed's MajajHong2015 pattern: parent=region, region bound by the caller
            return build(identifier=f'CompatParents.{region}-{suffix}', parent=region)


        def MajajHongITPLS():
            return _region(region='IT', suffix='pls')


        class Custom:
            def __init__(self):
                self.parent = 'behavior'
                build(identifier='CompatParents-custom', parent='behavior')


        def computed():
            return build(identifier='CompatParents-computed', parent='-'.join(['V1', 'orientation']))
        """)
    use_dirs(tmp_path)
    static = ["CompatParents.IT-pls", "CompatParents-custom", "CompatParents.V4-lambda"]
    assert [registry.benchmarks.metadata(i)["parent"] for i in static] == ["IT", "behavior", "V4"]
    assert not any(m.endswith("benchmarks.parents") for m in sys.modules)  # read without running the plugin
    assert "parent" not in registry.benchmarks.metadata("CompatParents-computed")  # not knowable before a build
    assert registry.load_benchmark("CompatParents-computed").parent == "V1-orientation"
    assert registry.benchmarks.metadata("CompatParents-computed")["parent"] == "V1-orientation"  # learnt


def test_device_is_given_to_a_reference_models_extractor_before_it_runs(tmp_path, use_dirs):
    from brainscore.errors import ValidationError

    model_plugin(tmp_path, "no_device", "compat-no-device")  # its stand-in extractor is no brainscore extractor
    folder = model_plugin(tmp_path, "with_device", "compat-with-device")
    (folder / "model.py").write_text(MODEL_CODE.replace("    identifier = 'stand-in'",
                                                        "    identifier = 'stand-in'\n    device_spec = placed_device = None"))
    use_dirs(tmp_path)
    assert registry.models.load("compat-with-device", device="cuda:1").activations_model.device_spec == "cuda:1"
    with pytest.raises(ValidationError, match="cannot be moved to device 'cuda'"):
        registry.models.load("compat-no-device", device="cuda")
