"""Independent computations from the raw Geirhos 2019 CSVs, shared by the benchmark tests."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from brainscore.data import NeuroidAssembly
from brainscore.data.assemblies import BehavioralAssembly

EXPERIMENT_FOLDERS = {"cue-conflict": "style-transfer-512-nomask-experiment", "edge": "edge-experiment",
                      "silhouette": "silhouette-filled-experiment",
                      "cue-conflict-shape-instructed": "style-transfer-512-nomask-content-guessing-experiment",
                      "cue-conflict-texture-instructed": "style-transfer-512-nomask-texture-guessing-experiment"}


def read_trials(shared_data: Path, experiment: str, observer: str) -> pd.DataFrame:
    """Trials of one experiment; ``observer`` is a glob part: 'subject-*', 'alexnet', 'googlenet', 'vgg'."""
    folder = shared_data / "geirhos2019_texture_vs_shape" / "raw-data" / EXPERIMENT_FOLDERS[experiment]
    files = sorted(folder.glob(f"{EXPERIMENT_FOLDERS[experiment]}_{observer}_session_1.csv"))
    assert files, f"no files for {observer} in {folder}"
    trials = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    # imagename = <trial>_<experiment>_<observer>_<condition>_<category>_<nn>_<image file>
    trials["image"] = trials["imagename"].str.split("_", n=6).str[-1]
    return trials


def behavioral_assembly(trials: pd.DataFrame, with_subject: bool = True) -> BehavioralAssembly:
    """The choices of :func:`read_trials`'s ``trials`` as a ``presentation`` assembly (stimulus_id, truth,
    condition, and the subject when ``with_subject``)."""
    coords = {"stimulus_id": ("presentation", trials["image"].to_numpy()),
              "truth": ("presentation", trials["category"].to_numpy()),
              "condition": ("presentation", trials["condition"].to_numpy())}
    if with_subject:
        coords["subject"] = ("presentation", trials["subj"].to_numpy())
    return BehavioralAssembly(trials["object_response"].to_numpy(), dims=("presentation",), coords=coords)


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


def record_rdm_inputs(monkeypatch) -> list[tuple[str, str | None]]:
    """Patch the RDM kernel's ``stimulus_correlation_matrix`` (with ``monkeypatch``) to record each call's input
    library (``"numpy"`` or ``"torch"``) and the metric device current then (None: none); returns the record."""
    from brainscore.metrics import device as metric_device
    from brainscore.metrics.kernels import rdm as rdm_kernels

    seen = []
    original = rdm_kernels.stimulus_correlation_matrix

    def recording(X, dtype=None):
        seen.append((type(X).__module__.split(".")[0], metric_device.current()))
        return original(X, dtype)

    monkeypatch.setattr(rdm_kernels, "stimulus_correlation_matrix", recording)
    return seen
