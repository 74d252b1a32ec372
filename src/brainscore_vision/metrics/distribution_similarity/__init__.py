"""``BootstrapDistributionSimilarity``, ``NeuronalPropertyCeiling``: the reference's ``distribution_similarity``
metric module (see :mod:`.metric`)."""
from brainscore_vision.metrics.distribution_similarity.metric import (BootstrapDistributionSimilarity,
                                                                       NeuronalPropertyCeiling, ks_similarity)

__all__ = ["BootstrapDistributionSimilarity", "NeuronalPropertyCeiling", "ks_similarity"]
