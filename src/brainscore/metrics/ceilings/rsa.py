"""The RSA noise ceiling of RDM similarity across subjects (Nili et al. 2014).

Upper bound: mean over subjects of Spearman(subject RDM, mean RDM of *all* subjects); lower bound
(kept in ``attrs["lower_bound_loo"]``): the same with the mean RDM of the *other* subjects. No
Spearman-Brown correction. The ceiling value is the upper bound, as Brain-Score's ``rsa_ceiling``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from brainscore.data.assemblies import DataAssembly
from brainscore.errors import ValidationError
from brainscore.metrics.base import Ceiling
from brainscore.metrics.device import effective_device
from brainscore.metrics.kernels import rdm as kernels
from brainscore.metrics.kernels.backend import namespace, on_device
from brainscore.metrics.score import Score
from brainscore.metrics.similarity.base import sorted_unique_order
from brainscore.metrics.similarity.rdm import RDM_DIMS, check_rdm_diagonal, rdm_array

__all__ = ["RSANoiseCeiling"]


# ---- RSA noise ceiling --------------------------------------------------------------------------
class RSANoiseCeiling(Ceiling):
    """Noise ceiling of RDM similarity across subjects (Nili et al. 2014), as Brain-Score's ``rsa_ceiling``.

    Upper bound: mean over subjects of Spearman(subject RDM, mean RDM of all subjects). Lower bound
    (leave one subject out): mean over subjects of Spearman(subject RDM, mean RDM of the others).
    RDMs are averaged as dissimilarities (not ranks); no Spearman-Brown correction.

    Parameters
    ----------
    subject_coord : str
        Coordinate (on ``neuroid`` for responses) or dim (for stacked RDMs) that names subjects.
    neuroid_dim, comparison_coord : str
    dtype : dtype
        Precision of the RDMs computed from responses (float64 default).
    device : str, optional
        Torch device of the Spearman comparisons (e.g. ``"cuda"``), in float64; default: the device
        of the enclosing :func:`brainscore.metrics.device.computing_on`, else numpy.

    Input (``__call__``)
    --------------------
    One of:

    - a ``presentation x neuroid`` NeuroidAssembly with a ``subject`` coordinate on ``neuroid``
      (as the reference): each subject's RDM is computed from its neuroids;
    - a DataAssembly of RDMs with dims ``("subject", "presentation", "presentation_b")`` and a
      ``stimulus_id`` coordinate on ``presentation`` (see :func:`stack_rdms`);
    - an ndarray of shape (n_subjects, n, n), or a list of (n, n) RDMs in one stimulus order.

    Returns (``__call__``)
    ----------------------
    Score
        The upper bound, with ``attrs``: ``lower_bound_loo`` (float), ``raw`` (per-subject upper
        bounds, dim ``subject``), ``raw_lower_bound_loo`` (per-subject lower bounds) and ``error``
        = SEM of the per-subject upper bounds (the reference gives no error).

    Raises
    ------
    ValidationError
        Fewer than 2 subjects, non-square RDMs, or a non-zero diagonal.
    """

    def __init__(self, subject_coord: str = "subject", neuroid_dim: str = "neuroid",
                 comparison_coord: str = "stimulus_id", dtype: Any = np.float64, device: str | None = None):
        self.subject_coord = subject_coord
        self.neuroid_dim = neuroid_dim
        self.comparison_coord = comparison_coord
        self.dtype = dtype
        self.device = device

    def subject_rdms(self, data) -> tuple[np.ndarray, np.ndarray]:
        """(subjects, RDM stack of shape (n_subjects, n, n)) from any accepted input, stimuli sorted."""
        if isinstance(data, (list, tuple)) or isinstance(data, np.ndarray):
            stack = np.asarray(data, dtype=float)
            if stack.ndim != 3:
                raise ValidationError(f"expected RDMs of shape (n_subjects, n, n), got {stack.shape}")
            subjects = np.arange(stack.shape[0])
        elif self.subject_coord in data.dims:
            if tuple(d for d in data.dims if d != self.subject_coord) != RDM_DIMS:
                raise ValidationError(f"stacked RDMs need dims ({self.subject_coord!r}, {RDM_DIMS[0]!r}, "
                                      f"{RDM_DIMS[1]!r}), got {data.dims}")
            data = data.transpose(self.subject_coord, *RDM_DIMS)
            subjects = np.asarray(data[self.subject_coord].values)
            stack = np.asarray(data.values, dtype=float)
            if self.comparison_coord in data.coords:
                order = sorted_unique_order(np.asarray(data[self.comparison_coord].values), self.comparison_coord)
                stack = stack[:, order][:, :, order]
        else:
            if self.subject_coord not in data.coords:
                raise ValidationError(f"the assembly needs a {self.subject_coord!r} coordinate on "
                                      f"{self.neuroid_dim!r} to split neuroids by subject")
            labels = np.asarray(data[self.subject_coord].values)
            subjects = np.unique(labels)
            rdms = []
            for subject in subjects:
                part = data.isel({self.neuroid_dim: np.flatnonzero(labels == subject)})
                rdms.append(rdm_array(part, self.neuroid_dim, self.comparison_coord, self.dtype)[1])
            stack = np.stack(rdms)
        if stack.shape[0] < 2:
            raise ValidationError(f"a noise ceiling across subjects needs at least 2 subjects, got {stack.shape[0]}")
        for matrix in stack:
            check_rdm_diagonal(matrix)
        return subjects, stack

    def __call__(self, data) -> Score:
        subjects, stack = self.subject_rdms(data)
        n = stack.shape[0]
        stack = on_device(stack, effective_device(self.device))
        xp = namespace(stack)
        triangles = xp.stack([kernels.upper_triangle(stack[i]) for i in range(n)])
        total = xp.sum(triangles, axis=0)
        mean_all = total / n
        upper = np.array([kernels.spearman(triangles[i], mean_all) for i in range(n)])
        lower = np.array([kernels.spearman(triangles[i], (total - triangles[i]) / (n - 1)) for i in range(n)])
        raw = DataAssembly(upper, dims=("subject",), coords={"subject": subjects})
        raw_lower = DataAssembly(lower, dims=("subject",), coords={"subject": subjects})
        return Score.of(upper.mean(), error=upper.std() / math.sqrt(n), raw=raw,
                        lower_bound_loo=float(lower.mean()), raw_lower_bound_loo=raw_lower)


