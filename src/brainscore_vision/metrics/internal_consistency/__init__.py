"""``InternalConsistency``: the reference's ``internal_consistency`` ceiling module (see :mod:`.ceiling`)."""
from brainscore_vision.metrics.internal_consistency.ceiling import (InternalConsistency, PearsonCorrelation,
                                                                    SpearmanBrownCorrection)

__all__ = ["InternalConsistency", "PearsonCorrelation", "SpearmanBrownCorrection"]
