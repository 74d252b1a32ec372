"""The tiny network of docs/models.md as a model plugin, ``my-tiny-net``: zip this folder and submit it
(``brainscore submit docs/examples/my_tiny_net --server URL``)."""
from brainscore.registry import register_model


@register_model("my-tiny-net")
def _my_tiny_net(**kwargs):
    from .model import commitment

    return commitment("my-tiny-net", **kwargs)
