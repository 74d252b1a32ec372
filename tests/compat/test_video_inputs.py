"""The reference's temporal inputs (``Video``, ``Image``) and ``batch_2d_resize``, on ``brainscore.data.video`` and
``brainscore.data.resize``.

The video here is written with PyAV: 60 frames at 60 fps (1000 ms), frame ``i`` a uniform grey of value ``4 i``,
so the index of every decoded frame is read back from its pixels (``round(mean / 4)``) and frame selection is
checked exactly.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from brainscore.data.video import probe_video, read_frames
from brainscore_vision.model_helpers.activations.temporal.inputs import Image, Video
from brainscore_vision.model_helpers.activations.temporal.utils import batch_2d_resize

av = pytest.importorskip("av")

FPS, N_FRAMES, WIDTH, HEIGHT = 60, 60, 32, 24


@pytest.fixture(scope="module")
def indexed_video(tmp_path_factory):
    """An mp4 whose frame ``i`` is grey ``4 i`` (H.264, quantiser 0)."""
    path = tmp_path_factory.mktemp("video") / "indexed.mp4"
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=FPS, options={"qp": "0"})
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv444p"
        for index in range(N_FRAMES):
            frame = np.full((HEIGHT, WIDTH, 3), 4 * index, dtype=np.uint8)
            container.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")))
        container.mux(stream.encode(None))
    return path


@pytest.fixture(scope="module")
def image_path(tmp_path_factory):
    from PIL import Image as PILImage

    path = tmp_path_factory.mktemp("image") / "gradient.png"
    values = np.arange(20 * 30 * 3).reshape(20, 30, 3) % 256
    PILImage.fromarray(values.astype(np.uint8)).save(path)
    return path


def shown(video) -> list[int]:
    """The source frame index of each frame a ``Video`` shows, read from the pixels."""
    return [int(round(frame.mean() / 4)) for frame in video.to_numpy()]


def test_the_file_is_probed_and_frames_are_decoded_by_index(indexed_video):
    info = probe_video(indexed_video)
    assert (info.fps, info.n_frames, info.size, info.duration) == (60.0, 60, (32, 24), 1000.0)
    frames = read_frames(indexed_video, [5, 0, 5, 59])
    assert frames.shape == (4, 24, 32, 3) and frames.dtype == np.uint8
    assert [int(round(frame.mean() / 4)) for frame in frames] == [5, 0, 5, 59]
    assert (read_frames(indexed_video, [7])[0] == read_frames(indexed_video, range(10))[7]).all()  # bit-exact
    with pytest.raises(ValueError, match="60 decodable frames"):
        read_frames(indexed_video, [60])


def test_the_whole_video_shows_every_frame(indexed_video):
    video = Video.from_path(indexed_video)
    assert (video.fps, video.duration, video.frame_size) == (60.0, 1000.0, (32, 24))
    assert shown(video) == list(range(60))  # the last frame included (the reference repeats frame 58 instead)


@pytest.mark.parametrize(("fps", "expected"), [
    (30, list(range(0, 60, 2))),
    (20, list(range(0, 60, 3))),
    (7.5, [0, 8, 16, 24, 32, 40, 48, 56]),  # ceil(7.5) frames at 133.3 ms
    (43, [int(np.floor(k * 60 / 43 + 1e-6)) for k in range(43)]),
    (1, [0]),
])
def test_set_fps_shows_the_source_frame_at_each_new_frame_time(indexed_video, fps, expected):
    assert shown(Video.from_path(indexed_video).set_fps(fps)) == expected


def test_a_window_repeats_the_first_and_last_frames_outside_the_file(indexed_video):
    video = Video.from_path(indexed_video)
    assert shown(video.set_window(-50, 50)) == [0, 0, 0, 0, 1, 2]  # times -50, -33.3, -16.7, 0, 16.7, 33.3 ms
    assert shown(video.set_window(950, 1050)) == [57, 58, 59, 59, 59, 59]
    assert shown(video.set_window(-30, -10, padding="repeat")) == [0, 0]


def test_windows_are_relative_to_the_window_they_cut(indexed_video):
    video = Video.from_path(indexed_video)
    inner = video.set_window(300, 500).set_window(0, 100)
    assert inner.duration == 100
    assert shown(inner) == [18, 19, 20, 21, 22, 23]
    assert shown(video.set_window(-100, 100).set_window(100, 200)) == [0, 1, 2, 3, 4, 5]
    boundary = 1000 / 60 * 10  # 166.67 ms: frame 10 starts here, whatever the rounding
    assert shown(video.set_window(boundary, boundary + 1000 / 60)) == [10]
    assert shown(video.set_fps(5).copy().set_fps(30)) == list(range(0, 60, 2))


def test_set_size_resizes_every_frame(indexed_video):
    frames = Video.from_path(indexed_video).set_window(0, 50).set_size((16, 12)).to_numpy()
    assert frames.shape == (3, 12, 16, 3)
    assert [int(round(frame.mean() / 4)) for frame in frames] == [0, 1, 2]


def test_an_image_held_still(image_path):
    video = Video.from_img_path(image_path, 500, 10)
    assert (video.duration, video.fps, video.frame_size) == (500, 10, (30, 20))
    frames = video.to_numpy()
    image = Image.from_path(image_path).to_numpy()
    assert frames.shape == (5, 20, 30, 3)
    assert (frames == image[None]).all()
    assert (image == (np.arange(20 * 30 * 3).reshape(20, 30, 3) % 256)).all()
    assert Image.from_path(image_path).set_size((15, 10)).to_numpy().shape == (10, 15, 3)


def test_proportional_average_pooling_is_the_area_mean():
    blocks = np.arange(16, dtype=float).reshape(1, 4, 4, 1)
    pooled = batch_2d_resize(blocks, (2, 2), "pool")[0, ..., 0]
    assert np.allclose(pooled, [[2.5, 4.5], [10.5, 12.5]])  # means of the 2 x 2 blocks
    row = np.array([[[[0.0], [3.0]]]])  # 1 x 2, grown to 1 x 3: the middle pixel covers half of each
    assert np.allclose(batch_2d_resize(row, (3, 1), "pool")[0, 0, :, 0], [0, 1.5, 3])
    assert np.allclose(batch_2d_resize(row, (4, 1), "bilinear")[0, 0, :, 0], [0, 0.75, 2.25, 3])
    integers = np.full((2, 3, 3, 3), 7, dtype=np.uint8)
    assert (batch_2d_resize(integers, (2, 2), "pool") == 7).all()
    assert batch_2d_resize(integers, (2, 2), "pool").dtype == np.uint8


def test_bad_input_says_what_to_fix(indexed_video, image_path, tmp_path):
    video = Video.from_path(indexed_video)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        Video.from_path(tmp_path / "missing.mp4")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        Video.from_img_path(tmp_path / "missing.jpg", 100, 10)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        Image.from_path(tmp_path / "missing.jpg")
    (tmp_path / "text.mp4").write_text("not a video")
    with pytest.raises(ValueError, match="not a video"):
        Video.from_path(tmp_path / "text.mp4")
    for start, end in [(10, 10), (20, 10)]:
        with pytest.raises(ValueError, match="end must be after start"):
            video.set_window(start, end)
    with pytest.raises(ValueError, match="padding must be one of"):
        video.set_window(0, 10, padding="zeros")
    for fps in (0, -1, float("nan")):
        with pytest.raises(ValueError, match="fps must be"):
            video.set_fps(fps)
    with pytest.raises(ValueError, match="duration must be > 0"):
        Video.from_img_path(image_path, 0, 10)
    with pytest.raises(ValueError, match="two positive integers"):
        video.set_size((0, 5))
    with pytest.raises(ValueError, match="mode must be one of"):
        batch_2d_resize(np.zeros((1, 2, 2, 1)), (1, 1), "nearest")


def test_importing_the_temporal_helpers_is_cheap():
    code = ("import sys; import brainscore_vision.model_helpers.activations.temporal.inputs, "
            "brainscore_vision.model_helpers.activations.temporal.utils; "
            "print(sorted({'torch', 'av', 'cv2'} & set(sys.modules)))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
