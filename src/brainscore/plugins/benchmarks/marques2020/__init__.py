"""V1 single-neuron property benchmarks of Marques, Schrimpf & DiCarlo (2021).

"Multi-scale hierarchical neural network models that bridge from single neurons in the primate
primary visual cortex to object recognition behavior" (bioRxiv 2021.03.01.433495). A property of
every model V1 unit is measured with gratings as the physiologists measured it on cells, and the
distribution over units is compared with the published one:

- the model is recorded from V1 (70-170 ms, 20 trials; a deterministic model answers each
  alike) on the 9097 gratings of ``Marques2020_V1``, shown at 12 degrees of visual angle and placed
  on the model's screen;
- units are kept whose receptive field (mapped with small gratings on a 21 x 21 grid) is centred
  within 0.15 degrees of the gratings' centre; activations become firing rates by one affine map
  per layer; each study's property is computed on the responsive units (:mod:`.properties`);
- raw = ``ks_similarity``: 1000 bootstrap resamples (seeded, ``random_state=0``) of as many
  model values as the data have rows, 1 - KS distance over the data's bins, normalised by its
  largest possible value; ceiling = the same metric of the data against themselves;
  score = raw / ceiling, not clipped.

Benchmarks (identifiers as the reference's; version 1 each): preferred orientation
(De Valois, Yund & Hepler 1982), peak spatial frequency (De Valois, Albrecht & Thorell 1982),
spatial-frequency selectivity and bandwidth (Schiller, Finlay & Volman 1976), surround suppression
index, grating summation field and surround diameter (Cavanaugh, Bair & Movshon 2002). Each
counts under a family node (V1-orientation, V1-spatial_frequency, V1-surround_modulation,
V1-receptive_field_size) under V1, as in the reference's leaderboard.
"""
from brainscore.registry import register_benchmark, register_tree_node

register_tree_node("V1-orientation", parent="V1")
register_tree_node("V1-spatial_frequency", parent="V1")
register_tree_node("V1-surround_modulation", parent="V1")
register_tree_node("V1-receptive_field_size", parent="V1")

BIBTEX_MARQUES2021 = """@article{marques2021multi,
  title={Multi-scale hierarchical neural network models that bridge from single neurons in the primate primary
         visual cortex to object recognition behavior},
  author={Marques, Tiago and Schrimpf, Martin and DiCarlo, James J.},
  journal={bioRxiv}, pages={2021.03.01.433495}, year={2021}, doi={10.1101/2021.03.01.433495}
}"""
BIBTEX_DEVALOIS1982A = """@article{devalois1982orientation,
  title={The orientation and direction selectivity of cells in macaque visual cortex},
  author={De Valois, Russell L. and Yund, E. William and Hepler, Norva},
  journal={Vision Research}, volume={22}, number={5}, pages={531--544}, year={1982},
  doi={10.1016/0042-6989(82)90112-2}
}
""" + BIBTEX_MARQUES2021
BIBTEX_DEVALOIS1982B = """@article{devalois1982spatial,
  title={Spatial frequency selectivity of cells in macaque visual cortex},
  author={De Valois, Russell L. and Albrecht, Duane G. and Thorell, Lisa G.},
  journal={Vision Research}, volume={22}, number={5}, pages={545--559}, year={1982},
  doi={10.1016/0042-6989(82)90113-4}
}
""" + BIBTEX_MARQUES2021
BIBTEX_SCHILLER1976 = """@article{schiller1976quantitative,
  title={Quantitative studies of single-cell properties in monkey striate cortex. {III}. Spatial frequency},
  author={Schiller, Peter H. and Finlay, Barbara L. and Volman, Susan F.},
  journal={Journal of Neurophysiology}, volume={39}, number={6}, pages={1334--1351}, year={1976}, pmid={825624}
}
""" + BIBTEX_MARQUES2021
BIBTEX_CAVANAUGH2002 = """@article{cavanaugh2002nature,
  title={Nature and interaction of signals from the receptive field center and surround in macaque {V1} neurons},
  author={Cavanaugh, James R. and Bair, Wyeth and Movshon, J. Anthony},
  journal={Journal of Neurophysiology}, volume={88}, number={5}, pages={2530--2546}, year={2002},
  doi={10.1152/jn.00692.2001}
}
""" + BIBTEX_MARQUES2021



CARD = {
    "species": "macaque monkey",
    "recording": "published distributions of a V1 cell property (histograms digitised from the study; the "
                 "neuroids are the cells)",
    "metric": "KS similarity: 1 − the Kolmogorov-Smirnov distance between the model units' and the cells' "
              "distributions over the data's bins, normalised by its largest possible value; mean over 1000 "
              "bootstrap resamples of as many model units as there are cells",
    "ceiling": "the same similarity of the cells' distribution against resamples of itself",
    "formula": "score = raw / ceiling (not clipped)",
    "data_source": "github.com/brain-score/vision (the Marques et al. 2021 benchmarks' histograms)",
    "licence": "MIT",
}
"""The benchmark cards' words (species, metric, ceiling, data source, licence); the counts are in
``card_counts.json``, counted in the data by ``tools/benchmark_cards.py``."""

@register_benchmark("Marques2020_DeValois1982-pref_or", parent="V1-orientation")
def _preferred_orientation():
    from .benchmark import benchmark
    return benchmark("Marques2020_DeValois1982-pref_or", "DeValois1982a", "preferred_orientation",
                     "V1-orientation", BIBTEX_DEVALOIS1982A)


@register_benchmark("Marques2020_DeValois1982-peak_sf", parent="V1-spatial_frequency")
def _peak_spatial_frequency():
    from .benchmark import benchmark
    return benchmark("Marques2020_DeValois1982-peak_sf", "DeValois1982b", "peak_spatial_frequency",
                     "V1-spatial_frequency", BIBTEX_DEVALOIS1982B)


@register_benchmark("Marques2020_Schiller1976-sf_selective", parent="V1-spatial_frequency")
def _spatial_frequency_selective():
    from .benchmark import benchmark
    return benchmark("Marques2020_Schiller1976-sf_selective", "Schiller1976c", "spatial_frequency_selective",
                     "V1-spatial_frequency", BIBTEX_SCHILLER1976)


@register_benchmark("Marques2020_Schiller1976-sf_bandwidth", parent="V1-spatial_frequency")
def _spatial_frequency_bandwidth():
    from .benchmark import benchmark
    return benchmark("Marques2020_Schiller1976-sf_bandwidth", "Schiller1976c", "spatial_frequency_bandwidth",
                     "V1-spatial_frequency", BIBTEX_SCHILLER1976)


@register_benchmark("Marques2020_Cavanaugh2002-surround_suppression_index", parent="V1-surround_modulation")
def _surround_suppression_index():
    from .benchmark import benchmark
    return benchmark("Marques2020_Cavanaugh2002-surround_suppression_index", "Cavanaugh2002a",
                     "surround_suppression_index", "V1-surround_modulation", BIBTEX_CAVANAUGH2002)


@register_benchmark("Marques2020_Cavanaugh2002-grating_summation_field", parent="V1-receptive_field_size")
def _grating_summation_field():
    from .benchmark import benchmark
    return benchmark("Marques2020_Cavanaugh2002-grating_summation_field", "Cavanaugh2002a",
                     "grating_summation_field", "V1-receptive_field_size", BIBTEX_CAVANAUGH2002)


@register_benchmark("Marques2020_Cavanaugh2002-surround_diameter", parent="V1-receptive_field_size")
def _surround_diameter():
    from .benchmark import benchmark
    return benchmark("Marques2020_Cavanaugh2002-surround_diameter", "Cavanaugh2002a", "surround_diameter",
                     "V1-receptive_field_size", BIBTEX_CAVANAUGH2002)
