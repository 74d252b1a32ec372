"""Psychophysical thresholds (Wichmann & Hill 2001 fits): ``threshold`` and ``threshold_elevation``.

``threshold``: a model's psychometric threshold against each human's (mean of
``max(1 - |t - s| / t, 0)``); ``threshold_elevation``: the ratio of a test condition's threshold to a
baseline condition's, compared the same way. See :mod:`brainscore.metrics.behavior.threshold`.
"""
from brainscore.registry import lazy, register_metric

BIBTEX = """@article{wichmann2001psychometric,
  title={The psychometric function: I. Fitting, sampling, and goodness of fit},
  author={Wichmann, Felix A and Hill, N Jeremy},
  journal={Perception \\& Psychophysics},
  volume={63},
  number={8},
  pages={1293--1313},
  year={2001}
}"""

register_metric("threshold", lazy("brainscore.metrics.behavior.threshold:Threshold"))
register_metric("threshold_elevation", lazy("brainscore.metrics.behavior.threshold:ThresholdElevation"))
