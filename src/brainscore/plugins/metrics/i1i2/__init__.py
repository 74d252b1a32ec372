"""Image-level behavioural consistency (Rajalingham, Issa et al. 2018): ``i1``, ``i1n``, ``i2``, ``i2n``.

Ceilings ``i2n`` and ``i1n``: split-half consistency of the human d' (no Spearman-Brown), on the
same seeded halves as the metric; ``skipna=True`` as the Rajalingham2018 benchmarks call it.
"""
from brainscore.registry import lazy, register_ceiling, register_metric

BIBTEX = """@article{rajalingham2018large,
  title={Large-scale, high-resolution comparison of the core visual object recognition behavior of humans, monkeys, and state-of-the-art deep artificial neural networks},
  author={Rajalingham, Rishi and Issa, Elias B and Bashivan, Pouya and Kar, Kohitij and Schmidt, Kailyn and DiCarlo, James J},
  journal={Journal of Neuroscience},
  volume={38},
  number={33},
  pages={7255--7269},
  year={2018}
}"""


register_ceiling("i2n", lazy("brainscore.metrics.behavior.i1i2:i2n_ceiling"))
register_ceiling("i1n", lazy("brainscore.metrics.behavior.i1i2:i1n_ceiling"))
register_metric("i1", lazy("brainscore.metrics.behavior.i1i2:I1"))
register_metric("i1n", lazy("brainscore.metrics.behavior.i1i2:I1n"))
register_metric("i2", lazy("brainscore.metrics.behavior.i1i2:I2"))
register_metric("i2n", lazy("brainscore.metrics.behavior.i1i2:I2n"))
