"""Video-model activations over time (:mod:`brainscore.models.extraction.temporal`): exact values on known videos.

The videos are written here with PyAV, losslessly (``libx264rgb``, quantiser 0): 60 fps, frame ``i`` a uniform grey of
value ``2 i`` (``2 i``, not ``4 i``, so that 120 frames fit in a byte), 120 frames (2000 ms) and 60 frames
(1000 ms). Shown at 10 fps, frame ``k`` is the source frame at ``100 k`` ms, i.e. source frame ``6 k``, grey ``12 k``.

The model is a closed form of its input: the preprocessing takes the red channel of every frame shown
(``T x H x W``); layer ``"frames"`` (format ``"T"``) is the mean of each frame, layer ``"pooled"`` (format ``"C"``,
one channel) the mean of the whole clip. Every expected value is therefore ``12 k`` or a mean of such values.
"""
from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
import pytest

from brainscore.data import StimulusSet
from brainscore.models.extraction import temporal
from brainscore.models.extraction.temporal_store import TemporalExtractor
from brainscore.models.extraction.temporal import (BlockInferencer, CausalInferencer, Inferencer,
                                                   TemporalInferencer, fps_time_bins, stack_with_nan_padding)
from brainscore_vision.model_helpers.activations.temporal.core.inferencer import \
    TemporalInferencer as AdapterTemporalInferencer
from brainscore_vision.model_helpers.activations.temporal.inputs import Video

av = pytest.importorskip("av")

FORMAT = {"frames": "T", "pooled": "C"}
GREY_STEP = 2          # grey value of source frame i is GREY_STEP * i
SHOWN_STEP = 6         # at 10 fps, shown frame k is source frame 6 k (60 fps source)


def _write_ramp(path, n_frames: int, fps: int = 60, width: int = 64, height: int = 48):
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264rgb", rate=fps, options={"qp": "0"})
        stream.width, stream.height, stream.pix_fmt = width, height, "rgb24"
        for index in range(n_frames):
            frame = np.full((height, width, 3), GREY_STEP * index, dtype=np.uint8)
            container.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")))
        container.mux(stream.encode(None))
    return path


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    """``(2000 ms video, 1000 ms video)`` paths as str."""
    folder = tmp_path_factory.mktemp("videos")
    return str(_write_ramp(folder / "long.mp4", 120)), str(_write_ramp(folder / "short.mp4", 60))


def preprocess(video):
    return video.to_numpy()[..., 0].astype(np.float64)


class Model:
    """The fake ``get_activations``; counts its calls and the inputs it saw."""

    def __init__(self):
        self.calls = 0
        self.inputs = 0

    def __call__(self, inputs, layers):
        self.calls += 1
        self.inputs += len(inputs)
        return OrderedDict([("frames", [x.mean(axis=(1, 2)) for x in inputs]),
                            ("pooled", np.array([[x.mean()] for x in inputs]))])


def shown_grey(k):
    """Grey of the frame shown at 100 k ms (10 fps)."""
    return GREY_STEP * SHOWN_STEP * np.asarray(k, dtype=float)


def _temporal(model=None, **kwargs):
    kwargs.setdefault("fps", 10)
    return TemporalInferencer(model or Model(), preprocess, FORMAT, Video, max_workers=1, **kwargs)


# ---- helpers ----------------------------------------------------------------------------------------------------
def test_stack_with_nan_padding_pads_exactly_the_missing_cells():
    stacked = stack_with_nan_padding([np.arange(6.0).reshape(2, 3), np.array([[10.0, 11, 12, 13]])])
    assert stacked.shape == (2, 2, 4)
    expected_nan = np.zeros((2, 2, 4), dtype=bool)
    expected_nan[0, :, 3] = True     # first array: 4th column missing
    expected_nan[1, 1, :] = True     # second array: 2nd row missing
    np.testing.assert_array_equal(np.isnan(stacked), expected_nan)
    np.testing.assert_array_equal(stacked[0, :, :3], [[0, 1, 2], [3, 4, 5]])
    np.testing.assert_array_equal(stacked[1, 0], [10, 11, 12, 13])
    assert stack_with_nan_padding([np.arange(3)], dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="same number of dimensions"):
        stack_with_nan_padding([np.zeros((2, 3)), np.zeros(4)])
    with pytest.raises(ValueError, match="at least one"):
        stack_with_nan_padding([])


def test_fps_time_bins_cover_the_duration_with_bins_of_one_frame_interval():
    bins = fps_time_bins(1000, 30)
    assert bins.shape == (30, 2)
    assert bins[-1, 1] == 1000.0 and bins[0, 0] == 0.0
    np.testing.assert_allclose(bins[:, 0], np.arange(30) * 1000 / 30)
    np.testing.assert_allclose(bins[:-1, 1] - bins[:-1, 0], 1000 / 30)
    np.testing.assert_allclose(bins[1:, 0], bins[:-1, 1], rtol=1e-12)         # contiguous (up to round-off)
    np.testing.assert_array_equal(fps_time_bins(250, 10), [[0, 100], [100, 200], [200, 250]])  # a short last bin
    assert len(fps_time_bins(1000, 10)) == 10                                  # no empty 11th bin from round-off


# ---- TemporalInferencer ------------------------------------------------------------------------------------------
def test_evenly_spaced_bins_hold_the_frame_shown_in_each_bin(videos):
    long_video, _ = videos
    result = _temporal()([long_video], ["frames", "pooled"])
    assert result.dims == ("stimulus_path", "neuroid", "time_bin")
    assert result.shape == (1, 2, 20)
    assert result.dtype == np.float16
    np.testing.assert_array_equal(result["time_bin_start"].values, np.arange(20) * 100)
    np.testing.assert_array_equal(result["time_bin_end"].values, np.arange(1, 21) * 100)
    assert list(result["stimulus_path"].values) == [long_video]
    frames = result.sel_coords(layer="frames").values[0, 0]
    np.testing.assert_array_equal(frames, shown_grey(np.arange(20)))        # bin k: source frame 6 k, grey 12 k
    pooled = result.sel_coords(layer="pooled").values[0, 0]
    np.testing.assert_array_equal(pooled, np.full(20, shown_grey(np.arange(20)).mean()))  # one step over all bins


def test_the_adapter_inferencer_defaults_to_video_and_gives_the_same_values(videos):
    long_video, _ = videos
    adapter = AdapterTemporalInferencer(Model(), preprocess, FORMAT, fps=10, max_workers=1)
    np.testing.assert_array_equal(adapter([long_video], ["frames"]).values, _temporal()([long_video], ["frames"]).values)


def test_a_shorter_video_is_nan_after_its_end(videos):
    long_video, short_video = videos
    model = Model()
    result = _temporal(model)([short_video, long_video], ["frames"])
    assert list(result["stimulus_path"].values) == [short_video, long_video]
    assert result.shape == (2, 1, 20)
    values = result.values[:, 0].astype(float)
    np.testing.assert_array_equal(values[0, :10], shown_grey(np.arange(10)))
    assert np.isnan(values[0, 10:]).all()
    np.testing.assert_array_equal(values[1], shown_grey(np.arange(20)))
    assert model.calls == 2                                                    # different durations: two batches


def test_ignore_time_makes_time_a_channel_on_one_bin(videos):
    long_video, short_video = videos
    result = _temporal(time_alignment="ignore_time")([long_video, short_video], ["frames", "pooled"])
    assert result.dims == ("stimulus_path", "neuroid", "time_bin") and result.shape == (2, 21, 1)
    np.testing.assert_array_equal(result["time_bin_start"].values, [0])
    np.testing.assert_array_equal(result["time_bin_end"].values, [2000])
    frames = result.sel_coords(layer="frames")
    assert frames.sizes["neuroid"] == 20                                       # one neuroid per frame shown
    np.testing.assert_array_equal(frames["channel_temporal"].values, np.arange(20))
    np.testing.assert_array_equal(frames.values[0, :, 0], shown_grey(np.arange(20)))
    short = frames.values[1, :, 0].astype(float)
    np.testing.assert_array_equal(short[:10], shown_grey(np.arange(10)))
    assert np.isnan(short[10:]).all()
    np.testing.assert_array_equal(result.sel_coords(layer="pooled")["channel_temporal"].values, [-1])


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(num_frames=(1, 15)), "frames"),           # 2000 ms at 10 fps: 20 frames
    (dict(duration=(0, 1500)), "1500"),
    (dict(num_frames=25), "frames"),
])
def test_a_stimulus_out_of_the_models_range_is_an_error(videos, kwargs, message):
    long_video, short_video = videos
    with pytest.raises(ValueError, match=message):
        _temporal(**kwargs)([long_video], ["frames"])


def test_a_stimulus_at_the_ends_of_the_models_range_is_accepted(videos):
    long_video, short_video = videos
    result = _temporal(num_frames=(10, 20), duration=(1000, 2000))([short_video, long_video], ["frames"])
    assert result.shape == (2, 1, 20)


# ---- CausalInferencer and BlockInferencer -------------------------------------------------------------------------
def test_causal_activation_is_the_last_step_on_the_clip_ending_at_the_bin(videos):
    long_video, _ = videos
    model = Model()
    inferencer = CausalInferencer(model, preprocess, FORMAT, Video, fps=10, max_workers=1)
    assert inferencer._compute_temporal_context() == (100.0, math.inf)
    result = inferencer([long_video], ["frames", "pooled"])
    assert result.dims == ("stimulus_path", "neuroid", "time_bin") and result.shape == (1, 2, 20)
    np.testing.assert_array_equal(result["time_bin_start"].values, np.arange(20) * 100)
    np.testing.assert_array_equal(result["time_bin_end"].values, np.arange(1, 21) * 100)
    k = np.arange(20)
    # clip [0, 100 (k + 1)) shows frames 0..k; its last step is frame k, its mean is the mean of grey 12 j, j <= k
    np.testing.assert_array_equal(result.sel_coords(layer="frames").values[0, 0], shown_grey(k))
    np.testing.assert_array_equal(result.sel_coords(layer="pooled").values[0, 0], shown_grey(k) / 2)
    assert model.inputs == 20                                                  # one clip per bin


def test_causal_inferencer_only_aligns_per_frame():
    with pytest.raises(ValueError, match="per_frame_aligned"):
        CausalInferencer(Model(), preprocess, FORMAT, Video, fps=10, time_alignment="evenly_spaced")


def test_blocks_of_the_temporal_context_join_to_the_whole_video(videos):
    long_video, _ = videos
    model = Model()
    inferencer = BlockInferencer(model, preprocess, FORMAT, Video, fps=10, duration=(0, 1000), max_workers=1)
    assert inferencer._compute_temporal_context() == (100.0, 1000.0)
    result = inferencer([long_video], ["frames", "pooled"])
    assert result.shape == (1, 2, 20)
    np.testing.assert_array_equal(result["time_bin_start"].values, np.arange(20) * 100)
    np.testing.assert_array_equal(result["time_bin_end"].values, np.arange(1, 21) * 100)
    single = _temporal()([long_video], ["frames"])
    np.testing.assert_array_equal(result.sel_coords(layer="frames").values, single.values)
    # "pooled" has one step per block: the mean of the block's frames over the block's bins
    np.testing.assert_array_equal(result.sel_coords(layer="pooled").values[0, 0],
                                  np.repeat([shown_grey(np.arange(10)).mean(), shown_grey(np.arange(10, 20)).mean()],
                                            10))
    assert (model.calls, model.inputs) == (1, 2)                               # two blocks of 1000 ms, one batch


@pytest.mark.parametrize(("strategy", "fixed", "expected"), [
    ("greedy", None, (200, 1000)),
    ("conservative", None, (200, 200)),
    ("fix", 500, (200, 500)),
])
def test_temporal_context_strategies(strategy, fixed, expected):
    inferencer = CausalInferencer(None, None, None, fps=10, duration=(200, 1000), temporal_context_strategy=strategy,
                                  fixed_temporal_context=fixed)
    assert inferencer._compute_temporal_context() == expected


def test_a_fixed_context_needs_a_value_in_the_models_range():
    with pytest.raises(ValueError, match="fixed_temporal_context"):
        CausalInferencer(None, None, None, fps=10, duration=(200, 1000), temporal_context_strategy="fix")
    outside = CausalInferencer(None, None, None, fps=10, duration=(200, 1000), temporal_context_strategy="fix",
                               fixed_temporal_context=1500)
    with pytest.raises(ValueError, match="outside"):
        outside._compute_temporal_context()


# ---- Inferencer: packaging, spatial downsampling ------------------------------------------------------------------
def test_layers_are_packaged_side_by_side_with_their_channels(videos):
    long_video, short_video = videos
    result = Inferencer(Model(), preprocess, FORMAT, Video, max_workers=1)([short_video, long_video],
                                                                          ["pooled", "frames"])
    assert result.dims == ("stimulus_path", "neuroid") and result.shape == (2, 1 + 120)
    assert list(result["layer"].values) == ["pooled"] + ["frames"] * 120
    np.testing.assert_array_equal(result["neuroid_num"].values, np.r_[0, np.arange(120)])
    assert list(result["neuroid_id"].values) == ["pooled.0"] + [f"frames.{i}" for i in range(120)]
    np.testing.assert_array_equal(result["channel"].values, np.r_[0, np.full(120, -1)])
    np.testing.assert_array_equal(result["channel_temporal"].values, np.r_[-1, np.arange(120)])
    values = result.values.astype(float)
    np.testing.assert_array_equal(values[1, 1:], GREY_STEP * np.arange(120))  # every source frame at 60 fps
    np.testing.assert_array_equal(values[:, 0], [GREY_STEP * 29.5, GREY_STEP * 59.5])
    np.testing.assert_array_equal(values[0, 1:61], GREY_STEP * np.arange(60))
    assert np.isnan(values[0, 61:]).all()


def test_max_spatial_size_averages_areas_in_the_maps_orientation(videos):
    _, short_video = videos
    spatial = np.arange(32.0).reshape(8, 4)                                   # H = 8, W = 4

    def get_activations(inputs, layers):
        return {"map": np.stack([spatial for _ in inputs])}

    result = Inferencer(get_activations, preprocess, {"map": "HW"}, Video, max_spatial_size=4, max_workers=1)(
        [short_video], ["map"])
    expected = spatial.reshape(4, 2, 2, 2).mean(axis=(1, 3))                  # 2 x 2 blocks -> 4 x 2
    assert result.shape == (1, 8)
    np.testing.assert_array_equal(result["channel_y"].values, np.repeat(np.arange(4), 2))
    np.testing.assert_array_equal(result["channel_x"].values, np.tile(np.arange(2), 4))
    np.testing.assert_array_equal(result.values[0].astype(float), expected.ravel())


# ---- TemporalExtractor -------------------------------------------------------------------------------------------
def test_extractor_on_a_stimulus_set_keeps_its_rows_and_columns(videos):
    long_video, short_video = videos
    stimulus_set = StimulusSet({"stimulus_id": ["b", "a"], "speed": ["fast", "slow"]},
                               stimulus_paths={"a": short_video, "b": long_video})
    result = TemporalExtractor(_temporal(), identifier="fake")(stimulus_set, ["frames"])
    assert result.dims == ("presentation", "neuroid", "time_bin") and result.shape == (2, 1, 20)
    assert list(result["stimulus_id"].values) == ["b", "a"]
    assert list(result["speed"].values) == ["fast", "slow"]
    values = result.values[:, 0].astype(float)
    np.testing.assert_array_equal(values[0], shown_grey(np.arange(20)))
    np.testing.assert_array_equal(values[1, :10], shown_grey(np.arange(10)))
    assert np.isnan(values[1, 10:]).all()


def test_a_path_listed_twice_is_run_once_and_returned_twice(videos):
    long_video, short_video = videos
    model = Model()
    result = TemporalExtractor(_temporal(model)).from_paths([long_video, short_video, long_video], ["frames"])
    assert model.inputs == 2
    assert list(result["stimulus_path"].values) == [long_video, short_video, long_video]
    np.testing.assert_array_equal(result.values[0], result.values[2])
    np.testing.assert_array_equal(result.values[0, 0], shown_grey(np.arange(20)))


def test_extractor_errors(videos):
    long_video, _ = videos
    extractor = TemporalExtractor(_temporal())
    with pytest.raises(NotImplementedError):
        extractor.register_batch_activations_hook(lambda *args: None)
    with pytest.raises(KeyError, match="logits"):
        extractor.from_paths([long_video], ["logits"])

    def one_row_too_many(inputs, layers):
        return {"frames": np.zeros((len(inputs) + 1, 20))}

    with pytest.raises(ValueError, match="rows"):
        TemporalExtractor(_temporal(one_row_too_many)).from_paths([long_video], ["frames"])


def test_the_time_alignments_are_registered_by_the_references_names():
    assert sorted(temporal.TIME_ALIGNMENTS) == ["estimate_layer_fps", "evenly_spaced", "ignore_time",
                                                "per_frame_aligned"]
    with pytest.raises(ValueError, match="time_alignment"):
        _temporal(time_alignment="nearest")


# ---- stored activations -----------------------------------------------------------------------------------------
def test_stored_layers_are_read_back_and_keyed_by_model_stimuli_and_inferencer(videos, tmp_path, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    long_video, short_video = videos
    model = Model()
    extractor = TemporalExtractor(_temporal(model), identifier="fake", model_key=lambda: "model-v1")
    first = extractor.from_paths([long_video, short_video], ["frames", "pooled"])
    assert model.calls == 2
    again = TemporalExtractor(_temporal(model), identifier="fake", model_key=lambda: "model-v1")
    second = again.from_paths([long_video, short_video], ["frames", "pooled"])
    assert model.calls == 2                                   # both layers read back, no forward pass
    np.testing.assert_array_equal(second.values, first.values)
    assert list(second["layer"].values) == list(first["layer"].values)
    again.from_paths([long_video, short_video], ["pooled"])   # one stored layer alone
    assert model.calls == 2
    # another model, another stimulus order, another frame rate, a stimulus file changed: computed again
    TemporalExtractor(_temporal(model), identifier="fake", model_key=lambda: "model-v2").from_paths(
        [long_video, short_video], ["pooled"])
    assert model.calls == 4
    TemporalExtractor(_temporal(model), identifier="fake", model_key=lambda: "model-v1").from_paths(
        [short_video, long_video], ["pooled"])
    assert model.calls == 6
    TemporalExtractor(_temporal(model, fps=5), identifier="fake", model_key=lambda: "model-v1").from_paths(
        [long_video, short_video], ["pooled"])
    assert model.calls == 8
    changed = tmp_path / "changed.mp4"
    _write_ramp(changed, 60)
    before = extractor.from_paths([long_video, str(changed)], ["pooled"]).values[1, 0, 0]
    calls = model.calls
    _write_ramp(changed, 30)                                  # same path, other content (500 ms)
    after = extractor.from_paths([long_video, str(changed)], ["pooled"]).values[1, 0, 0]
    assert model.calls == calls + 2
    assert (before, after) == (54, 24)  # mean grey of the frames shown at 10 fps: 12 k for k < 10, then k < 5


def test_a_model_without_a_key_is_computed_every_time(videos, tmp_path, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    long_video, _ = videos
    model = Model()
    for model_key in (None, lambda: None):
        extractor = TemporalExtractor(_temporal(model), identifier="fake", model_key=model_key)
        extractor.from_paths([long_video], ["pooled"])
        extractor.from_paths([long_video], ["pooled"])
    assert model.calls == 4
    assert not list((tmp_path / "home").rglob("*.pkl"))


def test_an_assembly_with_nan_after_a_shorter_video_aligns_to_a_benchmark_window():
    """brainscore.models.time_bins.align_time_bins (a model's bins onto a benchmark's) averages only the bins a
    window overlaps: NaN padding in other bins does not reach it."""
    from brainscore.data.assemblies import NeuroidAssembly
    from brainscore.models.time_bins import align_time_bins

    values = np.array([[[1.0, 3.0, np.nan, np.nan]], [[1.0, 3.0, 5.0, 7.0]]])  # 2 presentations, 1 neuroid, 4 bins
    assembly = NeuroidAssembly(values, dims=("presentation", "neuroid", "time_bin"),
                               coords={"stimulus_id": ("presentation", ["short", "long"]),
                                       "neuroid_id": ("neuroid", ["n"]),
                                       "time_bin_start": ("time_bin", [0, 100, 200, 300]),
                                       "time_bin_end": ("time_bin", [100, 200, 300, 400])})
    aligned = align_time_bins(assembly, [(50, 150), (250, 350)])
    np.testing.assert_array_equal(aligned.values[:, 0, 0], [2.0, 2.0])   # (1 + 3) / 2 for both
    assert np.isnan(aligned.values[0, 0, 1]) and aligned.values[1, 0, 1] == 6.0
