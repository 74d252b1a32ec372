"""Representational similarity analysis: RDMs and their Spearman comparison.

Kriegeskorte, Mur & Bandettini 2008: each representation (model layer, brain region of one
subject) becomes a representational dissimilarity matrix (RDM) over the stimuli: ``1 - r``, with
``r`` the Pearson correlation of two stimuli's response patterns across neuroids. Two
representations are as similar as the Spearman correlation of their RDMs' strict upper triangles,
both RDMs ordered by ``stimulus_id``.

RDM assemblies
    An RDM is a :class:`~brainscore.data.assemblies.DataAssembly` with dims
    :data:`RDM_DIMS` ``= ("presentation", "presentation_b")``: the presentation coordinates of the
    responses (``stimulus_id`` at least) lie on ``presentation`` and, suffixed ``_b``, on
    ``presentation_b``. A stack of subject RDMs for the RSA noise ceiling
    (:mod:`brainscore.metrics.ceilings.rsa`) has dims ``("subject", "presentation", "presentation_b")``
    (see :func:`stack_rdms`). The RDM metrics and the noise ceiling accept either responses
    (``presentation x neuroid``) or such precomputed RDMs.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import xarray as xr

from brainscore.data.assemblies import DataAssembly
from brainscore.errors import ValidationError
from brainscore.metrics.base import Metric
from brainscore.metrics.device import effective_device
from brainscore.metrics.kernels import rdm as kernels
from brainscore.metrics.kernels.backend import on_device, to_numpy
from brainscore.metrics.score import Score
from brainscore.metrics.similarity.base import (AUTO, CrossValidatedSimilarity, _aggregate_splits, _check_same_stimuli,
                                                _responses, held_out_masks, sorted_unique_order, warn_few_stimuli)

__all__ = ["RDM_DIMS", "as_rdm_dims", "rdm", "rdm_array", "check_rdm_diagonal", "stack_rdms", "RDMMetric", "RDMCrossValidated"]

RDM_DIMS = ("presentation", "presentation_b")


def _is_rdm(assembly: Any) -> bool:
    return isinstance(assembly, xr.DataArray) and (tuple(assembly.dims) == RDM_DIMS or _repeated_dim(assembly))


def _repeated_dim(assembly: Any) -> bool:
    return assembly.ndim == 2 and assembly.dims[0] == assembly.dims[1]


def as_rdm_dims(assembly: Any) -> Any:
    """An RDM whose two dims share one name (the reference's ``('presentation', 'presentation')``) with dims
    :data:`RDM_DIMS`: each coordinate along that dim on ``presentation``, and suffixed ``_b`` on
    ``presentation_b``. Anything else is returned unchanged."""
    if not (isinstance(assembly, xr.DataArray) and _repeated_dim(assembly)):
        return assembly
    (dim, _) = assembly.dims
    coords = {}
    for name, coord in assembly.coords.items():
        if coord.dims == (dim,) and name != dim:
            coords[name] = ("presentation", np.asarray(coord.values))
            coords[name + "_b"] = ("presentation_b", np.asarray(coord.values))
    return DataAssembly(np.asarray(assembly.values), dims=RDM_DIMS, coords=coords)


def rdm_array(assembly, neuroid_dim: str, comparison_coord: str, dtype,
              for_ranking: bool = False, device: str | None = None) -> tuple[np.ndarray, Any]:
    """(sorted ids, RDM) from responses or from a precomputed RDM assembly (whose diagonal is checked).

    The unlabelled form of :func:`rdm`, for callers that compare RDMs themselves (the RSA noise
    ceiling, benchmarks with precomputed subject RDMs).

    Parameters
    ----------
    assembly : NeuroidAssembly or DataAssembly
        ``presentation x neuroid`` responses, or an RDM with dims :data:`RDM_DIMS` (or, as the
        reference builds them, one dim name twice: see :func:`as_rdm_dims`).
    neuroid_dim, comparison_coord : str
        Dim of the neuroids; coordinate that identifies stimuli (rows are sorted by it).
    dtype : dtype
        Precision of the product for responses.
    for_ranking : bool
        An RDM computed from responses is returned as ``-r`` (= RDM - 1): the same ranks as
        ``1 - r``, more precise in float32. Only for Spearman comparisons.
    device : str, optional
        Torch device: the RDM is a tensor there (computed there from responses); None: numpy.

    Returns
    -------
    ids : ndarray of shape (n_stimuli,)
        The sorted ``comparison_coord`` values.
    matrix : ndarray or torch.Tensor of shape (n_stimuli, n_stimuli)

    Raises
    ------
    ValidationError
        If a precomputed RDM lacks ``comparison_coord``, orders rows and columns differently, holds
        NaN off its diagonal or a non-zero diagonal; or if a stimulus' response is constant across
        neuroids (its correlation distance is undefined).
    """
    if _is_rdm(assembly):
        assembly = as_rdm_dims(assembly)
        if comparison_coord not in assembly.coords:
            raise ValidationError(f"the RDM has no {comparison_coord!r} coordinate on 'presentation'")
        ids = np.asarray(assembly[comparison_coord].values)
        ids_b = assembly.coords.get(comparison_coord + "_b")
        if ids_b is not None and not np.array_equal(np.asarray(ids_b.values), ids):
            raise ValidationError("an RDM's rows and columns must hold the stimuli in the same order")
        order = sorted_unique_order(ids, comparison_coord)
        matrix = np.asarray(assembly.values)[np.ix_(order, order)]
        off_diagonal = ~np.eye(len(matrix), dtype=bool)
        if not np.isfinite(matrix[off_diagonal]).all():
            raise ValidationError(f"the RDM holds {int((~np.isfinite(matrix[off_diagonal])).sum())} NaN or infinite "
                                  f"dissimilarities off its diagonal; recompute it from responses that vary across "
                                  f"neuroids (a constant response pattern gives NaN)")
        check_rdm_diagonal(matrix)
        return ids[order], on_device(matrix, device)
    ids, values = _responses(assembly, neuroid_dim, comparison_coord)
    constant = np.flatnonzero(np.ptp(values, axis=1) == 0) if values.shape[1] > 1 else np.arange(len(ids))
    if len(constant):
        raise ValidationError(
            f"{len(constant)} stimuli (e.g. {list(ids[constant[:5]])}) have the same response in every neuroid, so "
            f"their correlation distance to any other stimulus is undefined (0/0) and the RDM would hold NaN; "
            f"use a layer or neuroid selection whose responses vary across neuroids"
            + (" (an RDM needs at least 2 neuroids)" if values.shape[1] < 2 else ""))
    values = on_device(values, device)
    if for_ranking:
        matrix = kernels.stimulus_correlation_matrix(values, dtype=dtype)
        matrix *= -1  # -r in place (the same IEEE values as np.negative)
        return ids, matrix
    return ids, kernels.correlation_rdm(values, dtype=dtype)


def check_rdm_diagonal(matrix: np.ndarray) -> None:
    """Raise :class:`ValidationError` unless ``matrix`` is square with a zero diagonal (NaN allowed).

    A non-zero diagonal usually means a similarity matrix was passed where an RDM was expected.
    """
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValidationError(f"an RDM must be square, got shape {matrix.shape}")
    diagonal = np.nan_to_num(np.diagonal(matrix), nan=0.0)  # NaN: a constant response pattern
    if np.abs(diagonal).max(initial=0) > 1e-6:
        raise ValidationError("an RDM's diagonal (a stimulus' dissimilarity to itself) must be 0; "
                              f"found {np.abs(diagonal).max():.3g}: is this a similarity matrix?")


def rdm(assembly, neuroid_dim: str = "neuroid", comparison_coord: str = "stimulus_id",
        dtype: Any = np.float64, device: str | None = None) -> DataAssembly:
    """The correlation-distance RDM of an assembly, as a labelled assembly.

    Parameters
    ----------
    assembly : NeuroidAssembly
        ``presentation x neuroid`` responses (other dims must be singletons), one presentation per
        stimulus (average repetitions first).
    neuroid_dim, comparison_coord : str
        Dim of the neuroids; coordinate that identifies stimuli (rows are sorted by it).
    dtype : dtype
        Precision of the product (float32 is faster and close to 1e-7).
    device : str, optional
        Torch device of the product (e.g. ``"cuda"``); default: the device of the enclosing
        :func:`brainscore.metrics.device.computing_on`, else numpy. The RDM comes back as numpy.

    Returns
    -------
    DataAssembly
        Dims :data:`RDM_DIMS`; ``1 - r`` with a zero diagonal; presentation coordinates on both
        dims (suffixed ``_b`` on the second), rows and columns sorted by ``comparison_coord``.
    """
    if comparison_coord not in assembly.coords:
        raise ValidationError(f"the assembly has no {comparison_coord!r} coordinate")
    (stimulus_dim,) = assembly[comparison_coord].dims
    ids = np.asarray(assembly[comparison_coord].values)
    order = sorted_unique_order(ids, comparison_coord)
    _, matrix = rdm_array(assembly, neuroid_dim, comparison_coord, dtype, device=effective_device(device))
    matrix = to_numpy(matrix)
    coords = {}
    for name, coord in assembly.coords.items():
        if coord.dims == (stimulus_dim,) and name != stimulus_dim:
            values = np.asarray(coord.values)[order]
            coords[name] = ("presentation", values)
            coords[name + "_b"] = ("presentation_b", values)
    return DataAssembly(matrix, dims=RDM_DIMS, coords=coords)


def stack_rdms(rdms: Sequence[np.ndarray] | np.ndarray, stimulus_ids: Sequence, subjects: Sequence | None = None
               ) -> DataAssembly:
    """Stack per-subject RDMs into the assembly :class:`RSANoiseCeiling` (and the RDM metrics) read.

    Parameters
    ----------
    rdms : sequence of ndarray of shape (n, n), or ndarray of shape (n_subjects, n, n)
        One RDM per subject (or session), rows and columns in the order of ``stimulus_ids``.
    stimulus_ids : sequence of length n
    subjects : sequence of length n_subjects, optional
        Subject labels (default 0, 1, ...).

    Returns
    -------
    DataAssembly
        Dims ``("subject", "presentation", "presentation_b")`` with coordinates ``subject``,
        ``stimulus_id`` and ``stimulus_id_b``. ``rdms.sel(subject=s)`` is an RDM assembly.
    """
    stack = np.asarray(rdms, dtype=float)
    if stack.ndim != 3 or stack.shape[1] != stack.shape[2]:
        raise ValidationError(f"expected RDMs of shape (n_subjects, n, n), got {stack.shape}")
    ids = np.asarray(stimulus_ids)
    if ids.shape != (stack.shape[1],):
        raise ValidationError(f"{len(ids)} stimulus ids for RDMs over {stack.shape[1]} stimuli")
    subjects = np.arange(stack.shape[0]) if subjects is None else np.asarray(subjects)
    return DataAssembly(stack, dims=("subject",) + RDM_DIMS,
                        coords={"subject": subjects, "stimulus_id": ("presentation", ids),
                                "stimulus_id_b": ("presentation_b", ids)})


# ---- RDM metrics --------------------------------------------------------------------------------
def _rdm_pair(assembly1, assembly2, neuroid_dim: str, comparison_coord: str, dtype,
              device: str | None = None) -> tuple:
    """Both RDMs sorted by ``comparison_coord``, ready for ranking: ``(sorted ids, rdm1, rdm2)``.

    The RDMs are tensors on the torch ``device`` if given (None: numpy).

    Raises
    ------
    AlignmentError
        If the two hold different stimuli.
    """
    ids1, rdm1 = rdm_array(assembly1, neuroid_dim, comparison_coord, dtype, for_ranking=True, device=device)
    ids2, rdm2 = rdm_array(assembly2, neuroid_dim, comparison_coord, dtype, for_ranking=True, device=device)
    _check_same_stimuli(ids1, ids2, comparison_coord)
    warn_few_stimuli(len(ids1))
    return ids1, rdm1, rdm2


class RDMMetric(Metric):
    """Spearman correlation of two correlation-distance RDMs (Kriegeskorte et al. 2008).

    Both assemblies are turned into RDMs (``1 - Pearson r`` between stimuli across neuroids), sorted
    by ``stimulus_id``; the score is Spearman's rho over the strict upper triangles. No
    cross-validation, no error (Brain-Score's ``rdm``).

    Parameters
    ----------
    neuroid_dim : str
    comparison_coord : str
        Coordinate that identifies a stimulus; both assemblies must hold the same values, once each.
    dtype : dtype
        Precision of the RDM products (float32 default: twice as fast, ~1e-7 from float64).
    device : str, optional
        Torch device of the RDMs and the Spearman comparison (e.g. ``"cuda"``), in ``dtype`` as on
        numpy; default: the device of the enclosing :func:`brainscore.metrics.device.computing_on`,
        else numpy.

    Returns (``__call__``)
    ----------------------
    Score
        Scalar rho in [-1, 1], ``attrs["n_stimuli"]``.

    Raises
    ------
    ValidationError
        For fewer than 3 stimuli, NaN or infinite responses, a stimulus whose response is the same
        in every neuroid (its correlation distance is 0/0), or an RDM with NaN; never a NaN score.

    Warns
    -----
    MetricWarning
        For fewer than 5 stimuli (under 10 pairs, rho takes a handful of values).
    """

    def __init__(self, neuroid_dim: str = "neuroid", comparison_coord: str = "stimulus_id", dtype: Any = np.float32,
                 device: str | None = None):
        self.neuroid_dim = neuroid_dim
        self.comparison_coord = comparison_coord
        self.dtype = dtype
        self.device = device

    def __call__(self, assembly1, assembly2) -> Score:
        """Compare ``assembly1`` (e.g. model) with ``assembly2`` (data); responses or RDM assemblies."""
        ids1, rdm1, rdm2 = _rdm_pair(assembly1, assembly2, self.neuroid_dim, self.comparison_coord, self.dtype,
                                     effective_device(self.device))
        rho = kernels.rdm_spearman(rdm1, rdm2)
        return Score.of(rho, n_stimuli=len(ids1))


class RDMCrossValidated(CrossValidatedSimilarity):
    """:class:`RDMMetric` on the test portion of 10 shuffle splits (Brain-Score's ``rdm_cv``).

    Parameters
    ----------
    neuroid_dim, comparison_coord, dtype, device
        As :class:`RDMMetric` (on a device, the RDM products run there and the ranks of each split
        on the host).
    splits : int
        Number of splits (10).
    test_size : float
        Fraction of the stimuli the metric is computed on in each split (0.9).
    stratification_coord : str, None or "auto"
        Coordinate to stratify by; ``"auto"`` (default, as the reference) stratifies by
        ``object_name`` when the target has it and draws plain shuffle splits otherwise.
    random_state : int
        Seed of the splits (1).
    kfold : bool
        (Stratified)KFold instead of shuffle splits; the metric is then computed on each test fold.
    crossvalidation_kwargs : dict, optional
        The reference's spelling of the split settings (``splits``, ``test_size``,
        ``stratification_coord``, ``random_state``, ``kfold``); they override the arguments above.

    Returns (``__call__``)
    ----------------------
    Score
        Mean rho over splits; ``error`` = SEM over splits; ``raw`` = per-split rho (dim ``split``).
    """

    def __init__(self, neuroid_dim: str = "neuroid", comparison_coord: str = "stimulus_id", dtype: Any = np.float32,
                 splits: int = 10, test_size: float = 0.9, stratification_coord: str | None = AUTO,
                 random_state: int = 1, kfold: bool = False, device: str | None = None,
                 crossvalidation_kwargs: dict | None = None):
        super().__init__(splits, test_size, stratification_coord, random_state, kfold, crossvalidation_kwargs)
        self.neuroid_dim = neuroid_dim
        self.comparison_coord = comparison_coord
        self.dtype = dtype
        self.device = device

    def __call__(self, assembly1, assembly2) -> Score:
        """Splits are drawn on ``assembly2``'s (the target's) presentation order."""
        ids2, rdm1, rdm2 = _rdm_pair(assembly1, assembly2, self.neuroid_dim, self.comparison_coord, self.dtype,
                                     effective_device(self.device))
        config = self._config(self.comparison_coord, assembly2)
        masks = held_out_masks(ids2, assembly2, config, assembly1)
        ranks1 = kernels.SubsetRanks(to_numpy(kernels.upper_triangle(rdm1)))  # one sort, then ranks per split
        ranks2 = kernels.SubsetRanks(to_numpy(kernels.upper_triangle(rdm2)))
        values = [kernels.subset_spearman(ranks1, ranks2, kernels.upper_triangle(np.outer(mask, mask)))
                  for mask in masks]
        return _aggregate_splits(values, n_stimuli=len(ids2), stratification_coord=config.stratification_coord)


