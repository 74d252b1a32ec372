"""RSA noise ceiling across subjects (Nili et al. 2014): ``rsa_noise_ceiling``, alias ``rsa_ceiling``.

Input: subject RDMs stacked with dims ``("subject", "presentation", "presentation_b")``
(``brainscore.metrics.similarity.rdm.stack_rdms``), an ndarray of shape (n_subjects, n, n), or responses with
a ``subject`` coordinate on ``neuroid``. Value: the upper bound; ``attrs["lower_bound_loo"]``: the
leave-one-subject-out lower bound. ``rsa_ceiling`` is also a metric identifier, as in the reference
(whose ``load_ceiling`` is ``load_metric``).
"""
from brainscore.registry import register_ceiling, register_metric

BIBTEX = """@article{nili2014toolbox,
  title={A toolbox for representational similarity analysis},
  author={Nili, Hamed and Wingfield, Cai and Walther, Alexander and Su, Li and Marslen-Wilson, William and Kriegeskorte, Nikolaus},
  journal={PLoS Computational Biology},
  volume={10},
  number={4},
  pages={e1003553},
  year={2014}
}"""


def _rsa_noise_ceiling(*args, **kwargs):
    from brainscore.metrics.ceilings.rsa import RSANoiseCeiling

    return RSANoiseCeiling(*args, **kwargs)


register_ceiling("rsa_noise_ceiling", _rsa_noise_ceiling)
register_ceiling("rsa_ceiling", _rsa_noise_ceiling)
register_metric("rsa_ceiling", _rsa_noise_ceiling)
