"""The network of the ``compat-smallnet`` plugin: fixed (seeded) random weights, 64-pixel inputs.

conv(3->8, k5, stride 4) -> ReLU -> conv(8->16, k3, stride 2) -> ReLU -> average-pool to 4x4 -> linear(256 -> 10);
at 64 px the recorded layers have 1,800 (``relu1``), 784 (``relu2``) and 256 (``pool``) units.
"""
import functools

import torch

from brainscore_vision.model_helpers.activations.pytorch import PytorchWrapper, load_preprocess_images

LAYERS = ['relu1', 'relu2', 'pool']
IMAGE_SIZE = 64


class SmallConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)  # the weights: the same in every process
        self.conv1, self.relu1 = torch.nn.Conv2d(3, 8, 5, stride=4), torch.nn.ReLU()
        self.conv2, self.relu2 = torch.nn.Conv2d(8, 16, 3, stride=2), torch.nn.ReLU()
        self.pool = torch.nn.AdaptiveAvgPool2d(4)
        self.head = torch.nn.Linear(256, 10)

    def forward(self, x):
        x = self.pool(self.relu2(self.conv2(self.relu1(self.conv1(x)))))
        return self.head(x.flatten(1))


def get_model(name):
    assert name == 'compat-smallnet'
    preprocessing = functools.partial(load_preprocess_images, image_size=IMAGE_SIZE)
    wrapper = PytorchWrapper(identifier=name, model=SmallConvNet().eval(), preprocessing=preprocessing)
    return wrapper
