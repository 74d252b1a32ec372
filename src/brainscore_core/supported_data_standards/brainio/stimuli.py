"""``StimulusSet``: :class:`brainscore.data.stimuli.StimulusSet` itself.

A ``pandas.DataFrame`` with one row per stimulus (a unique ``stimulus_id`` column), an
``identifier`` and ``stimulus_paths`` (``stimulus_id`` -> file), built as the reference's tutorials do::

    stimulus_set = StimulusSet([{'stimulus_id': 'img_001', 'category': 'face'}, ...])
    stimulus_set.stimulus_paths = {'img_001': '/path/to/image1.jpg', ...}
    stimulus_set.identifier = 'MyExperiment2024'
"""
from brainscore.data.stimuli import StimulusSet

__all__ = ["StimulusSet"]
