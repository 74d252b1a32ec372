"""The reference's behavioural readouts, each a :class:`ModelCommitment` reading one layer: ``LogitsBehavior``
(``label`` from ``"logits"``), ``ProbabilitiesMapping`` (``probabilities``: the readout of
:class:`brainscore.models.readouts.ProbabilitiesClassifier`), ``OddOneOut`` (``odd_one_out``, similarity ``'dot'`` or
``'cosine'``) and ``BehaviorArbiter`` (the model of the started task answers ``look_at``).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from brainscore.models.extraction import LOGITS
from brainscore_vision.model_helpers.brain_transformation import ModelCommitment

__all__ = ["LogitsBehavior", "ProbabilitiesMapping", "OddOneOut", "BehaviorArbiter"]


class LogitsBehavior(ModelCommitment):
    """The ``label`` task read from the network's output (``"logits"``)."""

    def __init__(self, identifier: str, activations_model: Any, visual_degrees: float = 8):
        super().__init__(identifier, activations_model, layers=[LOGITS], behavioral_readout_layer=LOGITS,
                         visual_degrees=visual_degrees)


class _OneLayer(ModelCommitment):
    """A readout of one ``layer`` (a name, or a list of one; ValueError for more)."""

    def __init__(self, identifier: str, activations_model: Any, layer: str | Sequence[str], visual_degrees: float = 8):
        layers = [layer] if isinstance(layer, str) else list(layer)
        if len(layers) != 1:
            raise ValueError(f"a behavioural readout reads one layer, got {layers}")
        super().__init__(identifier, activations_model, layers=layers, behavioral_readout_layer=layers[0],
                         visual_degrees=visual_degrees)


class ProbabilitiesMapping(_OneLayer):
    """The ``probabilities`` task: a readout of ``layer`` fitted on the fitting stimuli."""


class OddOneOut(_OneLayer):
    """The ``odd_one_out`` task on ``layer``'s features (the pair most similar stays; the third is odd)."""

    def set_similarity_measure(self, similarity_measure: str) -> None:
        """``'dot'`` or ``'cosine'`` (ValueError for another)."""
        if similarity_measure not in ("dot", "cosine"):
            raise ValueError(f"similarity measure must be 'dot' or 'cosine', got {similarity_measure!r}")
        self.similarity_measure = similarity_measure


class BehaviorArbiter:
    """Answers each task with the model given for it (``{BrainModel.Task.label: LogitsBehavior(...), ...}``;
    ``start_task`` raises NotImplementedError for another task)."""

    def __init__(self, mapping: Mapping[str, Any]):
        self.mapping = dict(mapping)
        self.current_executor: Any = None

    def start_task(self, task: str, *args: Any, **kwargs: Any) -> None:
        if task not in self.mapping:
            raise NotImplementedError(f"no model for task {task!r}; tasks: {sorted(self.mapping)}")
        self.current_executor = self.mapping[task]
        self.current_executor.start_task(task, *args, **kwargs)

    def look_at(self, stimuli: Any, number_of_trials: int = 1) -> Any:
        if self.current_executor is None:
            raise RuntimeError("BehaviorArbiter: call start_task before look_at")
        return self.current_executor.look_at(stimuli, number_of_trials=number_of_trials)
