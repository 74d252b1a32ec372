"""The reference's ``properties_common``: ``PropertiesBenchmark`` on
:class:`brainscore.benchmarks.properties.PropertiesBenchmark` and its per-unit ``calc_*`` functions on
:mod:`brainscore.plugins.benchmarks.marques2020.properties` (docs/coming_from_brain_score.md, "The mapping, name
by name")."""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

import numpy as np

from brainscore.benchmarks import properties as _properties
from brainscore.data.assemblies import DataAssembly
from brainscore.errors import ValidationError
from brainscore.plugins.benchmarks.marques2020 import properties as marques

from brainscore_vision.benchmark_helpers.neural_common import _REGIONS, _ceiling, _region
from brainscore_vision.utils import LazyLoad, unwrap

__all__ = ["PropertiesBenchmark"]

_ARGUMENTS = ("responses", "stimuli", "stimulus_set", "model_identifier")


class _PropertyFunction:
    """A reference-style ``neuronal_property`` called as ``brainscore`` calls it: ``f(responses, stimuli)``."""

    def __init__(self, func: Callable[..., Any], benchmark: "PropertiesBenchmark", identifier: str = ""):
        parameters = inspect.signature(func).parameters
        required = [name for name, p in parameters.items() if p.default is p.empty
                    and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        unknown = [name for name in required if name not in _ARGUMENTS]
        if unknown:
            hint = ""
            if "baseline" in unknown and _replaced_builtin(identifier):
                hint = (f" (the reference's calibrated blank responses: brainscore's own benchmark of this name "
                        f"computes them; your plugin folder replaces it, so load 'builtin:{identifier}')")
            elif "baseline" in unknown:
                hint = (" (the reference's calibrated blank responses: use brainscore's Marques 2020 benchmarks, "
                        "e.g. `brainscore list benchmarks 'Marques2020*'`, or compute the property from the responses)")
            raise TypeError(f"neuronal_property {getattr(func, '__qualname__', func)!r} needs arguments {unknown} "
                            f"that the benchmark cannot give; it gives {list(_ARGUMENTS)}{hint}")
        takes_all = any(p.kind == p.VAR_KEYWORD for p in parameters.values())
        self.names = [name for name in _ARGUMENTS if takes_all or name in parameters]
        self.func, self.benchmark = func, benchmark

    def __call__(self, responses, stimuli):
        given = {"responses": responses, "stimuli": stimuli, "stimulus_set": stimuli,
                 "model_identifier": self.benchmark.model_identifier}
        return self.func(**{name: given[name] for name in self.names})


def _replaced_builtin(identifier: str) -> bool:
    """Whether a plugin folder here replaces brainscore's built-in benchmark ``identifier`` (``builtin:IDENTIFIER``)."""
    if not identifier:
        return False
    from brainscore import registry

    return f"builtin:{identifier}" in registry.benchmarks.list(f"builtin:{identifier}")


class PropertiesBenchmark(_properties.PropertiesBenchmark):
    """The reference's ``PropertiesBenchmark`` (Marques, Schrimpf & DiCarlo 2021), with its signature.

    Differs from brainscore's class in the signature only: the stimuli default to ``assembly.stimulus_set``;
    ``neuronal_property`` gets the keywords it names among ``responses``, ``stimuli``/``stimulus_set`` (as placed
    on the model's screen) and ``model_identifier``; ``ceiling_func`` may take the data assembly or nothing;
    ``visual_degrees`` defaults to the stimulus set's ``degrees`` (one value), else 8; ``number_of_trials`` to
    the assembly's ``attrs['number_of_trials']``, else 1; ``region`` to the assembly's ``region`` coordinate,
    else ``parent`` if it is a region, else ``V1``.

    Raises
    ------
    TypeError
        If ``neuronal_property`` needs arguments the benchmark cannot give (e.g. the reference's ``baseline``).
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
                         property_func=_PropertyFunction(neuronal_property, self, identifier),
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


# The reference's per-unit property functions (its ``marques2020`` folder imports them), on brainscore's
# :mod:`brainscore.plugins.benchmarks.marques2020.properties` (documented there).
_KERNELS = marques.SMOOTHING_KERNELS
_assert_grating_activations = marques.check_grating_order
_assert_texture_activations = marques.check_texture_order
calc_circular_variance = marques.unit_circular_variance
calc_bandwidth = marques.unit_orientation_bandwidth
calc_orthogonal_preferred_ratio = marques.unit_orthogonal_preferred_ratio
calc_spatial_frequency_tuning = marques.unit_spatial_frequency_tuning
calc_size_tuning = marques.unit_size_tuning
calc_texture_modulation = marques.texture_modulation
calc_sparseness = marques.sparseness
calc_variance = marques.nested_anova_mean_squares
calc_variance_ratio = marques.texture_variance_ratio
__all__ += ["calc_circular_variance", "calc_bandwidth", "calc_orthogonal_preferred_ratio",
            "calc_spatial_frequency_tuning", "calc_size_tuning", "calc_texture_modulation", "calc_sparseness",
            "calc_variance_ratio", "calc_variance"]
