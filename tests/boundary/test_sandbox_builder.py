"""One sandbox builder (issue 38): ``brainscore score --sandbox`` (``ModelServer``) and the website's queue
(``web/pairs.py``) put a model server's sandbox together with :func:`brainscore.boundary.process.sandbox`, hiding
the same folders (:func:`~brainscore.boundary.process.hidden_paths`). Fast: no process is started."""
from __future__ import annotations

from pathlib import Path

import pytest

from brainscore import config
from brainscore.boundary import launcher, process
from brainscore.boundary.process import Limits, ModelServer, hidden_paths, sandbox


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def test_the_sandbox_hides_home_configuration_and_the_callers_folders(home, tmp_path):
    submissions = tmp_path / "submissions"
    site, stimuli, resources = submissions / "7" / "site", tmp_path / "work" / "stimuli", tmp_path / "resources"
    for folder in (site, stimuli, resources):
        folder.mkdir(parents=True)
    limits = Limits(readable=(str(tmp_path), str(home), str(tmp_path / "weights")))
    box = sandbox("/usr/bin/python3", tmp_path / "work", limits, uid=launcher.UID_BASE + 3, resources=resources,
                  shown=(site, stimuli, resources), hidden=(submissions,), python_path=(site,))
    readable = [Path(p).resolve() for p in box.spec.readable]
    assert hidden_paths(submissions) == [submissions, config.home(), config.config_file().parent, Path.home()]
    assert tmp_path.resolve() not in readable and home.resolve() not in readable  # a folder holding the home
    assert (tmp_path / "weights").resolve() in readable  # a weights folder beside it stays visible
    assert {site.resolve(), stimuli.resolve(), resources.resolve()} <= set(readable)  # its own, though hidden
    assert box.env["BRAINSCORE_HOME"] == str(box.home) and box.home.is_relative_to(tmp_path / "work")
    assert box.env["BRAINSCORE_DATA_MIRROR"] == str(resources) and box.env["BRAINSCORE_OFFLINE"] == "1"
    assert box.env["PYTHONPATH"].split(":")[0] == str(site)
    assert box.spec.uid == box.spec.gid == launcher.UID_BASE + 3 and box.spec.memory == limits.memory
    assert box.spec.masked == process.masked_paths(box.spec.readable)


class Built(Exception):
    """Raised by the recording builder: the sandbox was asked for, nothing is started."""


def test_the_command_line_and_the_website_use_the_one_builder(home, monkeypatch, tmp_path):
    from brainscore.web import pairs

    assert pairs.sandbox is process.sandbox  # the website's queue builds through it
    asked = []

    def recording(*args, **kwargs):
        asked.append((args, kwargs))
        raise Built

    monkeypatch.setattr(process, "sandbox", recording)
    monkeypatch.setattr(process, "prepare_resources", lambda folder: folder)
    with pytest.raises(Built):
        ModelServer("alexnet", Limits()).__enter__()
    (python, workdir, limits), kwargs = asked[0]
    assert workdir.parent.parent == home / "sandbox" and not kwargs.get("hidden")  # hidden_paths() alone, as the site
