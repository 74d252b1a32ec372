"""A model's parameter count, read off its loaded network once (issue 25, model cards): never built for it."""
from __future__ import annotations

import functools

import torch

from brainscore.models.commitment import ModelCommitment
from brainscore.models.extraction import ActivationsExtractor
from brainscore.models.identity import NetworkRecipe
from brainscore.models.preprocessing import Preprocessing
from brainscore.scoring.job import model_facts
from brainscore.scoring.provenance import provenance_key

PRE = Preprocessing("imagenet", 20)


def net():
    # Conv2d(3, 4, 3): 4*3*3*3 weights + 4 biases = 112; Linear(4, 2): 4*2 + 2 = 10; BatchNorm2d(4): 4 + 4 = 8
    return torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.AdaptiveAvgPool2d(1),
                               torch.nn.Flatten(), torch.nn.Linear(4, 2))


def test_parameters_are_counted_from_the_network():
    extractor = ActivationsExtractor(net(), "count-net", PRE, device="cpu", progress=False)
    assert extractor.parameter_count == 112 + 8 + 10  # buffers (running mean, variance) are not parameters
    commitment = ModelCommitment("count-net", extractor, ["0", "4"])
    assert commitment.parameter_count == 130 and model_facts(commitment) == {"parameter_count": 130}


def test_shared_parameters_count_once():
    layer = torch.nn.Linear(5, 5)  # 30 parameters, used twice
    shared = torch.nn.Sequential(layer, torch.nn.ReLU(), layer)
    assert ActivationsExtractor(shared, "shared", PRE, device="cpu", progress=False).parameter_count == 30


def test_a_network_not_built_is_not_counted():
    recipe = NetworkRecipe(build=functools.partial(net), arguments={"name": "count-net"}, code=[__name__])
    extractor = ActivationsExtractor(recipe, "count-net", PRE, device="cpu", progress=False)
    assert extractor.parameter_count is None and extractor._model is None  # unknown, and the network not built
    assert model_facts(ModelCommitment("count-net", extractor, ["0"])) is None
    extractor.model  # built for extraction: now it is known
    assert extractor.parameter_count == 130


def test_the_count_is_not_part_of_the_provenance_key():
    provenance = {"model": {"identifier": "m", "weights_sha256": "a" * 64}, "benchmark": {"identifier": "b"}}
    assert provenance_key({**provenance, "model_facts": {"parameter_count": 130}}) == provenance_key(provenance)
