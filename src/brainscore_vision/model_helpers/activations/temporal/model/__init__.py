"""The reference's temporal model wrappers: ``ActivationWrapper`` (any framework: subclass it with a
``get_activations``) and ``PytorchWrapper`` (a ``torch.nn.Module`` read by forward hooks)."""
from brainscore_vision.model_helpers.activations.temporal.model.base import ActivationWrapper
from brainscore_vision.model_helpers.activations.temporal.model.pytorch import PytorchWrapper

__all__ = ["ActivationWrapper", "PytorchWrapper"]
