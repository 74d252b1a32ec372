"""torchvision architectures (AlexNet, VGG, ResNet, ConvNeXt, DenseNet, MobileNet, EfficientNet, ViT).

``torchvision:<arch>`` is the ImageNet-trained network and needs its weights file (hash checked):
without one, loading it fails with an error that says where to put the file. The untrained
(seeded) network is a different model with its own name, ``torchvision:<arch>-untrained``.
See :mod:`.model`.
"""
from brainscore.registry import register_model


@register_model("torchvision:alexnet")
def _alexnet(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("alexnet", pretrained=True, **kwargs)


@register_model("torchvision:alexnet-untrained")
def _alexnet_untrained(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("alexnet", pretrained=False, **kwargs)


@register_model("torchvision:vgg16")
def _vgg16(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("vgg16", pretrained=True, **kwargs)


@register_model("torchvision:vgg16-untrained")
def _vgg16_untrained(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("vgg16", pretrained=False, **kwargs)


@register_model("torchvision:vgg19")
def _vgg19(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("vgg19", pretrained=True, **kwargs)


@register_model("torchvision:vgg19-untrained")
def _vgg19_untrained(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("vgg19", pretrained=False, **kwargs)


@register_model("torchvision:resnet18")
def _resnet18(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("resnet18", pretrained=True, **kwargs)


@register_model("torchvision:resnet18-untrained")
def _resnet18_untrained(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("resnet18", pretrained=False, **kwargs)


@register_model("torchvision:resnet34")
def _resnet34(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("resnet34", pretrained=True, **kwargs)


@register_model("torchvision:resnet34-untrained")
def _resnet34_untrained(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("resnet34", pretrained=False, **kwargs)


@register_model("torchvision:resnet50")
def _resnet50(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("resnet50", pretrained=True, **kwargs)


@register_model("torchvision:resnet50-untrained")
def _resnet50_untrained(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("resnet50", pretrained=False, **kwargs)


@register_model("torchvision:resnet101")
def _resnet101(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("resnet101", pretrained=True, **kwargs)


@register_model("torchvision:resnet101-untrained")
def _resnet101_untrained(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("resnet101", pretrained=False, **kwargs)


@register_model("torchvision:convnext_tiny")
def _convnext_tiny(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("convnext_tiny", pretrained=True, **kwargs)


@register_model("torchvision:convnext_tiny-untrained")
def _convnext_tiny_untrained(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("convnext_tiny", pretrained=False, **kwargs)


@register_model("torchvision:densenet121")
def _densenet121(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("densenet121", pretrained=True, **kwargs)


@register_model("torchvision:densenet121-untrained")
def _densenet121_untrained(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("densenet121", pretrained=False, **kwargs)


@register_model("torchvision:mobilenet_v2")
def _mobilenet_v2(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("mobilenet_v2", pretrained=True, **kwargs)


@register_model("torchvision:mobilenet_v2-untrained")
def _mobilenet_v2_untrained(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("mobilenet_v2", pretrained=False, **kwargs)


@register_model("torchvision:efficientnet_b0")
def _efficientnet_b0(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("efficientnet_b0", pretrained=True, **kwargs)


@register_model("torchvision:efficientnet_b0-untrained")
def _efficientnet_b0_untrained(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("efficientnet_b0", pretrained=False, **kwargs)


@register_model("torchvision:vit_b_16")
def _vit_b_16(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("vit_b_16", pretrained=True, **kwargs)


@register_model("torchvision:vit_b_16-untrained")
def _vit_b_16_untrained(**kwargs):
    from brainscore.plugins.models.torchvision_models.model import commitment

    return commitment("vit_b_16", pretrained=False, **kwargs)
