"""A full disk while scoring (issue 32): a cache entry that cannot be written leaves the computed value in use (a
warning, the right score); any other write is one line naming where and what to free, not a 58-line traceback."""
from __future__ import annotations

import errno

import pytest

from brainscore.cli import main

BENCHMARK = "Kiani2007.IT-rdm"
PIXELS = 0.14356558533368408  # pixels on Kiani2007.IT-rdm (tests/cli/test_score_not_lost.py)


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_cache_entry_on_a_full_disk_is_skipped_and_the_score_is_right(home, monkeypatch, capsys):
    import brainscore.caching.cache as cache

    monkeypatch.setattr(cache, "commit_file", _full)  # every cache entry fails to be written
    with pytest.warns(cache.CacheWarning, match="was not stored: the disk holding .* is full .*; the value computed "
                                                "is used all the same"):
        assert main(["score", "--model", "pixels", "--benchmark", BENCHMARK, "--bootstrap", "0", "--no-record",
                     "--json"]) == 0
    assert f'"score": {PIXELS}' in capsys.readouterr().out
    assert not list(home.rglob("*.part"))  # nothing half-written is left


def test_any_other_write_on_a_full_disk_is_one_line_naming_the_folder(home, monkeypatch, capsys):
    import brainscore.api as api

    def full_while_scoring(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(home / "cache" / "activations" / "x.npy"))

    monkeypatch.setattr(api, "score", full_while_scoring)
    assert main(["score", "--model", "pixels", "--benchmark", BENCHMARK, "--bootstrap", "0", "--no-record"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"error: the disk is full (No space left on device) writing {home}/cache/activations/x.npy (")
    assert f"MiB free in {home}/cache/activations): free space there (brainscore's caches, {home}/cache, may be " \
           f"deleted) or set BRAINSCORE_HOME to a larger disk, and run again; what was computed and written before " \
           f"is kept" in err
