"""The worked migration of docs/coming_from_brain_score.md runs as written: its plugin files, copied verbatim
into a plugin folder, are listed without being imported and load with the layers of their json."""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from brainscore import registry

DOC = Path(__file__).resolve().parents[2] / "docs" / "coming_from_brain_score.md"


def blocks() -> dict[str, str]:
    """The doc's python blocks that start with a ``# <file name>`` comment, by file name."""
    found = {}
    for block in re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S):
        first, _, _ = block.partition("\n")
        if re.fullmatch(r"# [a-z_]+\.py", first.strip()):
            found[first.strip()[2:]] = block
    return found


def test_the_worked_migration_runs_as_written(tmp_path, monkeypatch, capsys):
    from brainscore.cli import main

    files = blocks()
    assert sorted(files) == ["__init__.py", "model.py"]
    folder = tmp_path / "my_plugins" / "models" / "mymodel"
    (folder / "region_layer_map").mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    mapping = json.loads(re.search(r"`region_layer_map/mymodel\.json`: `(\{.*?\})`", DOC.read_text()).group(1))
    (folder / "region_layer_map" / "mymodel.json").write_text(json.dumps(mapping))

    monkeypatch.setenv("BRAINSCORE_PLUGIN_DIRS", str(tmp_path / "my_plugins"))
    registry._discovery.reset()
    try:
        assert main(["list", "models", "my*"]) == 0
        assert capsys.readouterr().out.split() == ["mymodel"]
        module = registry._discovery.index().modules["model"]["mymodel"]
        assert module not in sys.modules  # listed without running the plugin
        import brainscore_vision

        model = brainscore_vision.load_model("mymodel")
        assert model.region_layer_map == {"V4": "features.5", "IT": "features.8"} == mapping
        assert model.layers == ["features.2", "features.5", "features.8", "classifier.2"]
        assert dict(model.activations_model.model.named_modules()).keys() >= set(model.layers)
    finally:
        monkeypatch.delenv("BRAINSCORE_PLUGIN_DIRS")
        registry._discovery.reset()
    assert os.environ.get("BRAINSCORE_PLUGIN_DIRS") is None
