"""Smoke tests a model plugin runs before submission (the reference's ``check_models``).

``check_brain_model_processing(model)`` shows the model a few synthetic images the way benchmarks
do (placed on its screen, recorded from each committed region, and labelled with the ImageNet
readout when it has one) and checks that the answers have the shape and values a benchmark needs.
``check_base_models(identifier)`` loads the registered model and runs the same checks. Nothing is
scored and no data set is needed (the reference's check scores a mock benchmark on its S3 data).
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["check_base_models", "check_brain_model_processing"]

_N_IMAGES = 6


def _stimuli(folder: Path):
    from PIL import Image

    from brainscore.data.stimuli import StimulusSet

    rng = np.random.default_rng(0)
    paths = {}
    for i in range(_N_IMAGES):
        path = folder / f"check_{i}.png"
        Image.fromarray(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)).save(path)
        paths[f"check_{i}"] = path
    return StimulusSet({"stimulus_id": list(paths)}, identifier="check_models", stimulus_paths=paths)


def check_brain_model_processing(model: Any) -> None:
    """Record every committed region (``IT`` if none) on synthetic images and check the answers.

    Raises
    ------
    AssertionError
        Saying which region or task gave what: no ``presentation``/``neuroid`` dims, the wrong
        number of presentations, non-finite or constant activations.
    """
    from brainscore.benchmarks.screen import place_on_screen

    regions = list(getattr(model, "region_layer_map", None) or {}) or ["IT"]
    with tempfile.TemporaryDirectory(prefix="brainscore-check-") as folder:
        stimuli = place_on_screen(_stimuli(Path(folder)), target_visual_degrees=model.visual_degrees(),
                                  source_visual_degrees=8)
        for region in regions:
            model.start_recording(region, time_bins=[(70, 170)])
            recordings = model.look_at(stimuli, number_of_trials=1)
            assert {"presentation", "neuroid"} <= set(recordings.dims), \
                f"{region}: look_at returned dims {recordings.dims}, expected presentation x neuroid [x time_bin]"
            assert recordings.sizes["presentation"] == _N_IMAGES, \
                f"{region}: {recordings.sizes['presentation']} presentations for {_N_IMAGES} images"
            values = np.asarray(recordings.values, dtype=float)
            assert np.isfinite(values).all(), f"{region}: activations contain NaN or infinite values"
            assert values.std() > 0, f"{region}: activations are constant over images and units"


def check_base_models(identifier: str) -> None:
    """Load the model registered as ``identifier`` and run :func:`check_brain_model_processing` on it.

    Raises
    ------
    UnknownIdentifierError
        If no plugin registers ``identifier``.
    AssertionError
        From the checks.
    """
    import brainscore_vision

    check_brain_model_processing(brainscore_vision.load_model(identifier))
