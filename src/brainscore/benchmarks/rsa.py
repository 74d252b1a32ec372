"""Representational similarity benchmarks: compare a model's RDM with each subject's RDM.

The flow (Kriegeskorte, Mur & Bandettini 2008; Brain-Score's ``RSABenchmark``):

1. ``candidate.start_recording(region, time_bins)``;
2. place the stimuli on the model's screen (:func:`~brainscore.benchmarks.screen.place_on_screen`);
3. ``features = candidate.look_at(stimuli, number_of_trials)``; a single time bin is squeezed;
4. the model's RDM (``1 - Pearson r`` between stimuli across neuroids) is compared with each
   measured RDM (one per subject, or per subject and session) by the Spearman correlation of the
   strict upper triangles; ``raw`` = the mean over those RDMs;
5. ``score = clip(raw / ceiling, 0, 1)``, the ceiling being the RSA noise ceiling of the measured RDMs
   (the Nili et al. 2014 upper bound: mean over RDMs of Spearman(RDM, mean of all RDMs)).

   **Clipped, unlike the reference** (which divides and does not clip its neural benchmarks; it clips with
   ``bound_score`` only where a benchmark asks, e.g. Geirhos error consistency). Issue 36: a model whose RDM
   reproduces the public measured RDMs' ranks got 1.0106 on ``Kriegeskorte2008.IT-rdm`` and 1.0027 on
   ``Mur2013-rdm``, a "better than the brain" number that only says the noise ceiling is noisy, and one any
   submitter can reach by reading the public data. A ceiled score here lies in [0, 1]
   (:func:`~brainscore.metrics.normalisation.bound_score`); the raw similarity and the ceiling are kept
   (``attrs["raw"]``, ``attrs["ceiling"]``), and the unclipped ceiled value is kept as ``attrs["unbounded"]``
   and recorded in the provenance (``unclipped_score``). The bootstrap's samples are clipped the same way.

The data are precomputed RDMs: an assembly of dims ``(rdm, presentation, presentation_b)`` (one
matrix per subject/session, coordinates such as ``subject`` and ``session`` on ``rdm``,
``stimulus_id`` on ``presentation``; the layout of :mod:`brainscore.metrics.similarity.rdm`) with the stimulus
set in ``attrs["stimulus_set"]``.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from brainscore.benchmarks.base import BenchmarkBase, Presentation, check_metric_call, takes_device
from brainscore.benchmarks.neural import record, recording, squeeze_time_bin
from brainscore.caching import callable_identity
from brainscore.data.assemblies import DataAssembly
from brainscore.data.stimuli import StimulusSet
from brainscore.errors import ValidationError
from brainscore.metrics.bootstrap import BootstrapSamples, resample_counts, weighted_spearman_pairs
from brainscore.metrics.score import Score
from brainscore.models.interface import BrainModel

RDM_STACK_DIMS = ("rdm", "presentation", "presentation_b")


def _label(assembly: DataAssembly, index: int, coords: Sequence[str]) -> str:
    parts = [str(assembly[c].values[index]) for c in coords if c in assembly.coords and assembly[c].dims == ("rdm",)]
    return ".".join(parts) if parts else str(index)


def responses_by_subject(assembly: DataAssembly) -> list[tuple[Any, DataAssembly]]:
    """(subject, that subject's neuroids) of ``assembly``, subjects sorted.

    Parameters
    ----------
    assembly : NeuroidAssembly
        ``presentation x neuroid`` (a single time bin is squeezed) with a ``subject`` coordinate on ``neuroid``.

    Raises
    ------
    ValueError
        If the neuroids carry no ``subject`` coordinate.
    """
    if "time_bin" in assembly.dims and assembly.sizes["time_bin"] == 1:
        assembly = assembly.squeeze("time_bin")
    if "subject" not in assembly.coords:
        raise ValueError("RSABenchmark needs a 'subject' coordinate on the neuroids (one RDM per subject)")
    labels = np.asarray(assembly["subject"].values)
    return [(subject, assembly.isel(neuroid=np.flatnonzero(labels == subject))) for subject in np.unique(labels)]


def subject_rdms(assembly: DataAssembly) -> DataAssembly:
    """Each subject's RDM (``1 - Pearson r``, :func:`brainscore.metrics.similarity.rdm.rdm`) of ``assembly``, as the
    stack :class:`RSABenchmark` reads.

    Parameters
    ----------
    assembly : NeuroidAssembly
        As :func:`responses_by_subject` takes it; its ``attrs["stimulus_set"]`` is carried over.

    Returns
    -------
    DataAssembly
        Dims ``(rdm, presentation, presentation_b)`` (:data:`RDM_STACK_DIMS`), ``subject`` on ``rdm``,
        ``stimulus_id`` / ``stimulus_id_b`` on the two presentation dims.

    Raises
    ------
    ValueError
        As :func:`responses_by_subject`.
    """
    from brainscore.metrics.similarity.rdm import rdm

    parts = responses_by_subject(assembly)
    matrices, ids = [], None
    for _, responses in parts:
        subject_rdm = rdm(responses)
        matrices.append(np.asarray(subject_rdm.values))
        ids = np.asarray(subject_rdm["stimulus_id"].values)
    stack = DataAssembly(np.stack(matrices), dims=RDM_STACK_DIMS,
                         coords={"subject": ("rdm", np.array([subject for subject, _ in parts])),
                                 "stimulus_id": ("presentation", ids), "stimulus_id_b": ("presentation_b", ids)})
    stack.attrs["stimulus_set"] = assembly.attrs.get("stimulus_set")
    return stack


def mean_subject_similarity(features: DataAssembly, subjects: Sequence[tuple[Any, DataAssembly]],
                            to_rdm: Callable[[DataAssembly], Any], similarity: Callable[[Any, Any], Any]) -> Score:
    """``similarity(to_rdm(features), to_rdm(responses))`` per subject, averaged (the reference's RSA procedure
    with its own ``rdm`` and ``similarity`` stages).

    Parameters
    ----------
    features : DataAssembly
        The model's ``presentation x neuroid`` responses.
    subjects : sequence of (subject, responses)
        E.g. :func:`responses_by_subject`.
    to_rdm, similarity : callable
        The two stages: responses -> representation, (representation, representation) -> number or Score.

    Returns
    -------
    Score
        The mean over subjects, with ``error`` the standard error over subjects (``ddof=0``; 0 for one subject)
        and ``raw`` the per-subject values (dim ``subject``).
    """
    model = to_rdm(features)
    values = np.array([float(similarity(model, to_rdm(responses))) for _, responses in subjects])
    per_subject = DataAssembly(values, dims=("subject",), coords={"subject": np.array([s for s, _ in subjects])})
    return Score.of(values.mean(), error=values.std() / np.sqrt(len(values)) if len(values) > 1 else 0.0,
                    raw=per_subject)

def rsa_ceiling(rdms: DataAssembly, noise_ceiling: Callable[[DataAssembly], Score],
                label_coords: Sequence[str] = ("subject", "session")) -> Score:
    """The RSA noise ceiling (Nili et al. 2014) of a stack of RDMs, each entry of ``rdm`` one "subject".

    Parameters
    ----------
    rdms : DataAssembly of dims (rdm, presentation, presentation_b)
        At least two RDMs.
    noise_ceiling : callable (stack) -> Score
        The ceiling computation (e.g. ``load_ceiling("rsa_noise_ceiling")``), called on the RDMs
        stacked with dims ``(subject, presentation, presentation_b)``.
    label_coords : sequence of str
        Coordinates on ``rdm`` joined to name each RDM in the ceiling's per-subject ``raw``.

    Returns
    -------
    Score
        The noise ceiling of the stack (for ``rsa_noise_ceiling``: the upper bound, with the
        leave-one-out lower bound in ``attrs["lower_bound_loo"]``).

    Raises
    ------
    ValidationError
        If ``rdms`` does not have the dims above or lacks ``stimulus_id`` on ``presentation``.
    """
    from brainscore.metrics.similarity.rdm import stack_rdms

    _check_stack(rdms)
    labels = [_label(rdms, i, label_coords) for i in range(rdms.sizes["rdm"])]
    stack = stack_rdms(np.asarray(rdms.transpose(*RDM_STACK_DIMS).values), rdms["stimulus_id"].values, labels)
    return noise_ceiling(stack)


def _check_stack(rdms: DataAssembly) -> None:
    if set(rdms.dims) != set(RDM_STACK_DIMS):
        raise ValidationError(f"measured RDMs need dims {RDM_STACK_DIMS}, got {rdms.dims}")
    if "stimulus_id" not in rdms.coords or rdms["stimulus_id"].dims != ("presentation",):
        raise ValidationError("measured RDMs need a 'stimulus_id' coordinate on 'presentation'")


class RSABenchmark(BenchmarkBase):
    """RDM similarity of a model region to measured RDMs, averaged over subjects (and sessions), ceiled.

    Parameters
    ----------
    identifier, version, parent, bibtex : see :class:`~brainscore.benchmarks.base.BenchmarkBase`
    rdms : DataAssembly or callable () -> DataAssembly
        Measured RDMs, dims ``(rdm, presentation, presentation_b)``, stimulus set in
        ``attrs["stimulus_set"]``. A callable is loaded on first use.
    region : str
        Recording target of the model (``V1``, ``V2``, ``V4``, ``IT``).
    visual_degrees : float
        Degrees of visual angle the stimuli spanned in the experiment.
    similarity_metric : callable (model RDM or features, measured RDM) -> Score
        E.g. ``load_metric("rdm")``: Spearman of the upper triangles.
    noise_ceiling : callable (stacked RDMs) -> Score, or None
        The ceiling over the entries of ``rdm`` (needs at least 2), e.g.
        ``load_ceiling("rsa_noise_ceiling")`` (see :func:`rsa_ceiling`); None: no ceiling (ceiling 1,
        the raw similarity is the score; e.g. a single RDM).
    number_of_trials : int
        Trials shown to the model.
    time_bins : sequence of (start, end) ms
        Recorded time bins (default ``[(70, 170)]``, the reference's bin for IT).
    label_coords : sequence of str
        Coordinates on ``rdm`` that name each RDM in ``raw``.

    Notes
    -----
    The model RDM is computed once per call (``brainscore.metrics.similarity.rdm.rdm``) and compared with each
    measured RDM.
    """

    #: a correlation over its ceiling, clipped to [0, 1] (see the module docstring); the results database
    #: refuses a done score outside it (:func:`brainscore.results.validity.check_outcome`)
    score_range = (0.0, 1.0)

    def __init__(self, identifier: str, version: int, rdms: DataAssembly | Callable[[], DataAssembly], region: str,
                 visual_degrees: float, *, similarity_metric: Callable, noise_ceiling: Callable | None,
                 number_of_trials: int = 1, parent: str | None = None, bibtex: str = "",
                 time_bins: Sequence[tuple[int, int]] = ((70, 170),), label_coords: Sequence[str] = ("subject", "session")):
        if noise_ceiling is not None and not callable(noise_ceiling):
            raise ValueError(f"noise_ceiling must be a callable (e.g. load_ceiling('rsa_noise_ceiling')) or None, "
                             f"got {noise_ceiling!r}")
        ceiling_func = (lambda: rsa_ceiling(self.rdms, noise_ceiling, label_coords)) if noise_ceiling else None
        super().__init__(identifier=identifier, version=version, ceiling_func=ceiling_func, parent=parent or region,
                         bibtex=bibtex, ceiling_key=self._data_key,
                         ceiling_identity=callable_identity(noise_ceiling) if noise_ceiling else None,
                         ceiling_code=[noise_ceiling] if noise_ceiling else [])
        self._rdms_source = rdms
        self._noise_ceiling = noise_ceiling
        self._rdms: DataAssembly | None = None
        self.region = region
        self.visual_degrees = visual_degrees
        self.number_of_trials = number_of_trials
        self.time_bins = [tuple(t) for t in time_bins]
        check_metric_call(identifier, similarity_metric, "metric(model_rdm, measured_rdm)", positional=2,
                          hint="Use an RDM similarity, e.g. load_metric('rdm').")
        self.metric = similarity_metric
        self.label_coords = tuple(label_coords)

    @property
    def rdms(self) -> DataAssembly:
        """The measured RDMs, ``(rdm, presentation, presentation_b)``."""
        if self._rdms is None:
            source = self._rdms_source
            rdms = source() if callable(source) and not isinstance(source, DataAssembly) else source
            _check_stack(rdms)
            self._rdms = rdms.transpose(*RDM_STACK_DIMS)
        return self._rdms

    @property
    def stimulus_set(self) -> StimulusSet:
        """The stimuli of the RDMs."""
        return self.rdms.attrs["stimulus_set"].restricted_to(self.rdms["stimulus_id"].values)

    def _data_key(self) -> dict[str, Any]:
        rdms = self.rdms
        return {"values": np.ascontiguousarray(rdms.values),
                "stimulus_id": np.asarray(rdms["stimulus_id"].values).astype(str)}

    def presentations(self, candidate: BrainModel) -> list[Presentation]:
        """The stimuli placed on ``candidate``'s screen, recorded from :attr:`region` (see :func:`recording`)."""
        return [recording(candidate, self)]

    @takes_device
    def __call__(self, candidate: BrainModel) -> Score:
        """Record ``candidate`` on the stimuli, build its RDM and score it against the measured RDMs.

        Returns
        -------
        Score
            ``clip(raw / ceiling, 0, 1)`` with attrs ``raw`` (mean Spearman over RDMs, error = SEM over RDMs,
            per-RDM values in its ``raw``), ``ceiling`` and ``unbounded`` (``raw / ceiling``).
        """
        return self.score_features(record(candidate, self))

    def score_features(self, features: DataAssembly) -> Score:
        """Score model ``features`` (``presentation x neuroid``, one time bin) recorded on the stimuli."""
        from brainscore.metrics.normalisation import bound_score, ceil_score
        from brainscore.metrics.similarity.rdm import rdm
        from brainscore.progress import stage

        features = squeeze_time_bin(features)
        if "presentation" in features.dims and "stimulus_id" in features.coords:
            keep = np.isin(features["stimulus_id"].values, self.rdms["stimulus_id"].values)
            features = features.isel(presentation=np.flatnonzero(keep))
        with stage(f"{self.identifier}: the model's RDM of {features.sizes.get('presentation', '?')} stimuli"):
            model_rdm = rdm(features)
        rdms = self.rdms
        with stage(f"{self.identifier}: comparing the model's RDM", total=rdms.sizes["rdm"], unit="RDM") as progress:
            values = []
            for i in range(rdms.sizes["rdm"]):
                values.append(float(self.metric(model_rdm, rdms.isel(rdm=i))))
                progress.update()
        values = np.array(values)
        labels = [_label(rdms, i, self.label_coords) for i in range(rdms.sizes["rdm"])]
        per_rdm = DataAssembly(values, dims=("rdm",), coords={"rdm": labels})
        error = values.std() / math.sqrt(len(values)) if len(values) > 1 else 0.0
        raw = Score.of(values.mean(), error=error, raw=per_rdm)
        score = bound_score(ceil_score(raw, self.ceiling))  # [0, 1]; the unclipped value in attrs["unbounded"]
        score.attrs["benchmark_identifier"] = self.identifier
        score.attrs["benchmark_version"] = self.version
        score.attrs["region"] = self.region
        score.attrs["model_rdm"] = model_rdm  # for the bootstrap over stimuli
        return score

    @takes_device
    def bootstrap(self, result: Score, resamples: int = 1000, seed: int = 0) -> BootstrapSamples | None:
        """The score on ``resamples`` bootstrap resamples of the stimuli (Nili et al. 2014's stimulus bootstrap).

        The unit is the stimulus: a resample keeps every pair of distinct drawn stimuli, a pair drawn
        ``w_i w_j`` times counting that often (pairs of a stimulus with its own copy have no
        dissimilarity and are left out, as the diagonal). The model's and the measured RDMs are fixed
        (nothing is refitted: RDM similarity has no fitted parameters); Spearman's rho is recomputed
        on each resample's weighted ranks, for every measured RDM, then averaged as in the score. With
        the RSA noise ceiling, its upper bound (Spearman of each RDM with the mean RDM) is recomputed
        on the same resamples, so the ceiling's uncertainty propagates into ``raw / ceiling``.
        Returns None for a metric other than RDM Spearman, or without the model RDM.
        """
        from brainscore.metrics.ceilings.rsa import RSANoiseCeiling
        from brainscore.metrics.similarity.rdm import RDMMetric, rdm_array, stack_rdms

        model_rdm = result.attrs.get("model_rdm")
        if model_rdm is None or not isinstance(self.metric, RDMMetric):
            return None
        metric = self.metric
        ids, model = rdm_array(model_rdm, metric.neuroid_dim, metric.comparison_coord, metric.dtype, for_ranking=True)
        rdms = self.rdms
        measured = [rdm_array(rdms.isel(rdm=i), metric.neuroid_dim, metric.comparison_coord, metric.dtype,
                               for_ranking=True) for i in range(rdms.sizes["rdm"])]
        if any(not np.array_equal(np.asarray(i).astype(str), np.asarray(ids).astype(str)) for i, _ in measured):
            return None
        rows, cols = np.triu_indices(len(ids), 1)
        data = np.stack([m[rows, cols] for _, m in measured], axis=1).astype(np.float64)    # (pairs, rdms)
        weights = resample_counts(len(ids), resamples, seed)
        raw = weighted_spearman_pairs(weights, rows, cols, model[rows, cols].astype(np.float64), data).mean(axis=1)
        ceiling = None
        if isinstance(self._noise_ceiling, RSANoiseCeiling):
            labels = [_label(rdms, i, self.label_coords) for i in range(rdms.sizes["rdm"])]
            stack = stack_rdms(np.asarray(rdms.transpose(*RDM_STACK_DIMS).values), rdms["stimulus_id"].values, labels)
            _, subject_rdms = self._noise_ceiling.subject_rdms(stack)
            triangles = np.stack([m[rows, cols] for m in subject_rdms], axis=1)               # (pairs, subjects)
            ceiling = weighted_spearman_pairs(weights, rows, cols, triangles.mean(axis=1), triangles).mean(axis=1)
            c, method = ceiling, "stimuli resampled (pairs of distinct drawn stimuli); noise ceiling on the same resamples"
        elif self._noise_ceiling is None:
            c, method = 1.0, "stimuli resampled (pairs of distinct drawn stimuli); no ceiling"
        else:
            c, method = float(self.ceiling), "stimuli resampled (pairs of distinct drawn stimuli); ceiling held fixed"
        with np.errstate(invalid="ignore", divide="ignore"):
            ceiled = np.clip(raw / c, 0.0, 1.0)  # as the score (NaN stays NaN)
        return BootstrapSamples(score=ceiled, ceiling=ceiling, unit="stimulus", method=method)
