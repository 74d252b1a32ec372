"""``--device`` on the command line: metric and ceiling follow the model's device; cuda without a GPU stops at once."""
import json

import pytest
import torch

from brainscore.cli import main
from benchmark_helpers import record_rdm_inputs


def scored(capsys, *extra):
    assert main(["score", "--model", "pixels", "--benchmark", "Kriegeskorte2008.IT-rdm", "--json", "--no-record",
                 "--bootstrap", "0", *extra]) == 0
    return json.loads(capsys.readouterr().out.splitlines()[-1])


def test_score_with_device_cpu_computes_the_rdm_with_torch_and_equals_numpy(capsys, monkeypatch):
    seen = record_rdm_inputs(monkeypatch)
    default = scored(capsys)
    on_torch = scored(capsys, "--device", "cpu")
    # the model's RDM over 150,528 pixels: numpy, then torch on the CPU
    assert [library for library, _ in seen] == ["numpy", "torch"]
    assert on_torch["provenance"]["model"]["kwargs"] == {"device": "cpu"}
    assert 0.05 < default["score"] < 0.2
    for field in ("score", "raw", "ceiling"):
        assert on_torch[field] == pytest.approx(default[field], rel=1e-12)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present")
@pytest.mark.parametrize("command", [["score", "--model", "pixels", "--benchmark", "Kriegeskorte2008.IT-rdm"],
                                     ["run", "--models", "pixels", "--benchmarks", "Kriegeskorte2008.IT-rdm"]])
def test_device_cuda_without_a_gpu_is_a_clear_error_before_any_work(command, capsys, monkeypatch):
    from brainscore.runner import clusters

    monkeypatch.setattr(clusters, "connect", lambda *a, **k: pytest.fail("a cluster was started"))
    assert main([*command, "--device", "cuda"]) == 2
    err = capsys.readouterr().err
    assert "--device cuda" in err and "sees no CUDA GPU" in err and "leave out --device" in err
