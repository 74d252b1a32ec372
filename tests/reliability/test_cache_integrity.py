"""Cache entries that cannot be silently wrong: keyed on code and architecture, verified, locked (issue 10)."""
from __future__ import annotations

import multiprocessing
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from brainscore.caching import Cache, CacheWarning, code_hash, content_key, remove_stale_parts
from brainscore.caching.cache import verify_file
from brainscore.data import NeuroidAssembly
from brainscore.metrics.similarity.rdm import RDMMetric
from brainscore.models.extraction import ActivationsExtractor
from brainscore.models.preprocessing import Preprocessing

from model_fixtures import make_stimuli

PRE = Preprocessing("imagenet", 20)


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def stimuli(tmp_path):
    return make_stimuli(tmp_path / "images", 12, seed=3)


class Doubling(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2


class Tripling(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * 3 + x.pow(2)


def net(activation: torch.nn.Module):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(3, 6, 3, stride=2), activation, torch.nn.AdaptiveAvgPool2d(2),
                               torch.nn.Flatten())


def target_of(stimuli) -> NeuroidAssembly:
    rng = np.random.default_rng(1)
    ids = stimuli["stimulus_id"].astype(str).to_numpy()
    return NeuroidAssembly(rng.normal(size=(len(ids), 7)), dims=("presentation", "neuroid"),
                           coords={"stimulus_id": ("presentation", ids), "neuroid_id": ("neuroid", np.arange(7))})


def score_of(extractor, stimuli) -> float:
    return float(RDMMetric(dtype="float64")(extractor(stimuli, ["3"]), target_of(stimuli)))


def activation_files(home: Path) -> list[Path]:
    return sorted((home / "cache" / "activations").rglob("*.npy"))


# ---- keys -------------------------------------------------------------------------------------------------------
def test_same_weights_other_forward_code_get_other_entries_and_scores(stimuli, home):
    doubling, tripling = ActivationsExtractor(net(Doubling()), "a", PRE), ActivationsExtractor(net(Tripling()), "b", PRE)
    assert doubling.weights_hash == tripling.weights_hash  # no parameters differ ...
    first, second = score_of(doubling, stimuli), score_of(tripling, stimuli)
    assert tripling.forward_passes > 0  # ... but the second network was run, not served the first one's file
    assert len(activation_files(home)) == 2
    assert first != second and np.isfinite(first) and np.isfinite(second)


def test_relu_swapped_for_tanh_is_recomputed(stimuli, home):
    relu = ActivationsExtractor(net(torch.nn.ReLU()), "n", PRE)
    tanh = ActivationsExtractor(net(torch.nn.Tanh()), "n", PRE)
    assert score_of(relu, stimuli) != score_of(tanh, stimuli)
    assert tanh.forward_passes > 0 and len(activation_files(home)) == 2


def test_thread_count_is_part_of_the_key(stimuli, monkeypatch):
    """The setting torch_threads is the count in the key and the count the network runs with (then restored)."""
    seen = []
    network = net(torch.nn.ReLU())
    network[0].register_forward_hook(lambda *_: seen.append(torch.get_num_threads()))
    extractor = ActivationsExtractor(network, "n", PRE, device="cpu")
    threads = torch.get_num_threads()
    monkeypatch.setenv("BRAINSCORE_TORCH_THREADS", "1")
    one = extractor.numerics()
    extractor.extract(stimuli, ["1"])
    monkeypatch.setenv("BRAINSCORE_TORCH_THREADS", "2")
    two = extractor.numerics()
    assert one["threads"] == 1 and two["threads"] == 2
    assert set(seen) == {1} and torch.get_num_threads() == threads
    assert extractor._key("s", "3", {}, "arch", one) != extractor._key("s", "3", {}, "arch", two)


def test_array_parts_of_keys_include_dtype_and_shape():
    values = np.arange(6, dtype=np.int32)
    assert content_key(a=values) != content_key(a=values.reshape(2, 3))
    assert content_key(a=values) != content_key(a=values.view(np.float32))
    assert content_key(a=np.zeros(2, np.float32)) != content_key(a=np.zeros(1, np.float64))


def test_code_hash_follows_imports_and_changes_with_the_code(tmp_path, monkeypatch):
    package = tmp_path / "pkg_codehash"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kernel.py").write_text("def f(x):\n    return x + 1\n")
    (package / "metric.py").write_text('"""doc"""\nfrom pkg_codehash import kernel\n\ndef g(x):\n    return kernel.f(x)\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    from brainscore.caching import code as code_module

    def fresh():
        for cached in (code_module._parsed, code_module.module_closure, code_module._module_file):
            cached.cache_clear()
        return code_hash("pkg_codehash.metric")

    importlib.invalidate_caches()
    before = fresh()
    assert "pkg_codehash.kernel" in code_module.module_closure("pkg_codehash.metric")
    (package / "unrelated.py").write_text("def h():\n    return 0\n")
    assert fresh() == before  # a module the metric does not import does not change its code hash
    (package / "kernel.py").write_text("def f(x):\n    return x + 2\n")
    assert fresh() != before  # an edited kernel, imported by the metric, does
    for cached in (code_module._parsed, code_module.module_closure, code_module._module_file):
        cached.cache_clear()


def test_each_namespace_keys_on_the_code_that_opens_it():
    assert Cache("x").code_hash != Cache("x", code=["brainscore.metrics.kernels.regression"]).code_hash
    assert Cache("x").path("k", "pkl") != Cache("y").path("k", "pkl")


# ---- verification ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("damage", ["zeroed", "truncated", "one-bit", "no-checksum"])
def test_a_damaged_activation_file_is_recomputed_with_a_warning(stimuli, home, damage):
    extractor = ActivationsExtractor(net(torch.nn.ReLU()), "n", PRE)
    expected = score_of(extractor, stimuli)
    (path,) = activation_files(home)
    data = path.read_bytes()
    if damage == "zeroed":  # the body zeroed, same size (the issue's `"score": null` case)
        path.write_bytes(data[:128] + bytes(len(data) - 128))
    elif damage == "truncated":
        path.write_bytes(data[:len(data) // 2])
    elif damage == "one-bit":
        path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    else:
        path.with_name(path.name + ".sha256").unlink()
    again = ActivationsExtractor(net(torch.nn.ReLU()), "n", PRE)
    with pytest.warns(CacheWarning, match=path.name):
        score = score_of(again, stimuli)
    assert again.forward_passes > 0 and score == expected
    assert verify_file(path) is None


def test_a_damaged_pickle_entry_is_recomputed(home):
    cache, key = Cache("scores-test"), content_key(case="pickle")
    assert cache.get_or_compute(key, lambda: {"score": 0.5}) == {"score": 0.5}
    path = cache.path(key, "pkl")
    path.write_bytes(bytes(path.stat().st_size))
    with pytest.warns(CacheWarning, match="failed verification"):
        assert cache.get_or_compute(key, lambda: {"score": 0.25}) == {"score": 0.25}
    assert not list(path.parent.glob("*.part"))


def test_a_truncated_netcdf_entry_is_rebuilt(home):
    from brainscore.data.io import cached_assembly

    cache, key, calls = Cache("packaged-test"), content_key(case="nc"), []
    values = np.arange(12.0).reshape(3, 4)

    def build():
        calls.append(1)
        return NeuroidAssembly(values, dims=("presentation", "neuroid"),
                               coords={"stimulus_id": ("presentation", list("abc")), "neuroid_id": ("neuroid", list("wxyz"))})

    cached_assembly(cache, key, NeuroidAssembly, build)
    path = cache.path(key, "nc")
    path.write_bytes(path.read_bytes()[:500])
    with pytest.warns(CacheWarning, match=".nc"):
        again = cached_assembly(cache, key, NeuroidAssembly, build)
    np.testing.assert_array_equal(again.values, values)
    assert calls == [1, 1]


def test_a_freshly_built_assembly_is_what_later_runs_read(home):
    """The first run gets the entry as read back (row-major), not the builder's transposed view."""
    from brainscore.data.io import cached_assembly

    cache, key = Cache("packaged-test"), content_key(case="layout")
    values = np.arange(12.0).reshape(4, 3).T  # a Fortran-ordered view, as packaging code can make

    def build():
        return NeuroidAssembly(values, dims=("presentation", "neuroid"),
                               coords={"stimulus_id": ("presentation", list("abc")), "neuroid_id": ("neuroid", list("wxyz"))})

    first = cached_assembly(cache, key, NeuroidAssembly, build)
    later = cached_assembly(cache, key, NeuroidAssembly, build)
    assert first.values.flags["C_CONTIGUOUS"] and later.values.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(first.values, values)
    assert first.values.dtype == later.values.dtype and first.coords["stimulus_id"].dtype == later.coords["stimulus_id"].dtype


def test_a_damaged_screen_image_is_converted_again(images92, home):
    from brainscore.benchmarks.screen import place_on_screen

    placed = place_on_screen(images92, 8, 4)
    path = Path(placed.get_stimulus("img05"))
    original = path.read_bytes()
    path.write_bytes(original[:100])
    with pytest.warns(CacheWarning, match="img05"):
        again = place_on_screen(images92, 8, 4)
    assert Path(again.get_stimulus("img05")).read_bytes() == original


def test_stale_part_files_of_killed_processes_are_removed(home):
    folder = home / "cache" / "activations" / "ab"
    folder.mkdir(parents=True)
    stale = folder / ".abcd.npy.x1y2z3.part"
    stale.write_bytes(b"half")
    unique = folder / ".abcd.unique.npy.q9.part"
    unique.write_bytes(b"half")
    assert remove_stale_parts(home / "cache" / "activations") == 2
    assert not stale.exists() and not unique.exists()


def test_a_part_file_being_written_is_kept(home):
    from brainscore.caching import entry_lock

    folder = home / "cache" / "activations" / "cd"
    folder.mkdir(parents=True)
    part = folder / ".cdef.npy.abc.part"
    part.write_bytes(b"in progress")
    with entry_lock(folder / "cdef.npy"):
        assert _remove_in_other_process(home / "cache" / "activations") == 0
    assert part.exists()


def test_the_temporary_file_of_a_netcdf_written_into_a_part_file_is_kept_while_its_entry_is_locked(home):
    """CI found this: ``Cache.write`` hands its ``.part`` file to ``write_netcdf``, which writes through its own
    ``..<entry>.<r1>.part.<r2>.part``; another process opening the cache took that for a dead writer's file
    (its own "entry" had no lock) and deleted it mid-write, so the first process's benchmark failed to load."""
    from brainscore.caching import entry_lock

    folder = home / "cache" / "packaged" / "79"
    folder.mkdir(parents=True)
    outer = folder / ".7960.nc.3n7fsvmq.part"
    inner = folder / "..7960.nc.3n7fsvmq.part.faldcvdk.part"
    outer.write_bytes(b"")
    inner.write_bytes(b"being written")
    with entry_lock(folder / "7960.nc"):
        assert _remove_in_other_process(home / "cache" / "packaged") == 0
    assert inner.exists() and outer.exists()
    assert remove_stale_parts(home / "cache" / "packaged") == 2  # the writer is gone: both are stale


def test_a_dead_writers_part_file_is_removed_when_its_entry_is_next_locked_and_the_lock_is_reentrant(home):
    from brainscore.caching import locked_entry

    cache = Cache("reentrant-test")
    path = cache.path("k", "pkl")
    path.parent.mkdir(parents=True)
    stale = path.with_name(f".{path.name}.dead01.part")
    stale.write_bytes(b"half")
    with locked_entry(path):
        assert not stale.exists()
        with locked_entry(path):  # the same thread again: no deadlock
            cache.save("k", 0.5)  # save takes the entry's lock too: re-entered here
    assert cache.load("k") == 0.5


def _save_holding(home: str, started: str, release: str) -> None:
    import os

    os.environ["BRAINSCORE_HOME"] = home
    from brainscore.caching import Cache

    cache = Cache("writer-test")
    cache.write("k", "bin", lambda tmp: (Path(started).touch(), _wait_for(Path(release)), tmp.write_bytes(b"value")))


def _wait_for(path: Path) -> None:
    for _ in range(600):
        if path.exists():
            return
        time.sleep(0.05)
    raise TimeoutError(path)


def test_a_write_outside_get_or_compute_holds_the_lock_so_a_sweep_leaves_its_part_file(home, tmp_path):
    started, release = tmp_path / "started", tmp_path / "release"
    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        writing = pool.apply_async(_save_holding, (str(home), str(started), str(release)))
        _wait_for(started)
        parts = list((home / "cache" / "writer-test").rglob(".*.part"))
        assert len(parts) == 1
        assert remove_stale_parts(home / "cache" / "writer-test") == 0  # the writer holds the lock
        release.touch()
        writing.get(timeout=60)
    cache = Cache("writer-test")
    assert cache.read("k", "bin", lambda path: path.read_bytes()) == b"value"


def _remove_in_other_process(folder: Path) -> int:
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(remove_stale_parts, (folder,))


# ---- locks -----------------------------------------------------------------------------------------------------
def _slow_compute(home: str, log: str) -> float:
    import os

    os.environ["BRAINSCORE_HOME"] = home
    from brainscore.caching import Cache, content_key

    def compute():
        with open(log, "a") as f:
            f.write("computed\n")
        time.sleep(1.5)
        return 0.125

    return Cache("lock-test").get_or_compute(content_key(case="lock"), compute)


def test_a_second_process_waits_for_the_first_ones_result(home, tmp_path):
    log = tmp_path / "log.txt"
    context = multiprocessing.get_context("spawn")
    with context.Pool(2) as pool:
        results = [pool.apply_async(_slow_compute, (str(home), str(log))) for _ in range(2)]
        values = [r.get(timeout=120) for r in results]
    assert values == [0.125, 0.125]
    assert log.read_text().count("computed") == 1


def test_verification_warning_names_the_file_even_when_warnings_are_filtered_once(stimuli, home):
    extractor = ActivationsExtractor(net(torch.nn.ReLU()), "n", PRE)
    score_of(extractor, stimuli)
    (path,) = activation_files(home)
    path.write_bytes(b"")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        score_of(ActivationsExtractor(net(torch.nn.ReLU()), "n", PRE), stimuli)
    assert any(str(path) in str(w.message) for w in caught)
