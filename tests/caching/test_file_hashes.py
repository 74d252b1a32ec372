"""The one hash memo (:func:`brainscore.caching.file_hashes`) and git's "racy clean" problem.

A file's state (path, inode, size, mtime, ctime) stands for its bytes only once the clock has moved past its last
write: the kernel stamps files with a coarse clock, so a rewrite of the same size within one tick keeps the state.
The memo therefore remembers only *settled* states (written :data:`SETTLE_NS` or more before the read). On main
(5f3b684) a same-tick rewrite was served the old digest.
"""
from __future__ import annotations

import hashlib
import time

from brainscore.caching import files


def test_a_same_tick_rewrite_is_read_again_and_a_settled_file_is_remembered(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "SETTLE_NS", 3600 * 10**9)  # "just written" however slow the machine is
    path = tmp_path / "stimulus.bin"
    path.write_bytes(b"first")
    frozen = files.file_state(path)
    monkeypatch.setattr(files, "file_state", lambda _path: frozen)  # the rewrite below lands in the same tick

    assert not files.is_settled(frozen)
    assert files.file_hashes(path)["sha256"] == hashlib.sha256(b"first").hexdigest()
    path.write_bytes(b"secnd")  # same size, same (frozen) state
    assert files.file_hashes(path)["sha256"] == hashlib.sha256(b"secnd").hexdigest()

    # a state written long before the read is remembered: the next call does not read the file
    old = time.time_ns() - files.SETTLE_NS - 10**9
    settled = frozen._replace(mtime_ns=old, ctime_ns=old)
    assert files.is_settled(settled)
    monkeypatch.setattr(files, "file_state", lambda _path: settled)
    assert files.file_hashes(path)["sha256"] == hashlib.sha256(b"secnd").hexdigest()
    path.write_bytes(b"third")  # a write that kept the state (impossible once settled): the memo answers
    assert files.file_hashes(path)["sha256"] == hashlib.sha256(b"secnd").hexdigest()
    assert files.file_hashes(path, force=True)["sha256"] == hashlib.sha256(b"third").hexdigest()
