"""A small convolutional network as a Brain-Score model plugin, written as the reference's model tutorial shows."""
from brainscore_vision import model_registry
from brainscore_vision.model_helpers.brain_transformation import ModelCommitment

from .model import LAYERS, get_model

model_registry['compat-smallnet'] = lambda: ModelCommitment(
    identifier='compat-smallnet', activations_model=get_model('compat-smallnet'), layers=LAYERS,
    behavioral_readout_layer='pool', visual_degrees=8)
