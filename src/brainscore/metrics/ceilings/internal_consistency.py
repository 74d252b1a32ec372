"""Internal consistency: the split-half reliability of recordings, the ceiling of neural benchmarks.

How well would the data predict themselves? As Brain-Score estimates it (Schrimpf et al. 2018,
following the split-half reliability of Spearman 1910 and Brown 1910):

1. split the *unique* values of the repetition coordinate into two halves with scikit-learn's
   ``ShuffleSplit(n_splits=10, train_size=0.5, test_size=None, random_state=1)`` over the sorted
   unique values (with an odd count the first half gets ``floor(n/2)``);
2. average each half's trials per stimulus (NaN trials, i.e. missing repetitions, are ignored);
3. per neuroid, Pearson r across stimuli between the two half-averages;
4. per neuroid, the Spearman-Brown correction ``2r / (1 + r)`` (the reliability of the full data
   from that of halves);
5. the median over neuroids per split, the mean over splits; ``error`` is the standard error of the
   mean over splits (std with ddof=0 divided by ``sqrt(n_splits)``).

Everything is vectorised: the per-(repetition, stimulus) sums are formed once with a sparse
product, every split's half sums are one dense product with the split's 0/1 membership of
repetitions, and the correlations of all splits and neuroids are one array operation.

A stimulus without any trial in one half (possible when repetitions are missing) has no average
there and is left out of that split's correlation for the neuroids concerned (the reference would
fail on it). NaN r (a neuroid constant in a half) propagates to the median, as in the reference.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from brainscore.data.assemblies import DataAssembly, presentation_order
from brainscore.errors import ValidationError
from brainscore.metrics.base import Ceiling
from brainscore.metrics.device import effective_device
from brainscore.metrics.kernels.backend import namespace_of_device, to_numpy
from brainscore.metrics.kernels.correlation import pearsonr_columns, pearsonr_columns_nan, spearman_brown
from brainscore.metrics.score import Score
from brainscore.metrics.splits import shuffle_split

__all__ = ["InternalConsistency", "TemporalInternalConsistency", "split_half_consistency"]


def split_half_consistency(values: np.ndarray, stimulus_codes: np.ndarray, repetition_codes: np.ndarray,
                           n_stimuli: int, halves: np.ndarray, xp_device: str | None = None) -> np.ndarray:
    """Spearman-Brown corrected split-half r per split and column (the kernel of the ceiling).

    Parameters
    ----------
    values : ndarray of shape (n_presentations, n_columns)
        Single-trial responses; NaN marks a missing trial.
    stimulus_codes : ndarray of int, shape (n_presentations,)
        Stimulus index of each presentation, in ``[0, n_stimuli)``.
    repetition_codes : ndarray of int, shape (n_presentations,)
        Index of each presentation's repetition value, in ``[0, n_repetitions)``.
    n_stimuli : int
    halves : ndarray of shape (n_splits, n_repetitions)
        1 where a repetition value is in the first half of a split, 0 where in the second.
    xp_device : str, optional
        A torch device (e.g. ``"cuda"``) to run the dense part on; default numpy. The dense part is
        written once against the Array API namespace of :mod:`brainscore.metrics.kernels.backend`.

    Returns
    -------
    ndarray of shape (n_splits, n_columns), float64
        ``2r/(1+r)`` with r the Pearson correlation across stimuli of the two halves' averages.
    """
    n_pres, n_cols = values.shape
    n_reps = halves.shape[1]
    n_splits = halves.shape[0]
    valid = ~np.isnan(values)
    complete = bool(valid.all())
    rows = repetition_codes * n_stimuli + stimulus_codes
    n_rows = n_reps * n_stimuli
    if complete and len(np.unique(rows)) == n_pres:   # one trial per (repetition, stimulus): a scatter
        sums = np.zeros((n_rows, n_cols))
        sums[rows] = values
        counts = np.zeros(n_rows)
        counts[rows] = 1.0
    else:                                             # several or missing trials: one sparse product
        import scipy.sparse
        indicator = scipy.sparse.csr_matrix((np.ones(n_pres), (rows, np.arange(n_pres))), shape=(n_rows, n_pres))
        sums = indicator @ np.where(valid, values, 0.0)
        counts = np.asarray(indicator.sum(axis=1)).ravel() if complete else indicator @ valid.astype(np.float64)
    sums = sums.reshape(n_reps, n_stimuli * n_cols)
    counts = counts.reshape(n_reps, -1)               # (n_reps, n_stimuli) or (n_reps, n_stimuli * n_cols)
    halves = np.asarray(halves, dtype=np.float64)
    xp, device = namespace_of_device(xp_device)
    sums, counts, halves = (xp.asarray(np.ascontiguousarray(a), device=device) for a in (sums, counts, halves))
    # one pass over the sums: every split's first half, and (last row) all repetitions together
    with_total = xp.concat([halves, xp.ones_like(halves[:1])], axis=0)
    first_sum = with_total @ sums                     # (n_splits + 1, n_stimuli * n_cols)
    second_sum = first_sum[-1:] - first_sum[:-1]
    first_sum = first_sum[:-1]
    first_count = with_total @ counts
    second_count = first_count[-1:] - first_count[:-1]
    first_count = first_count[:-1]
    shape = (n_splits, n_stimuli, n_cols if counts.shape[1] != n_stimuli or n_cols == 1 else 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        first = xp.reshape(first_sum, (n_splits, n_stimuli, n_cols)) / xp.reshape(first_count, shape)
        second = xp.reshape(second_sum, (n_splits, n_stimuli, n_cols)) / xp.reshape(second_count, shape)
    if complete and bool(xp.all(first_count > 0)) and bool(xp.all(second_count > 0)):
        r = pearsonr_columns(first, second, axis=1)   # (n_splits, n_cols)
    else:                                             # a stimulus without trials in a half: leave it out
        r = pearsonr_columns_nan(first, second, axis=1)
    return spearman_brown(to_numpy(r))


class InternalConsistency(Ceiling):
    """Split-half internal consistency over repetitions, Spearman-Brown corrected (the neural ceiling).

    Parameters
    ----------
    split_coord : str
        Presentation coordinate whose unique values are split in halves (the repetition number).
        Relabel it first to choose the halves yourself (e.g. ``repetition % 2`` for even/odd).
    stimulus_coord : str
        Presentation coordinate identifying the stimulus.
    splits : int
        Number of random halvings (the reference's 10).
    train_size : float
        Fraction of repetition values in the first half (0.5).
    random_state : int
        Seed of the ShuffleSplit (the reference's 1).
    device : str, optional
        Torch device for the dense products (e.g. ``"cuda"``), in float64; default: the device of the
        enclosing :func:`brainscore.metrics.device.computing_on`, else numpy. The bootstrap stays on numpy.

    References
    ----------
    Schrimpf et al. (2018), bioRxiv 407007; Spearman (1910) and Brown (1910), Brit. J. Psychol. 3.

    Examples
    --------
    >>> ceiling = InternalConsistency()
    >>> c = ceiling(assembly)   # doctest: +SKIP   (presentation x neuroid with a repetition coord)
    >>> float(c), c.attrs["error"], c.attrs["raw"].dims  # doctest: +SKIP
    (0.82, 0.001, ('split', 'neuroid'))
    """

    def __init__(self, split_coord: str = "repetition", stimulus_coord: str = "stimulus_id", splits: int = 10,
                 train_size: float = 0.5, random_state: int = 1, device: str | None = None):
        self.split_coord = split_coord
        self.stimulus_coord = stimulus_coord
        self.splits = splits
        self.train_size = train_size
        self.random_state = random_state
        self.device = device

    # -- pieces ---------------------------------------------------------------------------------
    def halves(self, repetition_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The sorted unique repetition values and each split's 0/1 first-half membership of them.

        Returns
        -------
        unique : ndarray of shape (n_repetitions,)
        halves : ndarray of shape (n_splits, n_repetitions), float
        """
        unique = np.unique(repetition_values)
        if len(unique) < 2:
            raise ValidationError(f"internal consistency needs at least 2 distinct {self.split_coord!r} values to "
                                  f"split in halves, found {len(unique)}")
        halves = np.zeros((self.splits, len(unique)))
        for s, (first, _) in enumerate(shuffle_split(len(unique), self.splits, self.train_size, None,
                                                     self.random_state)):
            halves[s, first] = 1.0
        return unique, halves

    def _check(self, assembly: DataAssembly) -> None:
        if not isinstance(assembly, xr.DataArray) or "presentation" not in assembly.dims:
            raise ValidationError("the ceiling needs an assembly with a presentation dim (single trials)")
        for coord in (self.split_coord, self.stimulus_coord):
            if coord not in assembly.coords:
                raise ValidationError(f"assembly has no {coord!r} coordinate; internal consistency needs single-trial "
                                      f"data with {self.split_coord!r} and {self.stimulus_coord!r} on presentation")

    def raw_values(self, assembly: DataAssembly) -> tuple[np.ndarray, np.ndarray]:
        """Spearman-Brown corrected r per split and neuroid (and the sorted stimulus ids).

        Parameters
        ----------
        assembly : DataAssembly
            ``presentation x neuroid`` single trials.

        Returns
        -------
        consistency : ndarray of shape (n_splits, n_neuroids)
        stimuli : ndarray of the sorted unique stimulus ids
        """
        values = np.asarray(assembly.transpose("presentation", ...).values, dtype=np.float64)
        values = values.reshape(values.shape[0], -1)
        stimuli, stimulus_codes = np.unique(assembly[self.stimulus_coord].values, return_inverse=True)
        repetitions = assembly[self.split_coord].values
        unique, halves = self.halves(repetitions)
        repetition_codes = np.searchsorted(unique, repetitions)
        consistency = split_half_consistency(values, stimulus_codes, repetition_codes, len(stimuli), halves,
                                             xp_device=effective_device(self.device))
        return consistency, stimuli

    def __call__(self, assembly: DataAssembly) -> Score:
        """The ceiling of ``assembly`` (``presentation x neuroid``, a single time bin squeezed).

        Returns
        -------
        Score
            Scalar; attrs ``error`` (SEM over splits), ``raw`` (``split x neuroid`` DataArray of the
            corrected per-neuroid reliabilities), ``split_scores`` and the parameters.

        Raises
        ------
        ValidationError
            If coordinates are missing, several time bins remain, or fewer than 2 repetition values.
        """
        self._check(assembly)
        if "time_bin" in assembly.dims:
            if assembly.sizes["time_bin"] != 1:
                raise ValidationError("the assembly has several time bins: use internal_consistency_temporal "
                                      "(one ceiling per time bin) or select a time bin")
            assembly = assembly.squeeze("time_bin", drop=True)
        if set(assembly.dims) != {"presentation", "neuroid"}:
            raise ValidationError(f"expected dims (presentation, neuroid), got {assembly.dims}")
        assembly = assembly.transpose("presentation", "neuroid")
        consistency, _ = self.raw_values(assembly)
        coords = {name: ("neuroid", c.values) for name, c in assembly.coords.items() if c.dims == ("neuroid",)}
        raw = xr.DataArray(consistency, dims=("split", "neuroid"), coords={"split": np.arange(self.splits), **coords})
        per_split = np.median(consistency, axis=1)
        score = Score.of(float(per_split.mean()), error=float(per_split.std() / np.sqrt(self.splits)),
                         **self._attrs())
        score.attrs["raw"] = raw
        score.attrs["split_scores"] = per_split
        return score

    def bootstrap(self, assembly: DataAssembly, weights: np.ndarray, stimulus_ids: np.ndarray) -> np.ndarray:
        """The ceiling recomputed with stimuli resampled: one value per row of ``weights``.

        The split halves are the ceiling's own (same seed); each split's half-averages are formed
        once and only the per-neuroid Pearson r across stimuli is recomputed with the resample's
        stimulus weights (a stimulus drawn k times counts k times), then Spearman-Brown, the median
        over neuroids and the mean over splits, as in :meth:`__call__`.

        Parameters
        ----------
        assembly : DataAssembly
            ``presentation x neuroid`` single trials (one time bin squeezed), as for :meth:`__call__`.
        weights : ndarray of shape (resamples, n_stimuli)
            Bootstrap counts of the stimuli ``stimulus_ids``.
        stimulus_ids : ndarray of shape (n_stimuli,)
            The stimuli the columns of ``weights`` refer to; every stimulus of ``assembly`` must be one.

        Returns
        -------
        ndarray of shape (resamples,)

        Raises
        ------
        ValidationError
            If ``assembly`` is not single trials ``presentation x neuroid`` with the split coordinate.
        AlignmentError
            If ``assembly`` holds a stimulus not in ``stimulus_ids``.
        """
        from brainscore.metrics.bootstrap import half_averages, weighted_pearson
        self._check(assembly)
        if "time_bin" in assembly.dims:
            assembly = assembly.squeeze("time_bin", drop=True)
        assembly = assembly.transpose("presentation", "neuroid")
        values = np.asarray(assembly.values, dtype=np.float64)
        stimuli, stimulus_codes = np.unique(assembly[self.stimulus_coord].values, return_inverse=True)
        position = presentation_order(np.asarray(stimulus_ids).astype(str), stimuli.astype(str), self.stimulus_coord,
                                      repeats="first", entry="bootstrap weight", sides=("ceiling's bootstrap",
                                                                                        "assembly"))
        stimulus_weights = weights[:, position]                              # (B, n_stimuli of the assembly)
        repetitions = assembly[self.split_coord].values
        unique, halves = self.halves(repetitions)
        # a split and its complement give the same r (Pearson is symmetric): compute each halving once
        canonical = np.where(halves[:, :1] == 1.0, halves, 1.0 - halves)
        distinct, inverse = np.unique(canonical, axis=0, return_inverse=True)
        first, second = half_averages(values, stimulus_codes, np.searchsorted(unique, repetitions), len(stimuli),
                                      distinct)
        per_halving = np.empty((weights.shape[0], len(distinct)))
        for s in range(len(distinct)):
            r = spearman_brown(weighted_pearson(stimulus_weights, first[s], second[s]))
            per_halving[:, s] = np.median(r, axis=1)
        return per_halving[:, np.asarray(inverse).ravel()].mean(axis=1)

    def _attrs(self) -> dict[str, Any]:
        return {"method": "internal_consistency", "split_coord": self.split_coord, "splits": self.splits,
                "train_size": self.train_size, "seed": self.random_state, "correction": "spearman_brown"}


class TemporalInternalConsistency(InternalConsistency):
    """:class:`InternalConsistency` computed separately for every time bin (one ceiling per bin).

    ``assembly`` is ``presentation x neuroid x time_bin``; the returned Score has dim ``time_bin``
    and ``error`` is a DataArray over ``time_bin``. All time bins are computed together.
    """

    def __call__(self, assembly: DataAssembly) -> Score:
        """Per-time-bin ceilings of ``assembly``.

        Raises
        ------
        ValidationError
            If the assembly has no ``time_bin`` dim or misses coordinates.
        """
        self._check(assembly)
        if "time_bin" not in assembly.dims:
            raise ValidationError("internal_consistency_temporal needs a time_bin dim; use internal_consistency")
        assembly = assembly.transpose("presentation", "time_bin", "neuroid")
        T, q = assembly.sizes["time_bin"], assembly.sizes["neuroid"]
        consistency, _ = self.raw_values(assembly)                        # (split, T * q)
        consistency = consistency.reshape(self.splits, T, q)
        time_coords = {name: ("time_bin", c.values) for name, c in assembly.coords.items() if c.dims == ("time_bin",)}
        neuroid_coords = {name: ("neuroid", c.values) for name, c in assembly.coords.items() if c.dims == ("neuroid",)}
        raw = xr.DataArray(consistency, dims=("split", "time_bin", "neuroid"),
                           coords={"split": np.arange(self.splits), **time_coords, **neuroid_coords})
        per_split = np.median(consistency, axis=2)                         # (split, T)
        score = Score(per_split.mean(axis=0), dims=("time_bin",), coords=time_coords)
        score.attrs.update(self._attrs())
        score.attrs["method"] = "internal_consistency_temporal"
        score.attrs["error"] = xr.DataArray(per_split.std(axis=0) / np.sqrt(self.splits), dims=("time_bin",),
                                            coords=time_coords)
        score.attrs["raw"] = raw
        score.attrs["split_scores"] = per_split
        return score
