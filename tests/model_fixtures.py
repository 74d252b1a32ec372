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
