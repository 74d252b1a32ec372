"""Server-side plots: SVG, cached by exactly the values drawn."""
from __future__ import annotations

from brainscore.web import plots


def test_distribution_is_svg_and_cached_by_content():
    first = plots.distribution("B-x", {"a": 0.1, "b": 0.4})
    assert first.startswith(b"<?xml") and b"<svg" in first
    assert plots.distribution("B-x", {"b": 0.4, "a": 0.1}) is first  # same values: the cached image
    assert plots.distribution("B-x", {"a": 0.1, "b": 0.5}) is not first
    assert plots.distribution("B-x", {"a": 0.1, "b": 0.4}, highlight="a") is not first


def test_layer_curve_marks_the_committed_layer():
    svg = plots.layer_curve("m", "V4 selection data", [("conv1", 0.2), ("conv2", 0.5), ("fc", 0.3)], "conv2")
    assert b"committed: conv2" in svg and b"fc" in svg
