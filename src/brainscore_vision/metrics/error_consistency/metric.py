"""``ErrorConsistency`` and ``cohens_kappa``: :mod:`brainscore.metrics.behavior.error_consistency` (Geirhos et al. 2020)."""
from brainscore.metrics.behavior.error_consistency import ErrorConsistency, cohens_kappa

__all__ = ["ErrorConsistency", "cohens_kappa"]
