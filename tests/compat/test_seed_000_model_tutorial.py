"""Seed 000, the model tutorial: a model plugin registered with ``model_registry[...] = lambda: ModelCommitment(...)``
and scored with ``score(model_identifier=..., benchmark_identifier=...)``, as written.

Swapped: the network (the tutorial's AlexNet from PyTorch's library) for a small convolutional network
(fast test) and for EfficientNet-Lite0 (slow test, compared with brainscore's own ``efficientnet-lite0``),
the benchmark ``MajajHong2015public.IT-pls`` for ``Cowley2026.210325.V4-pls`` (V4 data here), and the
model identifiers prefixed ``Seed000`` (no clash with other tests). The tutorial's ``...`` in
``ModelCommitment(identifier='myalexnet', ...)`` is filled with the reference's arguments.
"""
from __future__ import annotations

import functools
import ssl

import pytest

import brainscore
from brainscore.models.commitment import pytorch_commitment
from brainscore.models.preprocessing import Preprocessing
from model_fixtures import SmallConvNet

BENCHMARK = "Cowley2026.210325.V4-pls"


@pytest.fixture
def registered():
    """Registrations made by a test, removed after it."""
    from brainscore_vision import model_registry

    made = []
    yield made
    for identifier in made:
        del model_registry[identifier]


def test_quick_submission_small_network(registered):
    from brainscore_vision import model_registry, score
    from brainscore_vision.model_helpers.activations.pytorch import PytorchWrapper, load_preprocess_images
    from brainscore_vision.model_helpers.brain_transformation import ModelCommitment

    def get_model():
        preprocessing = functools.partial(load_preprocess_images, image_size=64)
        wrapper = PytorchWrapper(identifier='Seed000mysmallnet', model=SmallConvNet(), preprocessing=preprocessing)
        return ModelCommitment(identifier='Seed000mysmallnet', activations_model=wrapper,
                               layers=['relu1', 'relu2', 'pool'], region_layer_map={'V4': 'relu2'})

    # step 3 of the quick version, as written
    model_registry['Seed000mysmallnet'] = lambda: get_model()
    registered.append('Seed000mysmallnet')
    # step 4: "test that score(...) returns a reasonable score"
    result = score(model_identifier='Seed000mysmallnet', benchmark_identifier=BENCHMARK)
    assert 0 < float(result.attrs['raw']) < 1 and float(result) < 1

    native = pytorch_commitment('Seed000native-smallnet', SmallConvNet(), ['relu1', 'relu2', 'pool'],
                                preprocessing=Preprocessing('imagenet', 64), region_layer_map={'V4': 'relu2'})
    expected = brainscore.load_benchmark(BENCHMARK)(native)
    assert float(result) == pytest.approx(float(expected), abs=1e-6)

    # the unit test a plugin ships: check_models on the registered model
    from brainscore_vision.model_helpers.check_submission import check_models
    check_models.check_base_models('Seed000mysmallnet')


def test_ssl_workaround_block_runs():
    saved = ssl._create_default_https_context
    try:
        # "Common Errors: Setup", 2, as written
        import ssl as ssl_module
        ssl_module._create_default_https_context = ssl_module._create_unverified_context
        assert ssl._create_default_https_context is ssl._create_unverified_context
    finally:
        ssl._create_default_https_context = saved


@pytest.mark.slow
def test_quick_submission_efficientnet_lite0_equals_native(registered):
    """EfficientNet-Lite0 through PytorchWrapper + ModelCommitment scores as brainscore's own plugin."""
    from brainscore.plugins.models.efficientnet_lite.model import get_model as efficientnet, layers
    from brainscore_vision import model_registry, score
    from brainscore_vision.model_helpers.activations.pytorch import PytorchWrapper, load_preprocess_images
    from brainscore_vision.model_helpers.brain_transformation import ModelCommitment

    def get_model():
        wrapper = PytorchWrapper(identifier='Seed000myeffnet', model=efficientnet('efficientnet-lite0'),
                                 preprocessing=functools.partial(load_preprocess_images, image_size=224))
        return ModelCommitment(identifier='Seed000myeffnet', activations_model=wrapper,
                               layers=layers('efficientnet-lite0'), region_layer_map={'V4': '_blocks.11'})

    model_registry['Seed000myeffnet'] = lambda: get_model()
    registered.append('Seed000myeffnet')
    result = score(model_identifier='Seed000myeffnet', benchmark_identifier=BENCHMARK)
    expected = brainscore.score('efficientnet-lite0', BENCHMARK, region_layer_map={'V4': '_blocks.11'})
    assert float(result) == pytest.approx(float(expected), abs=1e-6)
    assert float(result.attrs['raw']) == pytest.approx(float(expected.attrs['raw']), abs=1e-6)
