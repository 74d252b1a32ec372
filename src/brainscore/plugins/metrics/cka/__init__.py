"""Linear centred kernel alignment (Kornblith et al. 2019): ``cka``, ``cka_biased``, ``cka_cv``.

``cka`` is the unbiased estimator (HSIC of Song et al. 2012), Brain-Score's default since 2026;
``cka_biased`` the classic centred one; ``cka_cv`` the unbiased one on the 90 % test portion of
10 shuffle splits.
"""
from brainscore.registry import lazy, register_metric

BIBTEX = """@inproceedings{kornblith2019similarity,
  title={Similarity of neural network representations revisited},
  author={Kornblith, Simon and Norouzi, Mohammad and Lee, Honglak and Hinton, Geoffrey},
  booktitle={International Conference on Machine Learning},
  pages={3519--3529},
  year={2019}
}"""


register_metric("cka", lazy("brainscore.metrics.similarity.cka:CKAMetric", unbiased=True))
register_metric("cka_biased", lazy("brainscore.metrics.similarity.cka:CKAMetric", unbiased=False))
register_metric("cka_cv", lazy("brainscore.metrics.similarity.cka:CKACrossValidated"))
