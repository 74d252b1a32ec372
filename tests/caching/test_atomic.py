"""atomic_directory: a folder appears complete or not at all, and is filled once."""
from __future__ import annotations

import pytest

from brainscore.caching.atomic import atomic_directory


def test_filled_once_and_never_half(tmp_path):
    calls = []

    def fill(folder):
        calls.append(folder)
        (folder / "a.txt").write_text("a")

    target = tmp_path / "sets" / "one"
    assert atomic_directory(target, fill) == target
    assert (target / "a.txt").read_text() == "a" and len(calls) == 1
    assert calls[0] != target and not calls[0].exists()  # filled elsewhere, then renamed
    atomic_directory(target, fill)
    assert len(calls) == 1

    def broken(folder):
        (folder / "half.txt").write_text("x")
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError, match="killed"):
        atomic_directory(tmp_path / "sets" / "two", broken)
    assert sorted(p.name for p in (tmp_path / "sets").iterdir() if not p.name.endswith(".lock")) == ["one"]


def test_a_killed_fillers_partial_folder_is_removed_by_the_next_filling_and_others_are_kept(tmp_path):
    sets = tmp_path / "sets"
    dead = sets / ".partial-three-k1ll3d"  # what a process killed while filling "three" leaves
    (dead / "sub").mkdir(parents=True)
    (dead / "sub" / "half.png").write_bytes(b"x")
    other = sets / ".partial-threefold-abc"  # another folder's filling (its name only starts alike)
    other.mkdir()
    atomic_directory(sets / "three", lambda folder: (folder / "a.txt").write_text("a"))
    assert not dead.exists() and other.exists()
    assert (sets / "three" / "a.txt").read_text() == "a"


def _fill_slowly(target: str, log: str) -> str:
    import time
    from pathlib import Path

    def fill(folder):
        with open(log, "a") as f:
            f.write("filled\n")
        time.sleep(1.0)
        (folder / "a.txt").write_text("a")

    return str(atomic_directory(Path(target), fill))


def test_two_processes_fill_a_folder_once(tmp_path):
    import multiprocessing

    target, log = tmp_path / "sets" / "four", tmp_path / "log.txt"
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        results = [pool.apply_async(_fill_slowly, (str(target), str(log))) for _ in range(2)]
        assert [r.get(timeout=120) for r in results] == [str(target)] * 2
    assert log.read_text() == "filled\n"  # the second one waited for the lock and found the folder
    assert sorted(p.name for p in (tmp_path / "sets").iterdir() if not p.name.endswith(".lock")) == ["four"]
