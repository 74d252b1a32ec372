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
- ``timebins`` (default ``[(70, 170)]``) and ``version`` (default 1) are keywords; ``visual_degrees``
  and ``number_of_trials`` are too, defaulting as the reference reads them from the data: the
  stimulus set's ``degrees`` column and the assembly's ``number_of_trials`` attribute (else 8
  degrees and 1 trial).

Not supported: a ``neuronal_property`` that needs ``baseline`` (the reference's Marques et al.
pipeline of receptive-field mapping and firing-rate calibration, which ``brainscore``'s own
Marques 2020 benchmarks implement); constructing such a benchmark raises a ``TypeError`` that says so.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

import numpy as np

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
            hint = (" (the reference's calibrated blank responses: use brainscore's Marques 2020 benchmarks, "
                    "e.g. `brainscore list benchmarks 'Marques2020*'`, or compute the property from the responses)"
                    if "baseline" in unknown else "")
            raise TypeError(f"neuronal_property {getattr(func, '__qualname__', func)!r} needs arguments {unknown} "
                            f"that the benchmark cannot give; it gives {list(_ARGUMENTS)}{hint}")
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
    visual_degrees : float, optional
        Default: the stimulus set's ``degrees`` (one value), else 8.
    number_of_trials : int, optional
        Default: the assembly's ``attrs['number_of_trials']``, else 1.
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
                 version: int = 1, visual_degrees: float | None = None, number_of_trials: int | None = None,
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

    # brainscore's __init__ stores these two; the defaults are read from the data when first needed
    @property
    def visual_degrees(self) -> float:
        """Degrees of visual angle of the stimuli (given, else the stimulus set's ``degrees``, else 8)."""
        if self._given_visual_degrees is not None:
            return self._given_visual_degrees
        degrees = self.stimulus_set.get("degrees")
        values = np.unique(np.asarray(degrees, dtype=float)) if degrees is not None else []
        return float(values[0]) if len(values) == 1 else 8.0

    @visual_degrees.setter
    def visual_degrees(self, value) -> None:
        self._given_visual_degrees = None if value is None else float(value)

    @property
    def number_of_trials(self) -> int:
        """Presentations per stimulus (given, else the assembly's ``number_of_trials`` attribute, else 1)."""
        if self._given_number_of_trials is not None:
            return self._given_number_of_trials
        return int(self.assembly.attrs.get("number_of_trials", 1))

    @number_of_trials.setter
    def number_of_trials(self, value) -> None:
        self._given_number_of_trials = None if value is None else int(value)

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
