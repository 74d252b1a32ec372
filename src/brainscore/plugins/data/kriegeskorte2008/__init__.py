"""The 92 object images of Kriegeskorte et al. (2008) and the RDMs measured with them.

Kriegeskorte, N., Mur, M., Ruff, D. A., Kiani, R., Bodurka, J., Esteky, H., Tanaka, K. &
Bandettini, P. A. "Matching categorical object representations in inferior temporal cortex of man
and monkey." Neuron 60:1126 (2008). Monkey data: Kiani, Esteky, Mirpour & Tanaka, J. Neurophysiol.
97:4296 (2007). Judgements: Mur, Meys, Bodurka, Goebel, Bandettini & Kriegeskorte, Front. Psychol.
4:128 (2013). Files: github.com/rsagroup/rsatoolbox (MIT), ``demos/92imageData/``.

Registered
----------
- stimulus set ``Kriegeskorte2008``: the 92 images (175 x 175 RGB, objects on grey), ``stimulus_id``
  ``img01`` ... ``img92`` in the order of every RDM, with ``image_number`` (1-92), ``category`` (one
  of human bodypart, human face, nonhuman bodypart, nonhuman face, natural inanimate, artificial
  inanimate) and 0/1 flags ``animate``, ``human``, ``face``, ``animal``, ``natural`` (from the paper's
  supplemental data).
- ``Kriegeskorte2008.IT``: human IT fMRI RDMs (1 - Pearson r of 316-voxel patterns), 4 subjects
  (BE, KO, SN, TI) x 2 sessions: 8 RDMs.
- ``Kiani2007.IT``: the monkey IT RDM (674 cells; 1 - Pearson r), a single RDM.
- ``Mur2013.judgements``: dissimilarity-judgement RDMs (multi-arrangement) of 16 subjects.

RDM assemblies
--------------
A :class:`~brainscore.data.DataAssembly` of shape ``(rdm, presentation, presentation_b)``: one
92 x 92 dissimilarity matrix per entry of ``rdm``, whose coordinates say whose it is (``subject``,
``session``, ``name`` as in the .mat file, ``region``, ``species``). Rows (``presentation``) carry
``stimulus_id`` and the stimulus set's columns; columns (``presentation_b``) carry the same ids as
``stimulus_id_b`` (the RDM layout of :mod:`brainscore.metrics.similarity.rdm`, so ``assembly.isel(rdm=0)`` is an
RDM its metrics accept). The stimulus set is in ``assembly.attrs["stimulus_set"]``.

Images: the rsatoolbox repository holds the images only inside
``Kriegeskorte_Neuron2008_supplementalData.mat`` (field ``stimuli_92objs.image``); the mirror's
``images92/imgNN.png`` were rendered from it with PIL's PNG defaults, so they have no URL of their
own. When they are missing, they are rendered again from that (downloadable) file into the store,
where their sha256 is checked against the same manifest.
"""
import json
from pathlib import Path

from brainscore.data.store import Source, declare
from brainscore.registry import register_dataset, register_stimulus_set

COMMIT = "f1f83cadb7243492a1aae7460466e0f0140b20ac"
_URL = f"https://raw.githubusercontent.com/rsagroup/rsatoolbox/{COMMIT}/demos/92imageData"
_MANIFEST = json.loads(Path(__file__).with_name("manifest.json").read_text())

MAT_SOURCES = {name: Source(f"kriegeskorte2008/{name}", sha256, f"{_URL}/{name}")
               for name, sha256 in sorted(_MANIFEST["mat"].items())}
IMAGE_SOURCES = {name: Source(f"kriegeskorte2008/images92/{name}", sha256, None)
                 for name, sha256 in sorted(_MANIFEST["images"].items())}
declare("Kriegeskorte2008", *MAT_SOURCES.values(), *IMAGE_SOURCES.values())


@register_stimulus_set("Kriegeskorte2008")
def _stimuli():
    from .packaging import load_stimulus_set
    return load_stimulus_set()


@register_dataset("Kriegeskorte2008.IT")
def _human_it():
    from .packaging import load_rdms
    return load_rdms("human_IT")


@register_dataset("Kiani2007.IT")
def _monkey_it():
    from .packaging import load_rdms
    return load_rdms("monkey_IT")


@register_dataset("Mur2013.judgements")
def _judgements():
    from .packaging import load_rdms
    return load_rdms("judgements")
