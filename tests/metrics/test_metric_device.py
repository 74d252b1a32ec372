"""Metrics on a torch device (``--device``): the same numbers as numpy, on real data, and numpy stays the default.

No GPU here: the torch path is exercised on the CPU (``device="cpu"``), where it must equal the numpy path
to rounding in float64 (PLS, ridge, RDM, internal consistency, RSA ceiling, on the Cowley 2026 V4 recordings
and pooled pixels of their images); ``cuda`` without a GPU is a clear error.
"""
import numpy as np
import pytest
import torch

import brainscore
from benchmark_helpers import pixel_features
from brainscore.benchmarks.base import BenchmarkBase
from brainscore.errors import ValidationError
from brainscore.metrics import device as metric_device
from brainscore.metrics.ceilings.internal_consistency import InternalConsistency
from brainscore.metrics.ceilings.rsa import RSANoiseCeiling
from brainscore.metrics.kernels import regression as regression_kernels
from brainscore.metrics.neural.regression import CrossRegressedCorrelation
from brainscore.metrics.score import Score
from brainscore.metrics.similarity.rdm import RDMCrossValidated, RDMMetric, rdm

#: float64 on real data: torch on the CPU equals numpy to rounding.
RTOL = 1e-12


@pytest.fixture(scope="module")
def recordings():
    """Cowley 2026 session 210325: 640 images x 50 V4 neuroids, single trials with repetitions."""
    return brainscore.load_dataset("Cowley2026.210325").squeeze("time_bin")


@pytest.fixture(scope="module")
def averaged(recordings):
    from brainscore.data.assemblies import average_repetition

    return average_repetition(recordings)


@pytest.fixture(scope="module")
def pixels(recordings):
    """Pooled RGB pixels of the 640 images (8 x 8 x 3 = 192 features), a real deterministic "model"."""
    return pixel_features(recordings.attrs["stimulus_set"], block=14, region="V4")


@pytest.fixture
def spy(monkeypatch):
    """The array types the regression kernel was given (to prove the torch path ran)."""
    seen = []
    original = regression_kernels.cross_validated_predictions

    def recording(method, X, Y, folds, **kwargs):
        seen.append((type(X).__module__.split(".")[0], getattr(X, "dtype", None), getattr(Y, "dtype", None)))
        return original(method, X, Y, folds, **kwargs)

    monkeypatch.setattr(regression_kernels, "cross_validated_predictions", recording)
    return seen


#: Largest |r_torch - r_numpy| measured: PLS 1.7e-13; ridge (alpha 1 on raw pixel values up to 255, an
#: ill-conditioned Gram matrix that amplifies rounding) 4.7e-12.
R_ATOL = {"pls": 1e-12, "ridge": 1e-11}


@pytest.mark.parametrize("regression", ["pls", "ridge"])
def test_regression_on_torch_cpu_equals_numpy_on_real_data(regression, pixels, averaged, spy):
    metric = dict(crossvalidation_kwargs=dict(stratification_coord=None))
    numpy_score = CrossRegressedCorrelation(regression, **metric)(pixels, averaged)
    torch_score = CrossRegressedCorrelation(regression, device="cpu", **metric)(pixels, averaged)
    assert [s[0] for s in spy] == ["numpy", "torch"]
    assert spy[1][1:] == (torch.float64, torch.float64)  # the numpy path's dtypes, on the device
    assert 0.1 < float(numpy_score) < 0.6  # a real, non-trivial prediction of V4 by pixels
    atol = R_ATOL[regression]
    np.testing.assert_allclose(torch_score.attrs["raw"].values, numpy_score.attrs["raw"].values, rtol=0, atol=atol)
    assert float(torch_score) == pytest.approx(float(numpy_score), rel=0, abs=atol)
    assert float(torch_score.attrs["error"]) == pytest.approx(float(numpy_score.attrs["error"]), rel=0, abs=atol)
    for got, want in zip(torch_score.attrs["held_out"]["predictions"], numpy_score.attrs["held_out"]["predictions"]):
        assert isinstance(got, np.ndarray)  # results come back as numpy
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)  # predictions of order 1


def test_a_metric_left_at_device_none_takes_the_device_of_the_context(pixels, averaged, spy):
    metric = CrossRegressedCorrelation("pls", crossvalidation_kwargs=dict(stratification_coord=None))
    with metric_device.computing_on("cpu"):
        inside = metric(pixels, averaged)
    outside = metric(pixels, averaged)
    assert [s[0] for s in spy] == ["torch", "numpy"]
    explicit = CrossRegressedCorrelation("pls", device="cpu", crossvalidation_kwargs=dict(stratification_coord=None))
    assert float(explicit(pixels, averaged)).hex() == float(inside).hex()
    assert float(inside) == pytest.approx(float(outside), rel=RTOL)
    assert metric_device.current() is None


@pytest.mark.parametrize("metric", [RDMMetric, RDMCrossValidated])
def test_rdm_on_torch_cpu_equals_numpy_on_real_data(metric, pixels, averaged):
    options = dict(stratification_coord=None) if metric is RDMCrossValidated else {}
    numpy_score = metric(dtype=np.float64, **options)(pixels, averaged)
    torch_score = metric(dtype=np.float64, device="cpu", **options)(pixels, averaged)
    assert 0.05 < float(numpy_score) < 0.5
    assert float(torch_score) == pytest.approx(float(numpy_score), rel=RTOL)
    model_rdm = rdm(pixels)
    on_torch = rdm(pixels, device="cpu")
    assert isinstance(on_torch.values, np.ndarray)
    np.testing.assert_allclose(on_torch.values, model_rdm.values, rtol=RTOL, atol=1e-14)


def test_internal_consistency_on_torch_cpu_equals_numpy_on_real_data(recordings):
    numpy_ceiling = InternalConsistency()(recordings)
    torch_ceiling = InternalConsistency(device="cpu")(recordings)
    assert 0.5 < float(numpy_ceiling) < 1
    np.testing.assert_allclose(torch_ceiling.attrs["raw"].values, numpy_ceiling.attrs["raw"].values, rtol=RTOL)
    assert float(torch_ceiling) == pytest.approx(float(numpy_ceiling), rel=RTOL)


def test_rsa_ceiling_on_torch_cpu_equals_numpy_on_real_data():
    rdms = brainscore.load_dataset("Kriegeskorte2008.IT")
    stack = np.asarray(rdms.transpose("rdm", ...).values)
    numpy_ceiling = RSANoiseCeiling()(stack)
    torch_ceiling = RSANoiseCeiling(device="cpu")(stack)
    assert 0.3 < float(numpy_ceiling) < 1
    assert float(torch_ceiling) == pytest.approx(float(numpy_ceiling), rel=RTOL)
    assert torch_ceiling.attrs["lower_bound_loo"] == pytest.approx(numpy_ceiling.attrs["lower_bound_loo"], rel=RTOL)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present")
def test_a_benchmark_asked_for_cuda_without_a_gpu_fails_before_its_ceiling():
    calls = []
    with pytest.raises(ValidationError, match="device='cuda'.*sees no CUDA GPU.*leave device=None"):
        _Counted(calls).ceiling_on("cuda")
    with pytest.raises(ValidationError, match="device='gpu0' is not a torch device"):
        _Counted(calls).ceiling_on("gpu0")
    assert calls == [] and metric_device.current() is None


class _Counted(BenchmarkBase):
    """A benchmark whose ceiling counts how often it is computed (and records where it ran)."""

    def __init__(self, calls):
        super().__init__("test-device-ceiling", 1, self._compute, parent="test", bibtex="")
        self.calls = calls

    def _compute(self):
        self.calls.append(metric_device.current())
        return Score.of(0.5, error=0.0)

    def __call__(self, candidate):
        raise NotImplementedError


def test_a_ceiling_computed_on_a_device_is_cached_apart_from_the_numpy_one(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path))
    calls = []
    assert float(_Counted(calls).ceiling) == 0.5
    with metric_device.computing_on("cpu"):
        assert float(_Counted(calls).ceiling) == 0.5  # a fresh instance: not the numpy entry
    assert float(_Counted(calls).ceiling) == 0.5      # the numpy entry again, from the disk cache
    assert float(_Counted(calls).ceiling_on("cpu")) == 0.5  # the device as an argument: the same entry
    with metric_device.computing_on("cpu"):
        assert float(_Counted(calls).ceiling) == 0.5
    assert calls == [None, "cpu"]
    assert metric_device.current() is None
