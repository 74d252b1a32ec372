"""``brainscore.metrics.rdm.RDM``: the 2019 README's name for the RDM metric (Kriegeskorte et al. 2008).

``RDM()(assembly1=..., assembly2=...)`` is :class:`brainscore.metrics.similarity.rdm.RDMMetric`
(registered as ``rdm``): the Spearman correlation of the two correlation-distance RDMs. The README
printed a score with ``aggregation`` center and error (``[1., 0.]`` for data against themselves);
here the score is a scalar (``1.0``; no error, as the metric is not cross-validated).
``RDMCrossValidated`` is ``rdm_cv``.

>>> from brainscore.metrics.rdm import RDM
>>> metric = RDM()
"""
from brainscore.metrics.similarity.rdm import RDMCrossValidated, RDMMetric

__all__ = ["RDM", "RDMMetric", "RDMCrossValidated"]


class RDM(RDMMetric):
    """The RDM metric under its 2019 name: ``RDM()(assembly1=model_or_data, assembly2=data) -> Score``."""
