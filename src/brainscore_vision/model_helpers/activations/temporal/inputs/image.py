"""The reference's temporal ``Image``: :class:`brainscore.data.clips.Image`."""
from brainscore.data.clips import Image, checked_size, image_size

__all__ = ["Image", "image_size", "checked_size"]
