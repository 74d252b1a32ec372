"""``I1``, ``I1n``, ``I2``, ``I2n``: the reference's ``i1i2`` metric module (see :mod:`.metric`)."""
from brainscore_vision.metrics.i1i2.metric import I1, I1n, I2, I2n

__all__ = ["I1", "I1n", "I2", "I2n"]
