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
from brainscore.models.commitment import ModelCommitment, align_time_bins, load_region_layer_map
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


def test_time_bins_of_a_temporal_model_are_averaged_by_overlap():
    source = NeuroidAssembly(np.array([[[1.0, 3.0, 7.0]]]), dims=("presentation", "neuroid", "time_bin"),
                             coords={"stimulus_id": ("presentation", ["a"]), "neuroid_id": ("neuroid", ["n"]),
                                     "time_bin_start": ("time_bin", [0, 10, 20]),
                                     "time_bin_end": ("time_bin", [10, 20, 30])})
    aligned = align_time_bins(source, [(5, 15), (0, 30), (12, 20), (25, 40)])
    # (5,15): 5 ms of 1 and 5 of 3 -> 2; (0,30): mean 11/3; (12,20): all in bin 2 -> 3; (25,40): only bin 3 -> 7
    np.testing.assert_allclose(aligned.values[0, 0], [2.0, 11 / 3, 3.0, 7.0])
    assert aligned["time_bin_end"].values.tolist() == [15, 30, 20, 40]
    with pytest.raises(ValidationError, match="overlaps none"):
        align_time_bins(source, [(40, 50)])


def test_unmapped_region_without_scorer_says_how_to_give_a_map(stimuli):
    model = _commit(region_layer_map={"V1": "features.0"})
    model.start_recording("IT", [(70, 170)])
    with pytest.raises(BrainScoreError, match="no layer committed to region 'IT'.*region_layer_map"):
        model.look_at(stimuli)


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
