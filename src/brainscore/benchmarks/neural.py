"""Neural predictivity benchmarks: record from a model's region, predict the neurons.

The flow of Brain-Score's neural benchmarks (Schrimpf et al. 2018, 2020):

1. ``candidate.start_recording(region, time_bins)``;
2. place the stimuli on the model's screen (:func:`~brainscore.benchmarks.screen.place_on_screen`);
3. ``features = candidate.look_at(stimuli, number_of_trials)``; a single time bin is squeezed;
4. ``raw = metric(features, repetition-averaged data)`` (cross-validated, per-neuroid Pearson r);
5. normalise by the ceiling computed on the *non-averaged* data: ``r² / ceiling``.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from brainscore.benchmarks.base import BenchmarkBase, Presentation, check_metric_call, takes_device
from brainscore.benchmarks.screen import place_on_screen
from brainscore.caching import callable_identity
from brainscore.data.assemblies import DataAssembly, NeuroidAssembly, average_repetition
from brainscore.data.stimuli import StimulusSet
from brainscore.errors import ValidationError
from brainscore.metrics.bootstrap import BootstrapSamples, resample_counts, weighted_pearson
from brainscore.metrics.normalisation import explained_variance
from brainscore.metrics.score import Score
from brainscore.models.interface import BrainModel
from brainscore.progress import stage


def squeeze_time_bin(assembly: DataAssembly) -> DataAssembly:
    """Drop a single ``time_bin`` dim (keeping its start/end as scalar coordinates); else unchanged."""
    if "time_bin" in assembly.dims and assembly.sizes["time_bin"] == 1:
        return assembly.squeeze("time_bin", drop=False)
    return assembly


def region_of(assembly: DataAssembly) -> str | None:
    """The single value of ``assembly``'s ``region`` coordinate (``V1``, ``V4``, ``IT``...), None without one.

    Raises
    ------
    ValueError
        If the assembly holds neuroids of several regions.
    """
    if "region" not in assembly.coords:
        return None
    regions = np.unique(np.asarray(assembly["region"].values).astype(str))
    if len(regions) != 1:
        raise ValueError(f"the assembly holds neuroids of several regions {list(regions)}: select one "
                         f"(assembly.sel(neuroid=assembly['region'] == 'IT')) or pass region=")
    return str(regions[0])


def assembly_time_bins(assembly: DataAssembly) -> list[tuple[int, int]]:
    """``(start, end)`` ms of the assembly's time bins (``time_bin_start``/``time_bin_end``), or
    :data:`brainscore.models.time_bins.DEFAULT_TIME_BINS` (``[(70, 170)]``) when it has none."""
    from brainscore.models.time_bins import DEFAULT_TIME_BINS

    if "time_bin_start" not in assembly.coords:
        return [tuple(t) for t in DEFAULT_TIME_BINS]
    starts = np.atleast_1d(assembly["time_bin_start"].values)
    ends = np.atleast_1d(assembly["time_bin_end"].values)
    return [(int(s), int(e)) for s, e in zip(starts, ends)]

def flatten_time_bins_into_neuroids(assembly: DataAssembly) -> DataAssembly:
    """``presentation x neuroid x time_bin`` as ``presentation x (neuroid, time bin) x 1``: each time bin of a
    neuroid becomes a neuroid of its own (the reference's ``flatten_timebins_into_neuroids``).

    The neuroid coordinates repeat per time bin, ``recording_time`` (ms) is each one's ``time_bin_start``, and the
    single time bin spans the first start to the last end. ``neuroid_id`` becomes ``<id>@<recording_time>`` so that
    ids stay unique (metrics here align neuroids by id; the reference kept the pair in a MultiIndex). Attrs kept.

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
    recording_time = np.tile(starts, neuroids)
    coords["recording_time"] = ("neuroid", recording_time)
    if "neuroid_id" in coords:
        coords["neuroid_id"] = ("neuroid", np.array([f"{i}@{t}" for i, t in zip(coords["neuroid_id"][1],
                                                                                  recording_time)]))
    coords["time_bin_start"] = ("time_bin", [starts[0]])
    coords["time_bin_end"] = ("time_bin", [np.asarray(assembly["time_bin_end"].values)[-1]])
    flat = type(assembly)(np.asarray(assembly.values).reshape(presentations, neuroids * bins, 1),
                          dims=assembly.dims, coords=coords)
    flat.attrs = dict(assembly.attrs)
    return flat

def recording(candidate: BrainModel, benchmark) -> Presentation:
    """What a recording experiment shows ``candidate``: ``benchmark``'s stimuli placed on its screen, recorded
    from ``benchmark.region`` (the model is not run).

    Parameters
    ----------
    candidate : BrainModel
        Only its ``visual_degrees()`` is read.
    benchmark
        Anything with ``region``, ``time_bins``, ``stimulus_set``, ``visual_degrees`` (of the
        experiment's stimuli) and ``number_of_trials`` (neural and RSA benchmarks).
    """
    stimuli = place_on_screen(benchmark.stimulus_set, target_visual_degrees=candidate.visual_degrees(),
                              source_visual_degrees=benchmark.visual_degrees)
    return Presentation(stimuli, number_of_trials=benchmark.number_of_trials, region=benchmark.region,
                        time_bins=benchmark.time_bins)


def record(candidate: BrainModel, benchmark) -> DataAssembly:
    """Run a recording experiment: record ``benchmark.region`` while ``candidate`` looks at the stimuli.

    Parameters
    ----------
    candidate : BrainModel
    benchmark
        As for :func:`recording`.

    Returns
    -------
    DataAssembly
        The model's responses (``presentation x neuroid [x time_bin]``) to the stimuli placed on its screen.
    """
    return recording(candidate, benchmark).show(candidate)


def metric_required_coords(metric: Any) -> dict[str, str]:
    """The coordinates of the data that ``metric`` needs, -> what for: its cross-validation's ``split_coord`` and
    ``stratification_coord`` (``split_config`` of the regression metrics; ``stratification_coord`` of the
    cross-validated RDM metrics, where ``"auto"`` needs nothing), or what its own ``required_coords()`` declares.
    Wrappers that keep the metric as ``_metric`` or ``metric`` (the reference's temporal helpers) are looked through.
    """
    needed: dict[str, str] = {}
    seen: set[int] = set()
    while metric is not None and id(metric) not in seen:
        seen.add(id(metric))
        declared = getattr(metric, "required_coords", None)
        if callable(declared):
            needed.update({str(coord): str(why) for coord, why in dict(declared()).items()})
        config = getattr(metric, "split_config", None)
        split_coord = getattr(config, "split_coord", None)
        if isinstance(split_coord, str):
            needed.setdefault(split_coord, "to split the stimuli into train and test sets")
        stratification = getattr(config, "stratification_coord", getattr(metric, "stratification_coord", None))
        if isinstance(stratification, str) and stratification != "auto":
            needed.setdefault(stratification, "to stratify its cross-validation splits by (the default of the "
                                              "regression metrics); pass crossvalidation_kwargs="
                                              "dict(stratification_coord=None) to load_metric for plain shuffle splits")
        metric = getattr(metric, "_metric", None) or getattr(metric, "metric", None)
    return needed


def check_metric_data(identifier: str, metric: Any, assembly: DataAssembly) -> None:
    """Check that ``assembly`` (the benchmark's target) has every coordinate ``metric`` needs
    (:func:`metric_required_coords`), so a misconfigured benchmark fails before any model activation is computed.

    Raises
    ------
    ValidationError
        Naming the benchmark, each missing coordinate and what the metric needs it for, and the data's coordinates.
    """
    missing = {coord: why for coord, why in metric_required_coords(metric).items() if coord not in assembly.coords}
    if missing:
        needs = "; ".join(f"{coord!r} {why}" for coord, why in missing.items())
        coords = sorted(str(c) for c in assembly.coords)
        raise ValidationError(f"benchmark {identifier!r} cannot score: its metric ({type(metric).__name__}) needs the "
                              f"data coordinate {needs}, and its assembly has none (its coordinates: "
                              f"{', '.join(coords)}); configure the metric for this data or add the coordinate")


class NeuralBenchmark(BenchmarkBase):
    """Neural predictivity of one region's recordings, normalised by their internal consistency.

    Parameters
    ----------
    identifier, version, parent, bibtex : see :class:`BenchmarkBase`
    assembly : NeuroidAssembly or callable () -> NeuroidAssembly
        The recordings (``presentation x neuroid [x time_bin]``, with repetitions when the ceiling
        needs them), with the stimulus set in ``attrs["stimulus_set"]``. A callable is loaded on
        first use, so listing benchmarks reads no data.
    similarity_metric : callable (source, target) -> Score
        E.g. ``load_metric("pls")``.
    visual_degrees : float
        Degrees of visual angle the stimuli spanned in the experiment.
    number_of_trials : int
        Repetitions shown to the model (stochastic models answer each).
    ceiling_func : callable (assembly) -> Score, or None
        Computes the ceiling from the non-averaged assembly (single time bin squeezed). None: no
        ceiling (scores are r², e.g. where only averaged data exist).
    region : str
        Recording target (``V1``, ``V2``, ``V4``, ``IT``).
    time_bins : sequence of (start, end) ms, optional
        Defaults to the assembly's time bins.
    normalisation : str
        ``"r2_over_ceiling"`` (current reference) or ``"legacy"`` ((r/ceiling)², before 2026-01-13).
    """

    #: r² / ceiling (or (r / ceiling)²) is never negative and may exceed 1 over a noisy ceiling, as in the reference
    score_range = (0.0, math.inf)

    def __init__(self, identifier: str, version: int, assembly: NeuroidAssembly | Callable[[], NeuroidAssembly],
                 similarity_metric: Callable[[DataAssembly, DataAssembly], Score], visual_degrees: float,
                 number_of_trials: int, ceiling_func: Callable[[DataAssembly], Score] | None, region: str,
                 parent: str | None = None, bibtex: str = "", time_bins: Sequence[tuple[int, int]] | None = None,
                 normalisation: str = "r2_over_ceiling"):
        super().__init__(identifier=identifier, version=version,
                         ceiling_func=(lambda: ceiling_func(squeeze_time_bin(self.recordings)))
                         if ceiling_func is not None else None,
                         parent=parent or region, bibtex=bibtex, ceiling_key=self._data_key,
                         ceiling_identity=callable_identity(ceiling_func) if ceiling_func is not None else None,
                         ceiling_code=[ceiling_func] if ceiling_func is not None else [])
        self._assembly_source = assembly
        self._ceiling_callable = ceiling_func
        self._recordings: NeuroidAssembly | None = None
        self._target: NeuroidAssembly | None = None
        check_metric_call(identifier, similarity_metric, "metric(features, assembly)", positional=2,
                          hint="A cross-validated metric is needed here, e.g. load_metric('pls'); a train/test "
                               "('*_split') metric belongs in a TrainTestNeuralBenchmark.")
        self.metric = similarity_metric
        self.visual_degrees = visual_degrees
        self.number_of_trials = number_of_trials
        self.region = region
        self._time_bins = time_bins
        self.normalisation = normalisation
        if isinstance(assembly, DataAssembly):  # the data is here already: a misconfigured metric fails when built
            check_metric_data(identifier, similarity_metric, assembly)

    def check_data(self) -> None:
        """Check the metric's requirements on the data (:func:`check_metric_data`); loads the data when lazy.
        Called when the benchmark is built with its data, before a model is recorded, and by
        :func:`brainscore.scoring.score` before layer selection.

        Raises
        ------
        ValidationError
            If the data lacks a coordinate the metric needs.
        """
        check_metric_data(self.identifier, self.metric, self.assembly)

    # ---- data, loaded lazily ------------------------------------------------------------------
    @property
    def recordings(self) -> NeuroidAssembly:
        """The recordings as packaged (with repetitions, if any)."""
        if self._recordings is None:
            source = self._assembly_source
            recordings = source() if callable(source) and not isinstance(source, DataAssembly) else source
            if not isinstance(recordings.attrs.get("stimulus_set"), StimulusSet):
                raise ValidationError(
                    f"the assembly of benchmark {self.identifier!r} carries no stimulus set (attrs['stimulus_set']), "
                    "so the model cannot be shown the images. Attach it with "
                    "brainscore.data.attach_stimulus_set(assembly, stimulus_set), or load the assembly through the "
                    "registry (brainscore.load_dataset(identifier)), which attaches it.")
            self._recordings = recordings
        return self._recordings

    @property
    def assembly(self) -> NeuroidAssembly:
        """The repetition-averaged target (``presentation x neuroid``, one time bin squeezed)."""
        if self._target is None:
            self._target = squeeze_time_bin(average_repetition(self.recordings))
        return self._target

    @property
    def stimulus_set(self) -> StimulusSet:
        """The stimuli of the experiment, restricted to those in the data."""
        return self.recordings.attrs["stimulus_set"].restricted_to(self.recordings["stimulus_id"].values)

    @property
    def time_bins(self) -> list[tuple[int, int]]:
        """Time bins (start, end) in ms the model is recorded in."""
        if self._time_bins is not None:
            return [tuple(t) for t in self._time_bins]
        recordings = self.recordings
        starts = np.atleast_1d(recordings["time_bin_start"].values)
        ends = np.atleast_1d(recordings["time_bin_end"].values)
        return [(int(s), int(e)) for s, e in zip(starts, ends)]

    def _data_key(self) -> dict[str, Any]:
        recordings = self.recordings
        return {"values": np.ascontiguousarray(recordings.values),
                "stimulus_id": np.asarray(recordings["stimulus_id"].values).astype(str),
                "repetition": (np.asarray(recordings["repetition"].values) if "repetition" in recordings.coords
                               else None)}

    # ---- the experiment -----------------------------------------------------------------------
    def presentations(self, candidate: BrainModel) -> list[Presentation]:
        """The stimuli placed on ``candidate``'s screen, recorded from :attr:`region` (see :func:`recording`)."""
        return [recording(candidate, self)]

    @takes_device
    def __call__(self, candidate: BrainModel) -> Score:
        """Record ``candidate`` on this benchmark's stimuli and score its features.

        Returns
        -------
        Score
            Ceiled score with attrs ``raw``, ``ceiling``, ``error``.
        """
        self.check_data()  # before any activation is computed
        return self.score_features(record(candidate, self))

    def score_features(self, features: DataAssembly) -> Score:
        """Score model ``features`` (``presentation x neuroid``, one time bin) already recorded on the stimuli.

        Used by :meth:`__call__` and by per-layer reports; places nothing on screen.
        """
        features = squeeze_time_bin(features)
        assembly = self.assembly  # the data, loaded once (reported by the data store)
        with stage(f"{self.identifier}: metric on {features.sizes.get('neuroid', '?')} model features"):
            raw = self.metric(features, assembly)
        score = explained_variance(raw, self.ceiling, formula=self.normalisation)
        score.attrs["benchmark_identifier"] = self.identifier
        score.attrs["benchmark_version"] = self.version
        score.attrs["region"] = self.region
        return score

    @takes_device
    def bootstrap(self, result: Score, resamples: int = 1000, seed: int = 0) -> BootstrapSamples | None:
        """The ceiled score on ``resamples`` bootstrap resamples of the stimuli (the unit the experiment sampled).

        **Held-out predictions are resampled; the regressions are not refitted.** Each split's fitted
        mapping is kept, and the per-neuroid Pearson r between its held-out predictions and the data
        is recomputed with the resample's stimulus weights (a stimulus drawn k times counts k times),
        then the median over neuroids and the mean over splits, as in the score. This is the sampling
        distribution of the evaluation over stimuli *given the fitted mappings*: valid because
        held-out predictions do not depend on the test stimuli they are evaluated on, and the spread
        of the fits is already averaged by the mean over splits. It omits the fit's own variability,
        so it is a slightly narrow interval; refitting PLS inside every resample would cost one full
        score per resample. The ceiling is recomputed on the *same* stimulus resamples (its own
        split-half correlations re-weighted), so its uncertainty and its correlation with the raw
        score propagate into the ceiled score ``r*² / c*`` (or ``(r*/c*)²`` for ``legacy``).

        Parameters
        ----------
        result : Score
            What :meth:`score_features` returned (its ``raw`` carries the held-out predictions).
        resamples : int
        seed : int

        Returns
        -------
        BootstrapSamples or None
            None when the metric kept no held-out predictions (e.g. a metric without cross-validation).
        """
        held = getattr(result.attrs.get("raw"), "attrs", {}).get("held_out")
        if held is None:
            return None
        stimuli = np.unique(np.asarray(self.assembly["stimulus_id"].values).astype(str))
        weights = resample_counts(len(stimuli), resamples, seed)
        per_split = []
        for prediction, target, ids in zip(held["predictions"], held["targets"], held["stimulus_id"]):
            columns = np.searchsorted(stimuli, np.asarray(ids).astype(str))
            r = weighted_pearson(weights[:, columns], prediction, target)          # (resamples, neuroids)
            per_split.append(np.median(r, axis=1))
        raw = np.mean(per_split, axis=0)
        ceiling_bootstrap = getattr(self._ceiling_callable, "bootstrap", None)
        if self._ceiling_callable is None:
            ceiling, method = None, "held-out predictions resampled by stimulus (no refit); no ceiling"
            c = 1.0
        elif ceiling_bootstrap is not None:
            ceiling = ceiling_bootstrap(squeeze_time_bin(self.recordings), weights, stimuli)
            c = ceiling
            method = ("held-out predictions resampled by stimulus (no refit); ceiling recomputed on the same "
                      "stimulus resamples")
        else:
            ceiling, c = None, float(self.ceiling)
            method = "held-out predictions resampled by stimulus (no refit); ceiling held fixed"
        with np.errstate(invalid="ignore", divide="ignore"):
            ceiled = raw * raw / c if self.normalisation == "r2_over_ceiling" else (raw / c) ** 2
        return BootstrapSamples(score=ceiled, ceiling=ceiling, unit="stimulus", method=method)
