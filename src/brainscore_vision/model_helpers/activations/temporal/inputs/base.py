"""The reference's ``temporal.inputs.base``: :class:`brainscore.data.clips.Stimulus` and the extensions taken for
videos and images."""
from brainscore.data.clips import IMAGE_EXTENSIONS, VIDEO_EXTENSIONS, Stimulus

__all__ = ["Stimulus", "VIDEO_EXTENSIONS", "IMAGE_EXTENSIONS"]
