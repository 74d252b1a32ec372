"""``brainscore run`` from the shell: JSON lines as pairs finish, failures with their logs, a killed run resumes."""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODELS = "tiny-seeded,pixels"
BENCHMARKS = "Kriegeskorte2008.IT-rdm,Geirhos2021edge-top1"


def command(*extra):
    return [sys.executable, "-m", "brainscore", "run", "--preload", "runner_helpers", "--models", MODELS,
            "--benchmarks", BENCHMARKS, "--workers", "2", "--json", *extra]


@pytest.fixture
def environment(tmp_path):
    """A fresh home (cache and records); the worktree's code and the test plugin on the path."""
    return {**os.environ, "BRAINSCORE_HOME": str(tmp_path),
            "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO / "tests"), os.environ.get("PYTHONPATH", "")])}


def recorded(home) -> list[dict]:
    """What the run recorded: the results database under ``home`` (the runner's records once it is installed)."""
    from brainscore.results import Database

    path = Path(home) / "results.sqlite"
    if not path.is_file():
        return []
    database = Database(f"sqlite:///{path}")
    try:
        return [{"model": r.model, "benchmark": r.benchmark, "status": r.status}
                for r in database.scores(include_failed=True)]
    finally:
        database.close()


def test_a_killed_run_resumes_with_only_the_missing_pairs(environment):
    environment["BRAINSCORE_TEST_FORWARD_SLEEP"] = "0.2"  # keep the rest of the run busy when the first pair ends
    process = subprocess.Popen(command("--no-progress"), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               env=environment, text=True, start_new_session=True)
    try:
        first = json.loads(process.stdout.readline())
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # the whole run: the command, its scheduler and workers
        process.wait()
    before = recorded(environment["BRAINSCORE_HOME"])
    assert {(first["model"], first["benchmark"])} <= {(r["model"], r["benchmark"]) for r in before}
    done_before = {(r["model"], r["benchmark"]) for r in before if r["status"] == "done"}
    assert len(before) < 4, "the run finished before it was killed"

    environment["BRAINSCORE_TEST_FORWARD_SLEEP"] = "0"
    second = subprocess.run(command(), capture_output=True, env=environment, text=True, timeout=900)
    lines = [json.loads(line) for line in second.stdout.splitlines()]
    assert len(lines) == 4
    by_pair = {(line["model"], line["benchmark"]): line for line in lines}
    assert {pair for pair, line in by_pair.items() if line["status"] == "skipped"} == done_before
    computed = [pair for pair, line in by_pair.items() if line["status"] != "skipped"]
    assert len(computed) == 4 - len(done_before)
    after = recorded(environment["BRAINSCORE_HOME"])
    assert len(after) == len(before) + len(computed)  # only what was missing was done (and recorded)
    done = [(r["model"], r["benchmark"]) for r in after if r["status"] == "done"]
    assert len(done) == len(set(done)) == 3  # no pair scored twice

    # pixels have no ImageNet logits: the pair fails, the exit code says so, the log is printed
    assert by_pair[("pixels", "Geirhos2021edge-top1")]["status"] == "failed"
    assert second.returncode == 1
    assert "FAILED pixels on Geirhos2021edge-top1: ValidationError" in second.stderr
    assert "Traceback (most recent call last)" in second.stderr
    # the summary table goes to stderr with --json, so stdout stays one JSON object per line
    assert "4 pairs: " in second.stderr and "1 failed" in second.stderr
    for line in lines:
        assert {"model", "benchmark", "score", "raw", "ceiling", "error", "status"} <= set(line)


def test_the_cluster_names_are_the_runners_one_list(monkeypatch, capsys):
    """``--cluster`` accepts, lists and refuses by :data:`brainscore.runner.clusters.JOBQUEUE`, the one list of
    batch systems (issue 38): a system added there is one the command takes, with no second list to update."""
    from brainscore.cli import build_parser
    from brainscore.runner import clusters

    monkeypatch.setitem(clusters.JOBQUEUE, "htcondor", "HTCondorCluster")
    parser = build_parser()
    run = ["run", "--models", "pixels", "--benchmarks", "*"]
    assert parser.parse_args([*run, "--cluster", "htcondor"]).cluster == "htcondor"
    with pytest.raises(SystemExit) as refused:
        parser.parse_args([*run, "--cluster", "torque"])
    assert refused.value.code == 2
    assert ("argument --cluster: invalid choice: 'torque' (choose from 'slurm', 'pbs', 'sge', 'lsf', 'htcondor')"
            in capsys.readouterr().err)
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "--help"])
    assert "SYSTEM is one of slurm, pbs, sge, lsf, htcondor" in " ".join(capsys.readouterr().out.split())
