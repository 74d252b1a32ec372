"""Candidate layers from a network's structure, and the relative-depth rule for regions without selection data."""
import numpy as np
import pytest
import torch
from torch import nn

from brainscore.errors import ValidationError
from brainscore.models import layer_rule
from brainscore.models.structure import structural_candidates


class Block(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.conv = nn.Conv2d(width, width, 3, padding=1)
        self.norm = nn.BatchNorm2d(width)
        self.shortcut = nn.Sequential(nn.Conv2d(width, width, 1), nn.BatchNorm2d(width))  # mixed classes: no stack

    def forward(self, x):
        return torch.relu(self.norm(self.conv(x))) + self.shortcut(x)


class Stage(nn.Module):
    """A downsampling layer and a stack of repeated blocks (holding most parameters)."""

    def __init__(self, blocks, width=8):
        super().__init__()
        self.downsample = nn.Conv2d(width, width, 2, stride=2)
        self.blocks = nn.Sequential(*[Block(width) for _ in range(blocks)])

    def forward(self, x):
        return self.blocks(self.downsample(x))


class Branches(nn.Module):
    """An inception-like block: two inner lists of one class each, so not a stage."""

    def __init__(self, width=8):
        super().__init__()
        self.left = nn.ModuleList([nn.Conv2d(width, width, 1), nn.Conv2d(width, width, 1)])
        self.right = nn.ModuleList([nn.Conv2d(width, width, 3, padding=1), nn.Conv2d(width, width, 3, padding=1)])

    def forward(self, x):
        return self.left[1](self.left[0](x)) + self.right[1](self.right[0](x))


class Net(nn.Module):
    """stem, features = [Block, Block, Stage(3 blocks)], a branch block, dropout, head: 11 candidates."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.act = nn.ReLU()
        self.features = nn.Sequential(Block(), Block(), Stage(3))
        self.mixed = Branches()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.drop = nn.Dropout(0.5)
        self.identity = nn.Identity()
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        x = self.features(self.act(self.stem(x)))
        return self.head(self.drop(self.flatten(self.pool(self.mixed(x)))))


EXPECTED = ["stem", "act", "features.0", "features.1", "features.2.downsample", "features.2.blocks.0",
            "features.2.blocks.1", "features.2.blocks.2", "mixed", "pool", "head"]


def test_candidates_are_the_outputs_of_top_level_blocks():
    net = Net()
    candidates = structural_candidates(net)
    assert candidates == EXPECTED
    names = dict(net.named_modules())
    assert all(name in names for name in candidates)  # hookable module names


def test_candidates_on_the_meta_device_match_and_real_architectures():
    with torch.device("meta"):
        assert structural_candidates(Net()) == EXPECTED
    from brainscore.models.torchvision_loading import import_torchvision

    torchvision = import_torchvision()
    with torch.device("meta"):
        resnet18 = torchvision.models.resnet18(weights=None)
    assert structural_candidates(resnet18) == [
        "conv1", "bn1", "relu", "maxpool", "layer1.0", "layer1.1", "layer2.0", "layer2.1", "layer3.0", "layer3.1",
        "layer4.0", "layer4.1", "avgpool", "fc"]


def test_candidates_reject_what_is_not_a_network():
    with pytest.raises(ValidationError, match="layers=\\[...\\]"):
        structural_candidates(lambda x: x)
    with pytest.raises(ValidationError, match="no child modules"):
        structural_candidates(nn.Linear(2, 2))


RULE = {"rule": {"name": "test-rule", "maps": 3, "relative_depth": {"V1": 0.25, "V2": 0.5, "V4": 0.55, "IT": 0.85}}}


def test_rule_picks_the_candidate_at_the_fitted_relative_depth():
    # 11 candidates, indices 0..10: V1 2.5 -> 3 (half up), V2 5, V4 5.5 -> 6, IT 8.5 -> 9
    expected = {"V1": "features.1", "V2": "features.2.blocks.0", "V4": "features.2.blocks.1", "IT": "pool"}
    for region, layer in expected.items():
        chosen, parameters = layer_rule.rule_layer(region, EXPECTED, RULE)
        assert chosen == layer
        assert parameters == {"rule": "test-rule", "relative_depth": RULE["rule"]["relative_depth"][region], "maps": 3,
                              "index": EXPECTED.index(layer), "n_candidates": 11}
    assert layer_rule.rule_layer("IT", ["only"], RULE)[0] == "only"
    assert layer_rule.rule_layer("V1", ["a", "b"], RULE)[0] == "a"  # 0.25 -> 0
    assert layer_rule.rule_layer("IT", ["a", "b"], RULE)[0] == "b"  # 0.85 -> 1


def test_rule_refuses_unknown_regions_and_empty_candidates():
    with pytest.raises(ValidationError, match="no layer rule for region 'MT'"):
        layer_rule.rule_layer("MT", EXPECTED, RULE)
    with pytest.raises(ValidationError, match="at least one candidate"):
        layer_rule.rule_layer("V1", [], RULE)


def _map(plugin, architecture, n, **index):
    return {"plugin": plugin, "architecture": architecture, "n_candidates": n, "index": index}


def test_fit_is_the_plugin_weighted_median_of_relative_depth():
    # plugin a has 3 maps at depth 0.1 (V1), plugin b one at 0.5, plugin c one at 0.9: weights 1/3,1/3,1/3,1,1
    maps = [_map("a", "x", 11, V1=1, V2=5, V4=5, IT=9)] * 3 + [_map("b", "y", 3, V1=1, V2=1, V4=1, IT=2),
                                                             _map("c", "z", 11, V1=9, V2=5, V4=5, IT=9)]
    fitted = layer_rule.fit(maps)
    assert fitted["V1"] == 0.5  # unweighted median would be 0.1
    assert fitted["V2"] == fitted["V4"] == 0.5
    assert fitted["IT"] == 0.9
    values, weights = np.array([0.1, 0.2, 0.3, 0.4]), np.ones(4)
    assert layer_rule.weighted_quantile(values, weights, 0.5) == 0.2
    assert layer_rule.weighted_quantile(values, weights, 0.75) == 0.3


def test_held_out_agreement_of_consistent_maps_is_complete():
    maps = [_map(f"plugin{i}", "arch", 21, V1=5, V2=10, V4=10, IT=17) for i in range(20)]
    result = layer_rule.held_out_agreement(maps)
    assert result["all"] == {"exact": 1.0, "neighbour": 1.0}
    assert result["middle_baseline"]["exact"] == 0.5  # the middle (10) is V2's and V4's layer only


def test_the_shipped_rule_is_the_fit_of_its_maps():
    data = layer_rule.load()
    maps = data["maps"]
    assert data["source"]["maps_used"] == len(maps) == data["rule"]["maps"]
    assert len(maps) >= 300
    refitted = layer_rule.fit(maps)
    assert {r: round(v, 4) for r, v in refitted.items()} == data["rule"]["relative_depth"]
    # the reference commits deeper layers to later regions: V1 < V4 <= V2 < IT in the median
    depth = data["rule"]["relative_depth"]
    assert depth["V1"] < depth["V4"] <= depth["V2"] < depth["IT"]
    assert layer_rule.held_out_agreement(maps)["all"] == data["held_out"]["all"]
    assert data["held_out"]["all"]["neighbour"] > data["held_out"]["middle_baseline"]["neighbour"]


def test_score_records_how_the_benchmark_region_was_committed():
    from brainscore.scoring.job import commitment_of

    class Model:
        def layer_commitments(self):
            return {"V1": {"layer": "a", "method": "rule", "relative_depth": 0.27, "index": 0},
                    "V4": {"layer": "b", "method": "selection", "benchmarks": ["x"], "scores": [["a", 0.1]]}}

    assert commitment_of(Model(), "V1") == {"region": "V1", "layer": "a", "method": "rule", "relative_depth": 0.27,
                                            "index": 0}
    assert commitment_of(Model(), "V4") == {"region": "V4", "layer": "b", "method": "selection", "benchmarks": ["x"]}
    assert commitment_of(Model(), None) is None and commitment_of(Model(), "IT") is None
    assert commitment_of(object(), "V1") is None


def test_a_reference_style_commitment_without_layers_gets_top_level_blocks():
    from brainscore.models.extraction import ActivationsExtractor
    from brainscore.models.preprocessing import Preprocessing
    from brainscore_vision.model_helpers.brain_transformation import ModelCommitment

    model = ModelCommitment("net", ActivationsExtractor(Net(), "net", Preprocessing("imagenet", 20)), layers=None,
                            region_layer_map={"V4": "features.1"})
    assert model.layers == EXPECTED and model.candidates_source == "top-level-blocks-v1"
    assert model.layer_for("V4") == "features.1"
    assert model.layer_for("IT") == EXPECTED[round(layer_rule.load()["rule"]["relative_depth"]["IT"] * 10)]
    assert model.layer_commitments()["IT"]["method"] == "rule"
