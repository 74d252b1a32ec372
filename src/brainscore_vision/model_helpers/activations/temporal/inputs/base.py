"""The base of the temporal stimuli, and which file names are videos or images."""
from __future__ import annotations

from pathlib import Path

__all__ = ["Stimulus", "VIDEO_EXTENSIONS", "IMAGE_EXTENSIONS"]

#: File extensions (lower case, no dot) taken for videos and for images.
VIDEO_EXTENSIONS = ("mp4", "avi", "mov", "flv", "wmv", "webm", "mkv", "gif")
IMAGE_EXTENSIONS = ("jpg", "jpeg", "png", "bmp", "tiff")


def _extension(path) -> str:
    return Path(str(path)).suffix.lstrip(".").lower()


class Stimulus:
    """A stimulus shown to a temporal model: :class:`~.video.Video` or :class:`~.image.Image`."""

    @staticmethod
    def from_path(path):
        """Build a concrete stimulus from a file (defined by :class:`~.video.Video` and :class:`~.image.Image`).

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
