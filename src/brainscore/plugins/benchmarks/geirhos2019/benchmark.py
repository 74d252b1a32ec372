"""Construction of the Geirhos2019 instructed benchmarks (the reasoning and settings are in ``__init__``)."""
from __future__ import annotations

import numpy as np

from brainscore.benchmarks.readout_task import ReadoutTaskBenchmark
from brainscore.data.assemblies import DataAssembly
from brainscore.registry import load_ceiling, load_dataset, load_metric

from . import BIBTEX

VERSION = 1
VISUAL_DEGREES = 3.0
N_FOLDS = 3
SEED = 0
#: instruction -> (the stimulus-set column the subjects were asked to report, the exemplar column of that cue)
CUES = {"shape": ("original_image_category", "original_image"), "texture": ("conflict_image_category", "conflict_image")}
METRICS = ("accuracy_distance", "error_consistency")
TRUTH = "instructed_category"


def cue_conflict_trials(assembly: DataAssembly) -> DataAssembly:
    """The trials on the 1,200 cue-conflict images (shape and texture categories differ), ``attrs`` kept."""
    conflict = assembly["original_image_category"].values != assembly["conflict_image_category"].values
    kept = assembly.isel(presentation=np.flatnonzero(conflict))
    kept.attrs = dict(assembly.attrs)
    return kept


def cue_fractions(choices: DataAssembly) -> dict[str, float]:
    """The model's shape and texture answers on the cue-conflict images: ``shape_match``, ``texture_match``
    (fractions of those images) and ``shape_bias`` (shape / (shape + texture)), as the paper's figures."""
    bias = load_metric("shape_bias")(choices)
    return {"shape_bias": float(bias), "shape_match": float(bias.attrs["shape_match"]),
            "texture_match": float(bias.attrs["texture_match"])}


def instructed(instruction: str, metric: str) -> ReadoutTaskBenchmark:
    """``Geirhos2019<instruction>instructed-<metric>`` for ``instruction`` in shape, texture and ``metric`` in
    accuracy_distance, error_consistency.

    Raises
    ------
    ValueError
        For another instruction or metric.
    """
    if instruction not in CUES or metric not in METRICS:
        raise ValueError(f"unknown Geirhos2019 benchmark ({instruction!r}, {metric!r}); instructions {sorted(CUES)}, "
                         f"metrics {METRICS}")
    label, exemplar = CUES[instruction]
    return ReadoutTaskBenchmark(
        identifier=f"Geirhos2019{instruction}instructed-{metric}", version=VERSION,
        assembly=lambda: cue_conflict_trials(load_dataset(f"Geirhos2019.cue-conflict-{instruction}-instructed")),
        label_coord=label, group_coord=exemplar, truth_coord=TRUTH,
        metric=load_metric(metric, truth_coord=TRUTH), ceiling=load_ceiling(metric, truth_coord=TRUTH),
        visual_degrees=VISUAL_DEGREES, n_folds=N_FOLDS, seed=SEED, number_of_trials=1, parent="Geirhos2019",
        bibtex=BIBTEX, describe=cue_fractions)
