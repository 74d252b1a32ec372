"""Stimuli shown to video (temporal) models: a :class:`Video` (a window of a video file, resampled to a frame rate
and a frame size, or an image held still: :class:`VideoFromImage`) and an :class:`Image`, each a small view whose
``set_*`` methods return changed copies (the reference's ``temporal.inputs``, Brain-Score's video-model support).

A ``Video`` holds the file's path, a window ``[start, end)`` in ms from the file's start, the frame rate and frame
size it is shown at, and decodes only when asked for frames (:meth:`Video.to_numpy`), and then only the frames it
shows. Which source frame each shown frame is, and the padding outside the file, follow
:func:`brainscore.data.video.sample_frames`; frames are decoded with PyAV (:mod:`brainscore.data.video`).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from brainscore.data.images import load_rgb, open_image
from brainscore.data.resize import resize_batch
from brainscore.data.video import FRAME_TOLERANCE, VideoInfo, probe_video, read_frames, sample_frames

__all__ = ["Stimulus", "Image", "Video", "VideoFromImage", "VIDEO_EXTENSIONS", "IMAGE_EXTENSIONS", "PADDINGS",
           "image_size", "checked_size"]


#: File extensions (lower case, no dot) taken for videos and for images.
VIDEO_EXTENSIONS = ("mp4", "avi", "mov", "flv", "wmv", "webm", "mkv", "gif")
IMAGE_EXTENSIONS = ("jpg", "jpeg", "png", "bmp", "tiff")


def _extension(path) -> str:
    return Path(str(path)).suffix.lstrip(".").lower()


class Stimulus:
    """A stimulus shown to a temporal model: :class:`Video` or :class:`Image`."""

    @staticmethod
    def from_path(path):
        """Build a concrete stimulus from a file (defined by :class:`Video` and :class:`Image`).

        Raises
        ------
        NotImplementedError
            Always, on the base class: call ``Video.from_path`` or ``Image.from_path``.
        """
        raise NotImplementedError("Stimulus is abstract: call Video.from_path or Image.from_path")

    @staticmethod
    def is_video_path(path) -> bool:
        """Whether ``path``'s extension is a video's (:data:`VIDEO_EXTENSIONS`, any case)."""
        return _extension(path) in VIDEO_EXTENSIONS

    @staticmethod
    def is_image_path(path) -> bool:
        """Whether ``path``'s extension is an image's (:data:`IMAGE_EXTENSIONS`, any case)."""
        return _extension(path) in IMAGE_EXTENSIONS


def checked_size(size) -> tuple[int, int]:
    """``size`` as ``(width, height)``, two positive integers.

    Raises
    ------
    ValueError
        If ``size`` is not two positive integers.
    """
    try:
        width, height = size
    except (TypeError, ValueError):
        raise ValueError(f"size must be (width, height), two positive integers; got {size!r}") from None
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0 for v in (width, height)):
        raise ValueError(f"size must be (width, height), two positive integers; got {size!r}")
    return int(width), int(height)


def image_size(path) -> tuple[int, int]:
    """``(width, height)`` of an image file, from its header.

    Raises
    ------
    FileNotFoundError
        If ``path`` is not an existing file.
    """
    if not Path(path).is_file():
        raise FileNotFoundError(f"image file {str(path)!r} does not exist (or is not a file); give the path of an "
                                f"existing image (jpg, png, ...)")
    with open_image(path) as image:
        return image.size


class Image(Stimulus):
    """An image file shown at ``size``.

    Parameters
    ----------
    path : str or Path
        The image file (any PIL mode; converted to 8-bit RGB by :func:`brainscore.data.images.load_rgb`).
    size : tuple of 2 ints
        ``(width, height)`` it is shown at, in pixels.
    """

    def __init__(self, path, size):
        self._path = path
        self._size = checked_size(size)

    @staticmethod
    def from_path(path) -> "Image":
        """The image file at its own size.

        Raises
        ------
        FileNotFoundError
            If ``path`` is not an existing file.
        """
        return Image(path, image_size(path))

    @property
    def size(self) -> tuple[int, int]:
        """``(width, height)`` in pixels."""
        return self._size

    def copy(self) -> "Image":
        """An independent copy."""
        return Image(self._path, self._size)

    def set_size(self, size) -> "Image":
        """A copy shown at ``size = (width, height)`` (pixels, positive integers; ValueError otherwise)."""
        return Image(self._path, size)

    def get_frame(self) -> np.ndarray:
        """The file's pixels at its own size: ndarray of shape (H, W, 3), uint8 RGB."""
        return np.asarray(load_rgb(self._path))

    def to_numpy(self) -> np.ndarray:
        """The image at :attr:`size`: ndarray of shape (height, width, 3), uint8 RGB (bilinearly resized when the
        size differs from the file's)."""
        frame = self.get_frame()
        if (frame.shape[1], frame.shape[0]) != self._size:
            frame = resize_batch(frame[None], self._size, "bilinear")[0]
        return frame

    def to_pil_img(self):
        """The image at :attr:`size` as a ``PIL.Image.Image`` (mode RGB)."""
        from PIL import Image as PILImage

        return PILImage.fromarray(self.to_numpy())

    def store_to_path(self, path) -> str:
        """Write the image at :attr:`size` to ``path`` (format from its extension); returns ``path``."""
        self.to_pil_img().save(path)
        return path


#: The paddings :meth:`Video.set_window` knows: ``"repeat"`` shows the first frame before the file's start and the
#: last after its end.
PADDINGS = ("repeat",)


def _checked_fps(fps) -> float:
    try:
        value = float(fps)
    except (TypeError, ValueError):
        raise ValueError(f"fps must be a number > 0 (frames per second); got {fps!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"fps must be a finite number > 0 (frames per second); got {fps!r}")
    return value


class Video(Stimulus):
    """A window of a video file, shown at a frame rate and size.

    Parameters
    ----------
    path : str or Path
        The video file.
    fps : float
        Frames per second it is shown at, > 0.
    start, end : float
        The window in ms from the file's start (``end > start``); may extend before 0 or past the file's end,
        where the first or last frame is repeated.
    size : tuple of 2 ints
        ``(width, height)`` of the frames shown, in pixels.
    info : brainscore.data.video.VideoInfo, optional
        The file's frame rate, frame count and size, when known (read from the file on first use otherwise).

    Raises
    ------
    ValueError
        For ``fps <= 0``, ``end <= start`` or a size that is not two positive integers.
    """

    def __init__(self, path, fps: float, start: float, end: float, size, info: VideoInfo | None = None):
        if not end > start:
            raise ValueError(f"a video window must end after it starts; got start {start} ms, end {end} ms")
        self._path = path
        self._fps = _checked_fps(fps)
        self._start = start
        self._end = end
        self._size = checked_size(size)
        self._info = info

    # ---- the file ---------------------------------------------------------------------------------------------
    @staticmethod
    def from_path(path) -> "Video":
        """The whole video file at its own frame rate and size (window ``[0, 1000 n_frames / fps)``).

        Raises
        ------
        FileNotFoundError
            If ``path`` is not an existing file.
        ValueError
            If it is not a readable video.
        """
        info = probe_video(path)
        return Video(path, info.fps, 0, info.duration, info.size, info=info)

    @staticmethod
    def from_img_path(img_path, duration: float, fps: float) -> "VideoFromImage":
        """An image file held still for ``duration`` ms at ``fps`` frames per second, at the image's size.

        Raises
        ------
        FileNotFoundError
            If ``img_path`` is not an existing file.
        ValueError
            For ``duration <= 0`` or ``fps <= 0``.
        """
        if not duration > 0:
            raise ValueError(f"duration must be > 0 ms; got {duration!r}")
        return VideoFromImage(img_path, fps, 0, duration, image_size(img_path))

    @property
    def info(self) -> VideoInfo:
        """The file's frame rate, frame count and size (read once, shared by copies)."""
        if self._info is None:
            self._info = probe_video(self._path)
        return self._info

    # ---- what is shown ----------------------------------------------------------------------------------------
    @property
    def duration(self) -> float:
        """Length of the window in ms (``end - start``)."""
        return self._end - self._start

    @property
    def fps(self) -> float:
        """Frames per second shown."""
        return self._fps

    @property
    def num_frames(self) -> int:
        """Whole frame intervals in the window, ``floor(duration fps / 1000)`` (the reference's count; the frames
        :meth:`to_numpy` returns are ``ceil`` of it, a partial interval showing one more frame)."""
        return int(math.floor(self.duration * self._fps / 1000 + FRAME_TOLERANCE))

    @property
    def frame_size(self) -> tuple[int, int]:
        """``(width, height)`` of the frames shown, in pixels."""
        return self._size

    def copy(self) -> "Video":
        """An independent copy (same file, window, rate and size)."""
        return self._replace()

    def _replace(self, **changes) -> "Video":
        """A new video of this type with ``changes`` (constructor arguments) applied, validated by the constructor."""
        arguments = dict(path=self._path, fps=self._fps, start=self._start, end=self._end, size=self._size,
                         info=self._info)
        return type(self)(**{**arguments, **changes})

    def set_fps(self, fps: float) -> "Video":
        """A copy shown at ``fps`` frames per second (> 0; ValueError otherwise). The window is kept; frame ``k``
        of the copy is the source frame shown at ``start + 1000 k / fps`` ms."""
        return self._replace(fps=fps)

    def set_size(self, size) -> "Video":
        """A copy whose frames are ``size = (width, height)`` pixels (bilinearly resized; ValueError for a size that
        is not two positive integers)."""
        return self._replace(size=size)

    def set_window(self, start: float, end: float, padding: str = "repeat") -> "Video":
        """A copy showing ``[start, end)`` ms of this video (times relative to this window's start, not clipped to
        it: ``set_window(300, 500).set_window(0, 100)`` is ``set_window(300, 400)``).

        Raises
        ------
        ValueError
            If ``end <= start`` or ``padding`` is not ``"repeat"`` (first/last frame repeated outside the file).
        """
        if not end > start:
            raise ValueError(f"set_window: end must be after start; got start {start} ms, end {end} ms")
        if padding not in PADDINGS:
            raise ValueError(f"set_window: padding must be one of {PADDINGS}; got {padding!r}")
        return self._replace(start=self._start + start, end=self._start + end)

    # ---- frames -----------------------------------------------------------------------------------------------
    def frame_indices(self) -> np.ndarray:
        """Source frame index of each frame shown: ndarray of shape (ceil(duration fps / 1000),), int."""
        info = self.info
        return sample_frames(self._start, self._end, self._fps, info.fps, info.n_frames)

    def get_frames(self, indices) -> np.ndarray:
        """Source frames by index at the file's size: ndarray of shape (len(indices), H, W, 3), uint8 RGB."""
        return read_frames(self._path, indices)

    def to_numpy(self) -> np.ndarray:
        """The frames shown: ndarray of shape (ceil(duration fps / 1000), height, width, 3), uint8 RGB."""
        frames = self.get_frames(self.frame_indices())
        if (frames.shape[2], frames.shape[1]) != self._size:
            frames = resize_batch(frames, self._size, "bilinear")
        return frames

    def to_frames(self) -> list[np.ndarray]:
        """The frames shown, as a list of (height, width, 3) uint8 arrays."""
        return list(self.to_numpy())

    def to_pil_imgs(self) -> list:
        """The frames shown, as ``PIL.Image.Image`` (mode RGB)."""
        from PIL import Image as PILImage

        return [PILImage.fromarray(frame) for frame in self.to_numpy()]


class VideoFromImage(Video):
    """An image file held still: every frame shown is the image (see :meth:`Video.from_img_path`)."""

    @property
    def info(self) -> VideoInfo:
        """One frame at the shown frame rate, the image's size."""
        if self._info is None:
            self._info = VideoInfo(fps=self._fps, n_frames=1, size=image_size(self._path))
        return self._info

    def get_frames(self, indices) -> np.ndarray:
        """The image repeated ``len(indices)`` times: ndarray of shape (len(indices), H, W, 3), uint8 RGB."""
        frame = Image.from_path(self._path).get_frame()
        return np.repeat(frame[None], len(indices), axis=0)
