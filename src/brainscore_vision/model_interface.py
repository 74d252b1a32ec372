"""``BrainModel``: the reference's model interface, a subclass of :class:`brainscore.models.interface.BrainModel`.
Methods a model leaves out raise ``NotImplementedError`` when called (the reference's behaviour) rather than making
the class abstract."""
from __future__ import annotations

from typing import Any, Sequence

from brainscore.models import interface as _native

__all__ = ["BrainModel"]


class BrainModel(_native.BrainModel):
    """The reference's ``BrainModel`` (``Task``, ``RecordingTarget``: brainscore's)."""

    Task = _native.Task
    RecordingTarget = _native.RecordingTarget

    @property
    def identifier(self) -> str:
        """The model's name (set it in ``__init__``: ``self.identifier = 'my-model'``, or override)."""
        try:
            return self.__dict__["_reference_identifier"]
        except KeyError:
            raise NotImplementedError(f"{type(self).__name__} defines no identifier: set self.identifier in "
                                      f"__init__ or override the property") from None

    @identifier.setter
    def identifier(self, value: str) -> None:
        self.__dict__["_reference_identifier"] = value

    def visual_degrees(self) -> float:
        """Width of the model's field of view in degrees of visual angle."""
        raise NotImplementedError(f"{type(self).__name__} does not implement visual_degrees()")

    def start_task(self, task: str, fitting_stimuli: Any = None) -> None:
        """Prepare to answer ``task`` (one of :attr:`Task`)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement start_task()")

    def start_recording(self, recording_target: str, time_bins: Sequence[tuple[int, int]]) -> None:
        """Record from ``recording_target`` in ``time_bins`` ((start, end) ms) from now on."""
        raise NotImplementedError(f"{type(self).__name__} does not implement start_recording()")

    def look_at(self, stimuli: Any, number_of_trials: int = 1) -> Any:
        """Show ``stimuli``; return a NeuroidAssembly (recording) or BehavioralAssembly (task)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement look_at()")
