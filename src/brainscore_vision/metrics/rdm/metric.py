"""Representational similarity analysis (Kriegeskorte et al. 2008): :mod:`brainscore.metrics.similarity.rdm`.

- ``RDM()(assembly)``: the correlation-distance RDM of ``presentation x neuroid`` responses
  (:func:`brainscore.metrics.similarity.rdm.rdm`; dims ``presentation`` and ``presentation_b``).
- ``RDMSimilarity()(rdm1, rdm2)``: Spearman's rho of two RDMs' upper triangles.
- ``RDMMetric``/``RDMCrossValidated``: ``brainscore``'s ``rdm``/``rdm_cv`` metrics, which take
  responses or precomputed RDMs (also with the reference's repeated dim ``('presentation', 'presentation')``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from brainscore.metrics.similarity.rdm import RDMCrossValidated, RDMMetric, rdm
from brainscore.metrics.score import Score

__all__ = ["RDM", "RDMSimilarity", "RDMMetric", "RDMCrossValidated"]


class RDM:
    """``RDM()(assembly)``: ``1 - Pearson r`` between stimuli across neuroids, as a labelled assembly.

    Parameters
    ----------
    neuroid_dim, comparison_coord : str
        The neuroid dim and the coordinate naming stimuli (rows sorted by it; each once).
    """

    def __init__(self, neuroid_dim: str = "neuroid", comparison_coord: str = "stimulus_id"):
        self.neuroid_dim, self.comparison_coord = neuroid_dim, comparison_coord

    def __call__(self, assembly: Any) -> Any:
        return rdm(assembly, neuroid_dim=self.neuroid_dim, comparison_coord=self.comparison_coord, dtype=np.float64)


class RDMSimilarity:
    """``RDMSimilarity()(rdm1, rdm2)``: Spearman's rho over the upper triangles of two RDMs (sorted by stimulus)."""

    def __init__(self, comparison_coord: str = "stimulus_id"):
        self._metric = RDMMetric(comparison_coord=comparison_coord, dtype=np.float64)

    def __call__(self, rdm1: Any, rdm2: Any) -> Score:
        return self._metric(rdm1, rdm2)
