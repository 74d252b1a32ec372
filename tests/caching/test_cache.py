"""Store and cache: clear errors for missing and corrupt files; content keys; atomic writes."""
import hashlib

import numpy as np
import pytest

from brainscore.caching import Cache, content_key
from brainscore.data.store import Source, fetch
from brainscore.errors import DataNotFoundError, HashMismatchError


def test_missing_file_error_names_file_hash_and_fix():
    source = Source("nowhere/missing.npy", "ab" * 32, url="https://example.org/missing.npy")
    with pytest.raises(DataNotFoundError) as info:
        fetch(source)  # offline in tests: no download is tried
    message = str(info.value)
    assert "nowhere/missing.npy" in message and "ab" * 32 in message and "BRAINSCORE_DATA_MIRROR" in message


def test_hash_mismatch_names_both_hashes(tmp_path, monkeypatch):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.bin").write_bytes(b"real bytes")
    monkeypatch.setenv("BRAINSCORE_DATA_MIRROR", str(tmp_path))
    actual = hashlib.sha256(b"real bytes").hexdigest()
    assert fetch(Source("d/f.bin", actual)) == tmp_path / "d" / "f.bin"
    with pytest.raises(HashMismatchError) as info:
        fetch(Source("d/f.bin", "0" * 64))
    assert actual in str(info.value) and "0" * 64 in str(info.value)


def test_content_key_depends_on_content_not_order():
    assert content_key(a=1, b=[1, 2]) == content_key(b=[1, 2], a=1)
    assert content_key(x=np.arange(3)) != content_key(x=np.arange(1, 4))


def test_cache_round_trip_and_compute_once():
    cache, calls = Cache("test"), []
    key = content_key(test="compute-once")
    assert cache.get_or_compute(key, lambda: calls.append(1) or {"v": 1}) == {"v": 1}
    assert cache.get_or_compute(key, lambda: calls.append(1) or {"v": 2}) == {"v": 1}
    assert calls == [1]


def test_saving_a_large_array_holds_no_second_copy_and_the_entry_verifies():
    """The pickle is streamed into the entry's file and hashed while written (a whole ``pickle.dumps`` first held a
    second copy of a video layer); the checksum written is the file's, so the entry loads back verified."""
    import hashlib
    import json
    import tracemalloc

    from brainscore.caching.cache import checksum_path

    cache = Cache("test")
    key = content_key(test="streamed-save")
    values = np.random.default_rng(0).standard_normal((1024, 8192)).astype(np.float32)  # 32 MiB
    tracemalloc.start()
    try:
        cache.save(key, {"values": values, "time_bins": None})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < values.nbytes / 4, f"saving held {peak / 2**20:.1f} MiB beyond the array"
    path = cache.path(key, "pkl")
    assert json.loads(checksum_path(path).read_text())["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    loaded = cache.load(key)
    np.testing.assert_array_equal(loaded["values"], values)
    assert loaded["time_bins"] is None


def _identified(x):
    return x


class _Scorer:
    def __call__(self, x):
        return x


def test_callable_identity_names_where_a_callable_is_defined():
    import functools

    from brainscore.caching import callable_identity

    line = _identified.__code__.co_firstlineno
    assert callable_identity(_identified) == f"{__name__}._identified:{line}"
    assert callable_identity(_identified, line=False) == f"{__name__}._identified"
    scorer = _Scorer()
    assert callable_identity(scorer) == f"{__name__}._Scorer:{scorer!r}"
    assert callable_identity(scorer, line=False) == f"{__name__}._Scorer"
    assert callable_identity(functools.partial(_identified), line=False) == "functools.partial"
