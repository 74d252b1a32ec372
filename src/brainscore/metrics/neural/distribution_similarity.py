"""Similarity of two distributions of single-neuron properties (Marques, Schrimpf & DiCarlo 2021).

A property (e.g. orientation bandwidth) measured on many neurons gives a distribution. Model and
data distributions are compared as histograms over the data's bins (values outside are clipped
into the first/last bin), by a Kolmogorov-Smirnov distance normalised by the largest distance the
data histogram can have (to a point mass at either end):

    similarity = 1 - KS(model, data) / max(KS(δ_first, data), KS(δ_last, data))

The model's neurons are bootstrapped: 1000 resamples (with replacement) of as many model neurons
as the data have rows, NaN rows included (e.g. 190 for Cavanaugh et al. 2002's grating summation
field, measured on 148 of 190 cells; NaN values, the model's too, are then left out of the
histograms); score = mean similarity over resamples, error = their std (both ignoring NaN;
the score is 0 with error 0 if more than 10 % of resamples are NaN). The ceiling is the metric of
the data against themselves.

Brain-Score draws the resamples from numpy's unseeded global generator, so its numbers change
from run to run; here they are drawn from ``RandomState(random_state)`` (default 0), in the same
way (one ``choice`` of n_data neurons per resample), so results are reproducible.
"""
from __future__ import annotations

import numpy as np
import xarray as xr

from brainscore.errors import ValidationError
from brainscore.metrics.base import Ceiling, Metric
from brainscore.metrics.score import Score

__all__ = ["histogram", "ks_similarity", "bootstrap_ks_similarity", "KSSimilarity", "KSSimilarityCeiling",
           "ks_similarity_metric", "ks_similarity_ceiling"]


def histogram(values: np.ndarray, bins: np.ndarray) -> np.ndarray:
    """Counts of ``values`` in ``bins`` along the last axis, as ``np.histogram`` counts them.

    Bins are half-open ``[b_k, b_k+1)`` except the last, which includes its right edge; values
    outside the edges and NaN are not counted.

    Parameters
    ----------
    values : ndarray of shape (..., n)
    bins : ndarray of shape (n_bins + 1,), increasing

    Returns
    -------
    ndarray of shape (..., n_bins), int
    """
    bins = np.asarray(bins, dtype=float)
    values = np.asarray(values, dtype=float)
    n_bins = len(bins) - 1
    index = np.searchsorted(bins, values, side="right") - 1
    index[values == bins[-1]] = n_bins - 1
    valid = (index >= 0) & (index < n_bins) & ~np.isnan(values)
    flat = values.reshape(-1, values.shape[-1]) if values.ndim > 1 else values[None, :]
    index, valid = index.reshape(flat.shape), valid.reshape(flat.shape)
    rows = np.broadcast_to(np.arange(flat.shape[0])[:, None], flat.shape)
    counts = np.zeros((flat.shape[0], n_bins), dtype=np.int64)
    np.add.at(counts, (rows[valid], index[valid]), 1)
    return counts.reshape(values.shape[:-1] + (n_bins,))


def ks_similarity(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """1 - KS distance of histogram(s) ``p`` to the data histogram ``q``, over its largest possible value.

    Parameters
    ----------
    p : ndarray of shape (..., n_bins)
        Normalised model histogram(s) (rows sum to 1).
    q : ndarray of shape (n_bins,)
        Normalised data histogram.

    Returns
    -------
    ndarray of shape p.shape[:-1] (float for a single histogram)
        NaN where the normalisation is 0 (data concentrated so that no distance is possible).
    """
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    cq = np.cumsum(q)
    raw = np.max(np.abs(np.cumsum(p, axis=-1) - cq), axis=-1)
    first, last = np.zeros_like(q), np.zeros_like(q)
    first[0], last[-1] = 1, 1
    largest = max(np.max(np.abs(np.cumsum(first) - cq)), np.max(np.abs(np.cumsum(last) - cq)))
    with np.errstate(invalid="ignore", divide="ignore"):
        result = 1 - raw / largest
    return float(result) if np.ndim(result) == 0 else result


def bootstrap_ks_similarity(model_values, data_values, bins, n_samples: int = 1000,
                            random_state: int | np.random.RandomState | None = 0) -> tuple[float, float, np.ndarray]:
    """Bootstrapped KS similarity of model and data property values (Marques et al. 2021).

    Parameters
    ----------
    model_values : ndarray of shape (n_model_neurons,)
    data_values : ndarray of shape (n_data_neurons,)
    bins : ndarray of shape (n_bins + 1,)
        The data's histogram edges; values are clipped into [bins[0], bins[-1]].
    n_samples : int
        Bootstrap resamples of ``n_data_neurons`` model neurons (1000).
    random_state : int, RandomState or None
        Seed (default 0). None uses numpy's global generator, as the reference does.

    Returns
    -------
    center, error : float
        nanmean and nanstd of the per-resample similarities (0, 0 if more than 10 % are NaN).
    samples : ndarray of shape (n_samples,)
    """
    bins = np.asarray(bins, dtype=float)
    if bins.ndim != 1 or len(bins) < 2 or np.any(np.diff(bins) <= 0):
        raise ValidationError(f"bins must be increasing edges (at least 2), got {bins}")
    model = np.clip(np.asarray(model_values, dtype=float).reshape(-1), bins[0], bins[-1])
    data = np.clip(np.asarray(data_values, dtype=float).reshape(-1), bins[0], bins[-1])
    if not len(model) or not len(data):
        raise ValidationError(f"need model and data values, got {len(model)} and {len(data)}")
    data_hist = histogram(data, bins).astype(float)
    data_hist /= data_hist.sum()
    if random_state is None:
        draw = np.random.choice
    else:
        rng = random_state if isinstance(random_state, np.random.RandomState) else np.random.RandomState(random_state)
        draw = rng.choice
    samples = np.stack([draw(model, len(data)) for _ in range(n_samples)])  # one draw per resample, as the reference
    model_hist = histogram(samples, bins).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        model_hist /= model_hist.sum(axis=1, keepdims=True)
    similarity = np.atleast_1d(ks_similarity(model_hist, data_hist))
    if np.isnan(similarity).sum() > n_samples / 10:
        return 0.0, 0.0, similarity
    return float(np.nanmean(similarity)), float(np.nanstd(similarity)), similarity


def property_values(assembly, property_name: str) -> np.ndarray:
    """The values of one neuronal property (e.g. ``surround_suppression_index``) as a flat float array.

    ``assembly`` is a ``neuroid x neuronal_property`` assembly (model or data properties) or a plain array-like.

    Raises
    ------
    ValidationError
        If the assembly has no such property (naming the ones it has).
    """
    if isinstance(assembly, xr.DataArray):
        if "neuronal_property" in assembly.dims:
            names = np.asarray(assembly["neuronal_property"].values)
            if property_name not in names:
                raise ValidationError(f"no property {property_name!r} in the assembly; it has {list(names)}")
            return np.asarray(assembly.sel(neuronal_property=property_name).values, dtype=float).reshape(-1)
        if property_name in assembly.coords:
            return np.asarray(assembly[property_name].values, dtype=float)
        if assembly.ndim == 1:
            return np.asarray(assembly.values, dtype=float)
        raise ValidationError(f"cannot find property {property_name!r}: expected a 'neuronal_property' dim or a "
                              f"coordinate of that name")
    return np.asarray(assembly, dtype=float).reshape(-1)


class KSSimilarity(Metric):
    """Bootstrapped KS similarity of one neuronal property (Brain-Score's ``ks_similarity``).

    Parameters
    ----------
    property_name : str
        The property (a value of the ``neuronal_property`` dim of a PropertiesAssembly of dims
        (neuroid, neuronal_property), or a coordinate of that name).
    bins : ndarray, optional
        Histogram edges; default: the data's ``attrs[f"{property_name}_bins"]``, as the reference.
    n_samples : int
        Bootstrap resamples (1000).
    random_state : int or None
        Seed (0); None for numpy's global generator (the reference's unreproducible behaviour).

    Returns (``__call__(model_property, data_property)``)
    -----------------------------------------------------
    Score
        Mean similarity; ``error`` = std over resamples; ``raw`` = per-resample similarities.
    """

    def __init__(self, property_name: str, bins=None, n_samples: int = 1000, random_state: int | None = 0):
        self.property_name = property_name
        self.bins = bins
        self.n_samples = n_samples
        self.random_state = random_state

    def _bins(self, data) -> np.ndarray:
        if self.bins is not None:
            return np.asarray(self.bins, dtype=float)
        key = f"{self.property_name}_bins"
        bins = getattr(data, "attrs", {}).get(key)
        if bins is None:
            raise ValidationError(f"no bins: pass bins= or give the data assembly attrs[{key!r}]")
        return np.asarray(bins, dtype=float)

    def __call__(self, model_property, data_property) -> Score:
        center, error, samples = bootstrap_ks_similarity(
            property_values(model_property, self.property_name), property_values(data_property, self.property_name),
            self._bins(data_property), n_samples=self.n_samples, random_state=self.random_state)
        return Score.of(center, error=error, raw=samples, property_name=self.property_name,
                        random_state=self.random_state)


class KSSimilarityCeiling(Ceiling):
    """Ceiling of :class:`KSSimilarity`: the data compared with bootstrap resamples of themselves.

    Parameters
    ----------
    As :class:`KSSimilarity`.
    """

    def __init__(self, property_name: str, bins=None, n_samples: int = 1000, random_state: int | None = 0):
        self.metric = KSSimilarity(property_name, bins=bins, n_samples=n_samples, random_state=random_state)

    def __call__(self, assembly) -> Score:
        return self.metric(assembly, assembly)


def ks_similarity_metric(property_name: str, **kwargs) -> KSSimilarity:
    """Factory of ``ks_similarity``."""
    return KSSimilarity(property_name, **kwargs)


def ks_similarity_ceiling(property_name: str, **kwargs) -> KSSimilarityCeiling:
    """Factory of the ``ks_similarity`` ceiling."""
    return KSSimilarityCeiling(property_name, **kwargs)
