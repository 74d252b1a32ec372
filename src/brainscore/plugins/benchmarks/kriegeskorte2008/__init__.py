"""RSA benchmarks on the 92 object images of Kriegeskorte et al. (2008).

The model is recorded from IT on the 92 images; its RDM (1 - Pearson r between the images'
response patterns) is compared with measured RDMs by the Spearman correlation of the upper
triangles (Brain-Score's ``rdm``), averaged over the measured RDMs and divided by their RSA noise
ceiling (Nili et al. 2014 upper bound; the leave-one-out lower bound is in the ceiling's attrs).
Version 1 each. Settings:

- ``Kriegeskorte2008.IT-rdm``: human IT fMRI, 4 subjects x 2 sessions = 8 RDMs (the sessions are
  separate measurements). raw = mean over the 8 RDMs of Spearman(model RDM, RDM); ceiling = RSA
  noise ceiling over the same 8 RDMs (each RDM one "subject", so that score and ceiling average over
  the same units). 2.9 degrees of visual angle: Kriegeskorte et al. (2008) showed the images at a
  width of 2.9 degrees in the fMRI experiment. Parent ``IT``.
- ``Kiani2007.IT-rdm``: macaque IT, one RDM of 674 cells (Kiani et al. 2007). With a single RDM no
  subject split is possible, so there is no noise ceiling: the ceiling is 1 and the score is the
  raw Spearman correlation (documented deviation from a ceiled benchmark). 7 degrees of visual angle,
  the monkeys' image size as we read Kiani et al. (2007); this value is not checked against the
  paper's text here. Parent ``IT``.
- ``Mur2013-rdm``: dissimilarity judgements of 16 human subjects (multi-arrangement, Mur et al.
  2013). raw = mean over subjects of Spearman(model RDM, subject RDM); ceiling = RSA noise ceiling
  over the 16 subjects. The model is recorded from its IT layer, the representation Mur et al.
  compare the judgements with. The images were arranged on a screen at no fixed visual angle; 2.9
  degrees (the fMRI experiment's size) is used so that the model sees them as in the IT benchmark.
  Parent ``behavior_vision``.

All record one trial in the 70-170 ms time bin.
"""
from brainscore.registry import register_benchmark

BIBTEX_KRIEGESKORTE2008 = """@article{kriegeskorte2008matching,
  title={Matching categorical object representations in inferior temporal cortex of man and monkey},
  author={Kriegeskorte, Nikolaus and Mur, Marieke and Ruff, Douglas A. and Kiani, Roozbeh and Bodurka, Jerzy
          and Esteky, Hossein and Tanaka, Keiji and Bandettini, Peter A.},
  journal={Neuron}, volume={60}, number={6}, pages={1126--1141}, year={2008},
  doi={10.1016/j.neuron.2008.10.043}
}"""

BIBTEX_KIANI2007 = """@article{kiani2007object,
  title={Object category structure in response patterns of neuronal population in monkey inferior temporal cortex},
  author={Kiani, Roozbeh and Esteky, Hossein and Mirpour, Koorosh and Tanaka, Keiji},
  journal={Journal of Neurophysiology}, volume={97}, number={6}, pages={4296--4309}, year={2007},
  doi={10.1152/jn.00024.2007}
}"""

BIBTEX_MUR2013 = """@article{mur2013human,
  title={Human object-similarity judgments reflect and transcend the primate-IT object representation},
  author={Mur, Marieke and Meys, Mirjam and Bodurka, Jerzy and Goebel, Rainer and Bandettini, Peter A.
          and Kriegeskorte, Nikolaus},
  journal={Frontiers in Psychology}, volume={4}, pages={128}, year={2013},
  doi={10.3389/fpsyg.2013.00128}
}"""



CARD = {
    "metric": "model RDM = 1 − Pearson's r between the images' response patterns; raw = mean over the measured "
              "RDMs of Spearman's ρ between the upper triangles of the model's and the measured RDM",
    "ceiling": "RSA noise ceiling, upper bound (Nili et al. 2014): c = mean over the measured RDMs of Spearman's "
               "ρ(RDM, mean of all RDMs)",
    "formula": "score = raw / c",
    "data_source": "github.com/rsagroup/rsatoolbox (demos/92imageData), Kriegeskorte et al. 2008",
    "licence": "MIT (the rsatoolbox repository); image copyright unclear (Kiani et al. 2007)",
}
CARDS = {
    "Kriegeskorte2008.IT-rdm": {"species": "human", "recording": "fMRI of inferior temporal cortex, 4 subjects x 2 "
                                                                 "sessions (each session one RDM)"},
    "Kiani2007.IT-rdm": {"species": "macaque monkey", "recording": "one RDM of IT cells recorded by Kiani et al. 2007 "
                                                                  "(674 cells in the paper; the data hold the RDM)",
                         "ceiling": "none: one RDM, no split is possible (ceiling 1)", "formula": "score = raw"},
    "Mur2013-rdm": {"species": "human", "recording": "dissimilarity judgements (multi-arrangement), one RDM per "
                                                     "subject, Mur et al. 2013"},
}
"""The benchmark cards' words (species, metric, ceiling, data source, licence); the counts are in
``card_counts.json``, counted in the data by ``tools/benchmark_cards.py``."""

@register_benchmark("Kriegeskorte2008.IT-rdm", parent="IT")
def _human_it():
    from .benchmark import human_it
    return human_it()


@register_benchmark("Kiani2007.IT-rdm", parent="IT")
def _monkey_it():
    from .benchmark import monkey_it
    return monkey_it()


@register_benchmark("Mur2013-rdm", parent="behavior_vision")
def _judgements():
    from .benchmark import judgements
    return judgements()
