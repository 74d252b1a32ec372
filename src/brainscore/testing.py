"""A generic check every model plugin can run: it loads, has a field of view, and answers look_at properly.

Usage in a plugin's test::

    from brainscore.testing import check_model

    def test_my_model():
        check_model("my-model")

The check shows the model a few stimuli (random-noise images by default, or the given ones) and
verifies, for every region in its ``region_layer_map`` (or the ``regions`` given with a map), that
the recording is ``presentation x neuroid x time_bin`` with one presentation per stimulus, the
stimulus ids and stimulus-set columns on presentation, unique ``neuroid_id`` values and finite
numbers; and, when the network outputs 1000 ImageNet logits, that the label task answers one
synset per stimulus.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from brainscore.data.stimuli import StimulusSet
from brainscore.errors import ValidationError
from brainscore.models.interface import BrainModel


def noise_stimuli(folder: str | Path, n: int = 4, size: int = 64, seed: int = 0) -> StimulusSet:
    """``n`` uniform-noise RGB PNG images of ``size`` pixels in ``folder``, ids ``noise0``…, a ``tag`` column."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for i in range(n):
        path = folder / f"noise{i}.png"
        Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8)).save(path)
        paths[f"noise{i}"] = path
    return StimulusSet({"stimulus_id": list(paths), "tag": [f"t{i}" for i in range(n)]},
                       identifier=f"noise-{n}-{size}-{seed}", stimulus_paths=paths)


def check_model(model: str | BrainModel, stimuli: StimulusSet | None = None, regions: Sequence[str] | None = None,
                time_bins: Sequence[tuple[int, int]] = ((70, 170),), check_labels: bool = True,
                **load_kwargs) -> dict[str, Any]:
    """Load ``model`` (an identifier or a BrainModel) and check its answers on a few stimuli.

    Parameters
    ----------
    model : str or BrainModel
        A registered identifier (loaded with ``brainscore.load_model(model, **load_kwargs)``) or a model.
    stimuli : StimulusSet, optional
        Default: 4 noise images.
    regions : sequence of str, optional
        Regions to record from (default: those in the model's ``region_layer_map``; regions not in
        it need a layer scorer).
    time_bins : sequence of (start, end) ms
    check_labels : bool
        Also run the ImageNet label task when the network outputs 1000 logits.

    Returns
    -------
    dict
        ``identifier``, ``visual_degrees``, per-region ``shapes`` and the ``labels`` (if checked).

    Raises
    ------
    AssertionError
        Naming the first check that failed.
    """
    if isinstance(model, str):
        from brainscore.scoring.job import load_model

        identifier = model
        model = load_model(identifier, **load_kwargs)
        assert model.identifier == identifier, f"model loaded as {identifier!r} calls itself {model.identifier!r}"
    assert isinstance(model, BrainModel), f"{type(model).__name__} does not implement brainscore's BrainModel"
    degrees = model.visual_degrees()
    assert isinstance(degrees, (int, float)) and 0 < degrees < 180, f"visual_degrees() = {degrees!r}"
    report: dict[str, Any] = {"identifier": model.identifier, "visual_degrees": float(degrees), "shapes": {}}
    with tempfile.TemporaryDirectory(prefix="brainscore-check-") as folder:
        stimuli = stimuli if stimuli is not None else noise_stimuli(folder)
        ids = [str(i) for i in stimuli["stimulus_id"]]
        if regions is None:
            regions = sorted(getattr(model, "region_layer_map", {}) or {})
        for region in regions:
            model.start_recording(region, time_bins=list(time_bins))
            features = model.look_at(stimuli, number_of_trials=1)
            assert set(features.dims) == {"presentation", "neuroid", "time_bin"}, \
                f"{region}: dims are {features.dims}, expected presentation, neuroid, time_bin"
            assert features.sizes["presentation"] == len(ids), \
                f"{region}: {features.sizes['presentation']} presentations for {len(ids)} stimuli"
            assert features.sizes["time_bin"] == len(time_bins), f"{region}: {features.sizes['time_bin']} time bins"
            assert [str(i) for i in features["stimulus_id"].values] == ids, f"{region}: stimulus_id order differs"
            for column in stimuli.columns:
                assert column in features.coords, f"{region}: stimulus-set column {column!r} missing on presentation"
            neuroid_ids = features["neuroid_id"].values
            assert len(np.unique(neuroid_ids)) == len(neuroid_ids), f"{region}: neuroid_id values repeat"
            assert np.isfinite(np.asarray(features.values)).all(), f"{region}: features are not all finite"
            report["shapes"][region] = dict(features.sizes)
        if check_labels:
            try:
                model.start_task("label", "imagenet")
                labels = model.look_at(stimuli)
            except ValidationError as error:
                if "1000" not in str(error):
                    raise
            else:
                assert labels.sizes["presentation"] == len(ids), "label task: one label per stimulus expected"
                assert all(str(v).startswith("n") and len(str(v)) == 9 for v in labels.values), \
                    f"label task answered {list(labels.values)[:3]}, expected WordNet synset ids"
                report["labels"] = [str(v) for v in labels.values]
            model.start_task("passive")
    return report
