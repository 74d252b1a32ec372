"""brainscore: how brain-like is a computer-vision model?

Scores models against primate neural recordings and behaviour with standard benchmarks
(Schrimpf et al. 2018, "Brain-Score: Which Artificial Neural Network for Object Recognition is
most Brain-Like?"; Schrimpf et al. 2020, Neuron). Each score runs from 0 (not aligned) to 1
(aligned at the data's noise ceiling).

>>> import brainscore
>>> score = brainscore.score("efficientnet-lite0", "Cowley2026.210325.V4-pls")  # doctest: +SKIP
"""
from brainscore.api import (list_benchmarks, list_ceilings, list_datasets, list_metrics, list_models,
                            list_stimulus_sets, load_benchmark, load_ceiling, load_dataset, load_metric,
                            load_model, load_stimulus_set, score)
from brainscore.data import (BehavioralAssembly, DataAssembly, NeuroidAssembly, PropertiesAssembly,
                             StimulusSet)
from brainscore.errors import (AlignmentError, BrainScoreError, DataNotFoundError, HashMismatchError,
                               UnknownIdentifierError, ValidationError)
from brainscore.metrics.score import Score
from brainscore import leaderboard  # callable: brainscore.leaderboard() -> DataFrame

__version__ = "0.1.0"

__all__ = ["score", "load_dataset", "load_stimulus_set", "load_metric", "load_ceiling", "load_benchmark",
           "load_model", "leaderboard", "list_datasets", "list_stimulus_sets", "list_metrics", "list_ceilings",
           "list_benchmarks", "list_models", "StimulusSet", "DataAssembly", "NeuroidAssembly",
           "BehavioralAssembly", "PropertiesAssembly", "Score", "BrainScoreError", "UnknownIdentifierError",
           "DataNotFoundError", "HashMismatchError", "AlignmentError", "ValidationError", "__version__"]
