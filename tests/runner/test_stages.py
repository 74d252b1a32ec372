"""The stages warm the cache the one job reads: after them, scoring runs no image through the network."""
import pytest

import brainscore
from brainscore.runner import stages


@pytest.fixture(scope="module")
def tiny():
    import runner_helpers

    return runner_helpers.MODEL


def test_warm_activations_leaves_nothing_for_the_job_to_extract(tiny):
    benchmark = "Kiani2007.IT-rdm"
    assert stages.select_layer(tiny, "IT", {}) == {"ok": True, "layer": "features",
                                                   "duration_s": pytest.approx(0, abs=60)}
    warmed = stages.warm_activations(tiny, benchmark, {})
    assert warmed["ok"] and "note" not in warmed  # stopped at the model's first look_at
    model = brainscore.load_model(tiny)
    score = brainscore.load_benchmark(benchmark)(model)
    assert model.activations_model.forward_passes == 0
    outcome = stages.score_pair(tiny, benchmark, {})
    assert outcome.status == "done" and outcome.score == float(score)
    assert outcome.summary()["score"] == float(score) and outcome.provenance["model"]["identifier"] == tiny


def test_the_ceiling_stage_computes_the_benchmarks_ceiling():
    out = stages.compute_ceiling("Kriegeskorte2008.IT-rdm")
    assert out["ok"] and out["ceiling"] == float(brainscore.load_benchmark("Kriegeskorte2008.IT-rdm").ceiling)
    assert out["ceiling"] == pytest.approx(0.5195, abs=1e-4)  # docs/benchmarks.md's table


def test_errors_come_back_as_failures_with_their_log_instead_of_raising():
    out = stages.compute_ceiling("No.Such-benchmark")
    assert out["ok"] is False and out["failure"].startswith("UnknownIdentifierError")
    outcome = stages.score_pair("pixels", "No.Such-benchmark", {})
    assert outcome.status == "failed" and outcome.score is None and "Traceback" in outcome.log
    assert outcome.failure.startswith("UnknownIdentifierError") and outcome.summary()["failure"] == outcome.failure


def test_the_device_reaches_the_model(tiny):
    from brainscore.device import for_worker

    assert for_worker("cuda") == "cuda"  # outside a worker: unchanged
    assert for_worker(None) is None
    model = stages._model(tiny, {}, "cpu")
    assert model.activations_model.device.type == "cpu"
    outcome = stages.score_pair(tiny, "Kiani2007.IT-rdm", {}, device="cpu")
    assert outcome.status == "done"
    assert outcome.provenance["model"]["kwargs"] == {"device": "cpu"}


@pytest.mark.slow  # 3,200 selection images placed, loaded and run (8 minutes on the loaded 2-core machine)
def test_selection_warmed_per_benchmark_leaves_the_selection_only_its_metric():
    import runner_helpers
    from brainscore.scoring.selection import selection_benchmarks

    model_id = runner_helpers.UNMAPPED
    for benchmark in selection_benchmarks()["V4"]:
        out = stages.warm_selection(model_id, "V4", benchmark, {})
        assert out["ok"] and "note" not in out, out
    model = brainscore.load_model(model_id)
    layer = model.layer_for("V4")
    assert model.activations_model.forward_passes == 0  # every candidate layer was already extracted
    assert layer in ("features.1", "features") and set(model.layer_scores["V4"]) == {"features.1", "features"}
    assert stages.select_layer(model_id, "V4", {})["layer"] == layer
    # now cached: warming again does nothing, and a mapped region needs no selection either
    assert stages.warm_selection(model_id, "V4", "Cowley2026.190923.V4-pls", {})["note"] == "nothing to select"
    assert stages.warm_selection("pixels", "V4", "Cowley2026.190923.V4-pls", {})["note"] == "nothing to select"


def test_plan_finds_the_shared_stimuli_and_is_cached_by_version():
    kriegeskorte, mur = stages.plan("Kriegeskorte2008.IT-rdm"), stages.plan("Mur2013-rdm")
    assert kriegeskorte["ok"] and kriegeskorte["region"] == "IT"
    assert kriegeskorte["stimuli"] == mur["stimuli"]  # the same 92 images: one activations task for both
    assert kriegeskorte["stimuli"] != stages.plan("Cowley2026.210325.V4-pls")["stimuli"]
    # the same images placed otherwise on the model's screen are other activations: a task of their own
    assert stages.plan("Kiani2007.IT-rdm")["stimuli"] != kriegeskorte["stimuli"]  # 7 degrees, not 2.9
    hermann, geirhos, accuracy = (stages.plan(b)["stimuli"] for b in (
        "Hermann2020cueconflict-shape_bias", "Geirhos2021cueconflict-error_consistency", "Geirhos2021cueconflict-top1"))
    assert hermann != geirhos == accuracy  # Hermann 2020 shows the files unplaced; both Geirhos 2021 at 3 degrees
    version = brainscore.load_benchmark("Kriegeskorte2008.IT-rdm").version
    assert stages.cached_plan("Kriegeskorte2008.IT-rdm", version) == kriegeskorte
    assert stages.cached_plan("Kriegeskorte2008.IT-rdm", version + 1) is None
