"""ModelCommitment: recordings per region and time bin, layer selection, behavioural tasks."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.decomposition import PCA

from brainscore.data import NeuroidAssembly, StimulusSet
from brainscore.errors import BrainScoreError, ValidationError
from brainscore.models import readouts
from brainscore.models.candidates import LayerCandidates, gram_pca
from brainscore.models.commitment import ModelCommitment, load_region_layer_map
from brainscore.models.time_bins import align_time_bins
from brainscore.models.extraction import ActivationsExtractor
from brainscore.models.preprocessing import Preprocessing

from model_fixtures import TinyNet

PRE = Preprocessing("imagenet", 20)
LAYERS = ["features.0", "features.1", "features.2"]


def _commit(net=None, **kwargs):
    extractor = ActivationsExtractor(net or TinyNet(), "tiny", PRE, batch_size=16)
    return ModelCommitment("tiny", extractor, LAYERS, **kwargs)


class FakeScorer:
    """Scores layers by a fixed table and records what it saw."""

    identifier = "fake-scorer"
    version = 1

    def __init__(self, table):
        self.table, self.calls = table, []

    def __call__(self, region, candidates):
        self.calls.append((region, list(candidates.layers), candidates.identifier, candidates.visual_degrees()))
        return dict(self.table)


def test_recording_gives_the_committed_layer_in_every_time_bin(stimuli):
    model = _commit(region_layer_map={"V1": "features.0"})
    assert model.visual_degrees() == 8 and model.region_layer_map == {"V1": "features.0"}
    model.start_recording("V1", time_bins=[(70, 170)])
    features = model.look_at(stimuli)
    assert features.dims == ("presentation", "neuroid", "time_bin")
    assert features.shape == (7, 4 * 9 * 9, 1)
    direct = model.activations_model(stimuli, ["features.0"])
    np.testing.assert_array_equal(features.values[..., 0], direct.values)
    assert set(features["region"].values) == {"V1"} and set(features["layer"].values) == {"features.0"}
    assert features["time_bin_start"].values.tolist() == [70] and features["time_bin_end"].values.tolist() == [170]
    model.start_recording("V1", time_bins=[(50, 100), (100, 150), (150, 200)])
    several = model.look_at(stimuli)
    assert several.sizes["time_bin"] == 3
    np.testing.assert_array_equal(several.values[..., 2], direct.values)  # static: the same in each bin
    assert several["time_bin_start"].values.tolist() == [50, 100, 150]


def test_recording_refuses_time_bins_that_are_not_finite_ordered_pairs():
    """A NaN or infinite bin would average to NaN scores in silence; none, or a malformed one, is an error too."""
    from brainscore.errors import ValidationError

    model = _commit(region_layer_map={"V1": "features.0"})
    for bad, message in [([], "no time bins"), ([(70, float("nan"))], "finite"), ([(70, float("inf"))], "finite"),
                         ([(70, 170, 270)], "pair"), ([("a", 170)], "pairs in ms"), ([(170, 70)], "end after")]:
        with pytest.raises(ValidationError, match=message):
            model.start_recording("V1", time_bins=bad)
    model.start_recording("V1", time_bins=np.array([[70.0, 170.0]]))  # an array of bins, as benchmarks keep them
    assert model.time_bins == [(70, 170)]


def test_time_bins_of_a_temporal_model_are_averaged_by_overlap():
    source = NeuroidAssembly(np.array([[[1.0, 3.0, 7.0]]]), dims=("presentation", "neuroid", "time_bin"),
                             coords={"stimulus_id": ("presentation", ["a"]), "neuroid_id": ("neuroid", ["n"]),
                                     "time_bin_start": ("time_bin", [0, 10, 20]),
                                     "time_bin_end": ("time_bin", [10, 20, 30])})
    aligned = align_time_bins(source, [(5, 15), (0, 30), (12, 20), (25, 30)])
    # (5,15): half of bin 1 and half of bin 2 -> 2; (0,30): mean 11/3; (12,20): in bin 2 -> 3; (25,30): bin 3 -> 7
    np.testing.assert_allclose(aligned.values[0, 0], [2.0, 11 / 3, 3.0, 7.0])
    assert aligned["time_bin_end"].values.tolist() == [15, 30, 20, 30]
    # as the reference's assembly_time_align: a requested bin the model's bins do not cover entirely is an error
    for uncovered in ([(40, 50)], [(25, 40)], [(0, 30.00001)]):
        with pytest.raises(ValidationError, match="not covered"):
            align_time_bins(source, uncovered)
    # each source bin weighs by the fraction of it the requested bin covers, not by milliseconds:
    # (0, 30) over bins 10 ms and 20 ms wide takes all of both: (1 + 3) / 2, not (10 * 1 + 20 * 3) / 30
    uneven = source.isel(time_bin=[0, 1]).assign_coords(time_bin_end=("time_bin", [10, 30]))
    np.testing.assert_allclose(align_time_bins(uneven, [(0, 30)]).values[0, 0], [2.0])
    centre = align_time_bins(source, [(0, 30), (21, 29)], mode="center")  # the bin holding the centre
    np.testing.assert_allclose(centre.values[0, 0], [3.0, 7.0])


def test_time_bins_average_as_the_references_operations_bit_for_bit_in_the_layers_dtype(monkeypatch):
    """Each requested bin is ``(x[..., overlapped] * w).sum(-1) / w.sum()`` in float64, back in the layer's dtype
    (the reference's assembly_time_align): equal to the last bit, NaN kept out of bins that do not overlap it."""
    from brainscore.models import time_bins
    from brainscore.models.time_bins import average_time_bins, time_bin_weights

    rng = np.random.default_rng(3)
    source = [(40 * i, 40 * (i + 1)) for i in range(25)]
    targets = [(70, 170), (0, 1000), (10, 30), (100, 140), (5, 6)] + [(a, a + 10) for a in range(0, 990, 10)]
    weights = time_bin_weights(source, targets)
    for dtype in (np.float32, np.float16, np.float64):
        values = rng.standard_normal((6, 40, 25)).astype(dtype)
        values[0, 0, 24] = np.nan  # the padding after a shorter video: only bins overlapping 960-1000 ms see it
        expected = np.stack([((values[..., row > 0] * row[row > 0]).sum(-1) / row[row > 0].sum()).astype(dtype)
                             for row in weights], -1)
        averaged = average_time_bins(values, source, targets)
        assert averaged.dtype == dtype
        np.testing.assert_array_equal(averaged, expected)  # NaN where expected has NaN, else bit for bit
        assert np.isfinite(averaged[0, 0, 0]) and np.isnan(averaged[0, 0, 1])
    # blocks of rows give the same bits as the whole array
    values = rng.standard_normal((200, 25)).astype(np.float32)
    whole = average_time_bins(values, source, targets)
    monkeypatch.setattr(time_bins, "AVERAGE_BLOCK_BYTES", 1)  # one row a block
    np.testing.assert_array_equal(average_time_bins(values, source, targets), whole)
    assert average_time_bins(np.arange(25)[None], source, [(0, 80)]).dtype == np.float64  # integers: float64


def test_unmapped_region_without_scorer_is_committed_by_the_layer_rule(stimuli):
    from brainscore.models import layer_rule

    model = _commit(region_layer_map={"V1": "features.0"})
    model.start_recording("IT", [(70, 170)])
    features = model.look_at(stimuli)
    depth = layer_rule.load()["rule"]["relative_depth"]["IT"]  # 0.81 of the way: round(0.81 * 2) = 2
    assert model.region_layer_map == {"V1": "features.0", "IT": "features.2"}
    assert set(features["layer"].values) == {"features.2"}
    assert model.layer_commitments() == {
        "V1": {"layer": "features.0", "method": "declared"},
        "IT": {"layer": "features.2", "method": "rule", "rule": "relative-depth-median-v1", "relative_depth": depth,
               "maps": layer_rule.load()["rule"]["maps"], "index": 2, "n_candidates": 3, "candidates": "declared"}}
    with pytest.raises(ValidationError, match="no layer rule for region 'MT'"):
        model.layer_for("MT")


def test_a_region_without_selection_data_falls_back_to_the_rule(stimuli, private_cache):
    from brainscore.errors import NoSelectionDataError

    class V4Only(FakeScorer):
        def __call__(self, region, candidates):
            if region != "V4":
                raise NoSelectionDataError(f"no selection data for region {region!r}")
            return super().__call__(region, candidates)

        def benchmarks(self, region):
            return ["Selection.V4-a", "Selection.V4-b"] if region == "V4" else []

    model = _commit(layer_scorer=V4Only({"features.0": 0.1, "features.1": 0.3, "features.2": 0.2}))
    assert model.layer_for("V4") == "features.1"
    assert model.layer_for("V1") == "features.1"  # round(0.27 * 2) = 1
    table = model.layer_commitments()
    assert table["V4"] == {"layer": "features.1", "method": "selection",
                           "scorer": {"identifier": "fake-scorer", "version": "1"},
                           "benchmarks": ["Selection.V4-a", "Selection.V4-b"],
                           "scores": [["features.0", 0.1], ["features.1", 0.3], ["features.2", 0.2]]}
    assert table["V1"]["method"] == "rule" and table["V1"]["index"] == 1


def test_a_network_without_a_layer_list_gets_its_top_level_blocks():
    extractor = ActivationsExtractor(TinyNet(), "tiny", PRE, batch_size=16)
    model = ModelCommitment("tiny", extractor, None)
    assert model.layers == ["features.0", "features.1", "features.2", "head"]
    assert model.candidates_source == "top-level-blocks-v1"
    assert model.behavioral_readout_layer == "head"
    assert model.layer_for("IT") == "features.2"  # round(0.81 * 3) = 2
    assert model.layer_commitments()["IT"]["candidates"] == "top-level-blocks-v1"
    with pytest.raises(ValidationError, match="no network to take them from"):
        ModelCommitment("bare", object(), None)


def test_layer_selection_commits_the_best_layer_once(stimuli, private_cache):
    scorer = FakeScorer({"features.0": 0.2, "features.1": 0.7, "features.2": np.nan})
    model = _commit(layer_scorer=scorer)
    model.start_recording("V4", [(70, 170)])
    features = model.look_at(stimuli)
    assert model.region_layer_map == {"V4": "features.1"}
    assert set(features["layer"].values) == {"features.1"}
    assert model.layer_scores["V4"]["features.1"] == 0.7
    assert scorer.calls == [("V4", LAYERS, "tiny-pca_1000", 8.0)]
    model.look_at(stimuli)
    assert len(scorer.calls) == 1
    # a fresh commitment of the same weights finds the choice in the cache
    again = _commit(layer_scorer=scorer)
    assert again.layer_for("V4") == "features.1" and len(scorer.calls) == 1
    # another scorer identity selects anew; ties go to the shallower layer
    other = FakeScorer({"features.0": 0.5, "features.2": 0.5})
    other.identifier = "other-scorer"
    assert _commit(layer_scorer=other).layer_for("V4") == "features.0" and len(other.calls) == 1


def test_selection_errors():
    with pytest.raises(BrainScoreError, match="not candidates"):
        _commit(layer_scorer=FakeScorer({"head": 1.0})).layer_for("V4")
    with pytest.raises(BrainScoreError, match="no finite score"):
        _commit(layer_scorer=FakeScorer({"features.0": np.nan})).layer_for("V4")


def test_candidates_record_all_layers_in_one_pass_and_reduce_wide_ones(stimuli):
    model = _commit()
    candidates = LayerCandidates(model, LAYERS, n_components=5)
    layers = candidates.look_at_layers(stimuli)
    assert model.activations_model.forward_passes == 1
    assert list(layers) == LAYERS
    # features.0 has 324 units > 5: reduced to 5 principal components fitted on these 7 stimuli
    wide = model.activations_model(stimuli, ["features.0"]).values
    reduced = layers["features.0"]
    assert reduced.shape == (7, 5) and list(reduced["pca_component"].values) == list(range(5))
    expected = PCA(5, svd_solver="full").fit_transform(wide)
    np.testing.assert_allclose(np.abs(reduced.values), np.abs(expected), rtol=1e-3, atol=1e-4)
    assert list(reduced["stimulus_id"].values) == list(stimuli["stimulus_id"])
    # features.2 has 16 units > 5 as well; a 1000-component candidate set keeps them raw
    raw = LayerCandidates(model, ["features.2"]).look_at_layers(stimuli)["features.2"]
    assert raw.shape == (7, 16) and "pca_component" not in raw.coords


def test_selection_keeps_its_small_candidate_layers_as_the_activations_a_benchmark_reads(stimuli, tmp_path,
                                                                                         monkeypatch):
    """A candidate layer of at most n_components units is held unreduced by the selection's pass; it is stored as the
    activations entry ``extract`` would write (same file, byte for byte), so a benchmark that commits it runs no second
    forward pass. Wider layers are only reduced, never stored unreduced."""
    from brainscore.caching import verified

    model = _commit()
    extractor = model.activations_model
    LayerCandidates(model, LAYERS, n_components=20).look_at_layers(stimuli)  # features.0: 324 units, .1: 324, .2: 16
    assert extractor.forward_passes == 1
    paths = extractor.cache_paths(stimuli, LAYERS)
    assert verified(paths["features.2"])
    assert not paths["features.0"].exists() and not paths["features.1"].exists()
    kept = extractor(stimuli, ["features.2"])
    assert extractor.forward_passes == 1  # read from the selection's entry, not computed
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "fresh"))  # an empty cache: extract computes it
    fresh_model = _commit()
    fresh = fresh_model.activations_model.extract(stimuli, ["features.2"])["features.2"]
    assert fresh_model.activations_model.forward_passes == 1
    assert fresh.path != paths["features.2"] and fresh.path.name == paths["features.2"].name
    assert fresh.path.read_bytes() == paths["features.2"].read_bytes()
    np.testing.assert_array_equal(kept.values, fresh_model.activations_model(stimuli, ["features.2"]).values)


def test_a_full_disk_costs_the_selection_only_its_shortcut(stimuli, monkeypatch):
    """Storing a small layer as activations may fail (a full disk): the selection's features are still returned, with
    a warning, and the entry is not left half-written."""
    model = _commit()
    extractor = model.activations_model

    def full_disk(path, values):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(extractor, "store_features", full_disk)
    with pytest.warns(RuntimeWarning, match="No space left on device"):
        layers = LayerCandidates(model, LAYERS, n_components=20).look_at_layers(stimuli)
    assert layers["features.2"].shape == (7, 16)
    assert not extractor.cache_paths(stimuli, ["features.2"])["features.2"].exists()


def test_gram_pca_equals_scikit_learn_up_to_sign(tmp_path):
    rng = np.random.default_rng(1)
    x = (rng.normal(size=(40, 300)) @ rng.normal(size=(300, 300)) / 10 + 3).astype(np.float32)
    stored = np.lib.format.open_memmap(tmp_path / "x.npy", mode="w+", dtype=np.float32, shape=x.shape)
    stored[:] = x
    ours = gram_pca(np.load(tmp_path / "x.npy", mmap_mode="r"), 25, block_bytes=40 * 4 * 7)  # 7-column blocks
    theirs = PCA(25, svd_solver="full").fit_transform(x.astype(np.float64))
    signs = np.sign((ours * theirs).sum(axis=0))
    np.testing.assert_allclose(ours * signs, theirs, rtol=2e-3, atol=2e-3 * np.abs(theirs).max())
    assert gram_pca(x, 1000).shape == (40, 40)  # at most n_samples components


def test_label_task_imagenet_and_sixteen_classes(stimuli):
    net = TinyNet()
    net.head = torch.nn.Linear(16, 1000)
    model = _commit(net)
    model.start_task("label", "imagenet")
    choices = model.look_at(stimuli)
    logits = model.activations_model(stimuli, ["logits"]).values
    assert choices.dims == ("presentation",)
    assert list(choices.values) == list(readouts.imagenet_labels(logits))
    assert list(choices["stimulus_id"].values) == list(stimuli["stimulus_id"])
    assert choices["label_name"].values[0] == readouts.imagenet_class_names()[int(np.argmax(logits[0]))]
    model.start_task("label", ["dog", "cat", "truck"])
    assert list(model.look_at(stimuli).values) == list(readouts.choose_labels(logits, ["dog", "cat", "truck"]))
    with pytest.raises(ValidationError, match="no ImageNet classes"):
        model.start_task("label", ["unicorn"])


def test_probabilities_task_fits_on_the_readout_layer(tmp_path, stimuli):
    fitting = StimulusSet(stimuli.assign(image_label=["a", "b", "a", "c", "b", "a", "c"]),
                          stimulus_paths=stimuli.stimulus_paths)
    model = _commit(behavioral_readout_layer="features.2")
    model.start_task("probabilities", fitting)
    probabilities = model.look_at(stimuli)
    assert probabilities.dims == ("presentation", "choice")
    assert list(probabilities["choice"].values) == ["a", "b", "c"]
    features = model.activations_model(stimuli, ["features.2"]).values
    expected = readouts.ProbabilitiesClassifier().fit(features, fitting["image_label"]).predict_proba(features)
    np.testing.assert_allclose(probabilities.values, expected)
    with pytest.raises(ValidationError, match="image_label"):
        model.start_task("probabilities", stimuli)


def test_probabilities_readout_on_a_subset_of_the_shown_images_runs_the_network_once_and_is_cached(
        tmp_path, monkeypatch, stimuli):
    """Fitting on 5 of the 7 images the model then looks at takes their rows of the look_at features (one pass,
    the same numbers as fitting on their own features); a second model loads the fitted readout from the cache."""
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    fitting = StimulusSet(stimuli.iloc[:5].assign(image_label=["a", "b", "a", "c", "b"]),
                          stimulus_paths=stimuli.stimulus_paths)
    model = _commit(behavioral_readout_layer="features.2")
    model.start_task("probabilities", fitting)
    probabilities = model.look_at(stimuli)
    assert model.activations_model.forward_passes == 1      # 7 images, batch 16: the fitting five are among them
    features = _commit().activations_model(stimuli, ["features.2"]).values
    expected = readouts.ProbabilitiesClassifier().fit(features[:5], ["a", "b", "a", "c", "b"]).predict_proba(features)
    np.testing.assert_allclose(probabilities.values, expected, rtol=1e-10, atol=1e-12)

    def no_fit(*args, **kwargs):
        raise AssertionError("the readout was fitted again")

    monkeypatch.setattr(readouts.ProbabilitiesClassifier, "fit", no_fit)
    again = _commit(behavioral_readout_layer="features.2")
    again.start_task("probabilities", fitting)
    np.testing.assert_array_equal(again.look_at(stimuli).values, probabilities.values)
    assert again.activations_model.forward_passes == 0      # features and readout from the cache
    other = StimulusSet(fitting.assign(image_label=["b", "a", "a", "c", "b"]), stimulus_paths=stimuli.stimulus_paths)
    again.start_task("probabilities", other)                 # other labels: another readout, fitted
    with pytest.raises(AssertionError, match="fitted again"):
        again.look_at(stimuli)


def test_odd_one_out_task(stimuli):
    model = _commit(behavioral_readout_layer="features.2")
    ids = stimuli["stimulus_id"].tolist()
    rows = [0, 1, 2, 3, 4, 5, 2, 0, 6]
    triplets = StimulusSet({"stimulus_id": [ids[i] for i in rows]}, stimulus_paths=stimuli.stimulus_paths)
    model.start_task("odd_one_out")
    choice = model.look_at(triplets)
    features = model.activations_model(stimuli, ["features.2"]).values
    expected = readouts.odd_one_out(features @ features.T, np.array(rows).reshape(3, 3))
    assert list(choice.values) == list(expected)
    assert choice["stimulus_id_1"].values.tolist() == [ids[1], ids[4], ids[0]]
    assert choice["odd_one_out_id"].values[0] == ids[rows[expected[0]]]
    with pytest.raises(ValidationError, match="multiple of 3"):
        model.look_at(StimulusSet({"stimulus_id": ids[:2]}, stimulus_paths=stimuli.stimulus_paths))


def test_look_at_needs_a_task_or_recording(stimuli):
    with pytest.raises(BrainScoreError, match="start_recording"):
        _commit().look_at(stimuli)
    with pytest.raises(ValidationError, match="unknown task"):
        _commit().start_task("draw")


def test_stored_region_layer_map(tmp_path):
    (tmp_path / "region_layer_map").mkdir()
    (tmp_path / "region_layer_map" / "m.json").write_text('{"V4": "_blocks.5"}')
    (tmp_path / "region_layer_map" / "empty.json").write_text("")
    assert load_region_layer_map(tmp_path, "m") == {"V4": "_blocks.5"}
    assert load_region_layer_map(tmp_path, "empty") == {} and load_region_layer_map(tmp_path, "absent") == {}
    (tmp_path / "region_layer_map" / "bad.json").write_text('["V4"]')
    with pytest.raises(ValidationError, match="JSON object"):
        load_region_layer_map(tmp_path, "bad")
