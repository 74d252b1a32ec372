"""Image-level behavioural consistency (Rajalingham, Issa et al. 2018): ``i1``, ``i1n``, ``i2``, ``i2n``.

Ceilings ``i2n`` and ``i1n``: split-half consistency of the human d' (no Spearman-Brown), on the
same seeded halves as the metric; ``skipna=True`` as the Rajalingham2018 benchmarks call it.
"""
from brainscore.registry import register_ceiling, register_metric

BIBTEX = """@article{rajalingham2018large,
  title={Large-scale, high-resolution comparison of the core visual object recognition behavior of humans, monkeys, and state-of-the-art deep artificial neural networks},
  author={Rajalingham, Rishi and Issa, Elias B and Bashivan, Pouya and Kar, Kohitij and Schmidt, Kailyn and DiCarlo, James J},
  journal={Journal of Neuroscience},
  volume={38},
  number={33},
  pages={7255--7269},
  year={2018}
}"""


@register_ceiling("i2n")
def _i2n_ceiling(**kwargs):
    from brainscore.metrics.behavior.i1i2 import i2n_ceiling

    return i2n_ceiling(**kwargs)


@register_ceiling("i1n")
def _i1n_ceiling(**kwargs):
    from brainscore.metrics.behavior.i1i2 import i1n_ceiling

    return i1n_ceiling(**kwargs)


@register_metric("i1")
def _i1(**kwargs):
    from brainscore.metrics.behavior.i1i2 import I1

    return I1(**kwargs)


@register_metric("i1n")
def _i1n(**kwargs):
    from brainscore.metrics.behavior.i1i2 import I1n

    return I1n(**kwargs)


@register_metric("i2")
def _i2(**kwargs):
    from brainscore.metrics.behavior.i1i2 import I2

    return I2(**kwargs)


@register_metric("i2n")
def _i2n(**kwargs):
    from brainscore.metrics.behavior.i1i2 import I2n

    return I2n(**kwargs)
