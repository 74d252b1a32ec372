"""Value delta: how close one number (a model's effect size) is to another (the human one).

``score = exp(-scale * |source - target|)``, in (0, 1]: 1 for equal values, 1/e at a difference of
``1 / scale``. Brain-Score's ``value_delta`` metric (used by the Ferguson et al. 2024 benchmarks, which
compare one summary value per model with the human value), ``scale`` 1 by default.
"""
from __future__ import annotations

import math

import numpy as np

from brainscore.errors import ValidationError
from brainscore.metrics.base import Metric
from brainscore.metrics.score import Score

__all__ = ["value_delta", "ValueDelta"]


def value_delta(source: float, target: float, scale: float = 1.0) -> float:
    """``exp(-scale * |source - target|)`` (a float in [0, 1]).

    Raises
    ------
    ValidationError
        If either value is not finite, or ``scale`` is not positive.
    """
    source, target = float(source), float(target)
    if not (math.isfinite(source) and math.isfinite(target)):
        raise ValidationError(f"value_delta needs two finite numbers, got {source} and {target}")
    if not scale > 0:
        raise ValidationError(f"value_delta's scale must be > 0, got {scale}")
    return min(max(math.exp(-scale * abs(source - target)), 0.0), 1.0)


class ValueDelta(Metric):
    """Similarity of two values, ``exp(-scale * |source - target|)`` (see the module notes).

    Parameters
    ----------
    scale : float
        Steepness (> 0): larger values punish small differences more. Default 1.

    Returns (``__call__(source_value, target_value)``)
    -------------------------------------------------
    Score
        Scalar in [0, 1]; ``raw`` = ``[source_value, target_value]``; ``error`` NaN (one comparison has
        no spread), with ``attrs['error_note']`` saying so.
    """

    def __init__(self, scale: float = 1.0):
        if not scale > 0:
            raise ValidationError(f"ValueDelta's scale must be > 0, got {scale}")
        self.scale = float(scale)

    def __call__(self, source_value: float, target_value: float) -> Score:
        value = value_delta(np.asarray(source_value).item(), np.asarray(target_value).item(), self.scale)
        score = Score.of(value, raw=[float(np.asarray(source_value).item()), float(np.asarray(target_value).item())])
        score.attrs["error"] = float("nan")
        score.attrs["error_note"] = "one comparison of two values: no error"
        return score
