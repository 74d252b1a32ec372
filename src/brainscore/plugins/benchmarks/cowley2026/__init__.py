"""Cowley et al. 2026 V4 neural predictivity benchmarks.

Cowley, Stan, Pillow & Smith, "Compact deep neural network models of the visual cortex",
Nature 652:947 (2026). Settings as the reference's ``Cowley2026`` benchmarks:

- 11.2 degrees of visual angle; 14 trials (the mode of repeat counts over the paper's sessions);
  recordings in the 50-150 ms spike-count window;
- PLS (25 components) with plain shuffle splits (``stratification_coord=None``: the images have no
  object categories), 10 splits, train size 0.9, seed 1;
- ceiling: internal consistency (split-half over repetitions, Spearman-Brown) after relabelling each
  presentation's repetition as ``repetition % 2``, so every image contributes to both halves;
- normalisation r² / ceiling; version 1, parent ``V4``.

``Cowley2026.210325.V4-pls`` is session 210325, the one with per-repetition data here. The
sessions 190923, 201025 and 210224 have only repeat-averaged data, so their benchmarks have no
ceiling (the score is r²); they exist to choose a model's V4 layer without using 210325.
"""
from brainscore.registry import register_benchmark

BIBTEX = """@article{cowley2026compact,
  title={Compact deep neural network models of the visual cortex},
  author={Cowley, Benjamin R. and Stan, Patricia L. and Pillow, Jonathan W. and Smith, Matthew A.},
  journal={Nature}, volume={652}, pages={947}, year={2026},
  doi={10.1038/s41586-026-10150-1}
}"""



CARD = {
    "species": "macaque monkey",
    "recording": "spike counts of V4 neurons in a 100 ms window (50-150 ms after image onset)",
    "metric": "PLS regression (25 components) from the model's V4 layer to each neuron, 10 splits of the images "
              "(90% train); r = median over neurons of Pearson's r on the held-out images, mean over splits",
    "ceiling": "split-half internal consistency over repetitions, Spearman-Brown corrected: c = median over "
               "neurons of 2ρ/(1 + ρ), ρ the Pearson correlation of the two halves' mean responses; mean over 10 splits",
    "formula": "score = r² / c",
    "data_source": "github.com/cowleygroup/V4_compact_models (data_V4_responses), Cowley et al. 2026",
    "licence": "GPL-3.0",
}
CARDS = {
    f"Cowley2026.{session}.V4-pls": {"ceiling": "none: this session has repeat-averaged responses only",
                                     "formula": "score = r² (no ceiling); serves only to choose a model's V4 layer"}
    for session in ("190923", "201025", "210224")
}
"""The benchmark cards' words (species, metric, ceiling, data source, licence); the counts are in
``card_counts.json``, counted in the data by ``tools/benchmark_cards.py``."""

@register_benchmark("Cowley2026.210325.V4-pls", parent="V4")
def _benchmark_210325():
    from .benchmark import cowley_benchmark
    return cowley_benchmark("210325", ceiled=True)


@register_benchmark("Cowley2026.190923.V4-pls", parent="V4", selection_for="V4")
def _benchmark_190923():
    from .benchmark import cowley_benchmark
    return cowley_benchmark("190923", ceiled=False)


@register_benchmark("Cowley2026.201025.V4-pls", parent="V4", selection_for="V4")
def _benchmark_201025():
    from .benchmark import cowley_benchmark
    return cowley_benchmark("201025", ceiled=False)


@register_benchmark("Cowley2026.210224.V4-pls", parent="V4", selection_for="V4")
def _benchmark_210224():
    from .benchmark import cowley_benchmark
    return cowley_benchmark("210224", ceiled=False)
