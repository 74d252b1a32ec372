"""User settings: environment first, then the config file, for both the API and the command line."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from brainscore import config
from brainscore.errors import ValidationError

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture
def xdg(tmp_path, monkeypatch):
    """A private configuration folder, and no brainscore variables from the environment."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for setting in config.SETTINGS.values():
        monkeypatch.delenv(setting.env, raising=False)
    return tmp_path / "xdg"


def test_file_location_honours_xdg(xdg, monkeypatch):
    assert config.config_file() == xdg / "brainscore" / "config.toml"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert config.config_file() == Path.home() / ".config" / "brainscore" / "config.toml"


def test_set_then_read_and_environment_overrides(xdg, tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    assert config.data_mirrors() == [] and config.offline() is False
    monkeypatch.chdir(tmp_path)
    path = config.set_value("data_mirror", "mirror")  # relative: stored absolute
    assert path == xdg / "brainscore" / "config.toml"
    assert 'data_mirror = ["' + str(mirror) + '"]' in path.read_text()
    assert config.data_mirrors() == [mirror]
    assert config.get("data_mirror") == ([str(mirror)], str(path))
    config.set_value("offline", "true")
    config.set_value("home", str(tmp_path / "h"))
    assert config.offline() is True and config.home() == tmp_path / "h"
    monkeypatch.setenv("BRAINSCORE_DATA_MIRROR", f"/a{os.pathsep}/b")
    monkeypatch.setenv("BRAINSCORE_OFFLINE", "0")
    assert config.data_mirrors() == [Path("/a"), Path("/b")] and config.offline() is False
    assert config.get("offline")[1] == "environment (BRAINSCORE_OFFLINE)"
    config.unset("offline")
    monkeypatch.delenv("BRAINSCORE_OFFLINE")
    assert config.offline() is False and "offline" not in config.read_file()


def test_bad_values_and_files_say_what_is_wrong(xdg):
    with pytest.raises(ValidationError, match="unknown setting 'mirror'.*data_mirror"):
        config.set_value("mirror", "/x")
    with pytest.raises(ValidationError, match="offline must be true or false"):
        config.set_value("offline", "maybe")
    config.config_file().parent.mkdir(parents=True)
    config.config_file().write_text("data_mirror = [unclosed\n")
    with pytest.raises(ValidationError, match="not valid TOML"):
        config.data_mirrors()


def _run(args, env, code="from brainscore.cli import main; raise SystemExit(main())"):
    return subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True)


def test_cli_set_is_read_by_a_fresh_python_session(xdg, tmp_path, shared_data):
    """The README's promise: set the mirror once, and the API finds the data in a new session."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAINSCORE_")}
    env.update(XDG_CONFIG_HOME=str(xdg), PYTHONPATH=str(SRC), BRAINSCORE_HOME=str(tmp_path / "home"),
               BRAINSCORE_OFFLINE="1")
    done = _run(["config", "set", "data_mirror", str(shared_data)], env)
    assert done.returncode == 0, done.stderr
    shown = _run(["config", "show"], env)
    assert f"data_mirror          {shared_data}  [{xdg / 'brainscore' / 'config.toml'}]" in shown.stdout
    assert "offline              true  [environment (BRAINSCORE_OFFLINE)]" in shown.stdout
    code = ("import brainscore; s = brainscore.load_stimulus_set('Kriegeskorte2008'); "
            "print(len(s), s.get_stimulus(s['stimulus_id'].iloc[0]).is_file())")
    loaded = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert loaded.stdout.split() == ["92", "True"], loaded.stderr


def test_torch_threads_default_is_the_usable_cores_and_the_setting_wins(xdg, monkeypatch):
    monkeypatch.delenv("BRAINSCORE_TORCH_THREADS", raising=False)
    assert config.torch_threads() == len(os.sched_getaffinity(0))
    path = config.set_value("torch_threads", "3")
    assert "torch_threads = 3" in path.read_text() and config.torch_threads() == 3
    assert config.get("torch_threads") == (3, str(path))
    monkeypatch.setenv("BRAINSCORE_TORCH_THREADS", "1")
    assert config.torch_threads() == 1
    for bad in ("0", "two", "1.5", "-2"):
        monkeypatch.setenv("BRAINSCORE_TORCH_THREADS", bad)
        with pytest.raises(ValidationError, match="torch_threads must be a whole number >= 1"):
            config.torch_threads()
