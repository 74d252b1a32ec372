"""The plugin's own test, as the reference's model tutorial asks for (run: pytest models/compat_smallnet/test.py)."""
import pytest


def test_the_model_loads_with_its_committed_layers():
    from brainscore_vision import load_model

    model = load_model('compat-smallnet')
    assert model.identifier == 'compat-smallnet'
    assert model.region_layer_map == {'V1': 'relu1', 'V4': 'relu2', 'IT': 'pool'}  # region_layer_map/*.json


@pytest.mark.slow
def test_a_reasonable_score():
    from brainscore_vision import score

    value = float(score(model_identifier='compat-smallnet', benchmark_identifier='CompatCowley2026.210325.V4-pls'))
    assert 0 < value < 1
