"""Provenance: what a score was computed from; its key changes exactly when the computation does."""
from __future__ import annotations

import copy
import hashlib

import pytest

import brainscore
from brainscore.scoring import job
from brainscore.scoring.provenance import provenance_key

BENCHMARK = "Kiani2007.IT-rdm"  # pixels on it takes seconds


@pytest.fixture(scope="module")
def scored():
    first = brainscore.score("pixels", BENCHMARK, bootstrap=200)
    second = brainscore.score("pixels", BENCHMARK, bootstrap=200)
    return first, second


def test_provenance_has_what_the_score_was_computed_from(scored, shared_data):
    provenance = scored[0].attrs["provenance"]
    assert provenance["code"]["brainscore"] == brainscore.__version__
    assert set(provenance["environment"]) >= {"python", "numpy", "scipy", "xarray", "scikit-learn", "torch", "device"}
    assert provenance["host"]["threads"] >= 1
    assert provenance["model"]["identifier"] == "pixels" and provenance["model"]["weights_sha256"]
    assert provenance["benchmark"] == {**provenance["benchmark"], "identifier": BENCHMARK, "version": 1}
    files = provenance["benchmark"]["data_files"]
    path = "kriegeskorte2008/92_modelRDMs.mat"
    assert files[path] == hashlib.sha256((shared_data / path).read_bytes()).hexdigest()
    assert "RDMMetric" in provenance["metric"] and "dtype" in provenance["metric"]
    assert provenance["formula"] == "raw" and provenance["bootstrap"] == {
        "resamples": 200, "seed": 0, "unit": "stimulus", "method": provenance["bootstrap"]["method"]}
    assert provenance["start"] < provenance["end"] and provenance["duration_s"] > 0


def test_equal_provenance_means_equal_scores(scored):
    first, second = scored
    assert first.attrs["provenance"]["start"] != second.attrs["provenance"]["start"]
    assert provenance_key(first.attrs["provenance"]) == provenance_key(second.attrs["provenance"])
    assert float(first) == float(second) and first.attrs["ci95"] == second.attrs["ci95"]
    assert first.attrs["error"] == second.attrs["error"]


def test_another_seed_is_another_computation(scored):
    other = brainscore.score("pixels", BENCHMARK, bootstrap=200, bootstrap_seed=1)
    assert provenance_key(other.attrs["provenance"]) != provenance_key(scored[0].attrs["provenance"])
    assert float(other) == float(scored[0]) and other.attrs["ci95"] != scored[0].attrs["ci95"]


def test_other_weights_are_another_computation(scored, monkeypatch):
    load = job.load_model

    def retrained(identifier, **kwargs):
        model = load(identifier, **kwargs)
        # what a model with other weights reports (weights_hash is a read-only property)
        monkeypatch.setattr(type(model), "weights_hash", property(lambda self: "f" * 64))
        return model

    monkeypatch.setattr(job, "load_model", retrained)
    other = brainscore.score("pixels", BENCHMARK, bootstrap=200)
    assert other.attrs["provenance"]["model"]["weights_sha256"] == "f" * 64
    assert provenance_key(other.attrs["provenance"]) != provenance_key(scored[0].attrs["provenance"])


@pytest.mark.parametrize("section, change", [
    ("benchmark", lambda p: p["benchmark"]["data_files"].update({"kriegeskorte2008/92_modelRDMs.mat": "0" * 64})),
    ("code", lambda p: p["code"].update(git_commit="0" * 40)),
    ("code", lambda p: p["code"].update(git_dirty=not p["code"]["git_dirty"])),
    ("environment", lambda p: p["environment"].update(numpy="0.0")),
    ("bootstrap", lambda p: p["bootstrap"].update(seed=7)),
    ("benchmark", lambda p: p["benchmark"].update(version=2)),
    ("metric", lambda p: p.update(metric=p["metric"].replace("float32", "float64"))),
])
def test_key_changes_with_data_code_versions_seed(scored, section, change):
    provenance = copy.deepcopy(scored[0].attrs["provenance"])
    change(provenance)
    assert provenance_key(provenance) != provenance_key(scored[0].attrs["provenance"]), section


@pytest.mark.parametrize("change", [
    lambda p: p.update(start="2030-01-01T00:00:00+00:00", end="2030-01-01T00:01:00+00:00", duration_s=60.0),
    lambda p: p["host"].update(hostname="elsewhere", threads=64),
])
def test_key_ignores_time_and_host(scored, change):
    provenance = copy.deepcopy(scored[0].attrs["provenance"])
    change(provenance)
    assert provenance_key(provenance) == provenance_key(scored[0].attrs["provenance"])
    with pytest.raises(TypeError, match="must be a dict"):
        provenance_key("not a dict")


def test_layer_selection_is_recorded_in_depth_order_with_the_committed_layer():
    from types import SimpleNamespace

    model = SimpleNamespace(layers=["conv1", "layer1", "layer4"], region_layer_map={"V4": "layer1", "IT": "layer4"},
                            layer_scores={"V4": {"layer4": 0.21, "conv1": 0.1, "layer1": 0.3}})
    assert job.layer_selection_of(model) == {  # IT was given by the map: nothing selected, nothing to plot
        "V4": {"layer": "layer1", "scores": [["conv1", 0.1], ["layer1", 0.3], ["layer4", 0.21]]}}
    assert job.layer_selection_of(SimpleNamespace(region_layer_map={"V4": "x"})) == {}


def test_key_ignores_the_layer_selection_curve(scored):
    """The curve is an outcome; the committed layers it led to are in the key already (``model.layers``)."""
    provenance = copy.deepcopy(scored[0].attrs["provenance"])
    assert "layer_selection" not in provenance  # pixels commits no layer by selection
    provenance["layer_selection"] = {"IT": {"layer": "pixels", "scores": [["pixels", 0.1]]}}
    assert provenance_key(provenance) == provenance_key(scored[0].attrs["provenance"])
