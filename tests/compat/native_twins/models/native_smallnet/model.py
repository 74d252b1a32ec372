"""The same architecture, seed and preprocessing as ``compat_smallnet/model.py``, built natively."""
import torch

from brainscore.models.commitment import pytorch_commitment
from brainscore.models.preprocessing import Preprocessing

LAYERS = ["relu1", "relu2", "pool"]


class SmallConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv1, self.relu1 = torch.nn.Conv2d(3, 8, 5, stride=4), torch.nn.ReLU()
        self.conv2, self.relu2 = torch.nn.Conv2d(8, 16, 3, stride=2), torch.nn.ReLU()
        self.pool = torch.nn.AdaptiveAvgPool2d(4)
        self.head = torch.nn.Linear(256, 10)

    def forward(self, x):
        x = self.pool(self.relu2(self.conv2(self.relu1(self.conv1(x)))))
        return self.head(x.flatten(1))


def commitment(region_layer_map=None, device=None):
    layers = {"V1": "relu1", "V4": "relu2", "IT": "pool"}
    layers.update(region_layer_map or {})
    return pytorch_commitment("native-smallnet", SmallConvNet().eval(), LAYERS, preprocessing=Preprocessing("imagenet", 64),
                              region_layer_map=layers, behavioral_readout_layer="pool", device=device)
