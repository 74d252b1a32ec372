"""The tiny network of the README's "Models" section (untrained; seeded, so its weights and scores are
the same on every machine)."""
import torch

from brainscore.models.commitment import pytorch_commitment
from brainscore.models.preprocessing import Preprocessing


#: What the network commits to; a keyword given to :func:`commitment` replaces its entry here (``brainscore score
#: --layer`` and ``brainscore reproduce`` pass a map of regions to layers).
SETTINGS = {"region_layer_map": {"V4": "3"}, "visual_degrees": 8}


def commitment(identifier: str, **kwargs):
    """A :class:`~brainscore.models.commitment.ModelCommitment` of the tiny network, V4 on layer ``"3"``."""
    torch.manual_seed(0)
    network = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 5, stride=4), torch.nn.ReLU(),
        torch.nn.Conv2d(16, 32, 3, stride=2), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(4), torch.nn.Flatten(), torch.nn.Linear(512, 1000)).eval()
    return pytorch_commitment(identifier, network, layers=["1", "3", "6"],
                              preprocessing=Preprocessing("imagenet", 224), **{**SETTINGS, **kwargs})
