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
    assert sorted(p.name for p in (tmp_path / "sets").iterdir()) == ["one"]
