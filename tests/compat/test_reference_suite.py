"""The reference's own tests, unchanged, pass against brainscore (issue 31): ``tools/reference_suite.py``.

The runner takes the metric tests (``brainscore_vision/metrics/*/test.py``) and the helper tests
(``tests/test_{model,metric,benchmark}_helpers``) out of the ``brainscore-vision==2.4.2`` wheel and runs
them with our pytest against our ``brainscore_vision``/``brainscore_core``, deselecting only the
reference's S3 and GPU markers. Every failure must have a reason the runner names (S3 data, downloaded
weights, GPU, a test file the wheel does not ship, or a named gap); none may be unexplained, and no
group may pass fewer tests than it does today.

The wheel is downloaded by ``.ci/run`` before pytest (``python tools/reference_suite.py --fetch-only``)
into ``~/.cache/brainscore-reference`` (or ``$BRAINSCORE_REFERENCE_CACHE``); without it this module is
skipped locally (and fails under CI), saying how to get it.

The whole run takes 10-13 minutes on 2 cores: its four checks are ``nightly`` (``.ci/nightly``); the classification
of failures by cause runs in every CI run.
"""
from __future__ import annotations

import fnmatch
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / "tools" / "reference_suite.py"

#: tests that pass today, per group: a change that makes fewer pass fails here
PASSING_AT_LEAST = {"metrics": 59, "metric_helpers": 18, "model_helpers": 221, "benchmark_helpers": 4}


def _runner():
    spec = importlib.util.spec_from_file_location("reference_suite", RUNNER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


suite = _runner()


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    wheel = suite.wheel_path()
    if not wheel.is_file():
        message = (f"the reference's wheel is not in {wheel.parent}: get it with `python tools/reference_suite.py "
                   f"--fetch-only` (pip download brainscore-vision=={suite.VERSION} --no-deps; needs PyPI once), "
                   f"or set BRAINSCORE_REFERENCE_CACHE to a folder holding {suite.WHEEL}")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    scratch = tmp_path_factory.mktemp("reference-suite")
    output = scratch / "report.json"
    environment = {key: value for key, value in os.environ.items() if key != "BRAINSCORE_HOME"}
    completed = subprocess.run([sys.executable, str(RUNNER), "--no-download", "--scratch", str(scratch),
                                "--json", str(output), "--census", "none"],
                               cwd=ROOT, env=environment, capture_output=True, text=True, timeout=1800)
    assert output.is_file(), f"the runner wrote no report (exit {completed.returncode}):\n{completed.stdout[-4000:]}" \
                             f"\n{completed.stderr[-4000:]}"
    result = json.loads(output.read_text())
    result["_text"] = completed.stdout
    return result


def _failures(report: dict) -> list[dict]:
    return [failure for group in report["groups"].values() for failure in group["failures"]]


@pytest.mark.nightly
def test_no_failure_is_unexplained(report):
    unexplained = [f"{f['test']}: {f['reason']}" for f in _failures(report) if f["category"] == "unexplained"]
    assert not unexplained, "unexplained failures of the reference's tests:\n" + "\n".join(unexplained) + \
        "\n\n" + report["_text"][-6000:]


@pytest.mark.nightly
def test_no_group_passes_fewer_tests_than_today(report):
    passed = {name: group["passed"] for name, group in report["groups"].items()}
    for name, floor in PASSING_AT_LEAST.items():
        assert passed.get(name, 0) >= floor, f"{name}: {passed.get(name, 0)} of the reference's tests pass, " \
                                             f"{floor} did before\n{report['_text'][-6000:]}"


@pytest.mark.nightly
def test_every_named_gap_still_fails(report):
    """A named gap that no longer fails is stale: remove it from KNOWN_GAPS (and the docs) so it counts."""
    failing = [f["test"] for f in _failures(report)]
    stale = [pattern for pattern, _, _ in suite.KNOWN_GAPS
             if not any(fnmatch.fnmatchcase(test, pattern) for test in failing)]
    assert not stale, f"named gaps that pass now: {stale}"


@pytest.mark.nightly
def test_only_the_reference_markers_are_deselected(report):
    assert report["deselected_markers"] == "not private_access and not requires_gpu"
    assert report["reference"] == "brainscore-vision==2.4.2"


@pytest.mark.parametrize(("exception", "message", "category"), [
    ("brainscore.errors.DataNotFoundError", "data file imagenet16_categories.json (sha256 e5cf...) was not found", "data"),
    ("brainscore.errors.NetworkError", "weights file alexnet-owt-7be5be79.pth (https://download.pytorch.org/models/...)",
     "weights"),
    ("NotImplementedError", "the temporal activations framework is not implemented", "gap"),
    ("AssertionError", "assert 0.5 == 0.7", "unexplained"),
])
def test_a_failure_is_classified_by_its_cause(tmp_path, exception, message, category):
    """The runner's rules without running it: a data file missing from the mirror is 'data' (it was 'unexplained'
    when the runner ran without BRAINSCORE_DATA_MIRROR), a download 'weights', a NotImplementedError a named gap,
    anything else unexplained."""
    outcome = {"nodeid": "tests/test_x.py::test_y", "when": "call", "outcome": "failed", "exception": exception,
               "message": message}
    assert suite.classify(outcome, tmp_path)[0] == category
