"""Error consistency (Geirhos, Meding & Wichmann 2020): Cohen's kappa of model and human correctness.

``error_consistency`` (metric): model vs each human subject, per condition; ``|mean|``, error = std.
``error_consistency`` (ceiling): the same statistic over all pairs of human subjects.
``kato_error_consistency`` (leaving out unanswered trials) is the plugin of that name.
"""
from brainscore.registry import lazy, register_ceiling, register_metric

BIBTEX = """@inproceedings{geirhos2020beyond,
  title={Beyond accuracy: quantifying trial-by-trial behaviour of {CNNs} and humans by measuring error consistency},
  author={Geirhos, Robert and Meding, Kristof and Wichmann, Felix A},
  booktitle={Advances in Neural Information Processing Systems},
  volume={33},
  pages={13890--13902},
  year={2020}
}"""


register_metric("error_consistency", lazy("brainscore.metrics.behavior.error_consistency:ErrorConsistency"))
register_ceiling("error_consistency", lazy("brainscore.metrics.behavior.error_consistency:ErrorConsistencyCeiling"))
