"""Command-line arguments that ended in a traceback (issue 36): an unbounded ``--bootstrap`` and a stimulus CSV or
assembly that does not exist end in one line saying what is wrong, exit status 2."""
from __future__ import annotations

import subprocess
import sys

import pytest

BENCHMARK = "Cowley2026.210325.V4-pls"


def brainscore(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brainscore", *argv], capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("value, said", [
    ("100000000000000000000", "argument --bootstrap: 100000000000000000000 resamples is out of range: give 0 (no "
                              "interval) to 100000"),
    ("1e20", "argument --bootstrap: '1e20' is not a whole number of resamples (e.g. 1000; 0 skips the interval)"),
    ("-1", "argument --bootstrap: -1 resamples is out of range: give 0 (no interval) to 100000"),
])
def test_an_unbounded_bootstrap_is_a_clear_error_before_any_work(value, said):
    done = brainscore("score", "--model", "pixels", "--benchmark", BENCHMARK, "--bootstrap", value, "--no-record")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == f"brainscore score: error: {said}"


def test_the_bootstrap_bound_holds_for_the_python_api_too():
    from brainscore.scoring.job import MAX_RESAMPLES, score

    with pytest.raises(ValueError, match=f"from 0 \\(no interval\\) to {MAX_RESAMPLES:,}, got 100001"):
        score("pixels", BENCHMARK, bootstrap=MAX_RESAMPLES + 1)


def test_a_missing_or_unreadable_stimulus_csv_is_one_line(tmp_path):
    missing = brainscore("data", "package", "--stimuli", "/nonexistent.csv", "--stimulus-set-identifier", "Lab2026",
                         "--out", str(tmp_path / "out"))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert missing.stderr.strip() == ("error: --stimuli /nonexistent.csv: does not exist; give the stimulus CSV "
                                      "(stimulus_id + stimulus_path, or filename)")
    garbled = tmp_path / "garbled.csv"
    garbled.write_bytes(b"\xff\xfe\x00not text")
    unreadable = brainscore("data", "package", "--stimuli", str(garbled), "--stimulus-set-identifier", "Lab2026",
                            "--out", str(tmp_path / "out"))
    assert unreadable.returncode == 2 and "Traceback" not in unreadable.stderr
    assert unreadable.stderr.strip().startswith(f"error: --stimuli {garbled} cannot be read as a CSV (UnicodeDecodeError")
    assembly = brainscore("data", "package", "--assembly", str(tmp_path / "none.nc"), "--identifier", "Lab2026",
                          "--out", str(tmp_path / "out"))
    assert assembly.returncode == 2 and "Traceback" not in assembly.stderr
    assert assembly.stderr.strip() == f"error: --assembly {tmp_path / 'none.nc'}: does not exist; give the assembly's " \
                                      f"NetCDF file (.nc)"
