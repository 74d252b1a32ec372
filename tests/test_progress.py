"""Progress on stderr: a bar in a terminal, start and end lines in a log, silence for quick steps (issue 29)."""
from __future__ import annotations

import io
import re
import time

import pytest

import brainscore
from brainscore import progress

STAMP = r"\[\d\d:\d\d:\d\d\] "


class Terminal(io.StringIO):
    def isatty(self):
        return True


def _wait_for(stream, text, seconds=10.0):
    deadline = time.monotonic() + seconds
    while text not in stream.getvalue() and time.monotonic() < deadline:
        time.sleep(0.05)
    return stream.getvalue()


def test_a_log_gets_a_start_line_while_a_slow_step_runs_and_an_end_line_with_its_duration():
    """Before: one line after the step ended, nothing while it ran (a 30-minute layer selection was silent)."""
    log = io.StringIO()
    with progress.stage("V4 layer selection", total=3, unit="layer", delay=0.2, stream=log) as step:
        during = _wait_for(log, "started")
        for _ in range(3):
            step.update()
    assert re.fullmatch(STAMP + r"V4 layer selection: started, 0/3 layers\n", during)
    lines = log.getvalue().splitlines()
    assert len(lines) == 2 and re.fullmatch(STAMP + r"V4 layer selection: done, 3 layers in \d+\.\d s", lines[1])
    quiet = io.StringIO()
    with progress.stage("quick", delay=5.0, stream=quiet):
        pass
    assert quiet.getvalue() == ""  # a quick step stays silent


def test_a_long_step_in_a_log_says_how_far_it_is_and_how_long_is_left(monkeypatch):
    monkeypatch.setattr(progress, "LOG_EVERY_S", 0.0)
    log = io.StringIO()
    with progress.stage("activations", total=4, unit="image", delay=0.0, stream=log) as step:
        step.update(2)
        time.sleep(0.3)
        _wait_for(log, "2/4")
    middle = [line for line in log.getvalue().splitlines() if "2/4 images in" in line]
    assert middle and re.search(r"2/4 images in \d+ s, about \d+ s left$", middle[0])


def test_a_failed_step_says_so_and_the_error_passes_through():
    log = io.StringIO()
    with pytest.raises(ValueError, match="bad data"):
        with progress.stage("ceiling of X", delay=0.0, stream=log):
            raise ValueError("bad data")
    assert re.fullmatch(STAMP + r"ceiling of X: failed \(ValueError\) after \d+\.\d s", log.getvalue().splitlines()[-1])


def test_a_terminal_gets_a_bar_while_the_step_runs_even_without_units():
    """Before: tqdm drew its bar only at an update after the delay: a step without units showed nothing."""
    tty = Terminal()
    with progress.stage("ceiling of X", delay=0.1, stream=tty):
        during = _wait_for(tty, "ceiling of X: 00:0")
    assert "ceiling of X: 00:0" in during
    with progress.stage("layers", total=4, unit="layer", delay=0.0, stream=tty) as step:
        step.update(2)
        shown = _wait_for(tty, "2/4 [")
    assert "layers:  50%" in shown and "2/4 [" in shown  # how far, and (after the bracket) the time left


def test_quiet_silences_every_stage_and_track_counts(monkeypatch):
    monkeypatch.setenv("BRAINSCORE_PROGRESS", "1")  # restored after the test
    progress.silence()
    log = io.StringIO()
    with progress.stage("x", delay=0.0, stream=log) as step:
        step.update(3)
    assert log.getvalue() == "" and step.done == 3
    monkeypatch.setenv("BRAINSCORE_PROGRESS", "1")
    log = io.StringIO()
    assert list(progress.track(["a", "b"], "two", unit="file", delay=0.0, stream=log)) == ["a", "b"]
    assert log.getvalue().splitlines()[-1].endswith("two: done, 2 files in 0.0 s")


def test_a_broken_stream_never_stops_the_work():
    closed = io.StringIO()
    closed.close()
    with progress.stage("x", delay=0.0, stream=closed) as step:
        step.update()
    assert step.done == 1


def test_score_reports_each_slow_step(monkeypatch, capsys, tmp_path):
    """Every step of a score reports, from the layer that does it: data, screen, activations, metric, bootstrap.

    A home of its own: with the session's cache, activations and ceiling computed by an earlier test are read, not
    computed, and report nothing."""
    monkeypatch.setattr(progress, "DELAY_S", 0.0)  # every stage counts as slow here
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    brainscore.load_stimulus_set("Kriegeskorte2008")
    capsys.readouterr()
    score = brainscore.score("pixels", "Kriegeskorte2008.IT-rdm")
    assert 0 < float(score) < 1
    err = capsys.readouterr().err
    for step in ("loading the model pixels", "scoring pixels on Kriegeskorte2008.IT-rdm",
                 "pixels: activations of 1 layer, 92 images",
                 "Kriegeskorte2008.IT-rdm: the model's RDM of 92 stimuli", "ceiling of Kriegeskorte2008.IT-rdm",
                 "Kriegeskorte2008.IT-rdm: bootstrap interval, 1000 resamples (seed 0)"):
        assert re.search(STAMP + re.escape(step) + r".*: started", err), step
        assert re.search(STAMP + re.escape(step) + r".*: done.* in \d+\.\d s", err), step
    assert re.search(r"comparing the model's RDM: done, 8 RDMs in ", err)


def test_layer_selection_reports_its_candidates(tmp_path, monkeypatch, capsys):
    from brainscore.models.commitment import ModelCommitment
    from brainscore.models.extraction import ActivationsExtractor
    from brainscore.models.preprocessing import Preprocessing
    from model_fixtures import TinyNet, make_stimuli

    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    stimuli = make_stimuli(tmp_path / "images", 6)

    def scorer(region, candidates):
        features = candidates.look_at_layers(stimuli)
        return {layer: float(features[layer].values.std()) for layer in candidates.layers}
    scorer.identifier = "progress-test-scorer"
    extractor = ActivationsExtractor(TinyNet(), "tiny", Preprocessing("imagenet", 20), batch_size=4)
    model = ModelCommitment("tiny", extractor, ["features.0", "features.1"], layer_scorer=scorer)
    model.layer_for("V4")
    err = capsys.readouterr().err
    assert re.search(STAMP + r"tiny: layer selection for V4 among 2 candidate layers: started", err)
    assert re.search(STAMP + r"tiny: activations of 2 layers, 6 images in batches of 4: done, 6 images in ", err)
    assert re.search(STAMP + r"tiny: principal components of 2 candidate layers: done, 2 layers in ", err)
    assert re.search(STAMP + r"tiny: layer selection for V4 among 2 candidate layers: done in ", err)


def test_packaging_reports_each_file(tmp_path, monkeypatch, capsys):
    from brainscore.data.packaging import package_stimulus_set
    from model_fixtures import make_stimuli

    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    package_stimulus_set(make_stimuli(tmp_path / "images", 5), "progress-test", tmp_path / "out")
    err = capsys.readouterr().err
    assert re.search(STAMP + r"checking stimulus set progress-test \(opening every image\): done in ", err)
    assert re.search(STAMP + r"packaging stimulus_progress-test.zip: done, 5 files in ", err)
    from brainscore.caching import file_sha256
    from brainscore.data.store import verify

    packaged = tmp_path / "out" / "stimulus_progress-test.zip"
    verify(packaged, file_sha256(packaged), what="packaged zip", force=True)  # data verification reports too
    size = packaged.stat().st_size
    assert re.search(STAMP + r"verifying packaged zip: done, [\d.]+ kB in ", capsys.readouterr().err) and size > 1000


@pytest.mark.parametrize("name", ["stage", "Stage", "enabled", "silence", "track"])
def test_documented(name):
    assert getattr(progress, name).__doc__


def test_quiet_on_the_command_line_shows_the_result_alone_and_leaves_the_setting(monkeypatch, capsys):
    import os

    from brainscore.cli import main

    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    monkeypatch.delenv("BRAINSCORE_PROGRESS", raising=False)
    command = ["score", "--model", "pixels", "--benchmark", "Kriegeskorte2008.IT-rdm", "--bootstrap", "10",
               "--no-record"]
    assert main([*command, "--quiet"]) == 0
    quiet = capsys.readouterr()
    assert quiet.err == "" and quiet.out.startswith("score ") and "BRAINSCORE_PROGRESS" not in os.environ
    assert main(command) == 0
    shown = capsys.readouterr()
    assert shown.out == quiet.out.replace(re.search(r" in \d+\.\d s\n", quiet.out).group(0),
                                          re.search(r" in \d+\.\d s\n", shown.out).group(0))
    assert re.search(STAMP + r"scoring pixels on Kriegeskorte2008.IT-rdm: done in ", shown.err)
