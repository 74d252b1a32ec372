"""Linear centred kernel alignment (CKA) between two response matrices over the same stimuli.

Kornblith, Norouzi, Lee & Hinton 2019; the unbiased HSIC estimator of Song et al. 2012 (Brain-Score's
default since 2026). See :mod:`brainscore.metrics.kernels.cka` for the estimators.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from brainscore.errors import ValidationError
from brainscore.metrics.base import Metric
from brainscore.metrics.device import effective_device
from brainscore.metrics.kernels import cka as kernels
from brainscore.metrics.kernels.backend import device as array_device, namespace, on_device, take_block
from brainscore.metrics.kernels.design import index_array
from brainscore.metrics.score import Score
from brainscore.metrics.similarity.base import (AUTO, CrossValidatedSimilarity, _aggregate_splits, _check_same_stimuli,
                                                _responses, held_out_masks)

__all__ = ["CKAMetric", "CKACrossValidated"]


# ---- CKA ----------------------------------------------------------------------------------------
class CKAMetric(Metric):
    """Linear centred kernel alignment between two assemblies (Kornblith et al. 2019).

    Parameters
    ----------
    unbiased : bool
        True (default, Brain-Score's ``cka`` since 2026): unbiased HSIC of Song et al. (2012),
        ``hsic_xy / (sqrt(hsic_xx hsic_yy) + 1e-12)``, 0 when ``hsic_xx hsic_yy <= 0``, needs at least
        4 stimuli. False (``cka_biased``): centred HSIC ``tr(HKH HLH)``.
    neuroid_dim, comparison_coord : str
    dtype : dtype
        Precision of the Gram products (float64 default, as the reference: in float32 the unbiased
        estimator's cancellations leave errors of ~1e-5, e.g. CKA 1.0000126 of 300 x 10 uniform
        responses with themselves, beyond the reference's own test tolerance of 1e-6).
    device : str, optional
        Torch device of the products (e.g. ``"cuda"``), in ``dtype`` as on numpy, HSICs in float64;
        default: the device of the enclosing :func:`brainscore.metrics.device.computing_on`, else
        numpy. Equal to numpy to rounding. Kept out of the repr (a cache key and the provenance name
        the metric by it; the device is recorded apart), so the numpy metric's name does not change.

    Returns (``__call__``)
    ----------------------
    Score
        Scalar CKA, ``attrs["n_stimuli"]``.

    Raises
    ------
    ValidationError
        For fewer than 3 stimuli, NaN or infinite responses, or responses that do not vary across
        stimuli (CKA would be 0/0); never a silent 0.0.
    """

    def __init__(self, unbiased: bool = True, neuroid_dim: str = "neuroid", comparison_coord: str = "stimulus_id",
                 dtype: Any = np.float64, device: str | None = None):
        self.unbiased = unbiased
        self.neuroid_dim = neuroid_dim
        self.comparison_coord = comparison_coord
        self.dtype = dtype
        self._device = device

    def _checked(self, assembly1, assembly2):
        ids1, x = _responses(assembly1, self.neuroid_dim, self.comparison_coord, "the first assembly (model)")
        ids2, y = _responses(assembly2, self.neuroid_dim, self.comparison_coord, "the second assembly (data)")
        _check_same_stimuli(ids1, ids2, self.comparison_coord)
        for values, name in ((x, "the first assembly (model)"), (y, "the second assembly (data)")):
            if not (np.ptp(values, axis=0) > 0).any():
                raise ValidationError(f"{name}'s responses are the same for every stimulus (each neuroid is constant), "
                                      f"so its centred Gram matrix is zero and CKA is 0/0; use a layer or neuroids "
                                      f"whose responses vary across stimuli")
        return ids1, x, ids2, y

    def _grams(self, assembly1, assembly2):
        _, x, ids2, y = self._checked(assembly1, assembly2)
        device = effective_device(self._device)
        return ids2, kernels.gram(on_device(x, device), self.dtype), kernels.gram(on_device(y, device), self.dtype)

    def __call__(self, assembly1, assembly2) -> Score:
        """Compare ``assembly1`` (e.g. model) with ``assembly2`` (data), both ``presentation x neuroid``.

        Computed from the Gram matrices or from feature-space products, whichever is cheaper for
        the shapes (:func:`~brainscore.metrics.kernels.cka.linear_cka`); the same number.
        """
        ids1, x, _, y = self._checked(assembly1, assembly2)
        device = effective_device(self._device)
        value = kernels.linear_cka(on_device(x, device), on_device(y, device), unbiased=self.unbiased, dtype=self.dtype)
        return Score.of(value, n_stimuli=len(ids1))


class CKACrossValidated(CrossValidatedSimilarity):
    """:class:`CKAMetric` on the test portion of 10 shuffle splits (Brain-Score's ``cka_cv``).

    Parameters are those of :class:`CKAMetric` (``device`` included) and :class:`RDMCrossValidated`.
    One Gram matrix per representation is computed over all stimuli (on the device, where given);
    each split uses its sub-matrix.

    Returns (``__call__``)
    ----------------------
    Score
        Mean CKA over splits; ``error`` = SEM over splits; ``raw`` = per-split values.
    """

    def __init__(self, unbiased: bool = True, neuroid_dim: str = "neuroid", comparison_coord: str = "stimulus_id",
                 dtype: Any = np.float64, splits: int = 10, test_size: float = 0.9,
                 stratification_coord: str | None = AUTO, random_state: int = 1, kfold: bool = False,
                 crossvalidation_kwargs: dict | None = None,
                 device: str | None = None):
        super().__init__(splits, test_size, stratification_coord, random_state, kfold, crossvalidation_kwargs)
        self._cka = CKAMetric(unbiased=unbiased, neuroid_dim=neuroid_dim, comparison_coord=comparison_coord,
                              dtype=dtype, device=device)

    def __call__(self, assembly1, assembly2) -> Score:
        """Splits are drawn on ``assembly2``'s (the target's) presentation order."""
        ids, K, L = self._cka._grams(assembly1, assembly2)
        config = self._config(self._cka.comparison_coord, assembly2)
        masks = held_out_masks(ids, assembly2, config, assembly1)
        xp = namespace(K)
        values = []
        for mask in masks:
            index = index_array(xp, array_device(K), np.flatnonzero(mask))
            values.append(kernels.cka_from_grams(take_block(xp, K, index, index), take_block(xp, L, index, index),
                                                 unbiased=self._cka.unbiased))
        return _aggregate_splits(values, n_stimuli=len(ids), stratification_coord=config.stratification_coord)


