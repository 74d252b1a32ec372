"""Turn the Cowley 2026 source files into a StimulusSet and NeuroidAssemblies (see ``__init__``)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from brainscore.data.io import load_cached_assembly, save_cached_assembly
from brainscore.caching import Cache, content_key
from brainscore.data.store import used
from brainscore.data import NeuroidAssembly, StimulusSet, attach_stimulus_set, extract_zip, fetch
from brainscore.errors import ValidationError

from . import SOURCES

PACKAGING_VERSION = "1"
TIME_BIN = (50, 150)  # ms: 100 ms spike-count window


def load_stimulus_set(session: str) -> StimulusSet:
    """The images of ``session``: ``stimulus_id`` ``image0001``..., ``object_name`` ``0001``...

    Raises
    ------
    DataNotFoundError, HashMismatchError
        If the images zip is missing or corrupt.
    """
    source = SOURCES[f"images_{session}"]
    folder = extract_zip(fetch(source), source.sha256)
    files = sorted(p for p in folder.rglob("image*.jpg"))
    if not files:
        raise ValidationError(f"{source.path} holds no image*.jpg files (extracted to {folder})")
    ids = [p.stem for p in files]
    frame = pd.DataFrame({"stimulus_id": ids, "object_name": [i[len("image"):] for i in ids],
                          "filename": [p.name for p in files], "session": session})
    return StimulusSet(frame, identifier=f"Cowley2026.{session}",
                       stimulus_paths={i: p for i, p in zip(ids, files)})


def _neuroid_coords(n_neurons: int, session: str) -> dict:
    return {"neuroid_id": ("neuroid", [f"neuron_{i}" for i in range(n_neurons)]),
            "region": ("neuroid", ["V4"] * n_neurons),
            "session": ("neuroid", [session] * n_neurons)}


def _time_coords() -> dict:
    return {"time_bin_start": ("time_bin", [TIME_BIN[0]]), "time_bin_end": ("time_bin", [TIME_BIN[1]])}


def _cached(session: str, kind: str, build) -> NeuroidAssembly:
    sources = [SOURCES[f"{kind}_{session}"], SOURCES[f"images_{session}"]]
    used(*sources)
    key = content_key(dataset=f"Cowley2026.{session}", kind=kind, version=PACKAGING_VERSION,
                      sources=[s.sha256 for s in sources])
    cache = Cache("packaged")
    assembly = load_cached_assembly(cache, key, NeuroidAssembly)
    if assembly is None:
        assembly = build()
        save_cached_assembly(cache, key, assembly)
    stimulus_set = load_stimulus_set(session)
    assembly.attrs["identifier"] = f"Cowley2026.{session}"
    return assembly, stimulus_set


def load_repetitions(session: str) -> NeuroidAssembly:
    """Per-repetition spike counts: ``presentation x neuroid x time_bin``, NaN repeats dropped.

    Presentations are image-major (all repeats of image0001, then image0002, ...); coordinates
    ``stimulus_id``, ``object_name``, ``repetition`` (0-based) on presentation. The stimulus set is
    kept in ``assembly.attrs['stimulus_set']``.
    """
    def build():
        responses = np.load(fetch(SOURCES[f"raw_{session}"]))  # (neurons, images, repeats)
        n_neurons, n_images, n_repeats = responses.shape
        present = ~np.isnan(responses).all(axis=0)  # (images, repeats)
        if (np.isnan(responses).any(axis=0) & present).any():
            raise ValidationError(f"Cowley2026.{session}: some neurons lack a repeat that others have")
        image_index, repeat_index = np.nonzero(present)  # image-major order
        values = responses[:, image_index, repeat_index].T[:, :, None]  # presentation x neuroid x 1
        ids = np.array([f"image{i + 1:04d}" for i in image_index])
        coords = {"stimulus_id": ("presentation", ids),
                  "object_name": ("presentation", np.array([f"{i + 1:04d}" for i in image_index])),
                  "repetition": ("presentation", repeat_index.astype(int)),
                  **_neuroid_coords(n_neurons, session), **_time_coords()}
        return NeuroidAssembly(values, dims=("presentation", "neuroid", "time_bin"), coords=coords)

    assembly, stimulus_set = _cached(session, "raw", build)
    return attach_stimulus_set(assembly, stimulus_set)


def load_averaged(session: str) -> NeuroidAssembly:
    """Repeat-averaged spike counts: ``presentation x neuroid x time_bin``, one presentation per image."""
    def build():
        responses = np.load(fetch(SOURCES[f"averaged_{session}"]))  # (neurons, images)
        n_neurons, n_images = responses.shape
        coords = {"stimulus_id": ("presentation", np.array([f"image{i + 1:04d}" for i in range(n_images)])),
                  "object_name": ("presentation", np.array([f"{i + 1:04d}" for i in range(n_images)])),
                  **_neuroid_coords(n_neurons, session), **_time_coords()}
        return NeuroidAssembly(responses.T[:, :, None], dims=("presentation", "neuroid", "time_bin"),
                               coords=coords)

    assembly, stimulus_set = _cached(session, "averaged", build)
    return attach_stimulus_set(assembly, stimulus_set)

