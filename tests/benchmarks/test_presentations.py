"""A benchmark says what it will show a model (its stimuli, placed on the model's screen) without running it, and
its experiment shows exactly that; the runner's warm-up asks it instead of stopping the experiment by raising
inside ``look_at`` (issue 20, item 5)."""
from __future__ import annotations

import pytest

import brainscore
from brainscore.benchmarks.base import Benchmark, Presentation, presentations_of
from brainscore.runner import stages


@pytest.fixture(scope="module")
def tiny():
    import runner_helpers

    return runner_helpers.MODEL


class Spy:
    """A model that forwards everything and notes each ``look_at`` (with the model's state then); ``run=False``
    refuses to run the model at all."""

    def __init__(self, model, run: bool = True):
        self._model, self._run, self.seen = model, run, []

    def __getattr__(self, name):
        return getattr(self._model, name)

    def look_at(self, stimuli, number_of_trials=1):
        if not self._run:
            raise AssertionError("presentations() ran the model")
        state = (getattr(self._model, "recording_target", None), getattr(self._model, "task", None))
        self.seen.append((list(map(str, stimuli["stimulus_id"])), [str(p) for p in stimuli.paths()],
                          number_of_trials, state))
        return self._model.look_at(stimuli, number_of_trials=number_of_trials)


def _shown(presentation: Presentation) -> tuple:
    stimuli = presentation.stimuli
    return list(map(str, stimuli["stimulus_id"])), [str(p) for p in stimuli.paths()], presentation.number_of_trials


@pytest.mark.parametrize("identifier, region, placed", [("Kiani2007.IT-rdm", "IT", True),
                                                       ("Geirhos2021edge-top1", None, True),
                                                       ("Hermann2020cueconflict-shape_bias", None, False)])
def test_presentations_are_what_the_experiment_shows_without_running_the_model(tiny, identifier, region, placed):
    instance = brainscore.load_benchmark(identifier)
    said = instance.presentations(Spy(brainscore.load_model(tiny), run=False))
    assert [type(p) for p in said] == [Presentation] and said[0].region == region
    assert (said[0].task is None) == (region is not None)
    files = {str(p) for p in instance.stimulus_set.paths()}
    assert (not files & set(_shown(said[0])[1])) == placed  # placed on the model's screen: other files
    spy = Spy(brainscore.load_model(tiny))
    instance(spy)
    assert [seen[:3] for seen in spy.seen] == [_shown(p) for p in said]


def test_a_benchmark_that_does_not_say_is_left_to_its_score(tiny, monkeypatch):
    assert Benchmark.presentations(brainscore.load_benchmark("Kiani2007.IT-rdm"), None) is None
    monkeypatch.setattr(type(brainscore.load_benchmark("Kiani2007.IT-rdm")), "presentations", lambda self, c: None)
    out = stages.warm_activations(tiny, "Kiani2007.IT-rdm", {})
    assert out["ok"] and "does not say what it shows" in out["note"]


def test_an_experiment_overridden_below_its_presentations_says_nothing(tiny):
    instance = brainscore.load_benchmark("Kiani2007.IT-rdm")
    model = Spy(brainscore.load_model(tiny), run=False)
    assert len(presentations_of(instance, model)) == 1

    class OwnExperiment(type(instance)):
        def __call__(self, candidate):
            return 0.5

    mine = object.__new__(OwnExperiment)
    mine.__dict__.update(instance.__dict__)
    assert presentations_of(mine, model) is None and presentations_of(object(), model) is None


def test_the_warm_up_shows_every_presentation_and_leaves_the_score_nothing_to_extract(tiny):
    benchmark = "Geirhos2021silhouette-top1"
    out = stages.warm_activations(tiny, benchmark, {})
    assert out["ok"] and out["presentations"] == 1 and "note" not in out
    model = brainscore.load_model(tiny)
    brainscore.load_benchmark(benchmark)(model)
    assert model.activations_model.forward_passes == 0
