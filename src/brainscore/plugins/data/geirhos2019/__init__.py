"""Human (and network) object recognition on cue-conflict, edge and silhouette images.

Geirhos, R., Rubisch, P., Michaelis, C., Bethge, M., Wichmann, F. A. & Brendel, W. "ImageNet-trained
CNNs are biased towards texture; increasing shape bias improves accuracy and robustness." ICLR
(2019). Files: github.com/rgeirhos/texture-vs-shape (stimuli CC-BY-4.0), ``stimuli/`` and
``raw-data/``. The same trials are the ``cue-conflict``, ``edge`` and ``silhouette`` datasets of
Geirhos et al. 2021 (model-vs-human), which the reference's ``Geirhos2021`` benchmarks use.

Registered
----------
Stimulus sets (16 categories: airplane, bear, bicycle, bird, boat, bottle, car, cat, chair, clock,
dog, elephant, keyboard, knife, oven, truck):

- ``Geirhos2019.cue-conflict``: 1,280 style-transfer images ``<shape><n>-<texture><m>.png``;
  ``stimulus_id`` is the file stem (``airplane1-bicycle2``), ``truth``/``category`` the shape
  category, ``original_image`` / ``original_image_category`` / ``original_image_variation`` the
  shape image (``airplane1`` / ``airplane`` / ``1``), ``conflict_image`` / ``conflict_image_category``
  / ``conflict_image_variation`` the texture image, ``condition`` 0. 80 images have the same shape
  and texture category (no cue conflict).
- ``Geirhos2019.edge``, ``Geirhos2019.silhouette``: 160 images each (``airplane1`` ...), with
  ``truth``/``category``, ``image_variation`` and ``condition`` 0.

Behavioural assemblies (:class:`~brainscore.data.BehavioralAssembly`, one presentation per trial,
values = the answer ``choice``; subjects in order, trials in the order shown):

- ``Geirhos2019.cue-conflict`` (10 subjects x 1,280 trials), ``Geirhos2019.edge`` and
  ``Geirhos2019.silhouette`` (10 x 160): coordinates ``stimulus_id`` (the image name after the
  trial prefix of ``imagename``, as the reference packages it), ``truth``/``category``, ``choice``,
  ``condition``, ``subject`` (``subject-01`` ...), ``session``, ``trial``, ``response_time`` (s),
  ``imagename``, and every stimulus-set column (merged by ``stimulus_id``). A subject who did not
  answer in time has choice ``na``.
- ``Geirhos2019.<experiment>.alexnet`` / ``.googlenet`` / ``.vgg``: the networks' published
  responses (Caffe models, one trial per image; ``response_time`` NaN), the source of the paper's
  figures for those networks (e.g. their shape bias).
- ``Geirhos2019.cue-conflict-shape-instructed`` and ``Geirhos2019.cue-conflict-texture-instructed``
  (10 subjects x 1,280 trials each): the paper's two instructed experiments on the same cue-conflict
  images (``raw-data/style-transfer-512-nomask-content-guessing-experiment`` and
  ``...-texture-guessing-experiment``): the subjects were told to report the shape, or the texture.
  Coordinates as above (``truth``/``category`` is the shape category, as in the files), plus
  ``instruction`` (``shape`` or ``texture``) and ``instructed_category``: the category the subject was
  asked to report, the shape (first name of the image, ``original_image_category``) or the texture
  (second name, ``conflict_image_category``; the files' ``category`` column holds the shape in both).
  Their stimulus set is ``Geirhos2019.cue-conflict`` (the same files, declared once). The networks'
  files beside them (``.alexnet`` ...) hold the same answers as the uninstructed experiment's: a
  network is not instructed.

Every file is declared as its own source with its sha256 (``manifest.json``, written by
``make_manifest.py``) and its URL in the repository at :data:`COMMIT`.
"""
import json
from pathlib import Path

from brainscore.data.store import Source, declare
from brainscore.registry import register_dataset, register_stimulus_set

COMMIT = "ccd0c01d42c0a8a834e90ec141e7f24fa915dc23"
MIRROR_FOLDER = "geirhos2019_texture_vs_shape"
_URL = f"https://raw.githubusercontent.com/rgeirhos/texture-vs-shape/{COMMIT}"
_MANIFEST = json.loads(Path(__file__).with_name("manifest.json").read_text())
EXPERIMENTS = ("cue-conflict", "edge", "silhouette", "cue-conflict-shape-instructed", "cue-conflict-texture-instructed")
NETWORKS = ("alexnet", "googlenet", "vgg")
#: experiment -> the experiment whose images it showed (declared there, once)
SHARED_STIMULI = {"cue-conflict-shape-instructed": "cue-conflict", "cue-conflict-texture-instructed": "cue-conflict"}
#: instructed experiment -> (what the subjects were told to report, the stimulus-set column that holds it)
INSTRUCTIONS = {"cue-conflict-shape-instructed": ("shape", "original_image_category"),
                "cue-conflict-texture-instructed": ("texture", "conflict_image_category")}


def _sources(files: dict) -> list[Source]:
    return [Source(f"{MIRROR_FOLDER}/{path}", sha256, f"{_URL}/{path}") for path, sha256 in sorted(files.items())]


# experiment -> {"stimuli": [Source, ...], "responses": [Source, ...]}
SOURCES = {experiment: {kind: _sources(files) for kind, files in _MANIFEST[experiment].items()}
           for experiment in EXPERIMENTS}
declare("Geirhos2019", *(s for entry in SOURCES.values() for kind in ("responses", "stimuli") for s in entry.get(kind, ())))
for _experiment, _shown in SHARED_STIMULI.items():
    SOURCES[_experiment]["stimuli"] = SOURCES[_shown]["stimuli"]


@register_stimulus_set("Geirhos2019.cue-conflict")
def _stimuli_cue_conflict():
    from .packaging import load_stimulus_set
    return load_stimulus_set("cue-conflict")


@register_stimulus_set("Geirhos2019.edge")
def _stimuli_edge():
    from .packaging import load_stimulus_set
    return load_stimulus_set("edge")


@register_stimulus_set("Geirhos2019.silhouette")
def _stimuli_silhouette():
    from .packaging import load_stimulus_set
    return load_stimulus_set("silhouette")


@register_dataset("Geirhos2019.cue-conflict")
def _humans_cue_conflict():
    from .packaging import load_responses
    return load_responses("cue-conflict", "humans")


@register_dataset("Geirhos2019.edge")
def _humans_edge():
    from .packaging import load_responses
    return load_responses("edge", "humans")


@register_dataset("Geirhos2019.silhouette")
def _humans_silhouette():
    from .packaging import load_responses
    return load_responses("silhouette", "humans")


@register_dataset("Geirhos2019.cue-conflict.alexnet")
def _alexnet_cue_conflict():
    from .packaging import load_responses
    return load_responses("cue-conflict", "alexnet")


@register_dataset("Geirhos2019.cue-conflict.googlenet")
def _googlenet_cue_conflict():
    from .packaging import load_responses
    return load_responses("cue-conflict", "googlenet")


@register_dataset("Geirhos2019.cue-conflict.vgg")
def _vgg_cue_conflict():
    from .packaging import load_responses
    return load_responses("cue-conflict", "vgg")


@register_dataset("Geirhos2019.edge.alexnet")
def _alexnet_edge():
    from .packaging import load_responses
    return load_responses("edge", "alexnet")


@register_dataset("Geirhos2019.edge.googlenet")
def _googlenet_edge():
    from .packaging import load_responses
    return load_responses("edge", "googlenet")


@register_dataset("Geirhos2019.edge.vgg")
def _vgg_edge():
    from .packaging import load_responses
    return load_responses("edge", "vgg")


@register_dataset("Geirhos2019.silhouette.alexnet")
def _alexnet_silhouette():
    from .packaging import load_responses
    return load_responses("silhouette", "alexnet")


@register_dataset("Geirhos2019.silhouette.googlenet")
def _googlenet_silhouette():
    from .packaging import load_responses
    return load_responses("silhouette", "googlenet")


@register_dataset("Geirhos2019.silhouette.vgg")
def _vgg_silhouette():
    from .packaging import load_responses
    return load_responses("silhouette", "vgg")


@register_dataset("Geirhos2019.cue-conflict-shape-instructed")
def _humans_shape_instructed():
    from .packaging import load_responses
    return load_responses("cue-conflict-shape-instructed", "humans")


@register_dataset("Geirhos2019.cue-conflict-texture-instructed")
def _humans_texture_instructed():
    from .packaging import load_responses
    return load_responses("cue-conflict-texture-instructed", "humans")


@register_dataset("Geirhos2019.cue-conflict-shape-instructed.alexnet")
def _alexnet_shape_instructed():
    from .packaging import load_responses
    return load_responses("cue-conflict-shape-instructed", "alexnet")


@register_dataset("Geirhos2019.cue-conflict-shape-instructed.googlenet")
def _googlenet_shape_instructed():
    from .packaging import load_responses
    return load_responses("cue-conflict-shape-instructed", "googlenet")


@register_dataset("Geirhos2019.cue-conflict-shape-instructed.vgg")
def _vgg_shape_instructed():
    from .packaging import load_responses
    return load_responses("cue-conflict-shape-instructed", "vgg")


@register_dataset("Geirhos2019.cue-conflict-texture-instructed.alexnet")
def _alexnet_texture_instructed():
    from .packaging import load_responses
    return load_responses("cue-conflict-texture-instructed", "alexnet")


@register_dataset("Geirhos2019.cue-conflict-texture-instructed.googlenet")
def _googlenet_texture_instructed():
    from .packaging import load_responses
    return load_responses("cue-conflict-texture-instructed", "googlenet")


@register_dataset("Geirhos2019.cue-conflict-texture-instructed.vgg")
def _vgg_texture_instructed():
    from .packaging import load_responses
    return load_responses("cue-conflict-texture-instructed", "vgg")
