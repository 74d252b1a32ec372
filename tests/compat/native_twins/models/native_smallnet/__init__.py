"""``native-smallnet``: the network of ``plugin_folder/models/compat_smallnet`` as a native brainscore plugin."""
from brainscore.registry import register_model


@register_model("native-smallnet")
def _native_smallnet(**kwargs):
    from .model import commitment

    return commitment(**kwargs)
