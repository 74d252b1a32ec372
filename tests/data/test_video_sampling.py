"""``brainscore.data.video.sample_frames`` (which source frame each frame of a resampled window shows) and
``brainscore.data.resize`` (area and bilinear weights), on closed-form cases; no video file needed."""
from __future__ import annotations

import numpy as np
import pytest

from brainscore.data.resize import area_weights, bilinear_weights, resize_batch
from brainscore.data.video import sample_frames, sample_times


def test_a_window_has_ceil_of_its_frame_intervals_at_their_start_times():
    assert np.allclose(sample_times(0, 100, 30), [0, 100 / 3, 200 / 3])  # 3 intervals, not 4 frames
    assert len(sample_times(0, 100, 10)) == 1  # exactly one interval: one frame, not two
    assert len(sample_times(0, 2000, 1001 / 2000)) == 2  # 1.001 intervals: two frames


@pytest.mark.parametrize(("start", "end", "fps", "expected"), [
    (0, 100, 30, [0, 2, 4]),  # every other frame of a 60 fps file
    (0, 100, 20, [0, 3]),
    (-50, 0, 60, [0, 0, 0]),  # before the file: its first frame
    (950, 1050, 60, [57, 58, 59, 59, 59, 59]),  # past its end: its last frame
    (1000 / 60 * 10, 1000 / 60 * 11, 60, [10]),  # a frame boundary counts as that frame's, whatever the rounding
])
def test_the_source_frame_shown_at_each_time(start, end, fps, expected):
    assert sample_frames(start, end, fps, source_fps=60, n_source_frames=60).tolist() == expected


@pytest.mark.parametrize(("arguments", "message"), [
    ((10, 10, 30, 60, 60), "must end after it starts"),
    ((0, 10, 0, 60, 60), "fps must be > 0"),
    ((0, 10, 30, 0, 60), "frame rate > 0"),
    ((0, 10, 30, 60, 0), "at least one frame"),
])
def test_bad_windows_and_rates_are_refused(arguments, message):
    with pytest.raises(ValueError, match=message):
        sample_frames(*arguments)


def test_area_and_bilinear_weights_in_closed_form():
    assert np.allclose(area_weights(3, 2), [[2 / 3, 1 / 3, 0], [0, 1 / 3, 2 / 3]])
    assert np.allclose(area_weights(3, 4), [[1, 0, 0], [1 / 3, 2 / 3, 0], [0, 2 / 3, 1 / 3], [0, 0, 1]])
    assert np.allclose(bilinear_weights(2, 4), [[1, 0], [0.75, 0.25], [0.25, 0.75], [0, 1]])
    assert np.allclose(bilinear_weights(5, 5), np.eye(5))


def test_resize_keeps_integer_dtypes_rounded_and_refuses_bad_sizes():
    batch = np.array([[[[0], [5]]]], dtype=np.uint8)  # 1 x 2 pixels: 0 and 5
    assert resize_batch(batch * 2, (3, 1), "area")[0, 0, :, 0].tolist() == [0, 5, 10]
    assert resize_batch(batch, (4, 1), "bilinear")[0, 0, :, 0].tolist() == [0, 1, 4, 5]  # 1.25 and 3.75 rounded
    assert resize_batch(batch, (4, 1), "bilinear").dtype == np.uint8
    for size in [(0, 1), (1.5, 1), "ab", (1, 2, 3)]:
        with pytest.raises(ValueError, match="two positive integers"):
            resize_batch(batch, size)
    with pytest.raises(ValueError, match="shape"):
        resize_batch(batch[0], (1, 1))
