"""Helpers shared by the model tests: a tiny network and small image files."""
from __future__ import annotations

import numpy as np
import torch
from PIL import Image

from brainscore.data import StimulusSet


class TinyNet(torch.nn.Module):
    """conv(3->4, k3, stride 2) -> ReLU -> avg-pool to 2x2 -> linear(16 -> 5)."""

    def __init__(self, seed: int = 0):
        super().__init__()
        torch.manual_seed(seed)
        self.features = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, stride=2), torch.nn.ReLU(),
                                            torch.nn.AdaptiveAvgPool2d(2))
        self.head = torch.nn.Linear(16, 5)
        self.images_seen = 0

    def forward(self, x):
        self.images_seen += x.shape[0]
        return self.head(self.features(x).flatten(1))


class SmallConvNet(torch.nn.Module):
    """conv(3->8, k5, stride 4) -> ReLU -> conv(8->16, k3, stride 2) -> ReLU -> avg-pool to 4x4 -> linear(256 -> 10).

    At 64 px the layers have 1,800 (``relu1``), 784 (``relu2``) and 256 (``pool``) units: one wider
    than layer selection's 1000 principal components, two kept as they are, all wider than PLS's 25.
    """

    def __init__(self, seed: int = 0):
        super().__init__()
        torch.manual_seed(seed)
        self.conv1, self.relu1 = torch.nn.Conv2d(3, 8, 5, stride=4), torch.nn.ReLU()
        self.conv2, self.relu2 = torch.nn.Conv2d(8, 16, 3, stride=2), torch.nn.ReLU()
        self.pool = torch.nn.AdaptiveAvgPool2d(4)
        self.head = torch.nn.Linear(256, 10)

    def forward(self, x):
        x = self.pool(self.relu2(self.conv2(self.relu1(self.conv1(x)))))
        return self.head(x.flatten(1))


def make_stimuli(folder, n: int, size: int = 20, seed: int = 0, identifier: str = "synthetic") -> StimulusSet:
    """``n`` random RGB PNG files with ids ``s00``… and a ``category`` column."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        path = folder / f"s{i:02d}.png"
        Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8)).save(path)
        paths.append(path)
    return StimulusSet({"stimulus_id": [f"s{i:02d}" for i in range(n)], "category": [f"c{i % 3}" for i in range(n)],
                        "stimulus_path": [str(p) for p in paths]}, identifier=identifier)
