"""A tiny seeded torch model registered as a plugin, for the runner's tests (workers import it with ``preload``).

``tiny-seeded`` maps every region to one layer (no layer selection) and outputs 1000 logits, so it
runs every neural, RSA and label benchmark in seconds. ``tiny-seeded-unmapped`` is the same network
with no V4 layer: V4 is chosen by layer selection among ``features.1`` (1,800 units, PCA-reduced) and
``features`` (128). ``$BRAINSCORE_TEST_FORWARD_SLEEP`` (seconds
per batch) slows its forward pass so a test can kill a worker in the middle of a task.
"""
from __future__ import annotations

import os
import time

from brainscore.registry import register_model

MODEL = "tiny-seeded"
UNMAPPED = "tiny-seeded-unmapped"


def _network():
    import torch

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.features = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 5, stride=4), torch.nn.ReLU(),
                                                torch.nn.AdaptiveAvgPool2d(4))
            self.head = torch.nn.Linear(128, 1000)

        def forward(self, x):
            delay = float(os.environ.get("BRAINSCORE_TEST_FORWARD_SLEEP", "0"))
            if delay:
                time.sleep(delay)
            return self.head(self.features(x).flatten(1))

    return Tiny().eval()


@register_model(MODEL)
def _tiny(**kwargs):
    from brainscore.models.commitment import pytorch_commitment
    from brainscore.models.preprocessing import Preprocessing

    mapping = {region: "features" for region in ("V1", "V2", "V4", "IT")}
    mapping.update(kwargs.pop("region_layer_map", None) or {})
    kwargs.setdefault("visual_degrees", 8)
    return pytorch_commitment(MODEL, _network(), ["features", "logits"], preprocessing=Preprocessing("imagenet", 64),
                              region_layer_map=mapping, behavioral_readout_layer="features", **kwargs)


@register_model(UNMAPPED)
def _tiny_unmapped(**kwargs):
    from brainscore.models.commitment import pytorch_commitment
    from brainscore.models.preprocessing import Preprocessing

    kwargs.setdefault("visual_degrees", 8)
    return pytorch_commitment(UNMAPPED, _network(), ["features.1", "features"],
                              preprocessing=Preprocessing("imagenet", 64), **kwargs)


def pretend_one_gpu() -> None:
    """Make this process's torch claim one CUDA GPU (none is there): a stand-in for a GPU worker in device checks.

    Run on a chosen Dask worker with ``client.run(runner_helpers.pretend_one_gpu, workers=[address])``.
    """
    import torch

    torch.cuda.is_available = lambda: True
    torch.cuda.device_count = lambda: 1
