"""Registry: static discovery, lazy import, close-match errors, patterns."""
import sys

import pytest

import brainscore
from brainscore import registry
from brainscore.errors import UnknownIdentifierError


def test_lists_cowley_identifiers_with_pattern():
    assert brainscore.list_datasets("Cowley2026.*") == ["Cowley2026.190923", "Cowley2026.201025",
                                                        "Cowley2026.210224", "Cowley2026.210325"]
    assert "Cowley2026.210325.V4-pls" in brainscore.list_benchmarks("Cowley*")
    assert brainscore.list_benchmarks("NoSuchStudy*") == []


def test_unknown_identifier_lists_closest():
    with pytest.raises(UnknownIdentifierError) as info:
        brainscore.load_benchmark("Cowley2026.210325.V4-psl")
    message = str(info.value)
    assert "Cowley2026.210325.V4-pls" in message
    assert "list_benchmarks" in message
    with pytest.raises(KeyError):  # also a KeyError for callers that catch that
        brainscore.load_dataset("Cowly2026.210325")


def test_discovery_parses_without_importing(tmp_path, monkeypatch):
    plugin = tmp_path / "metrics" / "toy"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text(
        "from brainscore.registry import register_metric\n"
        "IMPORTED = True\n"
        "@register_metric('toy_metric')\n"
        "def _toy():\n    return 42\n"
        "for name in ['toy_a', 'toy_b']:\n    register_metric(name, lambda: name)\n")
    monkeypatch.setattr(registry, "_PLUGIN_ROOT", tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path.parent))
    discovery = registry._Discovery()
    monkeypatch.setattr(registry, "_discovery", discovery)
    index = discovery.index()
    assert index.modules["metric"]["toy_metric"] == "brainscore.plugins.metrics.toy"
    assert index.dynamic == {"brainscore.plugins.metrics.toy"}  # the loop registers computed names
    assert "brainscore.plugins.metrics.toy" not in sys.modules



def test_declaring_plugin_names_the_module_from_the_static_scan_without_importing_it():
    assert registry.declaring_plugin("benchmark", "Cowley2026.210325.V4-pls") == "brainscore.plugins.benchmarks.cowley2026"
    assert registry.declaring_plugin("metric", "pls") == "brainscore.plugins.metrics.regression_correlation"
    assert registry.declaring_plugin("model", "no-such-model") is None
    with pytest.raises(ValueError, match="unknown kind 'models'"):
        registry.declaring_plugin("models", "pixels")

def test_duplicate_registration_by_another_factory_is_refused():
    reg = registry.Registry("metric")
    reg.register("x", lambda: 1)
    with pytest.raises(ValueError, match="already registered"):
        reg.register("x", lambda: 2)
