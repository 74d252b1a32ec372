"""The reference's ``check_models``: smoke tests a model plugin runs before submission (nothing is scored, no data
set is needed; the reference scores a mock benchmark on its S3 data).

``check_brain_model_processing(model)`` shows a few synthetic images as benchmarks do (placed on its screen,
recorded from each committed region, then the ``probabilities`` task fitted on them with two labels) and checks
the answers' shapes and values. ``check_brain_models(module)`` runs it on each model of the module's
``get_model``; ``check_base_models(name)`` on the model registered as ``name`` or, for a plugin's model module
(``check_base_models(__name__)``), on each of its ``get_model_list()``, ``IT`` committed to the last of
``get_layers(name)``.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["check_base_models", "check_brain_models", "check_brain_model_processing"]

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
    return StimulusSet({"stimulus_id": list(paths), "image_label": ["a", "b"] * (_N_IMAGES // 2)},
                       identifier="check_models", stimulus_paths=paths)


def check_brain_model_processing(model: Any) -> None:
    """Record every committed region (``IT`` if none) on synthetic images and check the answers (AssertionError
    naming the region or task: dims, number of presentations, non-finite or constant values, probabilities)."""
    from brainscore.benchmarks.screen import place_on_screen

    from brainscore_vision.model_interface import BrainModel

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
        model.start_task(BrainModel.Task.probabilities, stimuli)
        probabilities = model.look_at(stimuli, number_of_trials=1)
        assert probabilities.dims == ("presentation", "choice") and probabilities.shape == (_N_IMAGES, 2), \
            f"probabilities task: look_at returned dims {probabilities.dims} shape {probabilities.shape}, expected " \
            f"presentation x choice ({_N_IMAGES} x 2)"
        np.testing.assert_allclose(np.asarray(probabilities.values, dtype=float).sum(axis=1), 1, atol=1e-6,
                                   err_msg="probabilities task: each presentation's probabilities must sum to 1")


def _model_module(name: str):
    """The module ``name`` (imported if needed) when it defines ``get_model`` and ``get_layers``; else None."""
    module = sys.modules.get(name)
    if module is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            return None
        module = importlib.import_module(name)
    if callable(getattr(module, "get_model", None)) and callable(getattr(module, "get_layers", None)):
        return module
    return None


def _check_module(module) -> None:
    from brainscore.models.interface import BrainModel

    from brainscore_vision.model_helpers.brain_transformation import ModelCommitment

    if not callable(getattr(module, "get_model_list", None)):
        raise AssertionError(f"{module.__name__} defines get_model and get_layers but no get_model_list() naming its "
                             f"models; add one, or call check_base_models('<identifier>') with a registered model")
    names = list(module.get_model_list())
    assert names, f"{module.__name__}.get_model_list() is empty"
    for name in names:
        layers = module.get_layers(name)
        assert isinstance(layers, (list, tuple)) and len(layers) > 0 and all(isinstance(layer, str) for layer in layers), \
            f"{module.__name__}.get_layers({name!r}) must return a non-empty list of layer names, got {layers!r}"
        model = module.get_model(name)
        assert model is not None, f"{module.__name__}.get_model({name!r}) returned None"
        if not isinstance(model, BrainModel):
            model = ModelCommitment(identifier=name, activations_model=model, layers=list(layers),
                                    region_layer_map={"IT": layers[-1]})
        check_brain_model_processing(model)


def check_brain_models(name: str) -> None:
    """Check every model of the module ``name`` whose ``get_model(model)`` returns a brain model (AssertionError if
    it lists none, one is not a ``BrainModel`` or a check fails)."""
    from brainscore.models.interface import BrainModel

    module = _model_module(name) or importlib.import_module(name)
    assert callable(getattr(module, "get_model_list", None)), f"{name} has no get_model_list()"
    for model_name in module.get_model_list():
        model = module.get_model(model_name)
        assert isinstance(model, BrainModel), f"{name}.get_model({model_name!r}) is not a BrainModel: {model!r}"
        check_brain_model_processing(model)


def check_base_models(name: str) -> None:
    """Check the model registered as ``name``, or every model of the plugin module ``name`` (see the module notes;
    UnknownIdentifierError if it is neither, AssertionError from the checks)."""
    module = _model_module(name)
    if module is not None:
        _check_module(module)
        return
    import brainscore_vision

    check_brain_model_processing(brainscore_vision.load_model(name))
