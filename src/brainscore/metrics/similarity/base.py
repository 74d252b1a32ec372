"""What the RDM and CKA metrics share: responses as arrays sorted by stimulus, and the
cross-validation over stimuli that scores only the test portion of each split.

Cross-validated variants (``rdm_cv``, ``cka_cv``) follow Brain-Score's
``TestOnlyCrossValidation(test_size=.9)``: 10 shuffle splits (stratified by ``object_name`` when the
target has it), seed 1, built in the target's presentation order; the metric is computed on the
90 % *test* portion of each split. Score = mean over splits, error = standard error of the mean
(std with ddof=0 over splits / sqrt(n_splits)). Because an RDM entry and a Gram entry depend on two
stimuli only, the full RDM / Gram matrix is computed once and each split takes its sub-matrix: the
same numbers as recomputing per split, at a tenth of the cost.
"""
from __future__ import annotations


import numpy as np

from brainscore.data.assemblies import DataAssembly, check_id_types
from brainscore.errors import AlignmentError, ValidationError
from brainscore.metrics.base import Metric, MetricWarning
from brainscore.metrics.score import Score
from brainscore.metrics.splits import SplitConfig, assembly_splits, mean_over_splits

AUTO = "auto"
"""Stratification default of the cross-validated metrics: ``object_name`` if the target has it, else none."""


#: Fewest stimuli a similarity metric accepts: an RDM of 3 stimuli has 3 pairs to rank.
MIN_STIMULI = 3
#: Fewer stimuli than this give an RDM comparison a warning: under 10 pairs, Spearman's rho takes a handful of values
#: (on 3 stimuli only -1, -0.5, 0.5 and 1).
FEW_STIMULI = 5


def warn_few_stimuli(n_stimuli: int, what: str = "the RDMs") -> None:
    """Warn (:class:`~brainscore.metrics.base.MetricWarning`) when ``n_stimuli`` is under :data:`FEW_STIMULI`."""
    if n_stimuli < FEW_STIMULI:
        import warnings

        pairs = n_stimuli * (n_stimuli - 1) // 2
        warnings.warn(f"{what} compare {n_stimuli} stimuli, {pairs} pairs: Spearman's rho over {pairs} pairs takes "
                      f"only a few values (0.5 is one of them), so the score means little; use at least {FEW_STIMULI} "
                      f"stimuli", MetricWarning, stacklevel=3)


def check_responses(values: np.ndarray, ids: np.ndarray, name: str = "the assembly") -> None:
    """Reject responses no similarity metric can give a number for.

    Raises
    ------
    ValidationError
        With fewer than :data:`MIN_STIMULI` stimuli or no neuroids; for NaN or infinite values
        (naming how many and the first stimuli that hold them); for non-numeric values.
    """
    if values.ndim != 2 or values.shape[0] < MIN_STIMULI or values.shape[1] < 1:
        raise ValidationError(f"{name} has {values.shape[0] if values.ndim else 0} stimuli x "
                              f"{values.shape[1] if values.ndim == 2 else 0} neuroids; a similarity metric needs at "
                              f"least {MIN_STIMULI} stimuli and 1 neuroid")
    if not np.issubdtype(values.dtype, np.number) or np.issubdtype(values.dtype, np.complexfloating):
        raise ValidationError(f"{name} holds values of dtype {values.dtype}; responses must be real numbers")
    finite = np.isfinite(values)
    if not finite.all():
        rows = np.flatnonzero(~finite.all(axis=1))
        kinds = [k for k, bad in (("NaN", np.isnan(values).any()), ("inf", np.isinf(values).any())) if bad]
        raise ValidationError(f"{name} holds {int((~finite).sum())} non-finite values ({' and '.join(kinds)}) in "
                              f"{len(rows)} stimuli (e.g. {list(ids[rows[:5]])}); a similarity metric cannot rank them: "
                              f"drop those stimuli or neuroids, or fix the model layer that produced them")


def _responses(assembly, neuroid_dim: str, comparison_coord: str,
               name: str = "the assembly") -> tuple[np.ndarray, np.ndarray]:
    """(ids, values) of a presentation x neuroid assembly, rows sorted by ``comparison_coord``.

    Raises
    ------
    ValidationError
        From :func:`check_responses`, and for missing coordinates or extra dims.
    """
    if comparison_coord not in assembly.coords:
        raise ValidationError(f"the assembly has no {comparison_coord!r} coordinate to align stimuli by; "
                              f"coordinates: {list(assembly.coords)}")
    (stimulus_dim,) = assembly[comparison_coord].dims
    if neuroid_dim not in assembly.dims:
        raise ValidationError(f"the assembly has no {neuroid_dim!r} dim; its dims are {assembly.dims}")
    extra = [d for d in assembly.dims if d not in (stimulus_dim, neuroid_dim)]
    for dim in extra:
        if assembly.sizes[dim] != 1:
            raise ValidationError(f"expected {stimulus_dim} x {neuroid_dim} responses, but dim {dim!r} has "
                                  f"{assembly.sizes[dim]} entries; select one (e.g. one time bin) first")
    if extra:
        assembly = assembly.isel({d: 0 for d in extra})
    assembly = assembly.transpose(stimulus_dim, neuroid_dim)
    ids = np.asarray(assembly[comparison_coord].values)
    order = sorted_unique_order(ids, comparison_coord)
    values = np.asarray(assembly.values)
    check_responses(values, ids, name)
    if np.array_equal(order, np.arange(len(order))):  # already sorted: no copy of a large layer
        return ids, values
    return ids[order], values[order]


def sorted_unique_order(ids: np.ndarray, coord: str) -> np.ndarray:
    """The stable argsort of ``ids`` (shape (n,)), checking each id occurs once.

    Raises
    ------
    AlignmentError
        If an id of ``coord`` repeats (an RDM needs one response pattern per stimulus).
    """
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    duplicated = sorted_ids[1:][sorted_ids[1:] == sorted_ids[:-1]]
    if len(duplicated):
        raise AlignmentError(f"{coord} values repeat (e.g. {list(np.unique(duplicated)[:5])}); an RDM needs one "
                             f"response pattern per stimulus: average over repetitions first")
    return order



def _check_same_stimuli(ids1: np.ndarray, ids2: np.ndarray, coord: str) -> None:
    check_id_types(ids1, ids2, coord)
    if ids1.shape != ids2.shape or not np.array_equal(ids1, ids2):
        only1, only2 = np.setdiff1d(ids1, ids2), np.setdiff1d(ids2, ids1)
        raise AlignmentError(f"the two assemblies must hold the same stimuli ({coord}): {len(only1)} only in the "
                             f"first (e.g. {list(only1[:3])}), {len(only2)} only in the second (e.g. {list(only2[:3])})")



# ---- cross-validation over stimuli (test portion only) ------------------------------------------
def held_out_masks(ids_sorted: np.ndarray, target, config: SplitConfig, source=None) -> list[np.ndarray]:
    """Boolean masks over the sorted stimuli (shape (n,) each), one per split, for the *test* portion of each split.

    Raises ``ValidationError``/``AlignmentError`` when the target (or source) cannot be stratified as asked.

    Splits are drawn on the target's presentation order (as the reference does); ``split_coord``
    values of the test portion select rows of the sorted RDM / Gram matrix.
    """
    stratification_coord = config.stratification_coord
    target_ids, folds = assembly_splits(target, config)
    if stratification_coord is not None and source is not None:
        if stratification_coord not in source.coords:
            raise ValidationError(f"the source has no {stratification_coord!r} coordinate to stratify by")
        if not np.array_equal(np.sort(np.asarray(source[stratification_coord].values)),
                              np.sort(np.asarray(target[stratification_coord].values))):
            raise AlignmentError(f"source and target differ in their {stratification_coord!r} values")
    masks = []
    for _, test in folds:
        positions = np.searchsorted(ids_sorted, target_ids[test])
        mask = np.zeros(len(ids_sorted), dtype=bool)
        mask[positions] = True
        masks.append(mask)
    return masks


def _resolve_stratification(stratification_coord: str | None, target) -> str | None:
    if stratification_coord == AUTO:
        return "object_name" if "object_name" in target.coords else None
    return stratification_coord


def _aggregate_splits(values: list[float], **attrs) -> Score:
    """Mean over splits, error = std (ddof=0) / sqrt(n_splits), per-split values in ``raw``."""
    values = np.asarray(values, dtype=float)
    raw = DataAssembly(values, dims=("split",), coords={"split": np.arange(len(values))})
    center, error = mean_over_splits(values)
    return Score.of(center, error=error, raw=raw, **attrs)


#: the keys of the reference's ``crossvalidation_kwargs`` that the test-only cross-validated metrics take
CROSSVALIDATION_KEYS = ("splits", "test_size", "stratification_coord", "random_state", "kfold")


class CrossValidatedSimilarity(Metric):
    """Base of the cross-validated similarity metrics (``rdm_cv``, ``cka_cv``): the settings of the reference's
    ``TestOnlyCrossValidation`` (``splits``, ``test_size``, ``stratification_coord``, ``random_state``, ``kfold``,
    also given as ``crossvalidation_kwargs``); the metric is computed on each split's held-out portion
    (:func:`held_out_masks`) and aggregated by :func:`_aggregate_splits`.

    Raises
    ------
    TypeError
        For an unknown key of ``crossvalidation_kwargs``.
    """

    def __init__(self, splits: int, test_size: float, stratification_coord: str | None, random_state: int,
                 kfold: bool, crossvalidation_kwargs: dict | None = None):
        self.splits = splits
        self.test_size = test_size
        self.stratification_coord = stratification_coord
        self.random_state = random_state
        self.kfold = kfold
        unknown = set(crossvalidation_kwargs or {}) - set(CROSSVALIDATION_KEYS)
        if unknown:
            raise TypeError(f"crossvalidation_kwargs: unknown keys {sorted(unknown)}; this metric takes "
                            f"{', '.join(CROSSVALIDATION_KEYS)} (the metric is computed on the test portion)")
        for key, value in (crossvalidation_kwargs or {}).items():  # the reference's spelling, same settings
            setattr(self, key, value)

    def _config(self, split_coord: str, target) -> SplitConfig:
        """The reference's ``Split(test_size=.9)``: train_size None, so the test portion is 90 %."""
        return SplitConfig(splits=self.splits, train_size=None, test_size=self.test_size, split_coord=split_coord,
                           stratification_coord=_resolve_stratification(self.stratification_coord, target),
                           kfold=self.kfold, random_state=self.random_state)


