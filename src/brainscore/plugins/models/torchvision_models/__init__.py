"""torchvision architectures (AlexNet, VGG, ResNet, ConvNeXt, DenseNet, MobileNet, EfficientNet, ViT).

``torchvision:<arch>`` is the ImageNet-trained network and needs its weights file (hash checked):
without one, loading it fails with an error that says where to put the file. The untrained
(seeded) network is a different model with its own name, ``torchvision:<arch>-untrained``.
See :mod:`.model`.
"""
from brainscore.registry import lazy, register_model

_COMMITMENT = "brainscore.plugins.models.torchvision_models.model:commitment"
"""What each identifier builds (imported when it is loaded, never at registration): ``commitment(arch, pretrained=...)``."""

register_model("torchvision:alexnet", lazy(_COMMITMENT, "alexnet", pretrained=True))
register_model("torchvision:alexnet-untrained", lazy(_COMMITMENT, "alexnet", pretrained=False))
register_model("torchvision:vgg16", lazy(_COMMITMENT, "vgg16", pretrained=True))
register_model("torchvision:vgg16-untrained", lazy(_COMMITMENT, "vgg16", pretrained=False))
register_model("torchvision:vgg19", lazy(_COMMITMENT, "vgg19", pretrained=True))
register_model("torchvision:vgg19-untrained", lazy(_COMMITMENT, "vgg19", pretrained=False))
register_model("torchvision:resnet18", lazy(_COMMITMENT, "resnet18", pretrained=True))
register_model("torchvision:resnet18-untrained", lazy(_COMMITMENT, "resnet18", pretrained=False))
register_model("torchvision:resnet34", lazy(_COMMITMENT, "resnet34", pretrained=True))
register_model("torchvision:resnet34-untrained", lazy(_COMMITMENT, "resnet34", pretrained=False))
register_model("torchvision:resnet50", lazy(_COMMITMENT, "resnet50", pretrained=True))
register_model("torchvision:resnet50-untrained", lazy(_COMMITMENT, "resnet50", pretrained=False))
register_model("torchvision:resnet101", lazy(_COMMITMENT, "resnet101", pretrained=True))
register_model("torchvision:resnet101-untrained", lazy(_COMMITMENT, "resnet101", pretrained=False))
register_model("torchvision:convnext_tiny", lazy(_COMMITMENT, "convnext_tiny", pretrained=True))
register_model("torchvision:convnext_tiny-untrained", lazy(_COMMITMENT, "convnext_tiny", pretrained=False))
register_model("torchvision:densenet121", lazy(_COMMITMENT, "densenet121", pretrained=True))
register_model("torchvision:densenet121-untrained", lazy(_COMMITMENT, "densenet121", pretrained=False))
register_model("torchvision:mobilenet_v2", lazy(_COMMITMENT, "mobilenet_v2", pretrained=True))
register_model("torchvision:mobilenet_v2-untrained", lazy(_COMMITMENT, "mobilenet_v2", pretrained=False))
register_model("torchvision:efficientnet_b0", lazy(_COMMITMENT, "efficientnet_b0", pretrained=True))
register_model("torchvision:efficientnet_b0-untrained", lazy(_COMMITMENT, "efficientnet_b0", pretrained=False))
register_model("torchvision:vit_b_16", lazy(_COMMITMENT, "vit_b_16", pretrained=True))
register_model("torchvision:vit_b_16-untrained", lazy(_COMMITMENT, "vit_b_16", pretrained=False))
