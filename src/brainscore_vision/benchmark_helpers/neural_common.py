"""Neural benchmarks with the reference's signatures, on :mod:`brainscore.benchmarks.neural` and
:mod:`brainscore.benchmarks.fixed_split`.

- :class:`NeuralBenchmark` (``identifier, assembly, similarity_metric, visual_degrees,
  number_of_trials, ceiling_func, parent, bibtex, version, timebins``) is
  :class:`brainscore.benchmarks.neural.NeuralBenchmark`: ``assembly`` is the repetition-averaged
  data, ``ceiling_func`` takes **no argument** (``lambda: ceiler(assembly_repetition)``), the region
  is the assembly's ``region`` coordinate (else ``parent``), the time bins default to the assembly's
  (else ``[(70, 170)]``). ``__call__`` is ``brainscore``'s: start_recording, place_on_screen,
  look_at, a single time bin squeezed, ``metric(features, assembly)``, ``explained_variance``.
- :class:`TrainTestNeuralBenchmark` is :class:`brainscore.benchmarks.fixed_split.TrainTestNeuralBenchmark`
  with the same conventions (``train_assembly``, ``test_assembly``, a ``*_split`` metric).
- :func:`explained_variance` is :func:`brainscore.metrics.normalisation.explained_variance`
  (``r² / ceiling``, the reference since 2026-01-13); :func:`average_repetition` is
  :func:`brainscore.data.assemblies.average_repetition`.
- :func:`filter_reliable_neuroids` keeps the neuroids whose split-half reliability
  (:func:`brainscore.benchmarks.fixed_split.split_half_reliability`) or stored coordinate reaches a threshold.
- :class:`RSABenchmark` (``identifier, version, assembly, region, visual_degrees, number_of_trials, bibtex``) is
  :class:`brainscore.benchmarks.rsa.RSABenchmark` on each subject's RDM of ``assembly`` (a ``subject``
  coordinate on ``neuroid``); :func:`flatten_timebins_into_neuroids` and :func:`apply_keep_attrs` as the reference's.

A ``LazyLoad`` given as an assembly stays unloaded until a model is scored.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

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
    """The recorded region: given, else the assembly's single ``region`` value, else ``parent``.

    A ``LazyLoad`` or function assembly is not loaded to find it (``parent`` is used).

    Raises
    ------
    ValueError
        If the assembly holds several regions, or no region can be found.
    """
    if region is not None:
        return str(region)
    if not isinstance(assembly, LazyLoad) and isinstance(assembly, DataAssembly) and "region" in assembly.coords:
        regions = np.unique(np.asarray(assembly["region"].values).astype(str))
        if len(regions) != 1:
            raise ValueError(f"the assembly holds neuroids of several regions {list(regions)}: select one "
                             f"(assembly.sel(neuroid=assembly['region'] == 'IT')) or pass region=")
        return str(regions[0])
    if parent:
        return str(parent)
    raise ValueError("cannot tell which region to record: the assembly has no 'region' coordinate and no parent "
                     f"(one of {_REGIONS}) is given; pass region=")


def timebins_from_assembly(assembly: DataAssembly) -> list[tuple[int, int]]:
    """``(start, end)`` ms of the assembly's time bins, or ``[(70, 170)]`` when it has none."""
    if "time_bin_start" not in assembly.coords:
        return [tuple(t) for t in DEFAULT_TIME_BINS]
    starts = np.atleast_1d(assembly["time_bin_start"].values)
    ends = np.atleast_1d(assembly["time_bin_end"].values)
    return [(int(s), int(e)) for s, e in zip(starts, ends)]


class NeuralBenchmark(_neural.NeuralBenchmark):
    """Neural predictivity of one region, with the reference's signature (see the module notes).

    Parameters
    ----------
    identifier : str
        ``AuthorYear.region-metric``.
    assembly : NeuroidAssembly, LazyLoad or callable () -> NeuroidAssembly
        The repetition-averaged recordings (``presentation x neuroid [x time_bin]``), with their
        stimulus set (``assembly.stimulus_set``, as ``load_dataset`` gives it).
    similarity_metric : callable (source, target) -> Score
        E.g. ``load_metric('pls')``.
    visual_degrees : float
    number_of_trials : int
    ceiling_func : callable () -> Score, or None
        E.g. ``lambda: load_ceiling('internal_consistency')(assembly_repetition)``. None: no ceiling
        (the score is r²). A function taking the assembly is accepted too.
    parent : str
    bibtex : str
    version : int
        Default 1.
    timebins : sequence of (start, end) ms, optional
        Default: the assembly's time bins, else ``[(70, 170)]``.
    region : str, optional
        Default: the assembly's ``region`` coordinate, else ``parent``.
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
    """Neural predictivity from a fixed train/test split, with the reference's signature.

    Parameters
    ----------
    identifier : str
    train_assembly, test_assembly : NeuroidAssembly, LazyLoad or callable
        Recordings of the training and test stimuli (averaged inside where they have repetitions).
    similarity_metric : callable (source_train, source_test, target_train, target_test) -> Score
        A ``*_split`` metric, e.g. ``load_metric('ridgecv_split')``.
    ceiling_func : callable () -> Score, or None
        E.g. ``lambda: load_metric('internal_consistency')(test_assembly_repetition)``.
    visual_degrees : float
    number_of_trials : int
    parent : str
    bibtex : str
    version : int
        Default 1.
    region : str, optional
        Default: the test assembly's ``region`` coordinate, else ``parent``.
    timebins : sequence of (start, end) ms, optional
    alpha_coord, per_voxel_ceilings
        The reference's options; not implemented here (``NotImplementedError`` when set).
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
    """The neuroids of ``assembly`` whose reliability is above ``reliability_threshold`` (NaN dropped).

    Parameters
    ----------
    assembly : DataAssembly
        ``presentation x neuroid``, with repetitions when the reliability is computed.
    reliability_threshold : float
    reliability_coord : str, optional
        A neuroid coordinate holding each neuroid's reliability (as the reference's packaged data
        do). If absent or None, the split-half reliability over repetitions is computed
        (:func:`brainscore.benchmarks.fixed_split.split_half_reliability`).

    Raises
    ------
    ValueError
        If no neuroid reaches the threshold.
    """
    if reliability_coord is not None and reliability_coord in assembly.coords:
        reliability = np.asarray(assembly[reliability_coord].values, dtype=float)
    else:
        computed = fixed_split.split_half_reliability(assembly)
        by_id = dict(zip(np.asarray(computed["neuroid_id"].values), np.asarray(computed.values, dtype=float)))
        reliability = np.array([by_id.get(i, np.nan) for i in np.asarray(assembly["neuroid_id"].values)])
    with np.errstate(invalid="ignore"):
        keep = np.flatnonzero(reliability > reliability_threshold)  # strictly above, as the reference
    if not len(keep):
        raise ValueError(f"no neuroid reaches reliability {reliability_threshold} "
                         f"(maximum {np.nanmax(reliability) if np.isfinite(reliability).any() else 'NaN'})")
    return assembly.isel(neuroid=keep)


def apply_keep_attrs(assembly: Any, function: Callable[[Any], Any]) -> Any:
    """``function(assembly)`` with the input's ``attrs`` (the reference's workaround for xarray dropping them)."""
    attrs = assembly.attrs
    result = function(assembly)
    result.attrs = attrs
    return result


def flatten_timebins_into_neuroids(assembly: DataAssembly) -> DataAssembly:
    """``presentation x neuroid x time_bin`` as ``presentation x (neuroid, time bin) x 1``: each time bin of a neuroid
    becomes a neuroid of its own (the reference's ``flatten_timebins_into_neuroids``).

    The neuroid coordinates repeat per time bin, ``recording_time`` is each one's ``time_bin_start``, and the single
    time bin spans the first start to the last end. ``neuroid_id`` becomes ``<id>@<recording_time>`` so that ids stay
    unique (metrics here align neuroids by id; the reference kept the pair in a MultiIndex).

    Raises
    ------
    ValueError
        If the dims are not ``(presentation, neuroid, time_bin)`` or the time bin coordinates are missing.
    """
    if tuple(assembly.dims) != ("presentation", "neuroid", "time_bin"):
        raise ValueError(f"flattening expects dims (presentation, neuroid, time_bin), got {assembly.dims}")
    if "time_bin_start" not in assembly.coords or "time_bin_end" not in assembly.coords:
        raise ValueError("flattening needs time_bin_start and time_bin_end coordinates on time_bin")
    presentations, neuroids, bins = assembly.shape
    starts = np.asarray(assembly["time_bin_start"].values)
    coords = {}
    for name, coord in assembly.coords.items():
        if coord.dims == ("presentation",):
            coords[name] = ("presentation", coord.values)
        elif coord.dims == ("neuroid",):
            coords[name] = ("neuroid", np.repeat(coord.values, bins))
    recording = np.tile(starts, neuroids)
    coords["recording_time"] = ("neuroid", recording)
    if "neuroid_id" in coords:
        coords["neuroid_id"] = ("neuroid", np.array([f"{i}@{t}" for i, t in zip(coords["neuroid_id"][1], recording)]))
    coords["time_bin_start"] = ("time_bin", [starts[0]])
    coords["time_bin_end"] = ("time_bin", [np.asarray(assembly["time_bin_end"].values)[-1]])
    flat = type(assembly)(np.asarray(assembly.values).reshape(presentations, neuroids * bins, 1),
                          dims=assembly.dims, coords=coords)
    flat.attrs = dict(assembly.attrs)
    return flat


def place_on_screen(*args: Any, **kwargs: Any):
    """:func:`brainscore_vision.benchmark_helpers.screen.place_on_screen` (the reference imports it from here too)."""
    from brainscore_vision.benchmark_helpers.screen import place_on_screen as _place

    return _place(*args, **kwargs)


def _by_subject(assembly: Any) -> list[tuple[Any, DataAssembly]]:
    """(subject, that subject's neuroids) of ``assembly`` (``presentation x neuroid`` with ``subject`` on ``neuroid``,
    a single time bin squeezed; a ``LazyLoad`` is loaded), subjects sorted.

    Raises
    ------
    ValueError
        If the neuroids carry no ``subject`` coordinate.
    """
    assembly = content(assembly)
    if "time_bin" in assembly.dims and assembly.sizes["time_bin"] == 1:
        assembly = assembly.squeeze("time_bin")
    if "subject" not in assembly.coords:
        raise ValueError("RSABenchmark needs a 'subject' coordinate on the neuroids (one RDM per subject)")
    labels = np.asarray(assembly["subject"].values)
    return [(subject, assembly.isel(neuroid=np.flatnonzero(labels == subject))) for subject in np.unique(labels)]


def _subject_rdms(assembly: Any) -> DataAssembly:
    """Each subject's RDM of ``assembly`` (``presentation x neuroid`` with ``subject`` on ``neuroid``), as the stack
    :class:`brainscore.benchmarks.rsa.RSABenchmark` reads (dims ``rdm, presentation, presentation_b``)."""
    from brainscore.metrics.similarity.rdm import rdm

    parts = _by_subject(assembly)
    subjects = np.array([subject for subject, _ in parts])
    matrices, ids = [], None
    for _, responses in parts:
        subject_rdm = rdm(responses)
        matrices.append(np.asarray(subject_rdm.values))
        ids = np.asarray(subject_rdm["stimulus_id"].values)
    stack = DataAssembly(np.stack(matrices), dims=("rdm", "presentation", "presentation_b"),
                         coords={"subject": ("rdm", subjects), "stimulus_id": ("presentation", ids),
                                 "stimulus_id_b": ("presentation_b", ids)})
    stack.attrs["stimulus_set"] = content(assembly).attrs.get("stimulus_set")
    return stack


class RSABenchmark(_rsa.RSABenchmark):
    """The reference's ``RSABenchmark``: the model's RDM against each subject's RDM, averaged over subjects, over the
    RSA noise ceiling (Nili et al. 2014), as :class:`brainscore.benchmarks.rsa.RSABenchmark` computes it.

    Parameters
    ----------
    identifier : str
    version : int
    assembly : NeuroidAssembly or LazyLoad
        ``presentation x neuroid`` responses (all stimuli) with a ``subject`` coordinate on ``neuroid`` and the
        stimulus set in ``attrs['stimulus_set']``.
    region : str
    visual_degrees : float
    number_of_trials : int
    bibtex : str
    ceiler : callable (assembly) -> Score, optional
        Default: brainscore's ``rsa_noise_ceiling`` over the subjects' RDMs (the reference's ``rsa_ceiling``).
    parent : str, optional
        Default ``region``.
    rdm, similarity : callable, optional
        The reference's two stages: ``similarity(rdm(model features), rdm(one subject's responses))`` per subject.
        Default: brainscore's RDM (1 - Pearson r) and Spearman of the upper triangles (the fast path, with the
        stimulus bootstrap). Given either, the reference's procedure runs with them: e.g. ``rdm`` the identity
        and ``similarity=load_metric('cka')`` compare the representations by CKA (the reference's LAION fMRI
        benchmarks). The subjects' mean over the ceiling is clipped to [0, 1]; the unclipped value is kept.
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
        from brainscore.metrics.score import Score
        from brainscore.metrics.similarity.rdm import rdm as default_rdm

        to_rdm = self._stages[0] or default_rdm
        similarity = self._stages[1] or self.metric
        features = _neural.squeeze_time_bin(features)
        parts = _by_subject(self._responses)
        model = to_rdm(features)
        subjects = np.array([subject for subject, _ in parts])
        values = np.array([float(similarity(model, to_rdm(responses))) for _, responses in parts])
        per_subject = DataAssembly(values, dims=("subject",), coords={"subject": subjects})
        raw = Score.of(values.mean(), error=values.std() / np.sqrt(len(values)) if len(values) > 1 else 0.0,
                       raw=per_subject)
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
