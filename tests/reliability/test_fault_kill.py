"""SIGKILL at random points of a real scoring run: every cache file verifies or is absent; reruns are bit-identical.

The run (``fault_target.py``): a seeded torch network on the 92 Kriegeskorte 2008 images placed on
its screen, its RDM against the packaged monkey IT RDM, the score cached. Each of 10 runs sharing one
``BRAINSCORE_HOME`` is killed at a random moment after its imports (the work: screen images,
activations, packaged data, score pickle); after each kill every entry in the cache is checked; a
last run completes, and its score must equal, bit for bit, that of a run in a fresh home.
"""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import brainscore
from brainscore.caching.cache import CHECKSUM_SUFFIX, LOCK_SUFFIX, MANIFEST_NAME, verify_file, verify_manifest

TARGET = Path(__file__).with_name("fault_target.py")
SRC = Path(brainscore.__file__).resolve().parent.parent
KILLS = 10


def _start(home: Path) -> subprocess.Popen:
    env = {**os.environ, "BRAINSCORE_HOME": str(home), "PYTHONPATH": str(SRC), "FAULT_TARGET_READY": "1"}
    return subprocess.Popen([sys.executable, str(TARGET)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _run_to_end(home: Path) -> tuple[str, float]:
    process = _start(home)
    assert process.stdout.readline().strip() == "ready"
    started = time.perf_counter()
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err
    return out.strip().splitlines()[-1], time.perf_counter() - started


def _check_cache(home: Path) -> int:
    """Every entry verifies against its checksum (or manifest); returns how many entries there are."""
    entries = 0
    for path in (home / "cache").rglob("*") if (home / "cache").exists() else []:
        name = path.name
        if not path.is_file() or name.startswith(".") or name.endswith((CHECKSUM_SUFFIX, LOCK_SUFFIX)):
            continue
        assert verify_file(path) is None, f"{path}: {verify_file(path)}"
        entries += 1
    for root in ("stimuli_on_screen", "extracted"):
        for folder in (home / root).iterdir() if (home / root).exists() else []:
            if folder.is_dir() and not folder.name.startswith("."):
                assert (folder / MANIFEST_NAME).is_file(), f"{folder} was renamed into place without its manifest"
                assert verify_manifest(folder) is None, verify_manifest(folder)
                entries += 1
    return entries


@pytest.mark.slow
def test_sigkill_at_random_points_leaves_only_verified_entries_and_identical_scores(tmp_path):
    reference, work_s = _run_to_end(tmp_path / "fresh")
    home = tmp_path / "killed"
    rng = random.Random(10)
    killed = 0
    for _ in range(KILLS):
        process = _start(home)
        assert process.stdout.readline().strip() == "ready"
        # later runs resume from what earlier ones cached, so they finish sooner than the fresh run
        time.sleep(rng.uniform(0, work_s / 3))
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            killed += 1
        process.communicate(timeout=600)
        _check_cache(home)
    assert killed >= KILLS // 2  # most runs really were interrupted
    score, _ = _run_to_end(home)
    assert score == reference  # float.hex: bit-identical
    assert _check_cache(home) >= 5  # screen images, 2 activation files, packaged data, the score
    leftovers = [p for p in home.rglob("*.part")] + [p for p in home.rglob(".partial-*")]
    assert not leftovers, leftovers
