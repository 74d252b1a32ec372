"""Turn the Geirhos 2019 source files into StimulusSets and BehavioralAssemblies (see ``__init__``)."""
from __future__ import annotations

import re
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path, PurePosixPath

import numpy as np
import pandas as pd

from brainscore import config
from brainscore.data.io import cached_assembly
from brainscore.caching import Cache, content_key, file_state
from brainscore.data import BehavioralAssembly, StimulusSet, fetch
from brainscore.data.store import Source, locate, used
from brainscore.errors import AlignmentError, DataNotFoundError, ValidationError

from . import COMMIT, EXPERIMENTS, INSTRUCTIONS, MIRROR_FOLDER, NETWORKS, SHARED_STIMULI, SOURCES

PACKAGING_VERSION = "1"
_CUE_CONFLICT = re.compile(r"([a-z]+)(\d+)-([a-z]+)(\d+)")
_SINGLE = re.compile(r"([a-z]+)(\d+)")
_SUBJECT_FILE = re.compile(r".*_(subject-\d+)_session_\d+\.csv")


def fetch_all(sources: list[Source]) -> list[Path]:
    """Local, verified paths of many sources, in order, checked one by one only the first time.

    :func:`~brainscore.data.fetch` is called for each source once; the resulting paths are remembered
    (in the cache, keyed by the sources, the mirrors and the store) with each file's inode, size,
    modification and change time, and later calls only compare those, so 1,280 images cost 1,280
    ``stat`` calls; a rewrite that restores size and mtime changes the ctime and is re-verified.

    Raises
    ------
    DataNotFoundError, HashMismatchError
        From :func:`~brainscore.data.fetch`, for the first missing or corrupt file.
    """
    used(*sources)
    key = content_key(kind="fetched", sources=[(s.path, s.sha256) for s in sources],
                      mirrors=[str(m) for m in config.data_mirrors()], home=str(config.home()))
    cache = Cache("fetched")
    record = cache.load(key)
    if record is not None:
        try:
            if all(file_state(p) == tuple(state) for p, *state in record):
                return [Path(p) for p, *_ in record]
        except (OSError, ValueError):
            pass  # a file went away or changed: fetch (and verify) again
    paths = [fetch(source) for source in sources]
    cache.save(key, [(str(p), *file_state(p)) for p in paths])
    return paths


def missing_sources(sources: list[Source]) -> list[Source]:
    """The sources found in no mirror and not in the store (existence only, no hashing)."""
    return [s for s in sources if locate(s) is None]


@contextmanager
def explain_missing(identifier: str, sources: list[Source]):
    """Re-raise a :class:`DataNotFoundError` with what ``identifier`` needs in all, and how to get it."""
    try:
        yield
    except DataNotFoundError as error:
        if getattr(error, "explained", False):
            raise
        missing = missing_sources(sources)
        folders = sorted({str(PurePosixPath(s.path).parent.parent) if "stimuli" in s.path
                          else str(PurePosixPath(s.path).parent) for s in missing}) or ["?"]
        explained = DataNotFoundError(
            f"{identifier} needs {len(sources)} files of github.com/rgeirhos/texture-vs-shape (commit {COMMIT[:10]}); "
            f"{len(missing)} are missing, under {', '.join(f'<mirror>/{f}/' for f in folders)}. {error} "
            f"`brainscore data list Geirhos2019 --files` shows each file's state; `brainscore data fetch Geirhos2019` "
            f"downloads them when online.")
        explained.explained = True
        raise explained from None


def _check_experiment(experiment: str) -> None:
    if experiment not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {experiment!r}; expected one of {EXPERIMENTS}")


def _stimulus_frame(experiment: str) -> pd.DataFrame:
    """One row per image the experiment showed, parsed from the file names of the manifest (no file is read); a copy."""
    return _parsed_frame(SHARED_STIMULI.get(experiment, experiment)).copy()


@lru_cache(maxsize=None)
def _parsed_frame(experiment: str) -> pd.DataFrame:
    rows = []
    folder_prefix = None
    for source in SOURCES[experiment]["stimuli"]:
        relative = PurePosixPath(source.path).relative_to(MIRROR_FOLDER)
        folder_prefix = folder_prefix or str(PurePosixPath(*relative.parts[:2]))
        stem, folder = relative.stem, relative.parent.name
        if experiment == "cue-conflict":
            match = _CUE_CONFLICT.fullmatch(stem)
            if match is None:
                raise ValidationError(f"cue-conflict image {source.path} is not named <shape><n>-<texture><m>.png")
            shape, shape_n, texture, texture_n = match.groups()
            row = dict(stimulus_id=stem, truth=shape, category=shape, original_image=f"{shape}{shape_n}",
                       original_image_category=shape, original_image_variation=int(shape_n),
                       conflict_image=f"{texture}{texture_n}", conflict_image_category=texture,
                       conflict_image_variation=int(texture_n))
        else:
            match = _SINGLE.fullmatch(stem)
            if match is None:
                raise ValidationError(f"{experiment} image {source.path} is not named <category><n>.png")
            row = dict(stimulus_id=stem, truth=match.group(1), category=match.group(1),
                       image_variation=int(match.group(2)))
        if row["truth"] != folder:
            raise ValidationError(f"{source.path}: category {row['truth']!r} differs from its folder {folder!r}")
        rows.append({**row, "condition": 0, "filename": str(relative.relative_to(folder_prefix)),
                     "experiment": experiment})
    frame = pd.DataFrame(rows).sort_values("stimulus_id", kind="stable").reset_index(drop=True)
    if frame["stimulus_id"].duplicated().any():
        raise ValidationError(f"{experiment}: image names repeat across category folders")
    return frame


def load_stimulus_set(experiment: str) -> StimulusSet:
    """The images of ``experiment`` (``cue-conflict``, ``edge`` or ``silhouette``), sorted by ``stimulus_id``.

    An instructed experiment (:data:`SHARED_STIMULI`) showed the cue-conflict images: its stimulus set is
    ``Geirhos2019.cue-conflict``.

    Raises
    ------
    DataNotFoundError, HashMismatchError
        If an image is missing or corrupt (the message names it and where to put it).
    """
    _check_experiment(experiment)
    experiment = SHARED_STIMULI.get(experiment, experiment)
    frame = _stimulus_frame(experiment)
    sources = SOURCES[experiment]["stimuli"]
    with explain_missing(f"stimulus set Geirhos2019.{experiment}", sources):
        paths = fetch_all(sources)
    by_stem = {PurePosixPath(s.path).stem: p for s, p in zip(sources, paths)}
    return StimulusSet(frame, identifier=f"Geirhos2019.{experiment}",
                       stimulus_paths={sid: by_stem[sid] for sid in frame["stimulus_id"]})


def _response_sources(experiment: str, who: str) -> list[Source]:
    responses = SOURCES[experiment]["responses"]
    if who == "humans":
        chosen = [s for s in responses if _SUBJECT_FILE.fullmatch(PurePosixPath(s.path).name)]
    elif who in NETWORKS:
        chosen = [s for s in responses if PurePosixPath(s.path).name.endswith(f"_{who}_session_1.csv")]
    else:
        raise ValueError(f"unknown responder {who!r}; expected 'humans' or one of {NETWORKS}")
    if not chosen:
        raise ValidationError(f"the manifest declares no response file of {who} for {experiment}")
    return chosen


def _build_responses(experiment: str, who: str, frame: pd.DataFrame) -> BehavioralAssembly:
    trials = pd.concat([pd.read_csv(fetch(source)) for source in _response_sources(experiment, who)],
                       ignore_index=True)
    expected = {"subj", "session", "trial", "rt", "object_response", "category", "condition", "imagename"}
    if not expected <= set(trials.columns):
        raise ValidationError(f"{experiment} responses of {who} lack columns {sorted(expected - set(trials.columns))}")
    # '0001_s5n_s01_0_bird_00_bird3-bird2.png' -> 'bird3-bird2': the image name after the trial prefix
    stimulus_ids = trials["imagename"].str.split("_", n=6).str[6].str.replace(r"\.png$", "", regex=True)
    unknown = sorted(set(stimulus_ids) - set(frame["stimulus_id"]))
    if unknown:
        raise AlignmentError(f"{experiment} responses of {who} name images that are not in the stimulus set: "
                             f"{unknown[:5]}")
    stimuli = frame.set_index("stimulus_id").loc[stimulus_ids.to_numpy()]
    if not (stimuli["truth"].to_numpy() == trials["category"].astype(str).to_numpy()).all():
        raise ValidationError(f"{experiment} responses of {who}: a trial's category differs from its image's")
    coords = {
        "stimulus_id": ("presentation", stimulus_ids.to_numpy().astype(str)),
        "truth": ("presentation", trials["category"].astype(str).to_numpy()),
        "choice": ("presentation", trials["object_response"].astype(str).to_numpy()),
        "subject": ("presentation", trials["subj"].astype(str).to_numpy()),
        "session": ("presentation", trials["session"].astype(int).to_numpy()),
        "trial": ("presentation", trials["trial"].astype(int).to_numpy()),
        "response_time": ("presentation", pd.to_numeric(trials["rt"], errors="coerce").to_numpy(dtype=float)),
        "imagename": ("presentation", trials["imagename"].astype(str).to_numpy()),
    }
    # the stimulus set's columns, merged onto each trial by stimulus_id (as the reference's loader does)
    for column in stimuli.columns:
        if column not in ("filename", "truth"):
            coords[column] = ("presentation", stimuli[column].to_numpy())
    if not (coords["condition"][1] == trials["condition"].to_numpy()).all():
        raise ValidationError(f"{experiment} responses of {who}: conditions differ from the stimulus set's")
    if experiment in INSTRUCTIONS:  # what the subject was told to report: the shape, or the texture of the file name
        instruction, column = INSTRUCTIONS[experiment]
        coords["instruction"] = ("presentation", np.full(len(trials), instruction, dtype=object))
        coords["instructed_category"] = ("presentation", stimuli[column].to_numpy())
    return BehavioralAssembly(coords["choice"][1], dims=("presentation",), coords=coords)


def load_responses(experiment: str, who: str = "humans") -> BehavioralAssembly:
    """The trials of ``who`` (``humans`` or a network of :data:`NETWORKS`) in ``experiment``.

    Raises
    ------
    DataNotFoundError, HashMismatchError
        If a response file or an image is missing or corrupt.
    AlignmentError, ValidationError
        If the responses name images the stimulus set lacks, or disagree with it on categories.
    """
    _check_experiment(experiment)
    identifier = f"Geirhos2019.{experiment}" + ("" if who == "humans" else f".{who}")
    sources = _response_sources(experiment, who)
    used(*sources, *SOURCES[experiment]["stimuli"])
    key = content_key(dataset=identifier, version=PACKAGING_VERSION, sources=[s.sha256 for s in sources],
                      stimuli=[s.sha256 for s in SOURCES[experiment]["stimuli"]])
    cache = Cache("packaged")
    frame = _stimulus_frame(experiment)
    def build():
        with explain_missing(f"dataset {identifier}", sources + SOURCES[experiment]["stimuli"]):
            return _build_responses(experiment, who, frame)

    assembly = cached_assembly(cache, key, BehavioralAssembly, build)
    assembly.attrs["identifier"] = identifier
    with explain_missing(f"dataset {identifier}", sources + SOURCES[experiment]["stimuli"]):
        stimulus_set = load_stimulus_set(experiment)
    assembly.attrs["stimulus_set_identifier"] = stimulus_set.identifier
    assembly.attrs["stimulus_set"] = stimulus_set
    return assembly
