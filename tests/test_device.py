"""The device is one argument, checked once where a job starts, and passed down to the model and the metrics.

No GPU here: ``cuda`` must fail at once with one clear message (worded for the Python API, the command
line adds its own ``--device`` wording), before any model, benchmark or data is loaded; ``cpu`` (torch on
the host) must reach the model's factory and every metric and ceiling, numpy staying the default.
"""
import pickle

import pytest
import torch

import brainscore
from brainscore import api, device, registry  # api bound to the real loaders before any test patches them
from brainscore.errors import ValidationError
from brainscore.metrics import device as metric_device
from benchmark_helpers import record_rdm_inputs

no_gpu = pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present")


def test_resolve_keeps_the_name_and_none_means_no_device():
    assert device.resolve(None) is None
    checked = device.resolve("cpu")
    assert checked == "cpu" and isinstance(checked, device.Device) and device.resolve(checked) is checked
    assert str(checked) == "cpu" and type(str(checked)) is str and {checked: 1}["cpu"] == 1
    assert type(pickle.loads(pickle.dumps(checked))) is str  # another process (a worker) checks it again
    assert device.resolve(torch.device("cpu")) == "cpu"
    assert device.is_cuda("cuda") and device.is_cuda("cuda:1")
    assert not device.is_cuda("cpu") and not device.is_cuda(None) and not device.is_cuda("cudax")


def test_an_unknown_device_is_an_error_worded_for_the_api_or_the_flag():
    with pytest.raises(device.DeviceError, match=r"^device='gpu0' is not a torch device .* use e.g. cpu, cuda") as caught:
        device.resolve("gpu0")
    assert caught.value.device == "gpu0" and isinstance(caught.value, ValidationError)
    assert "--device" not in str(caught.value)
    with pytest.raises(device.DeviceError, match=r"^--device gpu0 is not a torch device"):
        device.resolve("gpu0", option="--device")


@no_gpu
def test_cuda_without_a_gpu_is_one_clear_error():
    with pytest.raises(device.DeviceError) as caught:
        device.resolve("cuda:0")
    message = str(caught.value)
    assert message.startswith("device='cuda:0': torch ") and "sees no CUDA GPU on this machine" in message
    assert message.endswith("leave device=None to compute on the CPU") and "--device" not in message


@no_gpu
def test_score_asked_for_cuda_fails_once_before_any_work(monkeypatch):
    def no_work(*args, **kwargs):
        pytest.fail("a benchmark or model was loaded before the device was checked")

    monkeypatch.setattr(registry, "load_benchmark", no_work)
    monkeypatch.setattr(registry.models, "load", no_work)
    checks = []
    checked = device._checked
    monkeypatch.setattr(device, "_checked", lambda *a: checks.append(a) or checked(*a))
    with pytest.raises(device.DeviceError, match="device='cuda': .* sees no CUDA GPU"):
        brainscore.score("pixels", "Kriegeskorte2008.IT-rdm", device="cuda", bootstrap=0)
    assert checks == [("cuda", "device")]  # one check, one message


@no_gpu
def test_a_grid_asked_for_cuda_fails_before_expanding_anything(monkeypatch):
    from brainscore import runner
    from brainscore.runner import grid

    monkeypatch.setattr(grid, "expand", lambda *a, **k: pytest.fail("patterns expanded before the device check"))
    with pytest.raises(device.DeviceError, match="sees no CUDA GPU"):
        runner.pairs("pixels", "*", device="cuda")


def test_the_device_argument_reaches_the_model_and_the_metrics(monkeypatch):
    factories, checks = [], []
    checked = device._checked
    monkeypatch.setattr(device, "_checked", lambda *a: checks.append(a) or checked(*a))
    load = registry.models.load

    def loading(identifier, *args, **kwargs):
        factories.append(kwargs.get("device"))
        return load(identifier, *args, **kwargs)

    seen = record_rdm_inputs(monkeypatch)  # the model's RDM: numpy by default, torch where a device was given
    monkeypatch.setattr(registry.models, "load", loading)
    default = brainscore.score("pixels", "Kriegeskorte2008.IT-rdm", bootstrap=0)
    on_torch = brainscore.score("pixels", "Kriegeskorte2008.IT-rdm", device="cpu", bootstrap=0)
    assert checks == [("cpu", "device")]  # checked once, then passed down as checked
    assert factories == [None, "cpu"]
    assert seen == [("numpy", None), ("torch", "cpu")]
    assert metric_device.current() is None  # nothing left behind for the next job
    assert 0.05 < float(default) < 0.2
    assert float(on_torch) == pytest.approx(float(default), rel=1e-12)
    assert on_torch.attrs["provenance"]["model"]["kwargs"] == {"device": "cpu"}


def test_a_benchmark_takes_the_device_as_an_argument(monkeypatch):
    seen = record_rdm_inputs(monkeypatch)
    benchmark = brainscore.load_benchmark("Kriegeskorte2008.IT-rdm")
    model = brainscore.load_model("pixels")
    on_torch = benchmark(model, device="cpu")
    default = benchmark(model)
    assert [library for library, _ in seen] == ["torch", "numpy"]
    assert float(on_torch) == pytest.approx(float(default), rel=1e-12)
    assert float(benchmark.ceiling_on("cpu")) == pytest.approx(float(benchmark.ceiling), rel=1e-12)
