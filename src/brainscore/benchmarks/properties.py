"""Single-neuron property benchmarks: does the model's population have the data's distribution of a property?

Marques, Schrimpf & DiCarlo (2021, "Multi-scale hierarchical neural network models that bridge
from single neurons in the primate primary visual cortex to object recognition behavior"): a
property (orientation bandwidth, surround suppression, ...) is measured on every model neuroid
with the experiment's stimuli (gratings, ...) and compared with the distribution measured in the
data by a distribution similarity (Brain-Score's ``ks_similarity``), normalised by the data's
similarity to themselves: ``score = raw / ceiling`` (``ceil_score``).

The flow:

1. ``candidate.start_recording(region, time_bins)``; the stimuli are placed on the model's screen;
2. ``responses = candidate.look_at(stimuli, number_of_trials)``;
3. ``model_properties = property_func(responses, stimuli)``: a PropertiesAssembly
   (``neuroid x neuronal_property``), as the experiment's analysis computes it;
4. ``raw = metric(model_properties, data_properties)``; ``score = raw / ceiling``.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from brainscore.benchmarks.base import BenchmarkBase, takes_device
from brainscore.benchmarks.neural import squeeze_time_bin
from brainscore.benchmarks.screen import place_on_screen
from brainscore.caching import callable_identity
from brainscore.data.assemblies import DataAssembly
from brainscore.data.stimuli import StimulusSet
from brainscore.metrics.score import Score
from brainscore.models.interface import BrainModel


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
        Computes the property of every model neuroid from its responses, as the paper's analysis.
    similarity_metric : callable (model_properties, data_properties) -> Score
        E.g. ``load_metric("ks_similarity", property_name="circular_variance")``.
    ceiling_func : callable (data_properties) -> Score, or None
        E.g. ``load_ceiling("ks_similarity", property_name=...)``; None: ceiling 1.
    visual_degrees : float
    number_of_trials : int
    region : str
    time_bins : sequence of (start, end) ms
        Default ``[(70, 170)]``.
    """

    def __init__(self, identifier: str, version: int, assembly, stimulus_set,
                 property_func: Callable[[DataAssembly, StimulusSet], DataAssembly],
                 similarity_metric: Callable[[DataAssembly, DataAssembly], Score],
                 ceiling_func: Callable[[DataAssembly], Score] | None, visual_degrees: float, number_of_trials: int,
                 region: str, parent: str | None = None, bibtex: str = "",
                 time_bins: Sequence[tuple[int, int]] = ((70, 170),)):
        super().__init__(identifier=identifier, version=version,
                         ceiling_func=(lambda: ceiling_func(self.assembly)) if ceiling_func is not None else None,
                         parent=parent or region, bibtex=bibtex, ceiling_key=self._data_key,
                         ceiling_identity=callable_identity(ceiling_func) if ceiling_func is not None else None,
                         ceiling_code=[ceiling_func] if ceiling_func is not None else [])
        self._assembly_source, self._stimuli_source = assembly, stimulus_set
        self._assembly: DataAssembly | None = None
        self._stimulus_set: StimulusSet | None = None
        self.property_func = property_func
        self.metric = similarity_metric
        self.visual_degrees = visual_degrees
        self.number_of_trials = number_of_trials
        self.region = region
        self.time_bins = [tuple(t) for t in time_bins]

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

    @takes_device
    def __call__(self, candidate: BrainModel) -> Score:
        """Record ``candidate`` on the stimuli, compute its neuroids' property and score its distribution."""
        candidate.start_recording(self.region, time_bins=self.time_bins)
        stimuli = place_on_screen(self.stimulus_set, target_visual_degrees=candidate.visual_degrees(),
                                  source_visual_degrees=self.visual_degrees)
        responses = squeeze_time_bin(candidate.look_at(stimuli, number_of_trials=self.number_of_trials))
        return self.score_properties(self.property_func(responses, stimuli))

    def score_properties(self, model_properties: DataAssembly) -> Score:
        """Score already computed model properties: ``metric(model, data) / ceiling``."""
        from brainscore.metrics.normalisation import ceil_score

        raw = self.metric(model_properties, self.assembly)
        score = ceil_score(raw, self.ceiling)
        score.attrs["benchmark_identifier"] = self.identifier
        score.attrs["benchmark_version"] = self.version
        score.attrs["region"] = self.region
        return score
