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


@pytest.mark.parametrize("kind, metric, called, hint", [
    ("neural", "pls_split", "metric(features, assembly)", "load_metric('pls')"),
    ("train_test", "pls", "metric(source_train=, source_test=, target_train=, target_test=)", "load_metric('pls_split')"),
    ("rsa", "ridge_split", "metric(model_rdm, measured_rdm)", "load_metric('rdm')"),
    ("properties", "pls_split", "metric(model_properties, assembly)", "load_metric('ks_similarity')"),
    ("error_consistency", "pls_split", "metric(choices, assembly)", "load_metric('error_consistency')"),
])
def test_a_metric_of_another_kind_fails_when_the_benchmark_is_built(kind, metric, called, hint):
    """Each kind of benchmark calls its metric one way; a metric that cannot be called so (a cross-validated 'pls' in
    a train/test benchmark, a '*_split' one in a cross-validated benchmark) is refused when built, before any data is
    read or any model recorded, naming how the benchmark calls it and what to use."""
    from brainscore.benchmarks.behavioral import ErrorConsistencyBenchmark
    from brainscore.benchmarks.fixed_split import TrainTestNeuralBenchmark
    from brainscore.benchmarks.properties import PropertiesBenchmark
    from brainscore.benchmarks.rsa import RSABenchmark

    def unread():
        pytest.fail("the data were read to check the metric's signature")

    loaded = brainscore.load_metric(metric)
    build = {
        "neural": lambda: NeuralBenchmark("Mine2026.V4-pls", 1, unread, similarity_metric=loaded, visual_degrees=8,
                                          number_of_trials=1, ceiling_func=None, region="V4"),
        "train_test": lambda: TrainTestNeuralBenchmark("Mine2026.IT-pls", 1, unread, unread, loaded, 8, 1, "IT"),
        "rsa": lambda: RSABenchmark("Mine2026.IT-rdm", 1, unread, "IT", 8, similarity_metric=loaded, noise_ceiling=None),
        "properties": lambda: PropertiesBenchmark("Mine2026.V1-peak_sf", 1, unread, unread, property_func=print,
                                                  similarity_metric=loaded, ceiling_func=None, visual_degrees=4,
                                                  number_of_trials=1, region="V1"),
        "error_consistency": lambda: ErrorConsistencyBenchmark("Mine2026-error_consistency", 1, unread, 8,
                                                               metric=loaded, ceiling=print),
    }[kind]
    with pytest.raises(brainscore.ValidationError) as built:
        build()
    message = str(built.value)
    assert f"calls its metric as {called}" in message and hint in message and "cannot be called so" in message


def test_every_built_in_benchmark_passes_the_check_of_its_metric():
    """The check refuses no metric that a built-in benchmark scores with (all 27 build)."""
    built = [brainscore.load_benchmark(identifier) for identifier in brainscore.list_benchmarks()]
    assert len(built) == 27 and all(callable(b.metric) for b in built if hasattr(b, "metric"))


def test_a_train_test_benchmark_checks_the_coordinates_its_metric_declares_before_recording(with_stimuli):
    """A metric declaring ``required_coords()`` (here a train/test metric needing ``object_name``) is checked on the
    train and test recordings before the model is asked for anything."""
    from brainscore.benchmarks.fixed_split import TrainTestNeuralBenchmark

    class NeedsObjects:
        def __call__(self, source_train, source_test, target_train, target_test):
            pytest.fail("the metric ran")

        def required_coords(self):
            return {"object_name": "to fit one readout per object"}

    benchmark = TrainTestNeuralBenchmark("Mine2026.IT-split", 1, lambda: with_stimuli, lambda: with_stimuli,
                                         NeedsObjects(), 8, 1, "IT")
    with pytest.raises(brainscore.ValidationError,
                       match="'Mine2026.IT-split' cannot score.*'object_name' to fit one readout per object"):
        benchmark(NeverRecorded())
    named = with_stimuli.assign_coords(object_name=("presentation", ["car"] * 92))
    TrainTestNeuralBenchmark("Mine2026.IT-split", 1, named, named, NeedsObjects(), 8, 1, "IT").check_data()
