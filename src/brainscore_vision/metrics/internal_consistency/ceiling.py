"""Split-half internal consistency: :mod:`brainscore.metrics.ceilings.internal_consistency`.

- ``InternalConsistency``: ``brainscore``'s ceiling (split-half Pearson r per neuroid over stimuli,
  Spearman-Brown corrected, median over neuroids, 10 splits).
- ``PearsonCorrelation()(a, b)``: Pearson r per neuroid over presentations (aligned by ``stimulus_id``
  unless both already list the same presentations in the same order).
- ``SpearmanBrownCorrection()(r, n=2)``: ``n r / (1 + (n - 1) r)`` (Spearman 1910; Brown 1910).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.stats

from brainscore.metrics.ceilings.internal_consistency import InternalConsistency
from brainscore.metrics.kernels.correlation import spearman_brown
from brainscore_vision.metric_helpers.xarray_utils import XarrayCorrelation

__all__ = ["InternalConsistency", "PearsonCorrelation", "SpearmanBrownCorrection"]


class PearsonCorrelation(XarrayCorrelation):
    """Pearson r per neuroid between two assemblies, over presentations (a ``neuroid`` DataAssembly)."""

    def __init__(self, correlation_coord: str = "presentation", neuroid_coord: str = "neuroid"):
        super().__init__(scipy.stats.pearsonr, correlation_coord=correlation_coord, neuroid_coord=neuroid_coord)


class SpearmanBrownCorrection:
    """``correction(r, n=2)``: the Spearman-Brown prediction of the correlation of ``n``-times longer halves."""

    def __call__(self, correlations: Any, n: float = 2) -> Any:
        corrected = spearman_brown(np.asarray(correlations, dtype=float), n)
        if hasattr(correlations, "copy") and hasattr(correlations, "dims"):
            result = correlations.copy(data=np.asarray(corrected))
            return result
        return corrected
