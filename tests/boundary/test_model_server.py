"""The model server's start and its failures, as the trusted side sees them (issue 32): each is a clear error in the
model author's terms, raised before anything is scored."""
from __future__ import annotations

import os

import pytest

from brainscore import registry
from brainscore.boundary import Limits, ModelError, ModelServer
from brainscore.boundary.launcher import isolation
from brainscore.errors import ValidationError

LIMITS = Limits(memory=4 * 1024**3, wall=300, disk=256 * 1024**2)


@pytest.fixture
def plugin_dir(tmp_path, monkeypatch):
    """A plugin folder with a model whose factory raises."""
    root = tmp_path / "plugins"
    (root / "models" / "broken_factory").mkdir(parents=True)
    (root / "models" / "broken_factory" / "__init__.py").write_text(
        'from brainscore.registry import register_model\n\n\n@register_model("broken-factory")\ndef _net():\n'
        '    raise RuntimeError("the weights file is corrupt")\n')
    root.chmod(0o755)
    monkeypatch.setenv("BRAINSCORE_PLUGIN_DIRS", str(root))
    registry._discovery.reset()
    yield root
    monkeypatch.undo()
    registry._discovery.reset()


def test_a_model_that_fails_to_load_says_why(plugin_dir):
    with pytest.raises(ModelError, match="the model raised RuntimeError while loading the model: the weights file is "
                                         "corrupt") as failed:
        with ModelServer("broken-factory", LIMITS) as server:
            server.model.visual_degrees()  # the hello is awaited at the first call that needs it
    assert failed.value.kind == "RuntimeError"


def test_an_unknown_model_is_named_as_such(plugin_dir):
    with pytest.raises(ModelError, match="UnknownIdentifierError while loading the model") as failed:
        with ModelServer("no-such-model-anywhere", LIMITS) as server:
            server.model.visual_degrees()
    assert failed.value.kind == "UnknownIdentifierError"


@pytest.mark.skipif(isolation() != "root", reason="as root the model server runs as a user of its own")
def test_a_plugin_folder_the_server_cannot_enter_is_a_clear_error(plugin_dir):
    plugin_dir.chmod(0o700)
    try:
        with pytest.raises(ValidationError, match=r"cannot be read by the sandboxed model server, which runs as a user "
                                                  r"of its own: it has mode 0o700; allow others in \(chmod o\+rx"):
            with ModelServer("broken-factory", LIMITS):
                pass
    finally:
        plugin_dir.chmod(0o755)


def test_score_sandbox_records_no_failure_for_an_unknown_model(plugin_dir, tmp_path, capsys):
    """``brainscore score --sandbox`` of a name no plugin registers: the command's problem, not a result."""
    from brainscore.cli import main
    from brainscore.results import Database

    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    assert main(["score", "--model", "no-such-model-anywhere", "--benchmark", "Kriegeskorte2008.IT-rdm", "--sandbox",
                 "--db", url]) == 2
    assert "UnknownIdentifierError" in capsys.readouterr().err
    assert Database(url).scores("no-such-model-anywhere", include_failed=True) == []
    assert os.environ["BRAINSCORE_PLUGIN_DIRS"] == str(plugin_dir)  # --sandbox never adds folders to this process
