"""The reference's ``neural_common``: ``NeuralBenchmark``, ``TrainTestNeuralBenchmark``, ``RSABenchmark`` and their
helpers, on :mod:`brainscore.benchmarks.neural`, :mod:`~brainscore.benchmarks.fixed_split` and
:mod:`~brainscore.benchmarks.rsa` (docs/coming_from_brain_score.md, "The mapping, name by name"). A ``LazyLoad``
given as an assembly stays unloaded until a model is scored.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from brainscore.benchmarks import neural as _neural
from brainscore.benchmarks import fixed_split
from brainscore.benchmarks import rsa as _rsa
from brainscore.data.assemblies import DataAssembly, average_repetition
from brainscore.metrics.normalisation import explained_variance
from brainscore.models.time_bins import DEFAULT_TIME_BINS

from brainscore_core.benchmarks import NoArgumentCeiling, required_positional
from brainscore_vision.utils import LazyLoad, content, unwrap

__all__ = ["NeuralBenchmark", "TrainTestNeuralBenchmark", "RSABenchmark", "average_repetition", "explained_variance",
           "filter_reliable_neuroids", "timebins_from_assembly", "apply_keep_attrs", "flatten_timebins_into_neuroids",
           "place_on_screen"]

_REGIONS = ("V1", "V2", "V4", "IT")


def _ceiling(ceiling_func: Callable | None) -> Callable | None:
    """A ceiling function as ``brainscore`` calls it (``f(assembly)``): no-argument functions are wrapped."""
    if ceiling_func is None:
        return None
    return ceiling_func if required_positional(ceiling_func) else NoArgumentCeiling(ceiling_func)


def _region(assembly: Any, parent: str | None, region: str | None) -> str:
    """The recorded region: given, else the assembly's (:func:`brainscore.benchmarks.neural.region_of`; a ``LazyLoad``
    or function is not loaded for it), else ``parent``; ValueError if none."""
    if region is not None:
        return str(region)
    if not isinstance(assembly, LazyLoad) and isinstance(assembly, DataAssembly) and "region" in assembly.coords:
        return _neural.region_of(assembly)
    if parent:
        return str(parent)
    raise ValueError("cannot tell which region to record: the assembly has no 'region' coordinate and no parent "
                     f"(one of {_REGIONS}) is given; pass region=")


timebins_from_assembly = _neural.assembly_time_bins


class NeuralBenchmark(_neural.NeuralBenchmark):
    """The reference's ``NeuralBenchmark``: :class:`brainscore.benchmarks.neural.NeuralBenchmark` with its signature.

    ``assembly`` (NeuroidAssembly, LazyLoad or callable) is the repetition-averaged data; ``ceiling_func`` takes no
    argument (``lambda: ceiler(assembly_repetition)``; one taking the assembly is accepted too); ``timebins``
    default to the assembly's, else ``[(70, 170)]``; ``region`` to the assembly's ``region`` coordinate, else
    ``parent``.

    Raises
    ------
    ValueError
        If the assembly holds several regions, or no region can be found.
    """

    def __init__(self, identifier: str, assembly: Any, similarity_metric: Callable, visual_degrees: float,
                 number_of_trials: int, ceiling_func: Callable | None = None, parent: str | None = None,
                 bibtex: str = "", version: int = 1, timebins: Sequence[tuple[int, int]] | None = None,
                 region: str | None = None):
        region = _region(assembly, parent, region)
        super().__init__(identifier=identifier, version=version, assembly=unwrap(assembly),
                         similarity_metric=similarity_metric, visual_degrees=visual_degrees,
                         number_of_trials=number_of_trials, ceiling_func=_ceiling(ceiling_func), region=region,
                         parent=parent or region, bibtex=bibtex, time_bins=timebins)
        self.timebins = timebins

    @property
    def time_bins(self) -> list[tuple[int, int]]:
        """The time bins given, else the assembly's, else ``[(70, 170)]`` (ms)."""
        if self.timebins is not None:
            return [tuple(t) for t in self.timebins]
        return timebins_from_assembly(self.recordings)


class TrainTestNeuralBenchmark(fixed_split.TrainTestNeuralBenchmark):
    """The reference's ``TrainTestNeuralBenchmark``: :class:`brainscore.benchmarks.fixed_split.TrainTestNeuralBenchmark`
    with its signature (conventions as :class:`NeuralBenchmark`; a ``*_split`` metric).

    Raises
    ------
    NotImplementedError
        If the reference's ``alpha_coord`` or ``per_voxel_ceilings`` is set.
    """

    def __init__(self, identifier: str, train_assembly: Any, test_assembly: Any, similarity_metric: Callable,
                 ceiling_func: Callable | None = None, visual_degrees: float = 8, number_of_trials: int = 1,
                 parent: str | None = None, bibtex: str = "", version: int = 1, region: str | None = None,
                 timebins: Sequence[tuple[int, int]] | None = None, alpha_coord: str | None = None,
                 per_voxel_ceilings: bool = False, **kwargs: Any):
        if alpha_coord is not None or per_voxel_ceilings:
            raise NotImplementedError(
                f"{identifier}: alpha_coord (a regression per value of a coordinate) and per_voxel_ceilings "
                f"(neuroid-wise explained variance) of the reference's TrainTestNeuralBenchmark are not implemented "
                f"here; leave them at their defaults (one regression, the aggregate ceiling)")
        region = _region(test_assembly, parent, region)
        super().__init__(identifier=identifier, version=version, train_assembly=unwrap(train_assembly),
                         test_assembly=unwrap(test_assembly), similarity_metric=similarity_metric,
                         visual_degrees=visual_degrees, number_of_trials=number_of_trials, region=region,
                         ceiling_func=_ceiling(ceiling_func), parent=parent or region, bibtex=bibtex,
                         time_bins=timebins, **kwargs)


def filter_reliable_neuroids(assembly: DataAssembly, reliability_threshold: float,
                             reliability_coord: str | None = None) -> DataAssembly:
    """:func:`brainscore.benchmarks.fixed_split.select_reliable_neuroids`."""
    return fixed_split.select_reliable_neuroids(assembly, reliability_threshold, reliability_coord)


def apply_keep_attrs(assembly: Any, function: Callable[[Any], Any]) -> Any:
    """``function(assembly)`` with the input's ``attrs`` (the reference's workaround for xarray dropping them)."""
    attrs = assembly.attrs
    result = function(assembly)
    result.attrs = attrs
    return result


flatten_timebins_into_neuroids = _neural.flatten_time_bins_into_neuroids


def place_on_screen(*args: Any, **kwargs: Any):
    """:func:`brainscore_vision.benchmark_helpers.screen.place_on_screen` (the reference imports it from here too)."""
    from brainscore_vision.benchmark_helpers.screen import place_on_screen as _place

    return _place(*args, **kwargs)


def _subject_rdms(assembly: Any) -> DataAssembly:
    """:func:`brainscore.benchmarks.rsa.subject_rdms` of ``assembly`` (a ``LazyLoad`` is loaded)."""
    return _rsa.subject_rdms(content(assembly))


class RSABenchmark(_rsa.RSABenchmark):
    """The reference's ``RSABenchmark``: :class:`brainscore.benchmarks.rsa.RSABenchmark` on each subject's RDM of
    ``assembly`` (``presentation x neuroid``, ``subject`` on ``neuroid``;
    :func:`~brainscore.benchmarks.rsa.subject_rdms`).

    ``ceiler(assembly)`` (optional) replaces the RSA noise ceiling. ``rdm``/``similarity`` (optional) are the
    reference's two stages: given either, its procedure runs with them (default stages: brainscore's RDM and
    :class:`~brainscore.metrics.similarity.rdm.RDMMetric`), e.g. ``rdm`` the identity and
    ``similarity=load_metric('cka')`` (the reference's LAION fMRI benchmarks); see :meth:`score_features`.

    Raises
    ------
    ValueError
        If ``rdm`` or ``similarity`` is given and not callable.
    """

    def __init__(self, identifier: str, version: int, assembly: Any, region: str, visual_degrees: float,
                 number_of_trials: int, bibtex: str, ceiler: Callable | None = None, parent: str | None = None,
                 rdm: Any = None, similarity: Any = None):
        for name, given in (("rdm", rdm), ("similarity", similarity)):
            if given is not None and not callable(given):
                raise ValueError(f"{identifier}: {name}= must be a callable (assembly -> RDM, or (RDM, RDM) -> "
                                 f"Score), got {given!r}")
        self._stages = (rdm, similarity) if rdm is not None or similarity is not None else None
        self._responses = assembly
        from brainscore import registry

        super().__init__(identifier=identifier, version=version, rdms=lambda: _subject_rdms(assembly), region=region,
                         visual_degrees=visual_degrees, similarity_metric=registry.load_metric("rdm"),
                         noise_ceiling=registry.load_ceiling("rsa_noise_ceiling"),
                         number_of_trials=number_of_trials, parent=parent or region, bibtex=bibtex,
                         time_bins=timebins_from_assembly(assembly) if not isinstance(assembly, LazyLoad)
                         else DEFAULT_TIME_BINS, label_coords=("subject",))
        if ceiler is not None:  # the plugin's own ceiling, computed once on the responses
            self._reference_ceiler = lambda: ceiler(content(assembly))

    @property
    def stimulus_set(self):
        """The stimuli of the responses (with custom stages, without computing the default RDMs)."""
        if self._stages is None:
            return super().stimulus_set
        responses = content(self._responses)
        return responses.attrs["stimulus_set"].restricted_to(responses["stimulus_id"].values)

    def score_features(self, features: DataAssembly):
        """Brainscore's RSA score (default stages), else the reference's procedure with the plugin's ``rdm`` and
        ``similarity``: their mean over subjects (``raw``, per subject in its ``raw``) over the ceiling, clipped to
        [0, 1] (``unbounded`` keeps the ratio)."""
        if self._stages is None:
            return super().score_features(features)
        from brainscore.metrics.normalisation import bound_score, ceil_score
        from brainscore.metrics.similarity.rdm import rdm as default_rdm

        features = _neural.squeeze_time_bin(features)
        raw = _rsa.mean_subject_similarity(features, _rsa.responses_by_subject(content(self._responses)),
                                           self._stages[0] or default_rdm, self._stages[1] or self.metric)
        score = bound_score(ceil_score(raw, self.ceiling))
        score.attrs.update(benchmark_identifier=self.identifier, benchmark_version=self.version, region=self.region)
        return score

    @property
    def ceiling(self):
        """The plugin's ``ceiler(assembly)`` when it gave one, else the RSA noise ceiling of the subjects' RDMs."""
        ceiler = getattr(self, "_reference_ceiler", None)
        if ceiler is None:
            return super().ceiling
        if getattr(self, "_reference_ceiling", None) is None:
            self._reference_ceiling = ceiler()
        return self._reference_ceiling
