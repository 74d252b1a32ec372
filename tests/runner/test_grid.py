"""Patterns and comma lists name the grid's models and benchmarks."""
import pytest

from brainscore import registry
from brainscore.errors import ValidationError
from brainscore.runner.grid import expand, pairs


def test_patterns_and_lists_expand_in_order_without_duplicates():
    cowley = registry.benchmarks.list("Cowley2026*")
    assert len(cowley) == 4  # three selection sessions and 210325
    found = expand("Kriegeskorte2008.IT-rdm, Cowley2026*,Kriegeskorte2008.IT-rdm", "benchmark")
    assert found == ["Kriegeskorte2008.IT-rdm", *cowley]
    assert expand("*", "benchmark") == registry.benchmarks.list()
    assert expand(["efficientnet-lite[01]", "pixels"], "model") == ["efficientnet-lite0", "efficientnet-lite1", "pixels"]


def test_a_plain_name_is_kept_for_plugins_that_build_names_on_demand():
    assert expand("torchvision:resnet18-untrained", "model") == ["torchvision:resnet18-untrained"]


def test_a_pattern_that_matches_nothing_is_a_clear_error():
    with pytest.raises(ValidationError, match="matches no registered benchmark.*Kriegeskorte2008.IT-rdm"):
        expand("Cowly*", "benchmark")
    with pytest.raises(ValidationError, match="no models given"):
        expand(" , ", "model")


def test_pairs_are_models_outer_benchmarks_inner_with_the_model_arguments():
    grid = pairs("pixels,efficientnet-lite0", "Mur2013-rdm,Kiani2007.IT-rdm", device="cpu")
    assert [(p.model, p.benchmark) for p in grid] == [
        ("pixels", "Mur2013-rdm"), ("pixels", "Kiani2007.IT-rdm"),
        ("efficientnet-lite0", "Mur2013-rdm"), ("efficientnet-lite0", "Kiani2007.IT-rdm")]
    assert grid[0].model_kwargs == {} and grid[0].model_arguments == () and grid[0].device == "cpu"  # the device is no model argument
