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


# ---- memory this process may use (issue 24) ---------------------------------------------------------
class _Memory:
    def __init__(self, **values):
        self.__dict__.update(values)


def _fake_machine(monkeypatch, available: int, rss: int):
    import psutil

    monkeypatch.setattr(psutil, "virtual_memory", lambda: _Memory(available=available, total=available * 2))
    monkeypatch.setattr(psutil, "Process", lambda *a: _Memory(memory_info=lambda: _Memory(rss=rss)))


def test_usable_memory_inside_a_dask_worker_is_its_limit_less_its_resident_memory(monkeypatch, tmp_path):
    import sys
    import types

    from brainscore import config

    monkeypatch.setattr(config, "CGROUP_MEMORY_FILES", (str(tmp_path / "none"),))
    _fake_machine(monkeypatch, available=20 << 30, rss=500 << 20)
    assert config.usable_memory() == 20 << 30  # a lone process: the machine's available memory
    fake = types.ModuleType("distributed")
    fake.get_worker = lambda: _Memory(memory_manager=_Memory(memory_limit=int(1.5 * (1 << 30))))
    monkeypatch.setitem(sys.modules, "distributed", fake)
    assert config.usable_memory() == (1536 - 500) << 20  # the worker's 1.5 GiB less 500 MiB resident

    def outside():
        raise ValueError("No worker found")
    fake.get_worker = outside  # distributed imported, but not in a worker task
    assert config.usable_memory() == 20 << 30
    fake.get_worker = lambda: _Memory(memory_limit=2 << 30)
    _fake_machine(monkeypatch, available=3 << 30, rss=3 << 30)  # over its limit: nothing left, never negative
    assert config.usable_memory() == 0


def test_usable_memory_respects_a_cgroup_limit(monkeypatch, tmp_path):
    from brainscore import config

    (tmp_path / "memory.max").write_text("2147483648\n")
    (tmp_path / "memory.current").write_text("1073741824\n")
    monkeypatch.setattr(config, "CGROUP_MEMORY_FILES", (str(tmp_path / "memory.max"),))
    monkeypatch.setattr(config, "CGROUP_MEMORY_USAGE_FILES", (str(tmp_path / "memory.current"),))
    _fake_machine(monkeypatch, available=20 << 30, rss=0)
    assert config.usable_memory() == 1 << 30
    (tmp_path / "memory.max").write_text("max\n")  # no limit set
    assert config.usable_memory() == 20 << 30


def test_a_lone_process_does_not_import_distributed_to_size_its_memory():
    import subprocess
    import sys

    code = "import sys; from brainscore import config; config.usable_memory(); print('distributed' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("text, expected", [("1.5GiB", 3 << 29), ("4GB", 4 * 10**9), ("500 MiB", 500 << 20),
                                            ("2000", 2000)])
def test_memory_sizes_parse_to_bytes(text, expected):
    from brainscore import config

    assert config.parse_bytes(text) == expected


@pytest.mark.parametrize("text", ["", "1.5 parsecs", "-2GiB", "0"])
def test_a_bad_memory_size_is_a_clear_error(text):
    from brainscore import config

    with pytest.raises(ValidationError, match="memory size such as 1.5GiB"):
        config.parse_bytes(text)


def test_every_bad_setting_is_one_clear_error_before_any_command_runs(xdg, tmp_path, capsys):
    """`data_mirror = 5`, `offline = "maybe"` and unknown keys were accepted silently (the bad offline value surfaced
    only when a command reached it); now every command but `config` stops first, naming each."""
    from brainscore.cli import main

    file = config.config_file()
    file.parent.mkdir(parents=True)
    file.write_text('data_mirror = 5\noffline = "maybe"\ndata_mirrors = ["/x"]\n')
    assert main(["list", "models"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.count("\n") == 1
    assert out.err == (
        f"error: the settings cannot be used: {file} sets 'data_mirrors', which is not a setting (did you mean "
        f"'data_mirror'?); remove it (`brainscore config unset data_mirrors`; settings: {', '.join(config.SETTINGS)}); "
        f"{file}: data_mirror must be a folder or a list of folders (strings), got 5; {file}: offline must be true or "
        f"false, got 'maybe'. Nothing was run; fix them (`brainscore config show` lists the settings)\n")
    assert main(["config", "show"]) == 2  # `config` still runs: it shows what is wrong and repairs it
    shown = capsys.readouterr().out
    assert "offline              (invalid: offline must be true or false, got 'maybe')" in shown
    assert f"error: {file}: data_mirror must be a folder or a list of folders (strings), got 5" in shown
    for key in ("data_mirrors", "offline"):
        assert main(["config", "unset", key]) == 0
    file.write_text(f'data_mirror = ["{tmp_path / "no-such-mirror"}"]\n')
    assert main(["config", "path"]) == 0 and config.check() == [
        f"{file}: data_mirror names {tmp_path / 'no-such-mirror'}, which is not a folder"]


def test_a_bad_torch_threads_stops_score_before_anything_is_recorded(xdg, tmp_path, monkeypatch, capsys):
    """A bad torch_threads was met while scoring: the failure went into the results database as a failed record."""
    from brainscore.cli import main

    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("BRAINSCORE_TORCH_THREADS", "abc")
    database = tmp_path / "results.sqlite"
    assert main(["score", "--model", "pixels", "--benchmark", "Kiani2007.IT-rdm", "--bootstrap", "0",
                 "--db", f"sqlite:///{database}"]) == 2
    assert capsys.readouterr().err == (
        "error: the settings cannot be used: BRAINSCORE_TORCH_THREADS: torch_threads must be a whole number >= 1, "
        "got 'abc'. Nothing was run; fix them (`brainscore config show` lists the settings)\n")
    assert not database.exists() and not (tmp_path / "home").exists()


def test_the_website_home_is_the_configured_home(xdg, tmp_path):
    """The website's home (its secret key, its stimuli, its submissions) is config.home(): the settings file's
    ``home`` counts there as for the command line and the sandbox (web/site.py read only $BRAINSCORE_HOME)."""
    from brainscore.web import site

    config.set_value("home", str(tmp_path / "configured"))
    assert site.home() == config.home() == tmp_path / "configured"
    assert (tmp_path / "configured").is_dir()  # created, as before
