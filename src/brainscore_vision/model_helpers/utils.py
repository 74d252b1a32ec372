"""``fullname``: the reference's ``brainscore_vision.model_helpers.utils`` (:func:`brainscore_vision.utils.fullname`)."""
from brainscore_vision.utils import fullname

__all__ = ["fullname"]
