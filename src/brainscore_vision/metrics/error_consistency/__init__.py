"""``ErrorConsistency``: the reference's ``error_consistency`` metric module (see :mod:`.metric`)."""
from brainscore_vision.metrics.error_consistency.metric import ErrorConsistency, cohens_kappa

__all__ = ["ErrorConsistency", "cohens_kappa"]
