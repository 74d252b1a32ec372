"""Geirhos et al. behavioural benchmarks on cue-conflict, edge and silhouette images.

Data: the human trials of Geirhos et al. (2019, ICLR; data plugin ``geirhos2019``), the same trials
as the ``cue-conflict``, ``edge`` and ``silhouette`` datasets of Geirhos et al. (2021, NeurIPS,
"Partial success in closing the gap between human and machine vision") that the reference's
``Geirhos2021`` benchmarks use. None of these three datasets excludes a condition. Version 1 each.

Error consistency (``Geirhos2021<dataset>-error_consistency``; Geirhos, Meding & Wichmann 2020):

- the model does the label task over the sorted set of the dataset's 16 ``truth`` categories,
  one trial per image, the images shown at 3 degrees of visual angle (placed on the model's screen);
- raw = |mean over conditions, then subjects, of Cohen's kappa| between the model's correctness
  and each of the 10 subjects' (Brain-Score's ``error_consistency``);
- ceiling = the same statistic over all 45 pairs of human subjects;
- score = raw / ceiling clipped to [0, 1], with ``attrs["raw"]`` and ``attrs["ceiling"]``;
- parent ``Geirhos2021`` (under ``behavior_vision``).

Accuracy (``Geirhos2021<dataset>-top1``, engineering):

- the same label task and visual angle, 10 trials per image (as the reference; a deterministic
  model answers each the same);
- score = fraction of trials answered with the ``truth`` label (for cue-conflict images: the shape
  category); ceiling 1; parent ``Geirhos2021-top1`` (under ``engineering_vision``).
"""
from brainscore.registry import register_benchmark, register_tree_node

register_tree_node("Geirhos2021", parent="behavior_vision")
register_tree_node("Geirhos2021-top1", parent="engineering_vision")

BIBTEX = """@inproceedings{geirhos2021partial,
  title={Partial success in closing the gap between human and machine vision},
  author={Geirhos, Robert and Narayanappa, Kantharaju and Mitzkus, Benjamin and Thieringer, Tizian and Bethge, Matthias
          and Wichmann, Felix A. and Brendel, Wieland},
  booktitle={Advances in Neural Information Processing Systems}, volume={34}, pages={23885--23899}, year={2021}
}
@inproceedings{geirhos2019imagenet,
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



CARD = {
    "species": "human (10 observers per experiment)",
    "recording": "one 16-way category choice per trial",
    "metric": "Cohen's κ = (c_obs − c_exp) / (1 − c_exp), c_exp = a_m a_h + (1 − a_m)(1 − a_h), between the "
              "model's and each observer's correct/incorrect answers (a: accuracies); raw = |mean over "
              "conditions, then observers|",
    "ceiling": "the same κ between every pair of the 10 observers (45 pairs)",
    "formula": "score = raw / ceiling, clipped to [0, 1]",
    "data_source": "github.com/rgeirhos/texture-vs-shape (stimuli and raw-data), Geirhos et al. 2019",
    "licence": "CC-BY-4.0 (the stimuli)",
}
_TOP1 = {"species": "none: scored against the images' category labels",
         "recording": "no measurement: the images' 16 category labels",
         "metric": "top-1 accuracy: the fraction of trials answered with the image's category (16-way, 10 trials "
                   "per image)", "ceiling": "none (1)", "formula": "score = accuracy"}
CARDS = {f"Geirhos2021{dataset}-top1": _TOP1 for dataset in ("cueconflict", "edge", "silhouette")}
"""The benchmark cards' words (species, metric, ceiling, data source, licence); the counts are in
``card_counts.json``, counted in the data by ``tools/benchmark_cards.py``."""

@register_benchmark("Geirhos2021cueconflict-error_consistency", parent="Geirhos2021")
def _cue_conflict_error_consistency():
    from .benchmark import error_consistency
    return error_consistency("cue-conflict")


@register_benchmark("Geirhos2021edge-error_consistency", parent="Geirhos2021")
def _edge_error_consistency():
    from .benchmark import error_consistency
    return error_consistency("edge")


@register_benchmark("Geirhos2021silhouette-error_consistency", parent="Geirhos2021")
def _silhouette_error_consistency():
    from .benchmark import error_consistency
    return error_consistency("silhouette")


@register_benchmark("Geirhos2021cueconflict-top1", parent="Geirhos2021-top1")
def _cue_conflict_top1():
    from .benchmark import top1
    return top1("cue-conflict")


@register_benchmark("Geirhos2021edge-top1", parent="Geirhos2021-top1")
def _edge_top1():
    from .benchmark import top1
    return top1("edge")


@register_benchmark("Geirhos2021silhouette-top1", parent="Geirhos2021-top1")
def _silhouette_top1():
    from .benchmark import top1
    return top1("silhouette")
