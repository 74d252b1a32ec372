"""Layer selection: the streamed pass (no unreduced layer on disk) gives the previous implementation's numbers.

The previous implementation is still the route of an extractor that cannot stream: every candidate
layer extracted to the activations cache, then PCA-reduced from the file. Here both routes run on
the same seeded network, each from its own empty cache, and must agree exactly.
"""
from __future__ import annotations

import numpy as np
import pytest

from brainscore.caching.cache import checksum_path
from brainscore.data import StimulusSet
from brainscore.models import candidates as candidates_module
from brainscore.models.candidates import LayerCandidates
from brainscore.models.commitment import ModelCommitment
from brainscore.models.extraction import ActivationsExtractor
from brainscore.models.preprocessing import Preprocessing
from brainscore.scoring import selection

from model_fixtures import SmallConvNet, TinyNet, make_stimuli

LAYERS = ["features.0", "features.1", "features.2", "head"]


class ExtractOnly:
    """An extractor without ``stream``: layer selection takes the previous route (extract, then PCA from the files)."""

    def __init__(self, extractor: ActivationsExtractor):
        self._extractor = extractor

    def __getattr__(self, name):
        if name == "stream":
            raise AttributeError(name)
        return getattr(self._extractor, name)


def _model(image_size: int, extract_only: bool = False, seed: int = 0) -> ModelCommitment:
    extractor = ActivationsExtractor(TinyNet(seed), "tiny", Preprocessing("imagenet", image_size), batch_size=16)
    return ModelCommitment("tiny", ExtractOnly(extractor) if extract_only else extractor, LAYERS,
                           layer_scorer=selection.layer_scorer)


def _home(monkeypatch, tmp_path, name):
    home = tmp_path / name
    monkeypatch.setenv("BRAINSCORE_HOME", str(home))
    return home


def _entries(home, namespace):
    folder = home / "cache" / namespace
    return sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.endswith((".sha256", ".lock"))) \
        if folder.is_dir() else []


SMALL_LAYERS = ["relu1", "relu2", "pool"]


def _small(extract_only: bool = False) -> ModelCommitment:
    extractor = ActivationsExtractor(SmallConvNet(0), "small", Preprocessing("imagenet", 64), batch_size=16)
    return ModelCommitment("small", ExtractOnly(extractor) if extract_only else extractor, SMALL_LAYERS,
                           layer_scorer=selection.layer_scorer)


GRAM_PCA = candidates_module.gram_pca


def previous_gram_pca(features, n_components=1000):
    """The previous implementation's PCA: only the top k eigenpairs, by scipy's subset driver."""
    return GRAM_PCA(features, n_components, eigensolver="subset")


def test_selection_on_the_real_v4_sessions_equals_the_previous_implementation(monkeypatch, tmp_path):
    """Seeded SmallConvNet at 64 px (1,800 units: PCA-reduced; 784 and 256: kept) on the 3 V4 sessions.

    The previous implementation: every layer extracted to the activations cache, then PCA from the
    files with the subset eigensolver. Scores agree to 1e-9 (the eigensolvers differ in rounding
    only) and the chosen layer is the same.
    """
    home = _home(monkeypatch, tmp_path, "streamed")
    streamed = _small()
    layer = streamed.layer_for("V4")
    scores = streamed.layer_scores["V4"]
    sessions = selection.selection_benchmarks()["V4"]
    assert len(sessions) == 3
    # one pass per session over its distinct images; of the unreduced layers, only those kept whole (784 and 256
    # units) are written to the activations cache (as extract writes them, for the benchmarks); relu1 never
    assert streamed.activations_model.forward_passes > 0
    kept = _entries(home, "activations")
    assert len(kept) == 2 * len(sessions)
    assert {int(np.prod(np.load(path, mmap_mode="r").shape[1:])) for path in kept} == {784, 256}
    assert len(_entries(home, "activations_pca")) == len(SMALL_LAYERS) * len(sessions)

    _home(monkeypatch, tmp_path, "previous")
    monkeypatch.setattr(candidates_module, "gram_pca", previous_gram_pca)
    previous = _small(extract_only=True)
    assert previous.layer_for("V4") == layer
    expected = previous.layer_scores["V4"]
    assert list(expected) == SMALL_LAYERS
    np.testing.assert_allclose([scores[name] for name in SMALL_LAYERS], [expected[name] for name in SMALL_LAYERS],
                               rtol=0, atol=1e-9)
    assert all(np.isfinite(list(scores.values()))) and len(set(scores.values())) == len(SMALL_LAYERS)
    assert layer == max(SMALL_LAYERS, key=lambda name: scores[name])


@pytest.fixture
def stimuli(tmp_path):
    return make_stimuli(tmp_path / "images", 9)


def _assert_same(ours, theirs):
    assert list(ours) == list(theirs)
    for layer in ours:
        np.testing.assert_array_equal(ours[layer].values, theirs[layer].values)
        assert ours[layer].dims == theirs[layer].dims
        for name, coord in theirs[layer].coords.items():
            np.testing.assert_array_equal(ours[layer][name].values, coord.values, err_msg=f"{layer} {name}")
        assert set(ours[layer].coords) == set(theirs[layer].coords)


@pytest.mark.parametrize("memory_bytes", [1 << 30, 0])  # in memory, or every layer in a temporary file
def test_streamed_features_equal_the_extracted_ones(stimuli, monkeypatch, tmp_path, memory_bytes):
    monkeypatch.setattr(candidates_module, "SELECTION_MEMORY_BYTES", memory_bytes)
    _home(monkeypatch, tmp_path, "streamed")
    model = _model(20)
    ours = LayerCandidates(model, LAYERS, n_components=5).look_at_layers(stimuli)
    assert model.activations_model.forward_passes == 1     # 9 images, batch 16
    assert [ours[layer].sizes["neuroid"] for layer in LAYERS] == [5, 5, 5, 5]
    _home(monkeypatch, tmp_path, "previous")
    theirs = LayerCandidates(_model(20, extract_only=True), LAYERS, n_components=5).look_at_layers(stimuli)
    _assert_same(ours, theirs)
    kept = LayerCandidates(_model(20), LAYERS).look_at_layers(stimuli)     # 1000 components: raw below that
    assert kept["head"].sizes["neuroid"] == 5 and "pca_component" not in kept["head"].coords
    assert "channel" in kept["features.2"].coords


def test_gram_pca_agrees_with_the_subset_eigensolver(tmp_path):
    """All eigenpairs then the top k equals asking the eigensolver for the top k (scores up to rounding)."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((60, 400)) @ rng.standard_normal((400, 400))).astype(np.float32)
    for k in (60, 45, 10):
        ours, theirs = GRAM_PCA(x, k), previous_gram_pca(x, k)
        assert ours.shape == theirs.shape == (60, k)
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=2e-5 * np.abs(theirs).max())
    with pytest.raises(ValueError, match="eigensolver must be 'all' or 'subset'"):
        GRAM_PCA(x, 5, eigensolver="lanczos")


def test_files_shown_under_several_ids_and_any_row_order(stimuli, monkeypatch, tmp_path):
    frame = StimulusSet(stimuli).copy()
    frame["stimulus_path"] = list(frame["stimulus_path"][:-2]) + [frame["stimulus_path"].iloc[0]] * 2
    frame = frame.iloc[::-1]
    repeated = StimulusSet(frame, identifier="repeated")
    _home(monkeypatch, tmp_path, "streamed")
    model = _model(20)
    ours = LayerCandidates(model, LAYERS, n_components=5).look_at_layers(repeated)
    assert model.activations_model.model.images_seen == 7  # 9 ids, 7 distinct files
    np.testing.assert_array_equal(ours["features.0"].values[0], ours["features.0"].values[-1])
    _home(monkeypatch, tmp_path, "previous")
    theirs = LayerCandidates(_model(20, extract_only=True), LAYERS, n_components=5).look_at_layers(repeated)
    _assert_same(ours, theirs)


def test_selection_entries_are_cached_verified_and_keyed_by_the_activations(stimuli, monkeypatch, tmp_path):
    home = _home(monkeypatch, tmp_path, "home")
    model = _model(20)
    first = LayerCandidates(model, LAYERS, n_components=5).look_at_layers(stimuli)
    entries = _entries(home, "activations_pca")
    assert len(entries) == len(LAYERS) and all(checksum_path(p).is_file() for p in entries)
    again = LayerCandidates(model, LAYERS, n_components=5).look_at_layers(stimuli)
    assert model.activations_model.forward_passes == 1     # all four from the cache
    _assert_same(again, first)
    # corrupted entries are discarded (warned) and their layers computed again, with the same numbers: one pass
    # for the wide layers (the 5-unit head is read from the activations entry the first selection kept). Every
    # entry is corrupted: the entries' order (content keys of tmp_path's files) differs from run to run.
    for entry in entries:
        data = bytearray(entry.read_bytes())
        data[-20] ^= 0xFF
        entry.write_bytes(bytes(data))
    with pytest.warns(Warning, match="failed verification"):
        third = LayerCandidates(model, LAYERS, n_components=5).look_at_layers(stimuli)
    assert model.activations_model.forward_passes == 2
    _assert_same(third, first)
    # other weights (another seed): other entries, another pass
    LayerCandidates(_model(20, seed=1), LAYERS, n_components=5).look_at_layers(stimuli)
    assert len(_entries(home, "activations_pca")) == 2 * len(LAYERS)


def test_a_second_pass_holds_its_rows_in_the_memory_the_first_touched_and_never_in_what_the_first_returned(
        stimuli, monkeypatch, tmp_path):
    # issue 39: on a VM that hands freed memory back to its host, fresh memory cost most of a selection's time
    # above its forward pass; the process's arena keeps the pages of one pass for the next
    candidates_module._ARENA.free()
    monkeypatch.setattr(candidates_module, "ARENA_KEEP_S", 30.0)
    carved: list[list[np.ndarray]] = []
    original = candidates_module._ArenaLease.carve

    def spy(self, shape):
        out = original(self, shape)
        if out is not None:
            carved[-1].append(out)
        return out

    monkeypatch.setattr(candidates_module._ArenaLease, "carve", spy)
    passes = []
    for name in ("first", "second"):  # two empty caches: both passes compute every layer
        _home(monkeypatch, tmp_path, name)
        carved.append([])
        passes.append(LayerCandidates(_model(20), LAYERS, n_components=5).look_at_layers(stimuli))
    kept = {layer: passes[0][layer].values.copy() for layer in LAYERS}
    assert [len(rows) for rows in carved] == [len(LAYERS), len(LAYERS)]
    assert all(any(np.shares_memory(b, a) for a in carved[0]) for b in carved[1])  # the same pages, reused
    for layer in LAYERS:  # the second pass wrote over the arena: the first pass's results are their own
        np.testing.assert_array_equal(passes[0][layer].values, kept[layer])
        assert not any(np.shares_memory(passes[0][layer].values, rows) for rows in carved[1])
    _assert_same(passes[1], passes[0])
    # without the arena (plain allocations) the numbers are the same
    monkeypatch.setattr(candidates_module._ArenaLease, "carve", lambda self, shape: None)
    _home(monkeypatch, tmp_path, "plain")
    _assert_same(LayerCandidates(_model(20), LAYERS, n_components=5).look_at_layers(stimuli), passes[0])


def test_the_arena_is_freed_after_its_keep_time_and_one_pass_at_a_time_holds_it(monkeypatch):
    import time

    arena = candidates_module._RowArena()
    monkeypatch.setattr(candidates_module, "ARENA_KEEP_S", 0.2)
    with arena.lease() as first, arena.lease() as second:
        rows = first.carve((16, 1000))
        assert rows is not None and rows.shape == (16, 1000) and rows.dtype == np.float32
        assert second.carve((16, 1000)) is None  # a concurrent pass allocates its own
        first.carve((3, 1000))
    with arena.lease() as again:
        assert again.held == 16 * 1000 * 4 + 3 * 1000 * 4  # counted as usable by the next pass
        smaller = again.carve((2, 1000))  # the smallest kept chunk large enough: the 3-row one
        assert smaller.base.nbytes == 3 * 1000 * 4 or smaller.base.base.nbytes == 3 * 1000 * 4
    with arena.lease() as last:
        assert last.held == 3 * 1000 * 4  # the chunk the pass before did not use went
    time.sleep(0.6)
    assert arena._chunks == [] and arena._file is None


def test_rows_that_do_not_fit_in_memory_reuse_the_file_a_pass_before_wrote(stimuli, monkeypatch, tmp_path):
    candidates_module._ARENA.free()
    monkeypatch.setattr(candidates_module, "ARENA_KEEP_S", 30.0)
    monkeypatch.setattr(candidates_module, "SELECTION_MEMORY_BYTES", 0)  # every layer to the file
    regions: list[list[tuple]] = []
    original = candidates_module._ArenaLease.file_region

    def spy(self, folder, nbytes):
        region = original(self, folder, nbytes)
        regions[-1].append(region)
        return region

    monkeypatch.setattr(candidates_module._ArenaLease, "file_region", spy)
    home = _home(monkeypatch, tmp_path, "home")
    passes = []
    for seed in (0, 0, 1):  # the same pass twice (the second reads its cache), then other weights
        regions.append([])
        passes.append(LayerCandidates(_model(20, seed=seed), LAYERS, n_components=5).look_at_layers(stimuli))
    assert [len(r) for r in regions] == [len(LAYERS), 0, len(LAYERS)]
    assert [(id(f), offset, owned) for f, offset, owned in regions[0]] == \
        [(id(f), offset, owned) for f, offset, owned in regions[2]]
    assert len({id(f) for f, _, _ in regions[0]}) == 1 and not any(owned for _, _, owned in regions[0])
    assert [offset for _, offset, _ in regions[0]] == sorted({offset for _, offset, _ in regions[0]})
    _assert_same(passes[1], passes[0])
    # the third pass wrote over the file: the first pass's results are their own, equal to a pass in memory
    monkeypatch.setattr(candidates_module, "SELECTION_MEMORY_BYTES", None)
    _home(monkeypatch, tmp_path, "in-memory")
    _assert_same(LayerCandidates(_model(20), LAYERS, n_components=5).look_at_layers(stimuli), passes[0])
    assert not list(home.rglob(".selection-rows-*"))  # unlinked: nothing left in the cache folder
    candidates_module._ARENA.free()


def test_a_process_that_may_start_no_thread_keeps_nothing_after_a_pass(stimuli, monkeypatch, tmp_path):
    # a sandboxed model server limits its threads (tests/boundary: "can't start new thread" from the timer)
    import threading

    candidates_module._ARENA.free()
    _home(monkeypatch, tmp_path, "home")
    first = LayerCandidates(_model(20), LAYERS, n_components=5).look_at_layers(stimuli)
    candidates_module._ARENA.free()

    def refuse(self):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Timer, "start", refuse)
    _home(monkeypatch, tmp_path, "no-threads")
    _assert_same(LayerCandidates(_model(20), LAYERS, n_components=5).look_at_layers(stimuli), first)
    assert candidates_module._ARENA._chunks == [] and candidates_module._ARENA._file is None
