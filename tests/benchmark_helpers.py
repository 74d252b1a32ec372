"""Independent computations from the raw Geirhos 2019 CSVs, shared by the benchmark tests."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from brainscore.data import NeuroidAssembly

EXPERIMENT_FOLDERS = {"cue-conflict": "style-transfer-512-nomask-experiment", "edge": "edge-experiment",
                      "silhouette": "silhouette-filled-experiment"}


def csv_trials(shared_data: Path, experiment: str, who: str) -> pd.DataFrame:
    """The raw trials of ``who`` (``humans`` or a network) read straight from the CSVs."""
    folder = shared_data / "geirhos2019_texture_vs_shape" / "raw-data" / EXPERIMENT_FOLDERS[experiment]
    pattern = "*_subject-*_session_1.csv" if who == "humans" else f"*_{who}_session_1.csv"
    return pd.concat([pd.read_csv(f) for f in sorted(folder.glob(pattern))], ignore_index=True)


def shape_bias_from_csv(trials: pd.DataFrame) -> float:
    """Shape answers / (shape + texture answers) over trials whose shape and texture categories differ."""
    names = trials["imagename"].str.extract(r"_([a-z]+)\d+-([a-z]+)\d+\.png$")
    conflict = names[0] != names[1]
    shape = (trials["object_response"][conflict] == names[0][conflict]).sum()
    texture = (trials["object_response"][conflict] == names[1][conflict]).sum()
    return shape / (shape + texture)


def pixel_features(stimulus_set, block: int = 7, region: str = "IT") -> NeuroidAssembly:
    """A real, deterministic "model": each image's RGB pixels averaged in ``block`` x ``block`` patches.

    Returns a ``presentation x neuroid`` NeuroidAssembly in the stimulus set's order, its neuroids in ``region``.
    """
    rows = []
    for stimulus_id in stimulus_set["stimulus_id"]:
        image = np.asarray(Image.open(stimulus_set.get_stimulus(stimulus_id)).convert("RGB"), dtype=float)
        h, w = (image.shape[0] // block) * block, (image.shape[1] // block) * block
        patches = image[:h, :w].reshape(h // block, block, w // block, block, 3).mean(axis=(1, 3))
        rows.append(patches.ravel())
    values = np.stack(rows)
    n = values.shape[1]
    return NeuroidAssembly(values, dims=("presentation", "neuroid"),
                           coords={"stimulus_id": ("presentation", np.asarray(stimulus_set["stimulus_id"])),
                                   "neuroid_id": ("neuroid", [f"pixel_{i}" for i in range(n)]),
                                   "region": ("neuroid", [region] * n)})
