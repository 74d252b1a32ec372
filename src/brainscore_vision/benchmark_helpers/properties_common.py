"""``PropertiesBenchmark`` with the reference's signature, on :class:`brainscore.benchmarks.properties.PropertiesBenchmark`.

Single-neuron property benchmarks (Marques, Schrimpf & DiCarlo 2021): the model's neuroids are
recorded on the experiment's stimuli, a property (surround suppression, orientation bandwidth,
...) is computed for each by ``neuronal_property``, and its distribution is compared with the
data's by ``similarity_metric`` (e.g. ``load_metric('ks_similarity', property_name=...)``); the
score is ``raw / ceiling`` (``ceil_score``).

Differences from ``brainscore``'s class, all in the signature:

- the stimuli default to the assembly's stimulus set (``assembly.stimulus_set``);
- ``neuronal_property`` is called with the keyword arguments it names among ``responses`` (the
  model's ``presentation x neuroid`` responses), ``stimuli`` / ``stimulus_set`` (the stimuli as
  placed on the model's screen) and ``model_identifier``; it returns a ``PropertiesAssembly``
  (``neuroid x neuronal_property``);
- ``ceiling_func`` may take the data assembly (``NeuronalPropertyCeiling(metric)``-style, e.g.
  ``load_ceiling('ks_similarity', property_name=...)``) or nothing;
- ``timebins`` (default ``[(70, 170)]``), ``version`` (default 1), ``visual_degrees`` (default 8)
  and ``number_of_trials`` (default 1) are keywords.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

from brainscore.benchmarks import properties as _properties
from brainscore.data.assemblies import DataAssembly
from brainscore.errors import ValidationError

from brainscore_vision.benchmark_helpers.neural_common import _REGIONS, _ceiling, _region
from brainscore_vision.utils import LazyLoad, unwrap

__all__ = ["PropertiesBenchmark"]

_ARGUMENTS = ("responses", "stimuli", "stimulus_set", "model_identifier")


class _PropertyFunction:
    """A reference-style ``neuronal_property`` called as ``brainscore`` calls it: ``f(responses, stimuli)``."""

    def __init__(self, func: Callable[..., Any], benchmark: "PropertiesBenchmark"):
        parameters = inspect.signature(func).parameters
        required = [name for name, p in parameters.items() if p.default is p.empty
                    and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        unknown = [name for name in required if name not in _ARGUMENTS]
        if unknown:
            raise TypeError(f"neuronal_property {getattr(func, '__qualname__', func)!r} needs arguments {unknown} "
                            f"that the benchmark cannot give; it gives {list(_ARGUMENTS)}")
        takes_all = any(p.kind == p.VAR_KEYWORD for p in parameters.values())
        self.names = [name for name in _ARGUMENTS if takes_all or name in parameters]
        self.func, self.benchmark = func, benchmark

    def __call__(self, responses, stimuli):
        given = {"responses": responses, "stimuli": stimuli, "stimulus_set": stimuli,
                 "model_identifier": self.benchmark.model_identifier}
        return self.func(**{name: given[name] for name in self.names})


class PropertiesBenchmark(_properties.PropertiesBenchmark):
    """Distribution of a single-neuron property, with the reference's signature (see the module notes).

    Parameters
    ----------
    identifier : str
    assembly : PropertiesAssembly, LazyLoad or callable
        The data's property values (``neuroid x neuronal_property``), with the stimuli in
        ``assembly.stimulus_set`` unless ``stimulus_set`` is given.
    neuronal_property : callable
        Computes the model's property values (see the module notes).
    similarity_metric : callable (model_properties, data_properties) -> Score
    timebins : sequence of (start, end) ms
    ceiling_func : callable, optional
    parent, bibtex : str
    version : int
    visual_degrees : float
    number_of_trials : int
    stimulus_set : StimulusSet, LazyLoad or callable, optional
    region : str, optional
        Default: the assembly's ``region`` coordinate, else ``parent``, else ``V1``.

    Raises
    ------
    TypeError
        If ``neuronal_property`` needs arguments the benchmark cannot give.
    """

    def __init__(self, identifier: str, assembly: Any, neuronal_property: Callable[..., Any],
                 similarity_metric: Callable, timebins: Sequence[tuple[int, int]] = ((70, 170),),
                 ceiling_func: Callable | None = None, parent: str | None = None, bibtex: str = "",
                 version: int = 1, visual_degrees: float = 8, number_of_trials: int = 1,
                 stimulus_set: Any = None, region: str | None = None):
        if region is None:  # the data's region, else a parent that is a region, else V1 (Marques et al.'s)
            has_region = (not isinstance(assembly, LazyLoad) and isinstance(assembly, DataAssembly)
                          and "region" in assembly.coords)
            region = _region(assembly, None, None) if has_region else (parent if parent in _REGIONS else "V1")
        self.model_identifier: str | None = None
        super().__init__(identifier=identifier, version=version, assembly=unwrap(assembly),
                         stimulus_set=unwrap(stimulus_set) if stimulus_set is not None else self._assembly_stimuli,
                         property_func=_PropertyFunction(neuronal_property, self),
                         similarity_metric=similarity_metric, ceiling_func=_ceiling(ceiling_func),
                         visual_degrees=visual_degrees, number_of_trials=number_of_trials, region=region,
                         parent=parent or region, bibtex=bibtex, time_bins=timebins)

    def _assembly_stimuli(self):
        stimuli = self.assembly.attrs.get("stimulus_set")
        if stimuli is None:
            raise ValidationError(f"benchmark {self.identifier!r}: the assembly carries no stimulus set "
                                  f"(assembly.stimulus_set) to measure the property with; pass stimulus_set=")
        return stimuli

    def __call__(self, candidate) -> Any:
        """Record ``candidate``, compute its neuroids' property, and score the distribution (``raw / ceiling``)."""
        self.model_identifier = getattr(candidate, "identifier", None)
        return super().__call__(candidate)
