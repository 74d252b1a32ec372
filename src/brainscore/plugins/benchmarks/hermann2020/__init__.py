"""Shape bias on the cue-conflict images (Geirhos et al. 2019), as Hermann, Chen & Kornblith (2020) measure it.

Settings, as the reference's ``Hermann2020`` benchmarks:

- stimuli: the 1,280 cue-conflict images of Geirhos et al. (2019) (stimulus set
  ``Geirhos2019.cue-conflict``), shown as they are, filling the model's field of view (the
  reference places them on no screen; no visual angle applies);
- the label task over the 16 sorted categories, one trial per image;
- the 80 images whose shape and texture categories coincide are left out (1,200 trials remain);
- ``-shape_match``: fraction of the remaining answers naming the shape category;
  ``-texture_match``: fraction naming the texture category;
  ``-shape_bias``: shape match / (shape match + texture match) (humans: 0.96; ImageNet CNNs
  0.17-0.43 in Geirhos et al. 2019);
- ceiling 1 (the score is the raw value); version 1; parent ``behavior_vision``.
"""
from brainscore.registry import register_benchmark

BIBTEX = """@inproceedings{hermann2020origins,
  title={The origins and prevalence of texture bias in convolutional neural networks},
  author={Hermann, Katherine and Chen, Ting and Kornblith, Simon},
  booktitle={Advances in Neural Information Processing Systems}, volume={33}, pages={19000--19015}, year={2020}
}"""



CARD = {
    "species": "none: scored against the images' shape and texture categories",
    "recording": "no measurement: the cue-conflict images' shape and texture labels (the 80 images whose two "
                 "categories coincide are left out, 1,200 remain)",
    "ceiling": "none (1)",
    "formula": "score = raw",
    "data_source": "github.com/rgeirhos/texture-vs-shape (stimuli), Geirhos et al. 2019",
    "licence": "CC-BY-4.0 (the stimuli)",
}
CARDS = {
    "Hermann2020cueconflict-shape_bias": {"metric": "shape bias = shape matches / (shape matches + texture matches) "
                                                    "over the model's 16-way answers"},
    "Hermann2020cueconflict-shape_match": {"metric": "the fraction of the model's 16-way answers that name the shape "
                                                     "category"},
    "Hermann2020cueconflict-texture_match": {"metric": "the fraction of the model's 16-way answers that name the "
                                                       "texture category"},
}
"""The benchmark cards' words (species, metric, ceiling, data source, licence); the counts are in
``card_counts.json``, counted in the data by ``tools/benchmark_cards.py``."""

@register_benchmark("Hermann2020cueconflict-shape_bias", parent="behavior_vision")
def _shape_bias():
    from .benchmark import hermann2020
    return hermann2020("shape_bias")


@register_benchmark("Hermann2020cueconflict-shape_match", parent="behavior_vision")
def _shape_match():
    from .benchmark import hermann2020
    return hermann2020("shape_match")


@register_benchmark("Hermann2020cueconflict-texture_match", parent="behavior_vision")
def _texture_match():
    from .benchmark import hermann2020
    return hermann2020("texture_match")
