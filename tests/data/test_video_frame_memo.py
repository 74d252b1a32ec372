"""Remembered decoded frames (``brainscore.data.video``): the same frames as a fresh decode, linear decoding for
the growing clips of a causal model, never for a file that may have changed, and never over the memory budget."""
from __future__ import annotations

import numpy as np
import pytest

from brainscore.caching import files as caching_files
from brainscore.data import video

av = pytest.importorskip("av")

FPS, N_FRAMES, WIDTH, HEIGHT = 60, 40, 32, 24
#: A settle window no test outlasts: a file written in the test is "just written" however slow the machine
#: (with the real 3 s, a loaded CI machine let the file settle half-way through the reads).
RECENT_NS = 3600 * 10**9


def write_video(path, offset: int = 0, width: int = WIDTH, height: int = HEIGHT):
    """An mp4 whose frame ``i`` is grey ``4 i + offset`` (H.264, quantiser 0: lossless)."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=FPS, options={"qp": "0"})
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv444p"
        for index in range(N_FRAMES):
            frame = np.full((height, width, 3), 4 * index + offset, dtype=np.uint8)
            container.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")))
        container.mux(stream.encode(None))
    return path


class Counts(list):
    """Frames decoded per decode (the list) and the decode spy (``counting.held``: most frames one decode kept)."""


@pytest.fixture
def decoded(monkeypatch):
    """Counts the frames decoded; the memo starts empty and is emptied after."""
    counts = Counts()
    original = video._decode_prefix

    def counting(*args, **kwargs):
        frames, count = original(*args, **kwargs)
        counts.append(count)
        counting.held = max(counting.held, len(frames))
        return frames, count

    counting.held = 0  # the most frames one decode kept
    monkeypatch.setattr(video, "_decode_prefix", counting)
    video.forget_decoded_frames()
    counts.counting = counting
    yield counts
    video.forget_decoded_frames()


def grey(frames) -> list[int]:
    return [int(round((frame.mean() - 0) / 4)) for frame in frames]


def causal_reads(path) -> list[np.ndarray]:
    """The frames a causal model reads: for each frame k, the clip of frames 0 ... k."""
    return [video.read_frames(path, np.arange(k + 1)) for k in range(N_FRAMES)]


def test_growing_clips_decode_each_frame_a_bounded_number_of_times_and_give_the_same_frames(tmp_path, decoded,
                                                                                          monkeypatch):
    monkeypatch.setattr(caching_files, "SETTLE_NS", RECENT_NS)
    path = write_video(tmp_path / "v.mp4")
    fresh = causal_reads(path)  # just written: not settled, nothing is remembered
    assert sum(decoded) == N_FRAMES * (N_FRAMES + 1) // 2
    decoded.clear()
    monkeypatch.setattr(caching_files, "SETTLE_NS", 0)  # now the file counts as settled
    remembered = causal_reads(path)
    assert sum(decoded) < 3 * N_FRAMES, decoded  # prefixes of 1, 2, 4, ... frames, then the whole file
    for a, b in zip(fresh, remembered):
        np.testing.assert_array_equal(a, b)
    assert grey(remembered[-1]) == list(range(N_FRAMES))
    # any order and repeats, from the memo without decoding
    decoded.clear()
    indices = [7, 3, 3, 39, 0]
    assert grey(video.read_frames(path, indices)) == indices and decoded == []


def test_a_frame_past_the_end_is_refused_from_the_memo_too(tmp_path, decoded, monkeypatch):
    monkeypatch.setattr(caching_files, "SETTLE_NS", 0)
    path = write_video(tmp_path / "v.mp4")
    assert grey(video.read_frames(path, [N_FRAMES - 1])) == [N_FRAMES - 1]
    for _ in range(2):  # the second time the memo knows the file ends
        with pytest.raises(ValueError, match=f"has {N_FRAMES} decodable frames"):
            video.read_frames(path, [N_FRAMES])


def test_a_rewritten_file_is_decoded_again(tmp_path, decoded, monkeypatch):
    monkeypatch.setattr(caching_files, "SETTLE_NS", 0)
    path = write_video(tmp_path / "v.mp4")
    assert grey(video.read_frames(path, [5])) == [5]
    write_video(tmp_path / "w.mp4", offset=1).replace(path)  # another inode: another state
    assert video.read_frames(path, [5]).mean() == 4 * 5 + 1


def test_a_file_written_in_the_tick_of_its_read_is_not_remembered(tmp_path, decoded, monkeypatch):
    """A same-size rewrite in the same clock tick keeps the state: frames read then must not key the memo."""
    import brainscore.caching

    monkeypatch.setattr(caching_files, "SETTLE_NS", RECENT_NS)
    path = write_video(tmp_path / "v.mp4")
    frozen = caching_files.file_state(path)
    monkeypatch.setattr(brainscore.caching, "file_state", lambda p: frozen)
    assert grey(video.read_frames(path, [5])) == [5]
    write_video(path, offset=1)
    assert video.read_frames(path, [5]).mean() == 4 * 5 + 1


def test_frames_over_the_budget_are_not_remembered(tmp_path, decoded, monkeypatch):
    monkeypatch.setattr(caching_files, "SETTLE_NS", 0)
    monkeypatch.setattr(video, "MEMO_MAX_BYTES", 10 * WIDTH * HEIGHT * 3)  # ten frames
    path = write_video(tmp_path / "v.mp4")
    video.read_frames(path, [5])
    decoded.clear()
    video.read_frames(path, [5])
    assert decoded == []  # six frames fit
    video.read_frames(path, [30])
    decoded.clear()
    video.read_frames(path, [30])
    assert decoded == [31]  # 31 do not: decoded again


def test_a_video_over_the_budget_holds_only_the_frames_asked_for_while_decoding(tmp_path, decoded, monkeypatch):
    """Reading the last frame of a settled video must not hold every decoded frame until the memo refuses them:
    past the budget only the frames asked for are kept (a long video would otherwise exhaust memory). The frames
    are FFmpeg's buffers, out of tracemalloc's sight, so the decode's own list is what is counted."""
    frame_bytes = WIDTH * HEIGHT * 3
    monkeypatch.setattr(caching_files, "SETTLE_NS", 0)
    monkeypatch.setattr(video, "MEMO_MAX_BYTES", 10 * frame_bytes)  # ten frames
    path = write_video(tmp_path / "v.mp4")
    frames = video.read_frames(path, [3, N_FRAMES - 1])
    assert grey(frames) == [3, N_FRAMES - 1] and decoded == [N_FRAMES]
    assert decoded.counting.held <= 10, decoded.counting.held  # all 40 before
    decoded.clear()
    video.read_frames(path, [N_FRAMES - 1])
    assert decoded == [N_FRAMES]  # nothing was remembered: decoded again
    decoded.clear()
    video.read_frames(path, [5])
    video.read_frames(path, [9])
    assert decoded == [6, 11]  # a prefix within the budget is remembered (6 frames), then one of 11 is not
