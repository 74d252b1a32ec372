"""Single-neuron property benchmarks: does the model's population have the data's distribution of a property?

Marques, Schrimpf & DiCarlo (2021, "Multi-scale hierarchical neural network models that bridge
from single neurons in the primate primary visual cortex to object recognition behavior"): a
property (orientation bandwidth, surround suppression, ...) is measured on every model neuroid
with the experiment's stimuli (gratings, ...) and compared with the distribution measured in the
data by a distribution similarity (Brain-Score's ``ks_similarity``), normalised by the data's
similarity to themselves: ``score = raw / ceiling`` (``ceil_score``).

The flow:

1. ``candidate.start_recording(region, time_bins)``; the stimuli are placed on the model's screen;
2. ``responses = candidate.look_at(stimuli, number_of_trials)``; or, for a benchmark that ``streams``,
   the same responses as blocks of neuroids read from the model's features on disk (a wide layer on
   many stimuli need not fit in memory);
3. ``model_properties = property_func(responses, stimuli)``: a PropertiesAssembly
   (``neuroid x neuronal_property``), as the experiment's analysis computes it;
4. ``raw = metric(model_properties, data_properties)``; ``score = raw / ceiling``.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from brainscore.benchmarks.base import BenchmarkBase, Presentation, check_metric_call, takes_device
from brainscore.benchmarks.neural import squeeze_time_bin
from brainscore.benchmarks.screen import place_on_screen
from brainscore.caching import callable_identity
from brainscore.data.assemblies import DataAssembly
from brainscore.data.stimuli import StimulusSet
from brainscore.metrics.bootstrap import BootstrapSamples, resample_counts
from brainscore.metrics.score import Score
from brainscore.models.interface import BrainModel
from brainscore.progress import stage


CEILING_DRAWS = 100
"""Draws of the data against themselves per bootstrap resample of the ceiling (the ceiling itself uses the
metric's 1000; fewer here keep 1000 resamples to seconds, adding a spread about a tenth of the ceiling's own)."""


def _ks_against_resamples(model: np.ndarray, data: np.ndarray, bins: np.ndarray, weights: np.ndarray,
                          n_samples: int, random_state) -> np.ndarray:
    """Mean KS similarity (Marques et al. 2021) of ``n_samples`` draws of ``len(data)`` model values to each resampled
    data histogram: ``weights`` (resamples, n_data) counts how often each data value is drawn.

    NaN draws are left out as :func:`~brainscore.metrics.neural.distribution_similarity.bootstrap_ks_similarity`
    leaves them (and a resample with more than 10 % NaN draws is 0, as there)."""
    from brainscore.metrics.neural.distribution_similarity import histogram, ks_similarity

    model = np.clip(np.asarray(model, dtype=float), bins[0], bins[-1])
    data = np.clip(np.asarray(data, dtype=float), bins[0], bins[-1])
    rng = random_state if isinstance(random_state, np.random.RandomState) else np.random.RandomState(random_state)
    draws = np.stack([rng.choice(model, len(data)) for _ in range(n_samples)])
    model_hist = histogram(draws, bins).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        model_hist /= model_hist.sum(axis=1, keepdims=True)
    per_neuron = histogram(data[:, None], bins).astype(float)          # (n_data, n_bins): one-hot, NaN rows 0
    out = np.empty(len(weights))
    for i, w in enumerate(np.asarray(weights, dtype=float)):
        data_hist = w @ per_neuron
        data_hist /= data_hist.sum()
        similarity = np.atleast_1d(ks_similarity(model_hist, data_hist))
        out[i] = 0.0 if np.isnan(similarity).sum() > n_samples / 10 else np.nanmean(similarity)
    return out


class PropertiesBenchmark(BenchmarkBase):
    """Model neuroid properties against the data's, by a distribution metric, ceiled by the data's self-similarity.

    Parameters
    ----------
    identifier, version, parent, bibtex : see :class:`~brainscore.benchmarks.base.BenchmarkBase`
    assembly : PropertiesAssembly or callable () -> PropertiesAssembly
        Measured properties (``neuroid x neuronal_property``, histogram edges in
        ``attrs[f"{property}_bins"]`` for ``ks_similarity``).
    stimulus_set : StimulusSet or callable () -> StimulusSet
        The stimuli the property is measured with (e.g. gratings of several orientations).
    property_func : callable (responses, stimuli) -> PropertiesAssembly
        Computes the property of every model neuroid from its responses (an assembly, or
        NeuroidBlocks with ``streams``), as the paper's analysis.
    similarity_metric : callable (model_properties, data_properties) -> Score
        E.g. ``load_metric("ks_similarity", property_name="circular_variance")``.
    ceiling_func : callable (data_properties) -> Score, or None
        E.g. ``load_ceiling("ks_similarity", property_name=...)``; None: ceiling 1.
    visual_degrees : float
    number_of_trials : int
    region : str
    time_bins : sequence of (start, end) ms
        Default ``[(70, 170)]``.
    streams : bool
        ``property_func`` takes the responses as :class:`~brainscore.data.blocks.NeuroidBlocks`
        (read a block of neuroids at a time, from the model's features on disk where it keeps them:
        :meth:`~brainscore.benchmarks.base.Presentation.show_blocks`) instead of an assembly, so a layer
        larger than memory can be measured (issue 22). Default False: an assembly in memory.
    """

    #: a similarity in [0, 1] over its ceiling: never negative, above 1 where the model beats the data's own
    score_range = (0.0, math.inf)

    def __init__(self, identifier: str, version: int, assembly, stimulus_set,
                 property_func: Callable[[DataAssembly, StimulusSet], DataAssembly],
                 similarity_metric: Callable[[DataAssembly, DataAssembly], Score],
                 ceiling_func: Callable[[DataAssembly], Score] | None, visual_degrees: float, number_of_trials: int,
                 region: str, parent: str | None = None, bibtex: str = "",
                 time_bins: Sequence[tuple[int, int]] = ((70, 170),), streams: bool = False):
        super().__init__(identifier=identifier, version=version,
                         ceiling_func=(lambda: ceiling_func(self.assembly)) if ceiling_func is not None else None,
                         parent=parent or region, bibtex=bibtex, ceiling_key=self._data_key,
                         ceiling_identity=callable_identity(ceiling_func) if ceiling_func is not None else None,
                         ceiling_code=[ceiling_func] if ceiling_func is not None else [])
        self._assembly_source, self._stimuli_source = assembly, stimulus_set
        self._assembly: DataAssembly | None = None
        self._stimulus_set: StimulusSet | None = None
        self.property_func = property_func
        check_metric_call(identifier, similarity_metric, "metric(model_properties, assembly)", positional=2,
                          hint="Use a distribution similarity, e.g. load_metric('ks_similarity').")
        self.metric = similarity_metric
        self.visual_degrees = visual_degrees
        self.number_of_trials = number_of_trials
        self.region = region
        self.time_bins = [tuple(t) for t in time_bins]
        self.streams = bool(streams)

    @property
    def assembly(self) -> DataAssembly:
        """The measured properties."""
        if self._assembly is None:
            source = self._assembly_source
            self._assembly = source() if callable(source) and not isinstance(source, DataAssembly) else source
        return self._assembly

    @property
    def stimulus_set(self) -> StimulusSet:
        """The stimuli the property is measured with."""
        if self._stimulus_set is None:
            source = self._stimuli_source
            self._stimulus_set = source() if callable(source) and not isinstance(source, StimulusSet) else source
        return self._stimulus_set

    def _data_key(self) -> dict[str, Any]:
        assembly = self.assembly
        bins = {k: np.asarray(v) for k, v in assembly.attrs.items() if k.endswith("_bins")}
        return {"values": np.ascontiguousarray(np.asarray(assembly.values, dtype=float)), "bins": bins}

    def presentations(self, candidate: BrainModel) -> list[Presentation]:
        """The stimuli placed on ``candidate``'s screen, recorded from :attr:`region`."""
        stimuli = place_on_screen(self.stimulus_set, target_visual_degrees=candidate.visual_degrees(),
                                  source_visual_degrees=self.visual_degrees)
        return [Presentation(stimuli, number_of_trials=self.number_of_trials, region=self.region,
                             time_bins=self.time_bins)]

    @takes_device
    def __call__(self, candidate: BrainModel) -> Score:
        """Record ``candidate`` on the stimuli, compute its neuroids' property and score its distribution."""
        shown, = self.presentations(candidate)
        if self.streams:
            return self.score_properties(self.property_func(shown.show_blocks(candidate), shown.stimuli))
        responses = squeeze_time_bin(shown.show(candidate))
        return self.score_properties(self.property_func(responses, shown.stimuli))

    def score_properties(self, model_properties: DataAssembly) -> Score:
        """Score already computed model properties: ``metric(model, data) / ceiling``."""
        from brainscore.metrics.normalisation import ceil_score

        assembly = self.assembly  # the data, loaded once (reported by the data store)
        with stage(f"{self.identifier}: comparing the model's property distribution"):
            raw = self.metric(model_properties, assembly)
        score = ceil_score(raw, self.ceiling)
        score.attrs["benchmark_identifier"] = self.identifier
        score.attrs["benchmark_version"] = self.version
        score.attrs["region"] = self.region
        score.attrs["model_properties"] = model_properties  # for the bootstrap over the data's neurons
        return score

    @takes_device
    def bootstrap(self, result: Score, resamples: int = 1000, seed: int = 0) -> BootstrapSamples | None:
        """The score on ``resamples`` bootstrap resamples of the data's neurons (the unit the experiment sampled).

        For ``ks_similarity`` (Marques et al. 2021): each resample draws the recorded neurons with replacement;
        the raw similarity is recomputed against the resample's histogram with the metric's own model draws
        (fixed, as the score's), and the ceiling (the data against resamples of themselves) is recomputed on the
        same resample with :data:`CEILING_DRAWS` draws of its own (seeded), so the ceiling's uncertainty
        propagates into ``raw / ceiling``. Returns None for another metric or without the model's properties.
        """
        from brainscore.metrics.neural.distribution_similarity import KSSimilarity, property_values

        model_properties = result.attrs.get("model_properties")
        if model_properties is None or not isinstance(self.metric, KSSimilarity):
            return None
        metric = self.metric
        bins = metric._bins(self.assembly)
        model = property_values(model_properties, metric.property_name)
        data = property_values(self.assembly, metric.property_name)
        weights = resample_counts(len(data), resamples, seed)            # (resamples, neurons)
        raw = _ks_against_resamples(model, data, bins, weights, metric.n_samples, metric.random_state)
        ceiling = None
        if self._ceiling_func is not None:
            rng = np.random.RandomState(seed)
            ceiling = np.array([_ks_against_resamples(np.repeat(data, np.asarray(w, dtype=int)), data, bins,
                                                      w[None, :], CEILING_DRAWS, rng)[0] for w in weights])
        c = ceiling if ceiling is not None else 1.0
        with np.errstate(invalid="ignore", divide="ignore"):
            score = raw / c
        return BootstrapSamples(score=score, ceiling=ceiling, unit="neuron",
                                method=f"recorded neurons resampled; raw against the same {metric.n_samples} model "
                                       f"draws, ceiling recomputed on each resample ({CEILING_DRAWS} draws)")
