"""The reference's temporal ``Video``: :class:`brainscore.data.clips.Video` (and ``VideoFromImage``, an image held
still)."""
from brainscore.data.clips import PADDINGS, Video, VideoFromImage

__all__ = ["Video", "VideoFromImage", "PADDINGS"]
