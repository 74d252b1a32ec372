"""``StimulusSet`` is :class:`brainscore.data.stimuli.StimulusSet` itself, built as the reference's tutorials do::

    stimulus_set = StimulusSet([{'stimulus_id': 'img_001', 'category': 'face'}, ...])
    stimulus_set.stimulus_paths = {'img_001': '/path/to/image1.jpg', ...}
    stimulus_set.identifier = 'MyExperiment2024'
"""
from __future__ import annotations

from pathlib import Path

from brainscore.data.io import load_packaged_stimulus_set
from brainscore.data.stimuli import StimulusSet

__all__ = ["StimulusSet", "StimulusSetLoader"]


class StimulusSetLoader:
    """The reference's loader of a packaged stimulus set: :func:`brainscore.data.io.load_packaged_stimulus_set`
    (``cls`` is accepted for the signature; the result is brainscore's ``StimulusSet``)."""

    def __init__(self, cls: type = StimulusSet, csv_path: str | Path = "", stimuli_directory: str | Path = ""):
        self.stimulus_set_class, self.csv_path, self.stimuli_directory = cls, csv_path, stimuli_directory

    def load(self) -> StimulusSet:
        """:func:`brainscore.data.io.load_packaged_stimulus_set` of ``csv_path`` and ``stimuli_directory``."""
        return load_packaged_stimulus_set(self.csv_path, self.stimuli_directory)

    @classmethod
    def correct_stimulus_id_name(cls, stimulus_set) -> None:
        """Add a ``stimulus_id`` column copied from the legacy ``image_id`` where only that exists (in place)."""
        if "image_id" in stimulus_set and "stimulus_id" not in stimulus_set:
            stimulus_set["stimulus_id"] = stimulus_set["image_id"]
