"""Linear centred kernel alignment (Kornblith et al. 2019): ``cka``, ``cka_biased``, ``cka_cv``.

``cka`` is the unbiased estimator (HSIC of Song et al. 2012), Brain-Score's default since 2026;
``cka_biased`` the classic centred one; ``cka_cv`` the unbiased one on the 90 % test portion of
10 shuffle splits.
"""
from brainscore.registry import register_metric

BIBTEX = """@inproceedings{kornblith2019similarity,
  title={Similarity of neural network representations revisited},
  author={Kornblith, Simon and Norouzi, Mohammad and Lee, Honglak and Hinton, Geoffrey},
  booktitle={International Conference on Machine Learning},
  pages={3519--3529},
  year={2019}
}"""


@register_metric("cka")
def _cka(**kwargs):
    from brainscore.metrics.similarity.cka import CKAMetric

    return CKAMetric(unbiased=True, **kwargs)


@register_metric("cka_biased")
def _cka_biased(**kwargs):
    from brainscore.metrics.similarity.cka import CKAMetric

    return CKAMetric(unbiased=False, **kwargs)


@register_metric("cka_cv")
def _cka_cv(**kwargs):
    from brainscore.metrics.similarity.cka import CKACrossValidated

    return CKACrossValidated(**kwargs)
