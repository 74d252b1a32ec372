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
