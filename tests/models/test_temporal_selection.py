"""Layer selection of a video model: every candidate layer averaged over the benchmark's window, as the commitment
records it, streamed chunk by chunk, PCA-reduced and stored by content (``LayerCandidates.look_at_layers``).

The model is a closed form of its input: the preprocessing takes the red channel of every frame shown
(``T x H x W``); layer ``"stripes"`` (format ``"TC"``) is the mean of each of 8 horizontal stripes per frame, layer
``"pixels"`` (format ``"THW"``) every pixel of every frame (1,200 values per frame: more than the 1,000 components the
selection keeps), layer ``"pooled"`` (format ``"C"``) the clip's mean.
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
from PIL import Image

from brainscore.data import StimulusSet
from brainscore.models.candidates import LayerCandidates, gram_pca, selection_window
from brainscore.models.commitment import ModelCommitment
from brainscore.models.time_bins import align_time_bins
from brainscore.models.extraction.temporal import TemporalInferencer
from brainscore.models.extraction.temporal_store import TemporalExtractor
from brainscore.data.clips import Video
from brainscore.errors import ValidationError

pytest.importorskip("av")

FORMAT = {"stripes": "TC", "pixels": "THW", "pooled": "C"}
WINDOW = [(50, 150)]


class Model:
    """The fake ``get_activations``; counts the stimuli it saw."""

    def __init__(self):
        self.inputs = 0

    def __call__(self, inputs, layers):
        self.inputs += len(inputs)
        out = OrderedDict()
        out["stripes"] = [x.reshape(x.shape[0], 8, -1).mean(axis=2) for x in inputs]
        out["pixels"] = [x for x in inputs]
        out["pooled"] = np.array([[x.mean()] for x in inputs])
        return OrderedDict((layer, out[layer]) for layer in layers)


def preprocess(video):
    return video.to_numpy()[..., 0].astype(np.float64)


def inferencer(model, **kwargs):
    return TemporalInferencer(model, preprocess, FORMAT, Video, fps=20, max_workers=1, batch_size=4, **kwargs)


@pytest.fixture
def stimuli(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    rng = np.random.default_rng(0)
    folder = tmp_path / "images"
    folder.mkdir()
    paths = {}
    for i in range(10):  # ids out of sorted order, so rows are put back in the set's order
        stimulus_id = f"s{(7 * i) % 10}"
        paths[stimulus_id] = folder / f"{stimulus_id}.png"
        Image.fromarray(rng.integers(0, 256, size=(40, 30, 3), dtype=np.uint8)).save(paths[stimulus_id])
    ids = list(paths)
    return StimulusSet({"stimulus_id": ids, "category": [f"c{i % 2}" for i in range(10)]}, stimulus_paths=paths)


def recorded(extractor, stimuli, layer):
    """What the commitment records of ``layer`` in ``WINDOW``: the extractor's layer averaged over it."""
    return align_time_bins(extractor(stimuli, [layer]), WINDOW).squeeze("time_bin").values


def candidates(extractor, layers=("stripes", "pixels", "pooled")):
    return LayerCandidates(ModelCommitment("tiny-video", extractor, list(layers)), list(layers))


def test_candidate_features_are_the_recordings_in_the_window_and_their_principal_components(stimuli):
    extractor = TemporalExtractor(inferencer(Model()), identifier="tiny", model_key=None)
    features = candidates(extractor).look_at_layers(stimuli, time_bins=WINDOW)
    assert list(features["stripes"]["stimulus_id"].values) == list(stimuli["stimulus_id"])
    assert list(features["stripes"]["category"].values) == list(stimuli["category"])
    # small layers: the recording itself (float32)
    for layer in ("stripes", "pooled"):
        np.testing.assert_array_equal(features[layer].values, recorded(extractor, stimuli, layer).astype(np.float32))
    assert features["stripes"].sizes["neuroid"] == 8 and features["pooled"].sizes["neuroid"] == 1
    # the large layer: principal-component scores of its recording, rows in the set's order
    expected = recorded(extractor, stimuli, "pixels").astype(np.float32)
    assert expected.shape == (10, 1200)
    order = np.argsort(np.asarray(stimuli["stimulus_id"]).astype(str))
    scores = gram_pca(expected[order])[np.argsort(order)]
    np.testing.assert_allclose(features["pixels"].values, scores, rtol=1e-4, atol=1e-3)
    assert list(features["pixels"]["pca_component"].values) == list(range(10))


def test_the_window_is_the_benchmarks_span_and_it_must_be_covered(stimuli):
    assert selection_window(None) == [(70, 170)]
    assert selection_window([(50, 100), (100, 150), (150, 200)]) == [(50.0, 200.0)]
    for bad in ([], [(100, 50)], [("a", 1)], [(0, float("nan"))]):
        with pytest.raises(ValidationError):
            selection_window(bad)
    extractor = TemporalExtractor(inferencer(Model()), identifier="tiny", model_key=None)
    with pytest.raises(ValidationError, match="not covered"):  # images are shown for 1000 ms
        candidates(extractor, ["pooled"]).look_at_layers(stimuli, time_bins=[(900, 1100)])


def test_stored_by_the_models_key_the_stimuli_and_the_window(stimuli):
    model = Model()
    first = candidates(TemporalExtractor(inferencer(model), identifier="tiny", model_key=lambda: "v1"))
    features = first.look_at_layers(stimuli, time_bins=WINDOW)
    assert model.inputs == 10
    again = candidates(TemporalExtractor(inferencer(model), identifier="tiny", model_key=lambda: "v1"))
    stored = again.look_at_layers(stimuli, time_bins=WINDOW)
    assert model.inputs == 10  # read back: no forward pass
    for layer in features:
        np.testing.assert_array_equal(stored[layer].values, features[layer].values)
    candidates(TemporalExtractor(inferencer(model), identifier="tiny", model_key=lambda: "v1")).look_at_layers(
        stimuli, time_bins=[(100, 200)])
    assert model.inputs == 20  # another window
    candidates(TemporalExtractor(inferencer(model), identifier="tiny", model_key=lambda: "v2")).look_at_layers(
        stimuli, time_bins=WINDOW)
    assert model.inputs == 30  # another model
    # no model key: computed on every call, nothing stored
    for _ in range(2):
        candidates(TemporalExtractor(inferencer(model), identifier="tiny", model_key=None)).look_at_layers(
            stimuli, time_bins=WINDOW)
    assert model.inputs == 50


def test_a_video_model_commits_a_region_by_selection_once(stimuli):
    model = Model()
    seen = []

    def scorer(region, view):
        """Scores each layer by how well its first feature tracks the stimuli's mean red value."""
        features = view.look_at_layers(stimuli, time_bins=WINDOW)
        seen.append(sorted(features))
        target = np.array([np.asarray(Image.open(stimuli.get_stimulus(i)))[..., 0].mean()
                           for i in stimuli["stimulus_id"]])
        return {layer: abs(np.corrcoef(features[layer].values[:, 0], target)[0, 1]) for layer in view.layers}

    def commitment():
        return ModelCommitment("tiny-video", TemporalExtractor(inferencer(model), identifier="tiny",
                                                               model_key=lambda: "v1"),
                               ["stripes", "pixels", "pooled"], layer_scorer=scorer)

    first = commitment()
    assert first.layer_for("V4") == "pooled"  # the clip's mean is the image's mean red value
    assert first.layer_methods["V4"]["method"] == "selection" and seen == [["pixels", "pooled", "stripes"]]
    assert first.layer_scores["V4"]["pooled"] == pytest.approx(1.0, abs=1e-3)  # float16 activations
    inputs = model.inputs
    second = commitment()
    assert second.layer_for("V4") == "pooled" and model.inputs == inputs and len(seen) == 1  # the stored choice
