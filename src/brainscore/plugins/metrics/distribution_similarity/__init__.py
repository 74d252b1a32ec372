"""Bootstrapped KS similarity of neuronal property distributions (Marques et al. 2021): ``ks_similarity``.

Factories take the property name first: ``load_metric("ks_similarity", "or_bandwidth")``; the
resamples are seeded (``random_state=0``; ``random_state=None`` draws from numpy's global generator
as the reference does). The ``ks_similarity`` ceiling compares the data with themselves.
"""
from brainscore.registry import lazy, register_ceiling, register_metric

BIBTEX = """@article{marques2021multi,
  title={Multi-scale hierarchical neural network models that bridge from single neurons in the primate primary visual cortex to object recognition behavior},
  author={Marques, Tiago and Schrimpf, Martin and DiCarlo, James J},
  journal={bioRxiv},
  pages={2021.03.01.433495},
  year={2021}
}"""


register_metric("ks_similarity", lazy("brainscore.metrics.neural.distribution_similarity:KSSimilarity"))
register_ceiling("ks_similarity", lazy("brainscore.metrics.neural.distribution_similarity:KSSimilarityCeiling"))
