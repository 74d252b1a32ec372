"""timm architectures (ConvNeXt, ResNet, EfficientNet, ViT).

``timm:<arch>`` is the trained network and needs a local weights file with its declared sha256;
without one, loading it fails with an error that says how to give it. The untrained (seeded)
network is a different model with its own name, ``timm:<arch>-untrained``. See :mod:`.model`.
"""
from brainscore.registry import register_model


@register_model("timm:convnext_tiny")
def _convnext_tiny(**kwargs):
    from brainscore.plugins.models.timm_models.model import commitment

    return commitment("convnext_tiny", pretrained=True, **kwargs)


@register_model("timm:convnext_tiny-untrained")
def _convnext_tiny_untrained(**kwargs):
    from brainscore.plugins.models.timm_models.model import commitment

    return commitment("convnext_tiny", pretrained=False, **kwargs)


@register_model("timm:resnet50")
def _resnet50(**kwargs):
    from brainscore.plugins.models.timm_models.model import commitment

    return commitment("resnet50", pretrained=True, **kwargs)


@register_model("timm:resnet50-untrained")
def _resnet50_untrained(**kwargs):
    from brainscore.plugins.models.timm_models.model import commitment

    return commitment("resnet50", pretrained=False, **kwargs)


@register_model("timm:efficientnet_b0")
def _efficientnet_b0(**kwargs):
    from brainscore.plugins.models.timm_models.model import commitment

    return commitment("efficientnet_b0", pretrained=True, **kwargs)


@register_model("timm:efficientnet_b0-untrained")
def _efficientnet_b0_untrained(**kwargs):
    from brainscore.plugins.models.timm_models.model import commitment

    return commitment("efficientnet_b0", pretrained=False, **kwargs)


@register_model("timm:vit_small_patch16_224")
def _vit_small_patch16_224(**kwargs):
    from brainscore.plugins.models.timm_models.model import commitment

    return commitment("vit_small_patch16_224", pretrained=True, **kwargs)


@register_model("timm:vit_small_patch16_224-untrained")
def _vit_small_patch16_224_untrained(**kwargs):
    from brainscore.plugins.models.timm_models.model import commitment

    return commitment("vit_small_patch16_224", pretrained=False, **kwargs)
