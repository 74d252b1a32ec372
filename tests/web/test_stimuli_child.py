"""The thumbnails' child process is started without a fork-time hook and lowers its own priority.

A ``preexec_fn`` makes ``subprocess`` fork instead of vfork, and fork runs OpenBLAS's ``pthread_atfork`` handler,
which waits for the BLAS threads while another thread of the web process may be inside a BLAS call waiting for
them: CI hung there (the thumbnails' thread forking while a test computed an RDM in the same process).
"""
from __future__ import annotations

import subprocess
import sys
import threading

from brainscore.web import stimuli


def test_the_child_is_started_without_a_preexec_hook_and_runs_at_the_lowest_priority(tmp_path, monkeypatch):
    calls = []
    original = subprocess.run

    def spy(command, **kwargs):
        calls.append((command, kwargs))
        return original(command, **kwargs)

    monkeypatch.setattr(stimuli.subprocess, "run", spy)
    monkeypatch.setattr(stimuli, "_pending", __import__("queue").Queue())
    monkeypatch.setattr(stimuli, "_asked", set())
    monkeypatch.setattr(stimuli, "_worker", None)
    stimuli.request(tmp_path, "no-such-benchmark")
    for _ in range(600):
        if calls and any(tmp_path.rglob("problem.txt")):  # the child ran and failed: the thread wrote why
            break
        threading.Event().wait(0.1)
    assert calls, "the background thread started no child"
    command, kwargs = calls[0]
    assert command[:3] == [sys.executable, "-m", "brainscore.web.stimuli"]
    assert "preexec_fn" not in kwargs
    # the child sets its own priority first thing: the same module run here reports nice 19 before it fails
    probe = subprocess.run([sys.executable, "-c", "import os, runpy, sys; sys.argv = ['x', sys.argv[1], 'no-such'];"
                            "import atexit; atexit.register(lambda: print('nice', os.nice(0)));"
                            "runpy.run_module('brainscore.web.stimuli', run_name='__main__')", str(tmp_path)],
                           capture_output=True, text=True, timeout=120)
    assert probe.returncode != 0  # no such benchmark
    assert "nice 19" in probe.stdout, probe.stdout + probe.stderr
