"""``RDM``, ``RDMSimilarity``, ``RDMMetric``, ``RDMCrossValidated``: the reference's ``rdm`` metric module (see :mod:`.metric`)."""
from brainscore_vision.metrics.rdm.metric import RDM, RDMCrossValidated, RDMMetric, RDMSimilarity

__all__ = ["RDM", "RDMSimilarity", "RDMMetric", "RDMCrossValidated"]
