"""NeuralBenchmark's errors for the mistakes a benchmark author makes first (issue 15, item 12)."""
from __future__ import annotations

import numpy as np
import pytest

import brainscore
from brainscore.benchmarks.neural import NeuralBenchmark
from brainscore.data import NeuroidAssembly, attach_stimulus_set


def _recordings(n_images: int = 40, n_neurons: int = 5, seed: int = 0) -> NeuroidAssembly:
    rng = np.random.default_rng(seed)
    ids = [f"image{i:04d}" for i in range(n_images)]
    return NeuroidAssembly(
        rng.normal(size=(n_images, n_neurons, 1)), dims=("presentation", "neuroid", "time_bin"),
        coords={"stimulus_id": ("presentation", ids), "object_name": ("presentation", ids),  # unique per image
                "neuroid_id": ("neuroid", [f"n{i}" for i in range(n_neurons)]), "region": ("neuroid", ["V4"] * n_neurons),
                "time_bin_start": ("time_bin", [50]), "time_bin_end": ("time_bin", [150])})


def test_in_memory_assembly_without_stimulus_set_says_how_to_attach_one():
    benchmark = NeuralBenchmark("Mine.V4-pls", 1, _recordings(), similarity_metric=None, visual_degrees=8,
                                number_of_trials=1, ceiling_func=None, region="V4")
    with pytest.raises(brainscore.ValidationError, match=r"Mine\.V4-pls.*no stimulus set.*attach_stimulus_set"
                                                         r".*load_dataset"):
        benchmark.stimulus_set


def test_attached_stimulus_set_is_accepted(images92):
    recordings = _recordings(n_images=92)
    ids = images92["stimulus_id"].to_numpy()
    recordings = recordings.assign_coords(stimulus_id=("presentation", ids))
    benchmark = NeuralBenchmark("Mine.V4-pls", 1, attach_stimulus_set(recordings, images92), similarity_metric=None,
                                visual_degrees=8, number_of_trials=1, ceiling_func=None, region="V4")
    assert len(benchmark.stimulus_set) == 92


def test_pls_on_unique_object_names_says_how_to_turn_stratification_off():
    source = _recordings(n_neurons=30).squeeze("time_bin")  # features
    target = source.isel(neuroid=slice(0, 5))                # neurons the features contain
    metric = brainscore.load_metric("pls")
    with pytest.raises(brainscore.ValidationError, match=r"cannot stratify the splits by 'object_name': 40 of its 40 "
                                                         r"values occur only once.*'stratification_coord': None"):
        metric(source, target)
    score = brainscore.load_metric("pls", crossvalidation_kwargs={"stratification_coord": None})(source, target)
    assert float(score) > 0.99  # a target predicts itself
