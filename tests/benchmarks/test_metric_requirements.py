"""A benchmark checks its metric's needs on its data before any activation is computed (issue 37:
``load_metric('pls')`` on data without ``object_name`` failed after 123 s of layer selection and activations)."""
from __future__ import annotations

import numpy as np
import pytest

import brainscore
from brainscore import registry
from brainscore.benchmarks.neural import NeuralBenchmark, metric_required_coords
from brainscore.data import NeuroidAssembly, attach_stimulus_set


def recordings(n_images: int = 12, n_neurons: int = 4) -> NeuroidAssembly:
    """Recordings without an ``object_name`` coordinate (what the regression metrics stratify by by default)."""
    rng = np.random.default_rng(0)
    return NeuroidAssembly(
        rng.normal(size=(n_images, n_neurons, 1)), dims=("presentation", "neuroid", "time_bin"),
        coords={"stimulus_id": ("presentation", [f"im{i}" for i in range(n_images)]),
                "neuroid_id": ("neuroid", [f"n{i}" for i in range(n_neurons)]), "region": ("neuroid", ["V4"] * n_neurons),
                "time_bin_start": ("time_bin", [70]), "time_bin_end": ("time_bin", [170])})


@pytest.fixture
def with_stimuli(images92):
    """Recordings of the 92 images, their stimulus set attached (what load_dataset gives)."""
    data = recordings(n_images=92)
    data = data.assign_coords(stimulus_id=("presentation", images92["stimulus_id"].to_numpy()))
    return attach_stimulus_set(data, images92)


class NeverRecorded:
    """A model that fails the test if the benchmark asks it for anything."""

    identifier = "never-recorded"

    def __getattr__(self, name):
        raise AssertionError(f"the benchmark asked the model for {name!r} before checking its own data")


def build(assembly, **metric_kwargs):
    return NeuralBenchmark("Mine2026.V4-pls", 1, assembly, similarity_metric=brainscore.load_metric("pls", **metric_kwargs),
                           visual_degrees=8, number_of_trials=1, ceiling_func=None, region="V4")


def test_a_metric_needing_a_coordinate_the_data_lacks_fails_when_the_benchmark_is_built():
    with pytest.raises(brainscore.ValidationError) as built:
        build(recordings())
    message = str(built.value)
    assert "\n" not in message
    assert "benchmark 'Mine2026.V4-pls' cannot score" in message and "'object_name'" in message
    assert "stratification_coord=None" in message and "stimulus_id" in message  # the data's coordinates named
    assert build(recordings(), crossvalidation_kwargs={"stratification_coord": None}).identifier == "Mine2026.V4-pls"
    assert metric_required_coords(brainscore.load_metric("pls")).keys() == {"stimulus_id", "object_name"}


def test_lazy_data_is_checked_before_the_model_is_asked_for_anything(with_stimuli):
    benchmark = build(lambda: with_stimuli)  # lazy: nothing is read while building
    with pytest.raises(brainscore.ValidationError, match="'object_name'"):
        benchmark(NeverRecorded())


def test_score_checks_before_layer_selection_and_activations(monkeypatch, with_stimuli):
    from brainscore.scoring import job

    monkeypatch.setitem(registry.benchmarks._factories, "Mine2026.V4-pls", lambda: build(lambda: with_stimuli))
    monkeypatch.setattr(job, "_commit_layer", lambda *args: pytest.fail("layer selection ran before the check"))
    with pytest.raises(brainscore.ValidationError, match="needs the data coordinate 'object_name'"):
        job.score("never-recorded", "Mine2026.V4-pls", model=NeverRecorded(), bootstrap=0)
