"""``brainscore score`` and ``brainscore run`` key a pair alike, so each reuses the other's record (issue 29).

Before, ``brainscore run`` re-scored a pair that ``brainscore score`` had just recorded ("0 already
recorded", 148 s): ``score`` recorded no run key, and ``run`` looked for one.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from brainscore.cli import main
from brainscore.results import Database

REPO = Path(__file__).resolve().parents[2]
FIRST, SECOND = "Kriegeskorte2008.IT-rdm", "Kiani2007.IT-rdm"


def test_run_reuses_what_score_recorded_and_score_reuses_what_run_recorded(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    assert main(["score", "--model", "pixels", "--benchmark", FIRST, "--db", url, "--quiet"]) == 0
    capsys.readouterr()
    scored = Database(url).find_score("pixels", FIRST)
    environment = {**os.environ, "BRAINSCORE_HOME": str(tmp_path),  # the run's database: tmp_path/results.sqlite
                   "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-m", "brainscore", "run", "--models", "pixels", "--benchmarks",
                          f"{FIRST},{SECOND}", "--workers", "1", "--json"],
                         capture_output=True, text=True, env=environment, timeout=900)
    assert run.returncode == 0, run.stderr
    lines = {line["benchmark"]: line for line in map(json.loads, run.stdout.splitlines())}
    assert lines[FIRST]["status"] == "skipped" and lines[FIRST]["score"] == scored.score  # score -> run
    assert lines[SECOND]["status"] == "done"
    assert "2 pairs: 1 scored, 1 already recorded, 0 failed" in run.stderr
    # its progress in a log: each task's start and end (per pair and stage), the counts at the end
    assert re.search(rf"\[\d\d:\d\d:\d\d\] score pixels {SECOND}: started\n", run.stderr)
    assert re.search(rf"\[\d\d:\d\d:\d\d\] score pixels {SECOND}: done in \d+\.\d s\n", run.stderr)
    assert re.search(r"\| score 1/1, \d+ s\n", run.stderr)
    # the run -> score direction: the pair the run recorded is shown from its record, not scored again
    assert main(["score", "--model", "pixels", "--benchmark", SECOND, "--db", url]) == 0
    out = capsys.readouterr().out.splitlines()
    recorded = Database(url).find_score("pixels", SECOND)
    assert out[0] == f"score {lines[SECOND]['score']:.4f} = raw score (no ceiling)"  # Kiani2007: no ceiling
    assert out[-1].startswith(f"reused record #{recorded.id} in {url} (the same model, benchmark version, settings "
                              f"and code); --rerun scores it again")
    assert len(Database(url).scores("pixels")) == 2  # nothing recorded twice
    # --rerun scores again; another bootstrap is another computation
    assert main(["score", "--model", "pixels", "--benchmark", SECOND, "--db", url, "--rerun", "--quiet"]) == 0
    assert main(["score", "--model", "pixels", "--benchmark", SECOND, "--db", url, "--bootstrap", "10",
                 "--quiet"]) == 0
    assert "recorded as #" in capsys.readouterr().out
    assert len(Database(url).scores("pixels", SECOND)) == 3


def test_a_pattern_reuses_recorded_pairs(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    assert main(["score", "--model", "pixels", "--benchmark", FIRST, "--db", url, "--quiet"]) == 0
    assert main(["score", "--model", "pixels", "--benchmark", f"{FIRST},{SECOND}", "--db", url, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "2 pairs: 1 scored, 1 already recorded, 0 failed" in out
    assert main(["score", "--model", "pixels", "--benchmark", SECOND, "--db", url, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["reused"] is True and printed["record"] == Database(url).find_score("pixels", SECOND).id
