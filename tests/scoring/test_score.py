"""The main job on real data and the real pretrained network: a ceiled V4 score, then a cache hit."""
import json

import numpy as np
import pytest

import brainscore
from brainscore.cli import main

BENCHMARK = "Cowley2026.210325.V4-pls"
pytestmark = pytest.mark.slow  # the real pretrained network over 640 images


def independent_even_odd_ceiling(raw: np.ndarray) -> float:
    """Split-half reliability of the raw counts (neurons x images x repeats, NaN-padded), computed directly.

    Even repeats (0, 2, 4, ...) against odd repeats (1, 3, ...): Pearson r per neuron between the two
    half means over images, Spearman-Brown corrected (2r / (1 + r)), median over neurons.
    """
    even, odd = np.nanmean(raw[:, :, 0::2], axis=2), np.nanmean(raw[:, :, 1::2], axis=2)
    r = np.array([np.corrcoef(e, o)[0, 1] for e, o in zip(even, odd)])
    return float(np.median(2 * r / (1 + r)))


@pytest.fixture(scope="module")
def first_score():
    return brainscore.score("efficientnet-lite0", BENCHMARK)


def test_ceiled_score_is_real_and_ceiling_is_split_half_reliability(first_score, shared_data):
    raw_counts = np.load(shared_data / "cowley2026_v4/responses_raw/responses_210325.npy")
    ceiling = float(first_score.attrs["ceiling"])
    assert ceiling == pytest.approx(independent_even_odd_ceiling(raw_counts), abs=1e-6)
    assert 0 < float(first_score) <= 1
    r = float(first_score.attrs["raw"])
    assert float(first_score) == pytest.approx(r ** 2 / ceiling, rel=1e-9)  # r² / ceiling
    assert 0 < first_score.attrs["error"] < 0.1
    assert first_score.attrs["layers"]["V4"].startswith("_blocks.")  # the stored V4 layer of the plugin


def test_second_run_uses_cached_activations_and_ceiling(first_score):
    model = brainscore.load_model("efficientnet-lite0")
    benchmark = brainscore.load_benchmark(BENCHMARK)
    again = benchmark(model)
    assert model.activations_model.forward_passes == 0  # no image went through the network
    assert float(again) == pytest.approx(float(first_score), abs=1e-12)


def test_cli_json_output(first_score, capsys):
    assert main(["score", "--model", "efficientnet-lite0", "--benchmark", BENCHMARK, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert {"model", "benchmark", "score", "raw", "ceiling", "error", "layer"} <= set(printed)
    assert printed["score"] == pytest.approx(float(first_score), abs=1e-12)
    assert printed["layer"] == first_score.attrs["layers"]["V4"]


def test_cli_unknown_benchmark_is_a_clear_error(capsys):
    assert main(["score", "--model", "efficientnet-lite0", "--benchmark", "Cowley2026.210325.V4-psl"]) == 2
    assert "Cowley2026.210325.V4-pls" in capsys.readouterr().err
