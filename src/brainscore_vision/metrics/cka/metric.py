"""Centred kernel alignment (Kornblith et al. 2019): :mod:`brainscore.metrics.similarity.cka`.

``CKA`` is :class:`~brainscore.metrics.similarity.cka.CKAMetric` (unbiased by default, as the
reference's ``cka``; ``unbiased=False`` is ``cka_biased``); ``CKACrossValidated`` takes the reference's
``crossvalidation_kwargs``.
"""
from brainscore.metrics.similarity.cka import CKACrossValidated
from brainscore.metrics.similarity.cka import CKAMetric as CKA

__all__ = ["CKA", "CKACrossValidated"]
