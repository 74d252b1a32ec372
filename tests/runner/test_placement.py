"""Where a GPU run's tasks compute (issue 24): forward passes on MODEL, gaining kernels on GPU, the rest on CPU.

No GPU here: the cluster's layout is faked with ``gpus=1`` and the run's device left None, so every
task computes on the CPU while asking for the resources it would on a GPU node.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from brainscore.runner import clusters
from brainscore.runner.placement import CROSSOVER, GPU_GAIN, Placement, gains_on_gpu, kernel_of, place

LOCAL = {"MODEL", "GPU", "CPU"}                              # a GPU node's LocalCluster (worker_layout)


def test_the_crossover_is_the_issues_measurements():
    """Ridge 30x, RDM 10.5x and PLS 2.9x go to the GPU; the split-half ceiling 1.7x and CKA 1.0x stay."""
    assert [k for k in ("ridge", "rdm", "pls", "internal_consistency", "cka") if gains_on_gpu(k)] == ["ridge", "rdm", "pls"]
    assert GPU_GAIN["pls"] == 2.9 and CROSSOVER == 2.0
    assert not gains_on_gpu(None) and not gains_on_gpu("neuron_to_neuron")   # not measured: the CPU


def test_forward_passes_ask_for_the_model_slot():
    assert place("select", "cuda", True, LOCAL) == Placement({"MODEL": 1}, "cuda")
    assert place("activations", "cuda", True, LOCAL) == Placement({"MODEL": 1}, "cuda")
    # a batch system's GPU workers advertise only GPU=1; a CPU node's worker 0 MODEL; an existing cluster nothing
    assert place("select", "cuda", True, {"GPU"}) == Placement({"GPU": 1}, "cuda")
    assert place("select", None, False, {"MODEL"}) == Placement({"MODEL": 1}, None)
    assert place("select", None, False, set()) == Placement(None, None)


@pytest.mark.parametrize("kernel", ["pls", "ridge", "rdm"])
def test_kernels_that_gain_compute_on_the_gpu_slot(kernel):
    assert place("ceiling", "cuda", True, LOCAL, kernel) == Placement({"GPU": 1}, "cuda")
    assert place("score", "cuda", True, LOCAL, kernel) == Placement({"GPU": 1}, "cuda", "cuda")


@pytest.mark.parametrize("kernel", ["cka", None])
def test_other_kernels_compute_with_numpy_and_their_ceilings_on_cpu_workers(kernel):
    """The ceiling goes to a CPU worker (GPUs hidden) with numpy; the score reads the GPU's activations
    on the GPU slot but computes its metric with numpy, so its ceiling is the one the CPU worker cached."""
    assert place("ceiling", "cuda", True, LOCAL, kernel) == Placement({"CPU": 1}, None)
    assert place("score", "cuda", True, LOCAL, kernel) == Placement({"GPU": 1}, None, "cuda")
    assert place("ceiling", "cuda", True, {"GPU"}, kernel) == Placement(None, None)   # no CPU workers: any


def test_without_gpus_nothing_moves():
    assert place("ceiling", "cpu", False, {"MODEL"}, "pls") == Placement(None, "cpu")
    assert place("score", None, False, {"MODEL"}, "pls") == Placement(None, None, None)
    with pytest.raises(ValueError, match="unknown stage"):
        place("train", None, False, set())


def test_kernel_of_real_benchmarks():
    from brainscore import registry

    kernels = {b: kernel_of(registry.load_benchmark(b).metric)
               for b in ("Cowley2026.210325.V4-pls", "Kriegeskorte2008.IT-rdm", "Geirhos2021edge-top1")}
    assert kernels == {"Cowley2026.210325.V4-pls": "pls", "Kriegeskorte2008.IT-rdm": "rdm", "Geirhos2021edge-top1": None}


def test_a_gpu_run_sends_each_stage_to_its_worker(tmp_path, monkeypatch):
    """On a faked one-GPU node of 3 workers: selection and activations on the MODEL worker, scores and
    the PLS and RDM ceilings on the GPU worker, the behavioural benchmark's ceiling on the CPU worker."""
    from distributed import Client, get_task_stream

    from brainscore import runner

    tests = Path(__file__).resolve().parent.parent
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tests), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    import runner_helpers  # noqa: F401

    cluster = clusters.local_cluster(3, gpus=1, preload=["runner_helpers"])
    try:
        client = Client(cluster)
        try:
            names = {address: info["name"] for address, info in client.scheduler_info(n_workers=-1)["workers"].items()}
            with get_task_stream(client) as stream:
                results = runner.run(runner.pairs("tiny-seeded", "Kriegeskorte2008.IT-rdm,Cowley2026.210325.V4-pls,"
                                                                 "Geirhos2021edge-top1"), client, progress=False, gpu=True)
        finally:
            client.close()
    finally:
        cluster.close()
    assert [r["status"] for r in results] == ["done"] * 3, [r.get("log") for r in results]
    ran_on: dict[tuple, set] = {}
    for task in stream.data:
        key = task["key"]
        ran_on.setdefault(key[0] if key[0] != "brainscore-ceiling" else key, set()).add(names[task["worker"]])
    assert ran_on["brainscore-select"] == ran_on["brainscore-activations"] == {0}
    assert ran_on["brainscore-score"] == {1}
    ceilings = {key[-1]: workers for key, workers in ran_on.items() if isinstance(key, tuple)}
    assert ceilings == {"Kriegeskorte2008.IT-rdm": {1}, "Cowley2026.210325.V4-pls": {1}, "Geirhos2021edge-top1": {2}}
