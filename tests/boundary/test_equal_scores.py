"""Scores through the boundary equal today's (in-process) scores bit for bit (issue 32): the same benchmark code runs
on the same features, which cross the boundary unchanged; a layer selection runs in the trusted process with the
model server's candidate features and chooses the same layer with the same scores.

The models: the built-in ``pixels`` (an RSA benchmark), the tiny network of docs/models.md and its twin without a V4 layer
(layer selection), and ``native-smallnet`` (PLS with a ceiling, its bootstrap interval compared too); the tasks'
answers (label, probabilities with fitting stimuli, odd-one-out) are compared call by call. The reference-shaped
plugins are compared in tests/compat/test_reference_plugins.py.
"""
from __future__ import annotations

import math
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import brainscore
from brainscore import registry
from brainscore.boundary import Limits, ModelServer
from brainscore.boundary.launcher import isolation

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
EXAMPLE = REPO / "docs" / "examples" / "my_tiny_net"
TWINS = REPO / "tests" / "compat" / "native_twins"
LIMITS = Limits(memory=6 * 1024**3, wall=1200, disk=1024**3)


@pytest.fixture(scope="module")
def plugins(tmp_path_factory):
    """A plugin folder with the network of docs/models.md (``boundary-tiny``, V4 on layer "3") and its twin whose V4 is left to
    layer selection (``boundary-unmapped``), and the native twins' folder (``native-smallnet``)."""
    root = tmp_path_factory.mktemp("plugins")
    root.chmod(0o755)  # the model server runs as a user of its own (as root): it must be let in
    for name, identifier, change in (("boundary_tiny", "boundary-tiny", None),
                                     ("boundary_unmapped", "boundary-unmapped", ('"region_layer_map": {"V4": "3"}, ', ""))):
        folder = root / "models" / name
        shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__", "requirements.txt"))
        init = folder / "__init__.py"
        init.write_text(init.read_text().replace("my-tiny-net", identifier))
        if change is not None:
            model = folder / "model.py"
            text = model.read_text()
            assert change[0] in text, f"docs/examples/my_tiny_net/model.py no longer holds {change[0]!r}"
            model.write_text(text.replace(*change))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BRAINSCORE_PLUGIN_DIRS", os.pathsep.join([str(root), str(TWINS)]))
        registry._discovery.reset()
        yield root
    registry._discovery.reset()


def in_and_out(model: str, benchmark: str, bootstrap: int = 0, **kwargs):
    """The score in-process and through the boundary (same arguments), and the boundary's server."""
    here = brainscore.score(model, benchmark, bootstrap=bootstrap, **kwargs)
    with ModelServer(model, LIMITS, kwargs) as server:
        there = brainscore.score(model, benchmark, bootstrap=bootstrap, model=server.model, **kwargs)
    return here, there


def numbers(score) -> dict:
    attrs = score.attrs
    return {"score": float(score), "raw": None if attrs.get("raw") is None else float(attrs["raw"]),
            "ceiling": None if attrs.get("ceiling") is None else float(attrs["ceiling"]),
            "error": attrs.get("error"), "ci95": attrs.get("ci95"), "layers": attrs.get("layers"),
            "layer_selection": attrs.get("layer_selection"), "formula": attrs.get("formula")}


def test_the_sandbox_is_the_real_one():
    """These tests run the model server contained as a website does where this machine allows it."""
    assert isolation() in ("root", "userns", "none")
    if os.geteuid() == 0:
        assert isolation() == "root"


def test_pixels_on_an_rsa_benchmark_bit_for_bit(plugins):
    here, there = in_and_out("pixels", "Kriegeskorte2008.IT-rdm", bootstrap=20)
    assert numbers(there) == numbers(here)
    assert math.isfinite(float(here)) and float(here) != 0


def test_a_pls_benchmark_with_its_ceiling_and_bootstrap_bit_for_bit(plugins):
    here, there = in_and_out("native-smallnet", "Cowley2026.210325.V4-pls", bootstrap=20)
    assert numbers(there) == numbers(here)
    assert 0 < float(here) < 1 and here.attrs["ci95"][0] < float(here) < here.attrs["ci95"][1]
    assert there.attrs["commitment"] == here.attrs["commitment"] == {"region": "V4", "layer": "relu2",
                                                                     "method": "declared"}
    assert there.attrs["provenance"]["model"]["weights_sha256"] == here.attrs["provenance"]["model"]["weights_sha256"]


@pytest.mark.slow
def test_layer_selection_runs_trusted_and_chooses_as_in_process(plugins):
    """V4 is left to layer selection: the trusted side scores the candidate layers (their features from the model
    server) on its own selection data, keeps the curve, and tells the model the chosen layer only."""
    here, there = in_and_out("boundary-unmapped", "Cowley2026.210325.V4-pls")
    assert numbers(there) == numbers(here)
    curve = here.attrs["layer_selection"]["V4"]
    assert [layer for layer, _ in curve["scores"]] == ["1", "3", "6"] and curve["layer"] in ("1", "3", "6")
    assert there.attrs["commitment"]["method"] == "selection"
    assert there.attrs["commitment"]["benchmarks"] == here.attrs["commitment"]["benchmarks"] != []


def test_the_tasks_answers_cross_unchanged(plugins, images92):
    """Label (ImageNet), probabilities (a readout fitted on labelled images) and odd-one-out answers, call by call;
    the answer's stimulus columns are the trusted set's, never the model's."""
    from brainscore.data.stimuli import StimulusSet

    shown = StimulusSet(images92.iloc[:9].reset_index(drop=True), identifier="k92-shown",
                        stimulus_paths=images92.stimulus_paths)
    fitting = StimulusSet(images92.iloc[20:32].reset_index(drop=True), identifier="k92-fitting",
                          stimulus_paths=images92.stimulus_paths)
    fitting["image_label"] = ["animal", "object"] * 6
    triplets = StimulusSet(images92.iloc[[0, 1, 2, 3, 4, 5, 2, 7, 8]].reset_index(drop=True), identifier="k92-odd",
                           stimulus_paths=images92.stimulus_paths)
    local = brainscore.load_model("boundary-tiny")
    with ModelServer("boundary-tiny", LIMITS) as server:
        remote = server.model
        for task, fit, stimuli in (("label", "imagenet", shown), ("probabilities", fitting, shown),
                                   ("odd_one_out", None, triplets)):
            local.start_task(task, fit)
            remote.start_task(task, fit)
            here, there = local.look_at(stimuli), remote.look_at(stimuli)
            assert there.dims == here.dims and np.array_equal(np.asarray(there.values), np.asarray(here.values)), task
            for name in ("stimulus_id", "choice", "label_name", "odd_one_out_id"):
                if name in here.coords:
                    assert np.asarray(there[name].values).tolist() == np.asarray(here[name].values).tolist(), name
        local.start_recording("IT", [(70, 170)])
        remote.start_recording("IT", [(70, 170)])
        here, there = local.look_at(shown), remote.look_at(shown)
        assert np.array_equal(there.values, here.values) and there.values.dtype == np.float32
        for column in shown.columns:  # the trusted set's columns, in the same order of presentations
            assert np.asarray(there[column].values).tolist() == np.asarray(here[column].values).tolist()


def test_brainscore_score_sandbox_on_the_command_line(plugins, capsys):
    import json

    from brainscore.cli import main

    assert main(["score", "--model", "pixels", "--benchmark", "Kriegeskorte2008.IT-rdm", "--bootstrap", "0",
                 "--json", "--no-record"]) == 0
    here = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert main(["score", "--model", "pixels", "--benchmark", "Kriegeskorte2008.IT-rdm", "--bootstrap", "0",
                 "--json", "--no-record", "--sandbox"]) == 0
    there = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert there["score"] == here["score"] and there["raw"] == here["raw"]


def test_brainscore_run_sandbox_puts_model_calls_through_the_boundary(plugins):
    """``brainscore run --sandbox``: the score task on a worker runs its model in a sandboxed model server."""
    from distributed import Client, LocalCluster

    from brainscore import runner

    pairs = runner.pairs("pixels", "Kriegeskorte2008.IT-rdm")
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address="127.0.0.1:0") as cluster, \
            Client(cluster) as client:
        (summary,) = runner.run(pairs, client, progress=False, sandbox=LIMITS)
    assert summary["status"] == "done", summary
    assert summary["score"] == float(brainscore.score("pixels", "Kriegeskorte2008.IT-rdm", bootstrap=0))
