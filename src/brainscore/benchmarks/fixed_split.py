"""Neural predictivity with a fixed train/test split of the stimuli (e.g. shared and unique images).

Some datasets come with their own split: a regression is fitted on the responses to the training
stimuli and evaluated on the test stimuli, once, instead of cross-validating over all stimuli
(Brain-Score's ``TrainTestNeuralBenchmark`` and its ``*_split`` metrics, e.g. for Allen et al. 2022
NSD). The flow:

1. optionally keep only reliable neuroids: per-neuroid split-half reliability (even vs odd
   repetitions, Pearson r across stimuli, Spearman-Brown corrected) at least ``reliability_threshold``;
2. ``candidate.start_recording(region, time_bins)``; the train and test stimuli are placed on the
   model's screen and shown; a single time bin is squeezed;
3. ``raw = metric(source_train=, source_test=, target_train=, target_test=)`` with the targets
   averaged over repetitions (the ``*_split`` metrics: median over neuroids of the test-set r);
4. normalised by the ceiling of the *non-averaged* test data (``r² / ceiling``), as
   :class:`~brainscore.benchmarks.neural.NeuralBenchmark` does.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from brainscore.benchmarks.base import BenchmarkBase, Presentation, check_metric_call, takes_device
from brainscore.benchmarks.neural import check_metric_data, squeeze_time_bin
from brainscore.benchmarks.screen import place_on_screen
from brainscore.caching import callable_identity
from brainscore.data.assemblies import DataAssembly, NeuroidAssembly, average_repetition
from brainscore.data.stimuli import StimulusSet
from brainscore.errors import ValidationError
from brainscore.metrics.score import Score
from brainscore.models.interface import BrainModel
from brainscore.progress import stage


def split_half_reliability(assembly: DataAssembly, repetition_coord: str = "repetition") -> DataAssembly:
    """Per-neuroid split-half reliability: even vs odd repetitions, Pearson r across stimuli, Spearman-Brown.

    The repetitions of each stimulus are ranked by their ``repetition_coord`` value; even ranks form
    one half and odd ranks the other, each averaged per stimulus (NaN ignored). Pearson r is computed
    per neuroid across the stimuli present in both halves and corrected to the full number of
    repetitions with Spearman-Brown for two halves, ``2r / (1 + r)`` (Spearman 1910; Brown 1910).

    Parameters
    ----------
    assembly : NeuroidAssembly
        ``presentation x neuroid`` (a single time bin is squeezed), with ``stimulus_id`` and
        ``repetition_coord`` on ``presentation``; at least two repetitions of some stimuli.
    repetition_coord : str

    Returns
    -------
    DataAssembly
        Dim ``neuroid`` with the assembly's neuroid coordinates; NaN for a neuroid that is constant
        within a half.

    Raises
    ------
    ValidationError
        If there are no repetitions, or fewer than 3 stimuli have both halves.
    """
    assembly = squeeze_time_bin(assembly)
    if repetition_coord not in assembly.coords:
        raise ValidationError(f"split-half reliability needs a {repetition_coord!r} coordinate on presentation")
    if set(assembly.dims) != {"presentation", "neuroid"}:
        raise ValidationError(f"expected presentation x neuroid (one time bin), got dims {assembly.dims}")
    assembly = assembly.transpose("presentation", "neuroid")
    frame = pd.DataFrame({"stimulus_id": np.asarray(assembly["stimulus_id"].values).astype(str),
                          "repetition": np.asarray(assembly[repetition_coord].values)})
    half = frame.groupby("stimulus_id")["repetition"].rank(method="first").to_numpy().astype(int) % 2
    values = np.asarray(assembly.values, dtype=float)
    stimuli = np.unique(frame["stimulus_id"])
    codes = pd.Index(stimuli).get_indexer(frame["stimulus_id"])
    means = []
    for h in (0, 1):
        rows = half == h
        sums = np.zeros((len(stimuli), values.shape[1]))
        counts = np.zeros((len(stimuli), values.shape[1]))
        valid = ~np.isnan(values[rows])
        np.add.at(sums, codes[rows], np.where(valid, values[rows], 0))
        np.add.at(counts, codes[rows], valid)
        with np.errstate(invalid="ignore", divide="ignore"):
            means.append(sums / counts)
    both = ~(np.isnan(means[0]) | np.isnan(means[1])).any(axis=1)
    if both.sum() < 3:
        raise ValidationError(f"only {both.sum()} stimuli have responses in both halves of the repetitions; "
                              f"split-half reliability needs repeated presentations of at least 3 stimuli")
    a, b = means[0][both], means[1][both]
    a, b = a - a.mean(axis=0), b - b.mean(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (a * b).sum(axis=0) / np.sqrt((a ** 2).sum(axis=0) * (b ** 2).sum(axis=0))
        corrected = 2 * r / (1 + r)
    coords = {name: coord for name, coord in assembly.coords.items() if coord.dims == ("neuroid",)}
    return DataAssembly(corrected, dims=("neuroid",), coords=coords)


def select_reliable_neuroids(assembly: DataAssembly, threshold: float,
                             reliability_coord: str | None = None) -> DataAssembly:
    """The neuroids of ``assembly`` whose reliability is strictly above ``threshold`` (NaN reliabilities dropped).

    Parameters
    ----------
    assembly : DataAssembly
        ``presentation x neuroid`` with ``neuroid_id``, with repetitions when the reliability is computed.
    threshold : float
        Reliability (a correlation, unitless) a neuroid must exceed.
    reliability_coord : str, optional
        A neuroid coordinate holding each neuroid's reliability (as the reference's packaged data do). If absent
        or None, the split-half reliability over repetitions is computed (:func:`split_half_reliability`).

    Returns
    -------
    DataAssembly
        ``assembly`` restricted to the kept neuroids, in their order.

    Raises
    ------
    ValueError
        If no neuroid reaches the threshold.
    ValidationError
        From :func:`split_half_reliability`, when it is computed.
    """
    if reliability_coord is not None and reliability_coord in assembly.coords:
        reliability = np.asarray(assembly[reliability_coord].values, dtype=float)
    else:
        computed = split_half_reliability(assembly)
        by_id = dict(zip(np.asarray(computed["neuroid_id"].values), np.asarray(computed.values, dtype=float)))
        reliability = np.array([by_id.get(i, np.nan) for i in np.asarray(assembly["neuroid_id"].values)])
    with np.errstate(invalid="ignore"):
        keep = np.flatnonzero(reliability > threshold)  # strictly above, as the reference
    if not len(keep):
        raise ValueError(f"no neuroid reaches reliability {threshold} "
                         f"(maximum {np.nanmax(reliability) if np.isfinite(reliability).any() else 'NaN'})")
    return assembly.isel(neuroid=keep)

def _load(source):
    return source() if callable(source) and not isinstance(source, DataAssembly) else source


class TrainTestNeuralBenchmark(BenchmarkBase):
    """Neural predictivity from a fixed train/test split, optionally on reliable neuroids only.

    Parameters
    ----------
    identifier, version, parent, bibtex : see :class:`~brainscore.benchmarks.base.BenchmarkBase`
    train_assembly, test_assembly : NeuroidAssembly or callable () -> NeuroidAssembly
        Recordings of the training and test stimuli (``presentation x neuroid [x time_bin]``, with
        repetitions where the ceiling or the reliability needs them), the same neuroids in both,
        each with its stimulus set in ``attrs["stimulus_set"]``.
    similarity_metric : callable (source_train=, source_test=, target_train=, target_test=) -> Score
        A ``*_split`` metric, e.g. ``load_metric("ridge_split")``.
    visual_degrees : float
    number_of_trials : int
    region : str
    ceiling_func : callable (assembly) -> Score, or None
        Ceiling of the non-averaged (reliable) test recordings, e.g.
        ``load_ceiling("internal_consistency")``. None: no ceiling (the score is r²).
    reliability_threshold : float, optional
        Keep neuroids whose :func:`split_half_reliability` is at least this (NaN reliabilities are
        dropped). None keeps every neuroid.
    reliability_on : {"train", "test"}
        Which recordings the reliability is measured on ("train", the default, keeps the selection
        independent of the data the score is computed on).
    time_bins : sequence of (start, end) ms, optional
        Default: the test assembly's time bins.
    normalisation : str
        Passed to :func:`~brainscore.metrics.normalisation.explained_variance`.

    Raises
    ------
    ValidationError
        When loaded, if train and test hold different neuroids, or no neuroid passes the threshold.
    """

    #: r² / ceiling (or (r / ceiling)²) is never negative and may exceed 1 over a noisy ceiling, as in the reference
    score_range = (0.0, math.inf)

    def __init__(self, identifier: str, version: int, train_assembly, test_assembly,
                 similarity_metric: Callable[..., Score], visual_degrees: float, number_of_trials: int, region: str,
                 ceiling_func: Callable[[DataAssembly], Score] | None = None,
                 reliability_threshold: float | None = None, reliability_on: str = "train",
                 parent: str | None = None, bibtex: str = "", time_bins: Sequence[tuple[int, int]] | None = None,
                 normalisation: str = "r2_over_ceiling"):
        if reliability_on not in ("train", "test"):
            raise ValueError(f"reliability_on must be 'train' or 'test', got {reliability_on!r}")
        super().__init__(identifier=identifier, version=version,
                         ceiling_func=(lambda: ceiling_func(self.test_recordings)) if ceiling_func is not None else None,
                         parent=parent or region, bibtex=bibtex, ceiling_key=self._data_key,
                         ceiling_identity=callable_identity(ceiling_func) if ceiling_func is not None else None,
                         ceiling_code=[ceiling_func] if ceiling_func is not None else [])
        self._sources = {"train": train_assembly, "test": test_assembly}
        self._loaded: dict[str, NeuroidAssembly] = {}
        self._averaged: dict[str, NeuroidAssembly] = {}
        check_metric_call(identifier, similarity_metric,
                          "metric(source_train=, source_test=, target_train=, target_test=)",
                          keywords=("source_train", "source_test", "target_train", "target_test"),
                          hint="A train/test metric is needed here, e.g. load_metric('pls_split'); a cross-validated "
                               "one such as 'pls' belongs in a NeuralBenchmark.")
        self.metric = similarity_metric
        self.visual_degrees = visual_degrees
        self.number_of_trials = number_of_trials
        self.region = region
        self.reliability_threshold = reliability_threshold
        self.reliability_on = reliability_on
        self._time_bins = time_bins
        self.normalisation = normalisation
        self._reliable: np.ndarray | None = None

    # ---- data, loaded lazily ------------------------------------------------------------------
    def _raw(self, part: str) -> NeuroidAssembly:
        if part not in self._loaded:
            self._loaded[part] = squeeze_time_bin(_load(self._sources[part]))
        return self._loaded[part]

    @property
    def reliable_neuroids(self) -> np.ndarray:
        """``neuroid_id`` values kept (all when no threshold is set)."""
        if self._reliable is None:
            train, test = self._raw("train"), self._raw("test")
            train_ids, test_ids = (np.asarray(a["neuroid_id"].values) for a in (train, test))
            if set(train_ids) != set(test_ids):
                raise ValidationError(f"{self.identifier}: train and test recordings hold different neuroids "
                                      f"({len(set(train_ids) ^ set(test_ids))} differ)")
            if self.reliability_threshold is None:
                self._reliable = test_ids
            else:
                reliability = split_half_reliability(self._raw(self.reliability_on))
                keep = np.asarray(reliability.values) >= self.reliability_threshold  # NaN -> False
                self._reliable = np.asarray(reliability["neuroid_id"].values)[keep]
                if not len(self._reliable):
                    raise ValidationError(f"{self.identifier}: no neuroid reaches split-half reliability "
                                          f"{self.reliability_threshold} (maximum {np.nanmax(reliability.values):.3f})")
        return self._reliable

    def _recordings(self, part: str) -> NeuroidAssembly:
        assembly = self._raw(part)
        keep = np.isin(assembly["neuroid_id"].values, self.reliable_neuroids)
        return assembly.isel(neuroid=np.flatnonzero(keep))

    def check_data(self) -> None:
        """Check the metric's requirements on the train and test recordings
        (:func:`brainscore.benchmarks.neural.check_metric_data`: the coordinates a metric declares with
        ``required_coords()``); loads the data when lazy. Called by :func:`brainscore.scoring.score` before layer
        selection, and by :meth:`__call__` before the model is recorded.

        Raises
        ------
        ValidationError
            If the train or the test recordings lack a coordinate the metric needs.
        """
        for part in ("train", "test"):
            check_metric_data(self.identifier, self.metric, self._raw(part))

    def load_data(self) -> bool:
        """Load the train and test recordings now (:meth:`brainscore.benchmarks.base.Benchmark.load_data`)."""
        for part in ("train", "test"):
            self._raw(part)
        return True

    @property
    def train_recordings(self) -> NeuroidAssembly:
        """Training recordings (reliable neuroids, with repetitions)."""
        return self._recordings("train")

    @property
    def test_recordings(self) -> NeuroidAssembly:
        """Test recordings (reliable neuroids, with repetitions); the ceiling is computed on them."""
        return self._recordings("test")

    def target(self, part: str) -> NeuroidAssembly:
        """The repetition-averaged recordings of ``part`` (``"train"`` or ``"test"``)."""
        if part not in self._averaged:
            self._averaged[part] = average_repetition(self._recordings(part))
        return self._averaged[part]

    def stimulus_set(self, part: str) -> StimulusSet:
        """Stimuli of ``part``, restricted to those recorded."""
        recordings = self._raw(part)
        stimulus_set = recordings.attrs["stimulus_set"]
        subset = stimulus_set[stimulus_set["stimulus_id"].isin(set(recordings["stimulus_id"].values))]
        return StimulusSet(subset, identifier=stimulus_set.identifier, stimulus_paths=stimulus_set.stimulus_paths)

    @property
    def time_bins(self) -> list[tuple[int, int]]:
        if self._time_bins is not None:
            return [tuple(t) for t in self._time_bins]
        test = _load(self._sources["test"])
        if "time_bin_start" not in test.coords:
            return [(70, 170)]
        starts, ends = (np.atleast_1d(test[c].values) for c in ("time_bin_start", "time_bin_end"))
        return [(int(s), int(e)) for s, e in zip(starts, ends)]

    def _data_key(self) -> dict[str, Any]:
        test = self.test_recordings
        return {"values": np.ascontiguousarray(test.values),
                "stimulus_id": np.asarray(test["stimulus_id"].values).astype(str),
                "neuroids": np.asarray(test["neuroid_id"].values).astype(str),
                "threshold": self.reliability_threshold, "reliability_on": self.reliability_on}

    # ---- the experiment -----------------------------------------------------------------------
    def presentations(self, candidate: BrainModel) -> list[Presentation]:
        """The train stimuli, then the test stimuli, placed on ``candidate``'s screen, recorded from :attr:`region`."""
        return [Presentation(place_on_screen(self.stimulus_set(part), target_visual_degrees=candidate.visual_degrees(),
                                             source_visual_degrees=self.visual_degrees),
                             number_of_trials=self.number_of_trials, region=self.region, time_bins=self.time_bins)
                for part in ("train", "test")]

    @takes_device
    def __call__(self, candidate: BrainModel) -> Score:
        """Record ``candidate`` on the train and test stimuli and score its test-set predictivity."""
        self.check_data()  # before any activation is computed
        train, test = (shown.show(candidate) for shown in self.presentations(candidate))
        return self.score_features(train, test)

    def score_features(self, source_train: DataAssembly, source_test: DataAssembly) -> Score:
        """Score model features already recorded on the train and test stimuli.

        Returns
        -------
        Score
            Ceiled score with attrs ``raw``, ``ceiling``, ``n_neuroids`` (the neuroids kept).
        """
        from brainscore.metrics.normalisation import explained_variance

        targets = {"target_train": self.target("train"), "target_test": self.target("test")}
        with stage(f"{self.identifier}: metric on the train and test features"):
            raw = self.metric(source_train=squeeze_time_bin(source_train), source_test=squeeze_time_bin(source_test),
                              **targets)
        score = explained_variance(raw, self.ceiling, formula=self.normalisation)
        score.attrs["n_neuroids"] = int(len(self.reliable_neuroids))
        score.attrs["benchmark_identifier"] = self.identifier
        score.attrs["benchmark_version"] = self.version
        score.attrs["region"] = self.region
        return score
