"""Turn the Kriegeskorte 2008 source files into a StimulusSet and RDM assemblies (see ``__init__``)."""
from __future__ import annotations

import io
import re
from contextlib import contextmanager

import numpy as np
import pandas as pd

from brainscore import config
from brainscore.data.io import load_cached_assembly, save_cached_assembly
from brainscore.caching import Cache, content_key
from brainscore.data import DataAssembly, StimulusSet, attach_stimulus_set, fetch
from brainscore.data.store import atomic_write_bytes, used
from brainscore.errors import DataNotFoundError, ValidationError

from . import COMMIT, IMAGE_SOURCES, MAT_SOURCES

PACKAGING_VERSION = "2"
SUPPLEMENT = "Kriegeskorte_Neuron2008_supplementalData.mat"
N_STIMULI = 92
# which .mat file holds each kind of RDM, and what it is
KINDS = {
    "human_IT": dict(file="92_brainRDMs.mat", variable="RDMs", region="IT", species="human",
                     identifier="Kriegeskorte2008.IT"),
    "monkey_IT": dict(file="92_modelRDMs.mat", variable="Models", region="IT", species="macaque",
                      identifier="Kiani2007.IT"),
    "judgements": dict(file="92_behavRDMs.mat", variable="rdms_behav_92", region="behavior", species="human",
                       identifier="Mur2013.judgements"),
}


def _loadmat(name: str) -> dict:
    from scipy.io import loadmat

    with explain_missing(name):
        path = fetch(MAT_SOURCES[name])
    return loadmat(path, squeeze_me=False)


@contextmanager
def explain_missing(name: str):
    """Re-raise a :class:`DataNotFoundError` for ``name`` with where the file comes from and what else is needed."""
    try:
        yield
    except DataNotFoundError as error:
        raise DataNotFoundError(
            f"{error} It is {name} of github.com/rsagroup/rsatoolbox (commit {COMMIT[:10]}, demos/92imageData/). "
            f"The Kriegeskorte 2008 data need the 4 .mat files there ({', '.join(sorted(MAT_SOURCES))}) under "
            f"<mirror>/kriegeskorte2008/; the 92 images under <mirror>/kriegeskorte2008/images92/ are rendered from "
            f"the supplemental .mat when absent. `brainscore data fetch Kriegeskorte2008` downloads them when online."
        ) from None


def _stimulus_frame() -> pd.DataFrame:
    """Stimulus metadata from the paper's supplemental data, cached by the file's content."""
    source = MAT_SOURCES[SUPPLEMENT]
    used(source)
    key = content_key(dataset="Kriegeskorte2008", kind="stimulus_frame", version=PACKAGING_VERSION,
                      sources=[source.sha256])
    cache = Cache("packaged")

    def build() -> pd.DataFrame:
        mat = _loadmat(SUPPLEMENT)
        stimuli = mat["stimuli_92objs"].ravel()
        labels = [str(np.asarray(label).ravel()[0]) for label in mat["categoryLabels"].ravel()]
        vectors = np.asarray(mat["categoryVectors"])
        if len(stimuli) != N_STIMULI or vectors.shape != (N_STIMULI, len(labels)):
            raise ValidationError(f"{source.path}: expected {N_STIMULI} stimuli, found {len(stimuli)}")
        flags = {name: [int(np.asarray(s[name]).ravel()[0]) for s in stimuli]
                 for name in ("human", "face", "animal", "natural")}
        return pd.DataFrame({
            "stimulus_id": [f"img{i:02d}" for i in range(1, N_STIMULI + 1)],
            "image_number": np.arange(1, N_STIMULI + 1),
            "category": [str(np.asarray(s["category"]).ravel()[0]) for s in stimuli],
            "animate": vectors[:, labels.index("animate")].astype(int),
            **flags,
            "filename": [f"img{i:02d}.png" for i in range(1, N_STIMULI + 1)],
        })

    return cache.get_or_compute(key, build)


def render_images(missing: list[str]) -> None:
    """Render the images named in ``missing`` (``imgNN.png``) from the supplemental .mat into the store.

    The mirror's images were written from ``stimuli_92objs(i).image`` with PIL's PNG defaults; doing the
    same reproduces their bytes, which :func:`~brainscore.data.fetch` then checks against the manifest.
    """
    from PIL import Image

    stimuli = _loadmat(SUPPLEMENT)["stimuli_92objs"].ravel()
    for name in missing:
        number = int(re.fullmatch(r"img(\d+)\.png", name).group(1))
        buffer = io.BytesIO()
        Image.fromarray(np.asarray(stimuli[number - 1]["image"], dtype=np.uint8)).save(buffer, format="PNG")
        atomic_write_bytes(config.home() / "sources" / IMAGE_SOURCES[name].path, buffer.getvalue())


def _image_paths() -> dict:
    paths, missing = {}, []
    for name, source in IMAGE_SOURCES.items():
        try:
            paths[name] = fetch(source)
        except DataNotFoundError:
            missing.append(name)
    if missing:
        try:
            render_images(missing)
        except DataNotFoundError as error:
            raise DataNotFoundError(
                f"the 92 images of Kriegeskorte 2008 are missing ({len(missing)} files, e.g. "
                f"{IMAGE_SOURCES[missing[0]].path}) and cannot be rendered, because the file they are rendered "
                f"from is missing too: {error}") from None
        paths.update({name: fetch(IMAGE_SOURCES[name]) for name in missing})
    return paths


def load_stimulus_set() -> StimulusSet:
    """The 92 images with their categories; ``stimulus_id`` ``img01`` ... ``img92`` in RDM order.

    Raises
    ------
    DataNotFoundError, HashMismatchError
        If the images (and the supplemental .mat they can be rendered from) are missing or corrupt.
    """
    frame = _stimulus_frame()
    paths = _image_paths()
    return StimulusSet(frame.copy(), identifier="Kriegeskorte2008",
                       stimulus_paths={sid: paths[name] for sid, name in zip(frame["stimulus_id"], frame["filename"])})


def _entries(kind: str) -> list[tuple[dict, np.ndarray]]:
    """(metadata, 92 x 92 RDM) of each RDM of ``kind``, in the .mat file's order."""
    spec = KINDS[kind]
    structs = _loadmat(spec["file"])[spec["variable"]]
    entries = []
    for struct in structs.ravel():
        name = str(np.asarray(struct["name"]).ravel()[0])
        rdm = np.asarray(struct["RDM"], dtype=float)
        if kind == "human_IT":  # 'hIT | BE | Session: 1'
            match = re.fullmatch(r"hIT \| (\w+) \| Session: (\d+)", name)
            if match is None:
                raise ValidationError(f"unexpected RDM name {name!r} in {spec['file']}")
            meta = dict(subject=match.group(1), session=int(match.group(2)))
        elif kind == "judgements":  # 'simJudge | subject12'
            match = re.fullmatch(r"simJudge \| subject(\d+)", name)
            if match is None:
                raise ValidationError(f"unexpected RDM name {name!r} in {spec['file']}")
            meta = dict(subject=f"subject{int(match.group(1)):02d}", session=1)
        else:
            if name != "monkeyIT":
                continue
            meta = dict(subject="monkey_IT_674cells", session=1)
        entries.append(({**meta, "name": name}, rdm))
    entries.sort(key=lambda entry: (entry[0]["subject"], entry[0]["session"]))
    return entries


def _check_rdm(rdm: np.ndarray, what: str) -> None:
    if rdm.shape != (N_STIMULI, N_STIMULI):
        raise ValidationError(f"{what}: RDM has shape {rdm.shape}, expected ({N_STIMULI}, {N_STIMULI})")
    if not np.isfinite(rdm).all():
        raise ValidationError(f"{what}: RDM has non-finite values")
    if not np.allclose(rdm, rdm.T, atol=1e-6) or np.abs(np.diag(rdm)).max() > 1e-6:
        raise ValidationError(f"{what}: RDM is not symmetric with a zero diagonal")


def load_rdms(kind: str) -> DataAssembly:
    """The RDMs of ``kind`` (``human_IT``, ``monkey_IT`` or ``judgements``) as an ``(rdm, presentation,
    presentation_b)`` assembly, sorted by subject then session; stimulus set in ``attrs``.

    Raises
    ------
    DataNotFoundError, HashMismatchError
        If a source file is missing or corrupt.
    ValidationError
        If an RDM is not a symmetric 92 x 92 matrix with a zero diagonal.
    """
    spec = KINDS[kind]
    sources = [MAT_SOURCES[spec["file"]], MAT_SOURCES[SUPPLEMENT]]
    used(*sources)
    key = content_key(dataset=spec["identifier"], kind=kind, version=PACKAGING_VERSION,
                      sources=[s.sha256 for s in sources])
    cache = Cache("packaged")
    assembly = load_cached_assembly(cache, key, DataAssembly)
    if assembly is None:
        entries = _entries(kind)
        if not entries:
            raise ValidationError(f"{spec['file']} holds no RDM for {kind}")
        for meta, rdm in entries:
            _check_rdm(rdm, f"{spec['file']} {meta['name']}")
        frame = _stimulus_frame()
        ids = frame["stimulus_id"].to_numpy()
        coords = {
            "subject": ("rdm", [m["subject"] for m, _ in entries]),
            "session": ("rdm", [m["session"] for m, _ in entries]),
            "name": ("rdm", [m["name"] for m, _ in entries]),
            "region": ("rdm", [spec["region"]] * len(entries)),
            "species": ("rdm", [spec["species"]] * len(entries)),
            "stimulus_id_b": ("presentation_b", ids),
            **{column: ("presentation", frame[column].to_numpy()) for column in frame.columns if column != "filename"},
        }
        values = np.stack([rdm for _, rdm in entries])
        assembly = DataAssembly(values, dims=("rdm", "presentation", "presentation_b"), coords=coords)
        save_cached_assembly(cache, key, assembly)
    assembly.attrs["identifier"] = spec["identifier"]
    return attach_stimulus_set(assembly, load_stimulus_set())

