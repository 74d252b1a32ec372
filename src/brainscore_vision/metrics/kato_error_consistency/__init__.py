"""``KatoErrorConsistency``: the reference's ``kato_error_consistency`` metric module (see :mod:`.metric`)."""
from brainscore_vision.metrics.kato_error_consistency.metric import KatoErrorConsistency

__all__ = ["KatoErrorConsistency"]
