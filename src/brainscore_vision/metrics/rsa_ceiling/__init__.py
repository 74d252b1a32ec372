"""``RSACeiling``: the reference's ``rsa_ceiling`` module (see :mod:`.ceiling`)."""
from brainscore_vision.metrics.rsa_ceiling.ceiling import RSACeiling

__all__ = ["RSACeiling"]
