"""Geirhos et al. (2019)'s instructed cue-conflict experiments: can a model report the cue it is asked for?

The question
------------
On a cue-conflict image (the shape of one category with the texture of another, by style transfer),
ImageNet-trained CNNs name the texture and people the shape (Geirhos et al. 2019, ICLR, Fig. 4: shape
bias 17-43 % against 96 %). That contrast is measured with an *uninstructed* task (the
``Geirhos2021cueconflict-*`` and ``Hermann2020cueconflict-*`` benchmarks), so it mixes two things: which cue
an observer prefers, and which cue it *can* report. The same paper also asked 10 people each to report the
shape (``content-guessing``) or the texture (``texture-guessing``) of the same 1,280 images. Told to report
the shape, people name it on 82 % of the cue-conflict trials; told to report the texture, they name it on
only 14 % (and still name the shape on 32 %: shape 69.6 % of their shape-or-texture decisions, the paper's
figure of the instructed experiments). The texture of these images is hard for people to report even on
purpose; their shape is easy. These benchmarks ask a model the same two questions.

How a model is asked
--------------------
A network's ImageNet classes cannot be instructed. It is given the task the subjects were given through the
``BrainModel`` task interface instead: a linear readout (Brain-Score's ``probabilities`` task:
standardised features of the model's behavioural readout layer, multinomial logistic regression, C = 1e-3)
is fitted on cue-conflict images labelled with the instructed cue (the shape category, or the texture
category: the second name of the image file), then asked for the instructed cue of images it was not fitted
on. Cross-validation over 3 folds (:class:`~brainscore.benchmarks.readout_task.ReadoutTaskBenchmark`) gives
every image one held-out answer; the folds keep the exemplar of the instructed cue (the shape's source
photograph, ``original_image``, one of 10 per category; or the texture's, ``conflict_image``, one of 3) in
one fold, so a readout is never asked about an exemplar it was fitted on (with a random split, a readout of the
pixels names 94.8 % of the held-out shapes, having seen their photographs in other textures; with exemplar
folds, 36.5 %: ``perf/geirhos2019.py --leakage``). Seed 0; the images shown at
3 degrees of visual angle, as to the subjects; all 1,280 images fit the readout, the 1,200 cue-conflict
ones (shape and texture categories differ) are scored, as in the paper's figure.

Scores
------
- ``Geirhos2019{shape,texture}instructed-accuracy_distance`` (instructed-cue accuracy): the model's
  held-out accuracy ``a_m`` compared with each subject's accuracy ``a_s`` on the instructed cue by
  Brain-Score's ``accuracy_distance`` (the reference's metric of its Scialom et al. 2024 benchmarks),
  ``d = 1 - |a_m - a_s| / max(a_s, 1 - a_s)``, raw = |mean over the 10 subjects|; ceiling = the same
  statistic between the subjects (45 pairs, the first of a pair in the model's place): the spread between
  subjects; ``score = raw / ceiling`` clipped to [0, 1]. A model is human-like here when the cue is as
  available to its readout as to people: a readout that reports the texture far better than people do
  scores low, as one that cannot report the shape.
- ``Geirhos2019{shape,texture}instructed-error_consistency``: do the model's readout and the subjects fail
  on the same images? Cohen's kappa between the model's and each subject's correctness on the instructed
  cue (Geirhos, Meding & Wichmann 2020), Brain-Score's ``error_consistency`` metric and its human-to-human
  ceiling (45 pairs), ``score = raw / ceiling`` clipped to [0, 1], as the ``Geirhos2021`` benchmarks.

Each score's ``attrs`` hold the model's held-out ``accuracy``, the subjects' mean ``human_accuracy`` and the
model's ``shape_match``, ``texture_match`` and ``shape_bias`` on the cue-conflict images. Version 1 each;
family node ``Geirhos2019`` under ``behavior_vision``: its four scores count once in the behavioural mean,
apart from the ``Geirhos2021`` family (which mirrors the reference's benchmarks and keeps its numbers).
Data: ``Geirhos2019.cue-conflict-{shape,texture}-instructed`` (data plugin ``geirhos2019``).

Observed in the data: in the texture-instructed experiment, subjects 01, 02 and 09 named the shape on 79-88 %
of the cue-conflict trials (the texture on 1-4 %); the paper's figure includes them, and so do these
benchmarks (their spread lowers the ceilings).
"""
from brainscore.registry import register_benchmark, register_tree_node

register_tree_node("Geirhos2019", parent="behavior_vision")

BIBTEX = """@inproceedings{geirhos2019imagenet,
  title={ImageNet-trained {CNNs} are biased towards texture; increasing shape bias improves accuracy and robustness},
  author={Geirhos, Robert and Rubisch, Patricia and Michaelis, Claudio and Bethge, Matthias and Wichmann, Felix A.
          and Brendel, Wieland},
  booktitle={International Conference on Learning Representations}, year={2019}
}
@inproceedings{geirhos2020beyond,
  title={Beyond accuracy: quantifying trial-by-trial behaviour of {CNNs} and humans by measuring error consistency},
  author={Geirhos, Robert and Meding, Kristof and Wichmann, Felix A.},
  booktitle={Advances in Neural Information Processing Systems}, volume={33}, pages={13890--13902}, year={2020}
}"""

_READOUT = ("a linear readout of the model (Brain-Score's probabilities task) fitted on images labelled with the "
            "instructed cue, asked for it on held-out images: 3 folds that keep each exemplar of the cue in one fold "
            "(seed 0), 1,280 images fitted, the 1,200 cue-conflict ones scored")
CARD = {
    "species": "human (10 observers per instruction)",
    "data_source": "github.com/rgeirhos/texture-vs-shape (stimuli and raw-data/style-transfer-512-nomask-"
                   "{content,texture}-guessing-experiment), Geirhos et al. 2019",
    "licence": "CC-BY-4.0 (the stimuli)",
}
_ACCURACY = {
    "metric": f"accuracy distance d = 1 − |a_m − a_s| / max(a_s, 1 − a_s) between the model's held-out accuracy a_m "
              f"and each observer's a_s on the instructed cue (Brain-Score's accuracy_distance); raw = |mean over "
              f"observers|; the model: {_READOUT}",
    "ceiling": "the same d between every pair of the 10 observers (45 pairs): the spread between subjects",
    "formula": "score = raw / ceiling, clipped to [0, 1]",
}
_CONSISTENCY = {
    "metric": f"Cohen's κ = (c_obs − c_exp) / (1 − c_exp), c_exp = a_m a_h + (1 − a_m)(1 − a_h), between the model's "
              f"and each observer's correct/incorrect reports of the instructed cue (Geirhos et al. 2020); raw = "
              f"|mean over observers|; the model: {_READOUT}",
    "ceiling": "the same κ between every pair of the 10 observers (45 pairs)",
    "formula": "score = raw / ceiling, clipped to [0, 1]",
}
_SHAPE = {"recording": "one 16-way category choice per trial, the observers told to report the object's shape "
                       "(Geirhos et al. 2019's content-guessing experiment)"}
_TEXTURE = {"recording": "one 16-way category choice per trial, the observers told to report the object's texture "
                         "(Geirhos et al. 2019's texture-guessing experiment)"}
CARDS = {
    "Geirhos2019shapeinstructed-accuracy_distance": {**_SHAPE, **_ACCURACY},
    "Geirhos2019textureinstructed-accuracy_distance": {**_TEXTURE, **_ACCURACY},
    "Geirhos2019shapeinstructed-error_consistency": {**_SHAPE, **_CONSISTENCY},
    "Geirhos2019textureinstructed-error_consistency": {**_TEXTURE, **_CONSISTENCY},
}
"""The benchmark cards' words (species, metric, ceiling, data source, licence); the counts are in
``card_counts.json``, counted in the data by ``tools/benchmark_cards.py``."""


@register_benchmark("Geirhos2019shapeinstructed-accuracy_distance", parent="Geirhos2019")
def _shape_accuracy():
    from .benchmark import instructed
    return instructed("shape", "accuracy_distance")


@register_benchmark("Geirhos2019textureinstructed-accuracy_distance", parent="Geirhos2019")
def _texture_accuracy():
    from .benchmark import instructed
    return instructed("texture", "accuracy_distance")


@register_benchmark("Geirhos2019shapeinstructed-error_consistency", parent="Geirhos2019")
def _shape_error_consistency():
    from .benchmark import instructed
    return instructed("shape", "error_consistency")


@register_benchmark("Geirhos2019textureinstructed-error_consistency", parent="Geirhos2019")
def _texture_error_consistency():
    from .benchmark import instructed
    return instructed("texture", "error_consistency")
