"""RDM similarity (Kriegeskorte, Mur & Bandettini 2008): ``rdm`` and ``rdm_cv``.

``rdm``: Spearman correlation of the strict upper triangles of the two correlation-distance RDMs
(no cross-validation, no error). ``rdm_cv``: the same on the 90 % test portion of 10 shuffle
splits (stratified by ``object_name`` when present), mean with SEM error.
"""
from brainscore.registry import lazy, register_metric

BIBTEX = """@article{kriegeskorte2008representational,
  title={Representational similarity analysis -- connecting the branches of systems neuroscience},
  author={Kriegeskorte, Nikolaus and Mur, Marieke and Bandettini, Peter A},
  journal={Frontiers in Systems Neuroscience},
  volume={2},
  pages={4},
  year={2008}
}"""


register_metric("rdm", lazy("brainscore.metrics.similarity.rdm:RDMMetric"))
register_metric("rdm_cv", lazy("brainscore.metrics.similarity.rdm:RDMCrossValidated"))
