"""The reference's temporal stimuli: :class:`Video` (a window of a video file, or of an image held still) and
:class:`Image`, each a small immutable-by-convention view whose ``set_*`` methods return changed copies."""
from brainscore_vision.model_helpers.activations.temporal.inputs.base import Stimulus
from brainscore_vision.model_helpers.activations.temporal.inputs.image import Image
from brainscore_vision.model_helpers.activations.temporal.inputs.video import Video, VideoFromImage

__all__ = ["Stimulus", "Video", "VideoFromImage", "Image"]
