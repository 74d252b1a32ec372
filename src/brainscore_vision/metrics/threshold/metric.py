"""Psychophysical thresholds: :mod:`brainscore.metrics.behavior.threshold` (Wichmann & Hill 2001 fits)."""
from brainscore.metrics.behavior.threshold import (Threshold, ThresholdElevation, inverse_psychometric_cum_gauss,
                                                   psychometric_cum_gauss)

__all__ = ["Threshold", "ThresholdElevation", "psychometric_cum_gauss", "inverse_psychometric_cum_gauss"]
