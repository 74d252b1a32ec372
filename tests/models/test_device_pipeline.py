"""The host side of a GPU run (issue 24): pinned, non-blocking copies, batches sized to the card, the PCA on the device.

No GPU here: the CUDA branch is taken with stand-ins (a fake tensor that records how it was copied,
a fake card's memory), and the torch paths run on the CPU, where they give the numpy numbers.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from brainscore import device as devices
from brainscore.models import candidates
from brainscore.models.extraction import ActivationsExtractor
from brainscore.models.extraction import pytorch as extraction
from brainscore.models.preprocessing import Preprocessing

PRE = Preprocessing("imagenet", 20)


class _RecordingTensor:
    """Stands in for a host tensor: records the copy calls made on it."""

    def __init__(self, calls):
        self.calls = calls

    def pin_memory(self):
        self.calls.append("pin_memory")
        return self

    def to(self, device, non_blocking=False):
        self.calls.append(("to", str(device), non_blocking))
        return self


def test_a_copy_to_a_gpu_is_pinned_and_non_blocking():
    calls = []
    devices.host_to_device(_RecordingTensor(calls), torch.device("cuda:0"))
    assert calls == ["pin_memory", ("to", "cuda:0", True)]
    calls.clear()
    devices.host_to_device(_RecordingTensor(calls), "cpu")
    assert calls == [("to", "cpu", False)]                               # on the CPU: nothing pinned


def test_on_the_cpu_the_copy_is_the_tensor_itself():
    batch = torch.arange(12.0).reshape(3, 4)
    assert devices.host_to_device(batch, "cpu") is batch


def test_batches_are_sized_to_the_cards_memory():
    gib = 1 << 30
    assert devices.gpu_batch_size(8 * gib) == 64                        # the floor
    assert devices.gpu_batch_size(24 * gib) == 128                      # 192 images fit: the power of two below
    assert devices.gpu_batch_size(80 * 10 ** 9) == 512                  # an H100: the ceiling
    with pytest.raises(ValueError, match="positive"):
        devices.gpu_batch_size(0)


def test_an_extractor_on_a_cuda_device_takes_its_batch_from_the_card(tiny_net, monkeypatch):
    """torch.device("cuda") needs no GPU to exist; the card's memory is faked."""
    class Properties:
        total_memory = 80 * 10 ** 9

    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: Properties())
    assert ActivationsExtractor(tiny_net, "tiny", PRE, device="cuda").batch_size == 512
    assert ActivationsExtractor(tiny_net, "tiny", PRE, device="cuda", batch_size=7).batch_size == 7
    assert ActivationsExtractor(tiny_net, "tiny", PRE).batch_size == extraction.DEFAULT_BATCH_SIZE


def test_every_batch_goes_through_the_pinned_copy_and_the_numbers_stay(tiny_net, stimuli, monkeypatch, tmp_path):
    plain = ActivationsExtractor(tiny_net, "tiny", PRE, batch_size=3)(stimuli, ["features.2"]).values
    seen = []
    original = devices.host_to_device

    def spy(tensor, device):
        seen.append((tuple(tensor.shape), str(device)))
        return original(tensor, device)

    monkeypatch.setattr(devices, "host_to_device", spy)
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "other-home"))   # computed again, not read from the cache
    again = ActivationsExtractor(tiny_net, "tiny", PRE, batch_size=3)(stimuli, ["features.2"]).values
    assert [shape[0] for shape, _ in seen] == [3, 3, 1] and {d for _, d in seen} == {"cpu"}
    np.testing.assert_array_equal(again, plain)


def test_the_selection_pca_on_torch_equals_numpy():
    rng = np.random.default_rng(0)
    latent = rng.standard_normal((150, 30)) * np.linspace(10, 1, 30)     # distinct eigenvalues
    features = (latent @ rng.standard_normal((30, 2000)) + 0.1 * rng.standard_normal((150, 2000)) + 3).astype(np.float32)
    # the 30 signal components (the noise's eigenvalues are nearly equal: their vectors are not determined)
    expected = candidates.gram_pca(features, 30, block_bytes=150 * 4 * 300)   # several column blocks
    got = candidates.gram_pca(features, 30, block_bytes=150 * 4 * 300, device="cpu")
    assert got.shape == expected.shape == (150, 30) and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    from sklearn.decomposition import PCA
    reference = PCA(30, svd_solver="full").fit_transform(features.astype(np.float64))
    np.testing.assert_allclose(np.abs(got), np.abs(reference), rtol=1e-3, atol=1e-3 * np.abs(reference).max())


def test_the_selection_pca_copies_each_block_through_the_pinned_path(monkeypatch):
    seen = []
    original = devices.host_to_device
    monkeypatch.setattr(devices, "host_to_device", lambda tensor, device: seen.append(tensor.shape) or original(tensor, device))
    features = np.random.default_rng(1).standard_normal((20, 100)).astype(np.float32)
    candidates.gram_pca(features, 5, block_bytes=20 * 4 * 40, device="cpu")
    assert [shape[1] for shape in seen] == [40, 40, 20]


def test_layer_selection_runs_its_pca_on_the_models_device(monkeypatch):
    """A model on a GPU has its selection PCA on the GPU (gram_pca's device path), and those entries are cached
    apart from the CPU's; a CPU model keeps the numpy path and its cache keys unchanged (issue 24)."""
    from types import SimpleNamespace
    from brainscore.models import candidates as candidates_module

    seen = []

    def spy(matrix, n_components, device=None, **kwargs):
        seen.append(device)
        return np.zeros((matrix.shape[0], n_components), dtype=np.float32)

    monkeypatch.setattr(candidates_module, "gram_pca", spy)
    matrix = np.ones((6, 20), dtype=np.float32)
    on_gpu = SimpleNamespace(identifier="m", activations_model=SimpleNamespace(device_type="cuda", device=torch.device("cuda:0")))
    on_cpu = SimpleNamespace(identifier="m", activations_model=SimpleNamespace(device_type="cpu", device=torch.device("cpu")))
    gpu_view = candidates_module.LayerCandidates(on_gpu, ["a"], n_components=4)
    cpu_view = candidates_module.LayerCandidates(on_cpu, ["a"], n_components=4)
    assert gpu_view._entry(matrix)["scores"].shape == (6, 4)
    cpu_view._entry(matrix)
    assert seen == ["cuda:0", None]
    path = Path("/nonexistent/abc123.npy")
    assert gpu_view._selection_entry(path) != cpu_view._selection_entry(path)
    assert cpu_view._pca_key() == {}
