"""architecture_fingerprint: changes with anything that changes the forward pass, not with weights."""
import copy

import pytest
import torch

from brainscore.models.fingerprint import architecture_fingerprint, code_identity


def _net(activation=torch.nn.ReLU):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, stride=2, padding=1), activation(),
                               torch.nn.BatchNorm2d(4), torch.nn.Flatten())


class _Double(torch.nn.Module):
    def forward(self, x):
        return 2 * x


class _Triple(torch.nn.Module):
    def forward(self, x):
        return 3 * x


def test_same_architecture_other_weights_same_fingerprint():
    a, b = _net(), _net()
    with torch.no_grad():
        b[0].weight.add_(1)
    assert architecture_fingerprint(a) == architecture_fingerprint(b)
    assert len(architecture_fingerprint(a)) == 64


def test_relu_to_tanh_changes_it():
    assert architecture_fingerprint(_net()) != architecture_fingerprint(_net(torch.nn.Tanh))


@pytest.mark.parametrize("change", [
    lambda n: setattr(n[0], "stride", (1, 1)),
    lambda n: setattr(n[0], "padding", (0, 0)),
    lambda n: setattr(n[2], "eps", 1e-3),
    lambda n: setattr(n[2], "momentum", 0.5),
    lambda n: setattr(n[1], "inplace", True),
    lambda n: n.eval(),
    lambda n: n[3].register_forward_hook(lambda m, i, o: o * 0),
    lambda n: setattr(n[1], "forward", lambda x: x),
])
def test_settings_training_flag_and_hooks_change_it(change):
    net = _net()
    before = architecture_fingerprint(net)
    changed = copy.deepcopy(net)
    change(changed)
    assert architecture_fingerprint(changed) != before


def test_edited_forward_changes_it():
    assert architecture_fingerprint(_Double()) != architecture_fingerprint(_Triple())


def test_forward_without_source_falls_back_to_code_object():
    namespace = {}
    exec("def forward(self, x):\n    return x * 5\n", namespace)
    other = {}
    exec("def forward(self, x):\n    return x * 7\n", other)
    five = type("Net", (torch.nn.Module,), {"forward": namespace["forward"]})
    seven = type("Net", (torch.nn.Module,), {"forward": other["forward"]})
    assert code_identity(namespace["forward"]).startswith("code:")
    assert architecture_fingerprint(five()) != architecture_fingerprint(seven())


def test_not_a_module_is_a_type_error():
    with pytest.raises(TypeError, match="torch.nn.Module"):
        architecture_fingerprint(object())


def test_extractor_and_commitment_expose_weights_hash_and_fingerprint():
    from brainscore.models.commitment import ModelCommitment
    from brainscore.models.extraction import ActivationsExtractor

    net = _net()
    extractor = ActivationsExtractor(net, "net")
    commitment = ModelCommitment("net", extractor, layers=["0"])
    assert commitment.weights_hash == extractor.weights_hash and len(extractor.weights_hash) == 64
    before = commitment.architecture_fingerprint
    assert before == extractor.architecture_fingerprint == architecture_fingerprint(net.eval())
    net[1] = torch.nn.Tanh()  # a swapped module is noticed by the same extractor
    assert extractor.architecture_fingerprint != before
    assert ModelCommitment("other", object(), layers=["x"]).architecture_fingerprint is None
    assert ModelCommitment("other", object(), layers=["x"]).weights_hash is None
