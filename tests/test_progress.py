"""Progress on stderr: a bar in a terminal, one line per stage otherwise, silence for quick steps."""
from __future__ import annotations

import io
import time

import pytest

import brainscore
from brainscore import progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_log_gets_one_line_per_slow_stage():
    log = io.StringIO()
    with progress.stage("ceiling of X", unit="split", delay=0.0, stream=log) as step:
        for _ in range(3):
            step.update()
    assert log.getvalue().startswith("ceiling of X: 3 splits in ") and log.getvalue().count("\n") == 1
    quiet = io.StringIO()
    with progress.stage("quick", delay=5.0, stream=quiet):
        pass
    assert quiet.getvalue() == ""


def test_terminal_gets_a_bar_and_the_switch_silences_it(monkeypatch):
    tty = Terminal()
    with progress.stage("layers", total=4, unit="layer", delay=0.0, stream=tty) as step:
        for _ in range(4):
            step.update()
            time.sleep(0.01)
    assert "layers:" in tty.getvalue() and "/4 [" in tty.getvalue()  # a tqdm bar with its total
    monkeypatch.setenv("BRAINSCORE_PROGRESS", "0")
    log = io.StringIO()
    with progress.stage("x", delay=0.0, stream=log):
        pass
    assert log.getvalue() == ""


def test_score_reports_its_slow_stages(monkeypatch, capsys):
    """Kriegeskorte's RSA: the job, its ceiling and the RDM comparisons each report (issue 15, item 7)."""
    monkeypatch.setattr(progress, "DELAY_S", 0.0)  # every stage counts as slow here
    score = brainscore.score("pixels", "Kriegeskorte2008.IT-rdm")
    assert 0 < float(score) < 1
    err = capsys.readouterr().err
    assert "scoring pixels on Kriegeskorte2008.IT-rdm: in " in err
    assert "Kriegeskorte2008.IT-rdm: comparing the model's RDM: " in err and " RDMs in " in err


@pytest.mark.parametrize("name", ["stage", "Stage", "enabled"])
def test_documented(name):
    assert getattr(progress, name).__doc__
