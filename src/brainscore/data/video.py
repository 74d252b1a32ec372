"""Video files: their frame rate, frame count and size, their frames decoded by index, and the rule that picks
which source frame is shown at each time of a window resampled to another frame rate.

Decoding uses PyAV (``pip install "brainscore[video]"``, ``av==18.1.0``, which bundles FFmpeg), imported on first
use. The same file decoded twice gives the same frames bit for bit.

Time is in milliseconds from the start of the file; a file of ``n`` frames at ``fps`` frames per second lasts
``1000 n / fps`` ms, and its frame ``i`` is shown during ``[1000 i / fps, 1000 (i + 1) / fps)``.

The sampling rule (:func:`sample_frames`), as the reference's temporal ``Video`` samples: a window
``[start, end)`` resampled to ``fps`` has ``ceil((end - start) fps / 1000)`` frames, shown at
``t_k = start + 1000 k / fps``; frame ``k`` is the source frame shown at ``t_k``, ``floor(t_k source_fps / 1000)``.
Times before the file's start or after its end repeat its first or last frame (padding ``"repeat"``).
A tolerance of 1e-6 frame counts times on a frame boundary as that frame's (``1000 * 10 / 60`` ms is
frame 10 of a 60 fps file, whatever the float rounding), and a window of exactly ``k`` frame intervals
as ``k`` frames.

**Deviation**: the reference never shows a file's last frame (its clip bound drops it); here the last frame
is shown at its own times.

Decoded frames are remembered: :func:`read_frames` keeps the leading frames it decoded of the files it read last
(keyed by the file's state, only once it has settled: :func:`brainscore.caching.is_settled`), within
:data:`MEMO_FRACTION` of the memory this process may use (:func:`brainscore.config.usable_memory`, at most
:data:`MEMO_MAX_BYTES`), and decodes at least twice the frames it holds when it needs more. A decode that outgrows
that budget keeps only the frames asked for from then on (and remembers nothing), so reading late frames of a long
video holds no more than the budget besides them. A causal model reads
one clip per frame of a video, each from the file's start: without the memo that decodes ``n (n + 1) / 2`` frames
for a video of ``n``; with it fewer than ``3 n`` (``perf/video_frames.py`` measures both).
"""
from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["FRAME_TOLERANCE", "MEMO_FRACTION", "MEMO_MAX_BYTES", "VideoInfo", "forget_decoded_frames", "probe_video",
           "read_frames", "sample_frames", "sample_times"]

#: Tolerance of the sampling rule, in frames (see the module notes).
FRAME_TOLERANCE = 1e-6

#: Share of :func:`brainscore.config.usable_memory` that remembered decoded frames may take.
MEMO_FRACTION = 0.125
#: Most bytes remembered decoded frames take, whatever the memory.
MEMO_MAX_BYTES = 2 << 30


def _av():
    try:
        import av
    except ImportError:
        raise ImportError("decoding videos needs PyAV: python -m pip install 'av==18.1.0' "
                          "(or the 'video' extra: python -m pip install 'brainscore[video]')") from None
    return av


@dataclass(frozen=True)
class VideoInfo:
    """What a video file holds.

    Attributes
    ----------
    fps : float
        Frames per second (the stream's average rate).
    n_frames : int
        Number of frames.
    size : tuple of 2 ints
        ``(width, height)`` in pixels.
    """

    fps: float
    n_frames: int
    size: tuple[int, int]

    @property
    def duration(self) -> float:
        """Length in ms: ``1000 n_frames / fps``."""
        return 1000 * self.n_frames / self.fps


def _checked_path(path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"video file {str(path)!r} does not exist (or is not a file); give the path of an "
                                f"existing video (mp4, avi, mov, webm, mkv, ...)")
    return path


def _open(path: Path):
    av = _av()
    try:
        container = av.open(str(path))
    except av.FFmpegError as error:
        raise ValueError(f"{str(path)!r} is not a video FFmpeg can read ({error}); give a video file") from None
    if not container.streams.video:
        container.close()
        raise ValueError(f"{str(path)!r} has no video stream; give a video file")
    return container


def probe_video(path) -> VideoInfo:
    """Frame rate, frame count and size of a video file (from its header; frames are counted by demuxing only
    when the header does not say).

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    VideoInfo

    Raises
    ------
    FileNotFoundError
        If ``path`` is not an existing file.
    ValueError
        If it is not a video FFmpeg can read, or its stream has no frame rate or no frames.
    ImportError
        If PyAV is not installed.
    """
    path = _checked_path(path)
    with _open(path) as container:
        stream = container.streams.video[0]
        rate = stream.average_rate or stream.guessed_rate or stream.base_rate
        n_frames = stream.frames or sum(1 for packet in container.demux(stream) if packet.size)
        size = (stream.codec_context.width, stream.codec_context.height)
    if not rate or float(rate) <= 0 or n_frames <= 0:
        raise ValueError(f"{str(path)!r}: its video stream has no frame rate or no frames (rate {rate}, "
                         f"{n_frames} frames); re-encode it with a constant frame rate")
    return VideoInfo(fps=float(rate), n_frames=int(n_frames), size=size)


def read_frames(path, indices) -> np.ndarray:
    """Frames of a video file, by index, as RGB.

    Decodes from the start up to the highest index asked for, keeping only the frames asked for.

    Parameters
    ----------
    path : str or Path
    indices : sequence of int
        Frame indices, in any order, repeats allowed; each in ``[0, n_frames)``.

    Returns
    -------
    ndarray of shape (len(indices), height, width, 3), uint8
        Frame ``indices[k]`` at position ``k``.

    Raises
    ------
    FileNotFoundError
        If ``path`` is not an existing file.
    ValueError
        If an index is negative or past the file's last decodable frame, or the file is not a readable video.
    """
    path = _checked_path(path)
    indices = np.asarray(indices, dtype=int).reshape(-1)
    if indices.size and indices.min() < 0:
        raise ValueError(f"frame indices must be >= 0; got {indices.min()}")
    if not indices.size:
        width, height = probe_video(path).size
        return np.zeros((0, height, width, 3), dtype=np.uint8)
    wanted = set(indices.tolist())
    last = max(wanted)
    state = _settled_state(path)
    held = _MEMO.get(state) if state is not None else None
    if held is not None and (len(held.frames) > last or held.complete):
        frames, count = held.frames, len(held.frames)
    else:
        # decode a prefix: at least twice the one held, so a sequence of growing clips decodes O(n) frames
        target = max(last, 2 * len(held.frames) - 1) if held is not None else last
        frames, count = _decode_prefix(path, target, wanted, last, _MEMO.budget() if state is not None else 0)
        if isinstance(frames, list):  # every frame decoded fitted the budget: remember them
            _MEMO.put(state, frames, complete=count <= target)
    if last >= count:
        missing = sorted(i for i in wanted if i >= count)
        raise ValueError(f"{str(path)!r} has {count} decodable frames; frames {missing[:5]} were asked for "
                         f"(indices must be < {count})")
    return np.stack([frames[index] for index in indices.tolist()])


def _decode_prefix(path: Path, target: int, wanted: set, last: int, budget: int) -> tuple[dict | list, int]:
    """Decode frames ``0 ... target`` and keep them all (a list) while they fit ``budget`` bytes; once they would
    not (or with ``budget`` 0), keep only the ``wanted`` ones (a dict by index) and stop at ``last``, so a long
    video never holds more than ``budget`` bytes of frames besides those asked for. Also returns the number of
    frames decoded (less than asked when the file ends first)."""
    kept: list | dict = [] if budget > 0 else {}
    held = count = 0
    with _open(path) as container:
        for index, frame in enumerate(container.decode(video=0)):
            count = index + 1
            if isinstance(kept, list):
                array = frame.to_ndarray(format="rgb24")
                held += array.nbytes
                if held <= budget:
                    array.flags.writeable = False
                    kept.append(array)
                else:  # over the budget: from here on only the frames asked for
                    kept = {i: kept[i] for i in wanted if i < index}
                    if index in wanted:
                        kept[index] = array
            elif index in wanted:
                kept[index] = frame.to_ndarray(format="rgb24")
            if index >= target or (isinstance(kept, dict) and index >= last):
                break
    return kept, count


def _settled_state(path: Path):
    """The file's state when it may key remembered frames (settled), else None (its frames are not remembered)."""
    from brainscore.caching import file_state, is_settled

    state = file_state(path)
    return state if is_settled(state) else None


@dataclass
class _Prefix:
    frames: list
    complete: bool  # the file ends after these frames
    nbytes: int


class _FrameMemo:
    """Leading decoded frames of recently read files, by file state; least recently used first out."""

    def __init__(self):
        self._entries: OrderedDict = OrderedDict()
        self._lock = threading.RLock()

    def get(self, state) -> _Prefix | None:
        with self._lock:
            entry = self._entries.get(state)
            if entry is not None:
                self._entries.move_to_end(state)
            return entry

    def budget(self) -> int:
        """Bytes remembered frames may take: :data:`MEMO_FRACTION` of the usable memory (counting what they hold
        now as usable), at most :data:`MEMO_MAX_BYTES`."""
        from brainscore.config import usable_memory

        with self._lock:
            return min(MEMO_MAX_BYTES, int(MEMO_FRACTION * (usable_memory() + self._bytes())))

    def put(self, state, frames: list, complete: bool) -> None:
        nbytes = sum(frame.nbytes for frame in frames)
        with self._lock:
            budget = self.budget()  # counting an older prefix of this file as usable: it is replaced
            self._entries.pop(state, None)
            if nbytes > budget:
                return
            self._entries[state] = _Prefix(frames, complete, nbytes)
            while self._bytes() > budget:
                self._entries.popitem(last=False)

    def _bytes(self) -> int:
        return sum(entry.nbytes for entry in self._entries.values())

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_MEMO = _FrameMemo()


def forget_decoded_frames() -> None:
    """Drop every remembered decoded frame (they are also dropped as memory runs short; see the module notes)."""
    _MEMO.clear()


def sample_times(start: float, end: float, fps: float) -> np.ndarray:
    """Times (ms) of the frames of the window ``[start, end)`` at ``fps``: ``start + 1000 k / fps`` for
    ``k < ceil((end - start) fps / 1000)`` (see the module notes).

    Raises
    ------
    ValueError
        If ``end <= start`` or ``fps <= 0``.
    """
    if not end > start:
        raise ValueError(f"a window must end after it starts; got start {start} ms, end {end} ms")
    if not fps > 0:
        raise ValueError(f"fps must be > 0; got {fps}")
    count = max(1, math.ceil((end - start) * fps / 1000 - FRAME_TOLERANCE))
    return start + np.arange(count) * (1000 / fps)


def sample_frames(start: float, end: float, fps: float, source_fps: float, n_source_frames: int) -> np.ndarray:
    """Source frame shown at each frame of the window ``[start, end)`` (ms) resampled to ``fps``, first and last
    frames repeated outside the file (see the module notes).

    Parameters
    ----------
    start, end : float
        The window in ms from the file's start; may extend before 0 or past the file's end.
    fps : float
        Frame rate of the result, > 0.
    source_fps : float
        The file's frame rate, > 0.
    n_source_frames : int
        The file's frame count, >= 1.

    Returns
    -------
    ndarray of shape (ceil((end - start) fps / 1000),), int
        Indices in ``[0, n_source_frames)``.

    Raises
    ------
    ValueError
        If ``end <= start``, a rate is <= 0 or the file has no frames.
    """
    if not source_fps > 0 or n_source_frames < 1:
        raise ValueError(f"the source needs a frame rate > 0 and at least one frame; got {source_fps} fps, "
                         f"{n_source_frames} frames")
    times = sample_times(start, end, fps)
    indices = np.floor(times * source_fps / 1000 + FRAME_TOLERANCE).astype(int)
    return np.clip(indices, 0, n_source_frames - 1)
