"""``RSACeiling``: the RSA noise ceiling (Nili et al. 2014), :class:`brainscore.metrics.ceilings.rsa.RSANoiseCeiling`."""
from brainscore.metrics.ceilings.rsa import RSANoiseCeiling as RSACeiling

__all__ = ["RSACeiling"]
