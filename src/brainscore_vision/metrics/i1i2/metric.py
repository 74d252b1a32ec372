"""Image-level behavioural consistency (Rajalingham et al. 2018): :mod:`brainscore.metrics.behavior.i1i2`."""
from brainscore.metrics.behavior.i1i2 import I1, I1n, I2, I2n

__all__ = ["I1", "I1n", "I2", "I2n"]
