"""What crosses the boundary, both ways, and the checks on what comes back from the model.

Out to the model (:class:`StimulusFolder`): a stimulus set's images under opaque ids, nothing else of it (a fitting
set for a task readout also carries its ``image_label`` column, what the readout is fitted on). Each stimulus id is
replaced by a random token (:func:`secrets.token_hex`, drawn anew for every offer) and the stimulus set's identifier by
another, so a model cannot read a benchmark's answers from its ids (``airplane1-bicycle2`` names
the categories of a cue-conflict image) or its name; and a task's ``look_at`` rows (labels, odd one out) are sent in a
fresh random order under tokens that sort in no relation to the ids, so it cannot read them from the rows' order
either (Geirhos2021silhouette's rows are sorted by id: row k is category k // 10; recordings and probabilities keep the
benchmark's order: see :meth:`StimulusFolder.offer`). The trusted side maps every answer's ids back and puts its rows
back in the benchmark's order before any check or metric sees them, and refuses an answer naming the benchmark's real
ids. The images are hard-linked (or copied, where a link cannot be made or would not be readable) into a folder the
model's sandbox sees read-only, under random names of their own, so neither their paths, their file names nor the
order they were placed in reach the model.

Back from the model (:func:`answer_of`): an assembly as plain arrays, rebuilt by the trusted side only after

- its type is an assembly, its dims are among ``presentation``, ``neuroid``, ``time_bin``, ``choice`` (with
  ``presentation``), its values numeric (strings for a task's answers), finite, and shaped as its coordinates say;
- its ``stimulus_id`` coordinate names exactly the stimuli sent (each the same number of times: one per trial), or,
  for the odd-one-out task, exactly the triplets sent;
- and its presentation coordinates are the trusted stimulus set's columns, looked up by ``stimulus_id``: a column
  the model sends under the name of a stimulus-set column is dropped (a model cannot relabel its stimuli, e.g. set
  ``truth`` to its own answers). Of the model's own coordinates only those the model interface defines survive
  (:data:`MODEL_COORDS`: microsaccade shifts, ``label_name``/``synset``, neuroid and time-bin coordinates, the
  ``choice`` labels, an odd-one-out answer's triplet ids mapped back; ``region`` only where it names the region
  recorded): any other (``object_name``, ``image_label``, a second ``stimulus_id``, scalar coordinates) is dropped, so
  nothing a model invents reaches the trusted metric. Strings among them stay fixed-width strings, not Python
  objects: the same values, copied at memory speed.

Every refusal is a :class:`BoundaryViolation` that says, in the model author's terms, what the model answered and
what was expected.
"""
from __future__ import annotations

import os
import random
import re
import secrets
import shutil
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple, Sequence

import numpy as np
import pandas as pd

from brainscore.data.assemblies import BehavioralAssembly, DataAssembly, NeuroidAssembly, presentation_order
from brainscore.data.stimuli import StimulusSet
from brainscore.errors import BrainScoreError

__all__ = ["BoundaryViolation", "StimulusFolder", "share_file", "stimuli_of", "assembly_message", "answer_of", "ALLOWED_DIMS",
           "FITTING_COLUMNS", "MODEL_COORDS", "Offered"]

ALLOWED_DIMS = ("presentation", "neuroid", "time_bin", "choice")
"""Dims a model's answer may have."""
ASSEMBLY_TYPES = {cls.__name__: cls for cls in (NeuroidAssembly, BehavioralAssembly, DataAssembly)}
FITTING_COLUMNS = ("image_label",)
"""Columns of a task's fitting stimuli the model receives (what a readout is fitted on)."""
MODEL_COORDS = {
    "presentation": ("microsaccade_shift_x_pixels", "microsaccade_shift_y_pixels", "microsaccade_shift_x_degrees",
                     "microsaccade_shift_y_degrees", "label_name", "synset"),
    "neuroid": ("neuroid_id", "neuroid_num", "layer", "model", "channel", "channel_x", "channel_y", "embedding",
                "pca_component", "region"),
    "time_bin": ("time_bin_start", "time_bin_end"),
    "choice": ("choice",),
}
"""The model's own coordinates that cross, by dim (what :class:`~brainscore.models.ModelCommitment` and the
reference's wrappers put on an answer); the presentation dim's other coordinates are the trusted stimulus set's, an
odd-one-out answer's triplet ids (:data:`ODD_ONE_OUT_COORDS`) are mapped back, everything else is dropped."""
ODD_ONE_OUT_COORDS = ("stimulus_id_0", "stimulus_id_1", "stimulus_id_2", "odd_one_out_id")
"""An odd-one-out answer's per-triplet stimulus ids (opaque in the model's answer, mapped back by the trusted side)."""
MAX_COORDS = 64
MAX_NAME_CHARS = 200


class BoundaryViolation(BrainScoreError):
    """What the model sent across the boundary is not an answer the trusted side accepts (or the model asked for
    something the boundary does not serve); nothing of the pair is recorded as done."""


# ------------------------------------------------------------------------------ out: stimuli
class StimulusFolder:
    """The folder the model's sandbox sees (read-only) the stimuli's images in; filled by the trusted side.

    Parameters
    ----------
    path : Path
        Created if missing (mode 0755, so that a sandbox running as another user can read it).
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        os.chmod(self.path, 0o755)
        self._names: dict[tuple, str] = {}

    def _place(self, source: Path) -> str:
        from brainscore.caching import file_state

        key = file_state(source)
        if key in self._names:
            return self._names[key]
        suffix = source.suffix.lower() if re.fullmatch(r"\.[a-z0-9]{1,8}", source.suffix.lower()) else ""
        name = f"{secrets.token_hex(8)}{suffix}"  # random: a running number would tell the order files came in
        while (self.path / name).exists():
            name = f"{secrets.token_hex(8)}{suffix}"
        share_file(source, self.path / name)
        self._names[key] = name
        return name

    def offer(self, stimuli: StimulusSet, columns: Sequence[str] = (), shuffled: bool = True,
              unit: int = 1) -> "Offered":
        """What the model receives of ``stimuli``: opaque ids, one image per id (its name in this folder), an opaque
        identifier (None stays None), and ``columns`` (as arrays); with the map back and the order sent.

        ``shuffled`` (default): the rows are sent in a random order, a fresh permutation for every offer
        (:class:`random.SystemRandom`), of groups of ``unit`` consecutive rows kept together (3: an odd-one-out
        task's triplets), under random tokens that sort in no relation to the real ids, so neither the row order
        nor the ids tell a model which benchmark row it answers (Geirhos2021silhouette's rows are sorted by id: row
        k is category k // 10). The trusted side puts the answer back in the benchmark's order
        (:func:`answer_of` with :attr:`Offered.order`) before any check or metric sees it.
        ``shuffled=False``: the rows in their order, under tokens that sort as the real ids do (sorted tokens given
        to the sorted ids), for offers whose numbers depend on the order (a network's forward pass gives a row's
        features by its place in the batch, to a float32 ulp; the layer selection's PCA runs model-side on rows in
        stimulus-id order): recordings, a fitted readout's probabilities, a task's fitting stimuli (labelled
        anyway) and a layer selection's stimuli (the remote caller chooses, :mod:`brainscore.boundary.remote`).

        The tokens (:func:`secrets.token_hex`, 64 bits) are drawn anew for every offer, so no two calls (and no two
        pairs) share one; the identifier is a fresh token too, so a model's cache keyed by it never mixes two offers.
        The images' names in the folder are random tokens as well (kept for the folder's life).

        Raises
        ------
        BrainScoreError
            (a trusted-side error) if a stimulus has no file.
        ValueError
            If ``unit`` is below 1.
        """
        real_ids = [str(i) for i in stimuli["stimulus_id"]]
        unique = sorted(set(real_ids))
        tokens: set[str] = set()
        while len(tokens) < len(unique):  # 64 random bits each: a repeat is all but impossible, but never ambiguous
            tokens.add(secrets.token_hex(8))
        rows = list(range(len(real_ids)))
        if shuffled:
            if unit < 1:
                raise ValueError(f"rows are shuffled in groups of at least 1, not {unit}")
            whole = len(rows) - len(rows) % unit  # a last, partial group stays last (no triplet of its own)
            groups = [rows[k:k + unit] for k in range(0, whole, unit)]
            random.SystemRandom().shuffle(groups)
            rows = [row for group in groups for row in group] + rows[whole:]
            drawn = list(tokens)
            random.SystemRandom().shuffle(drawn)  # a set's order follows the tokens' hashes: shuffled outright
            opaque = dict(zip(unique, drawn))
        else:
            opaque = dict(zip(unique, sorted(tokens)))
        order = [real_ids[row] for row in rows]
        files = {}
        for stimulus_id in dict.fromkeys(order):  # placed in the order sent: nothing of the benchmark's order
            try:
                files[opaque[stimulus_id]] = self._place(Path(stimuli.get_stimulus(stimulus_id)))
            except (KeyError, OSError) as error:
                raise BrainScoreError(f"stimulus {stimulus_id!r} of {stimuli.identifier!r} cannot be shown to the "
                                      f"sandboxed model: {error}") from None
        identifier = None if stimuli.identifier is None else f"stimuli-{secrets.token_hex(8)}"
        message = {"identifier": identifier, "ids": [opaque[i] for i in order], "files": files, "columns": {}}
        for column in columns:
            if column in stimuli.columns:
                values = stimuli[column].to_numpy()[rows]
                message["columns"][column] = values.astype(str) if values.dtype.kind == "O" else values
        return Offered(message, opaque, tuple(order))


class Offered(NamedTuple):
    """One offer of stimuli to the model: the ``message`` sent; ``opaque`` (each real stimulus id -> the token the
    model was given for it), which :func:`answer_of` maps the answer back with; and ``order``, the real ids in the
    order sent (rows), with which it puts the answer back in the benchmark's order. Only ``message`` is sent."""

    message: dict[str, Any]
    opaque: dict[str, str]
    order: tuple[str, ...] = ()


def share_file(source: Path, target: Path) -> None:
    """Put ``source`` at ``target`` for a sandbox running as another user: a hard link where the file is readable by
    others and on the same file system, else a copy of mode 0644."""
    try:
        if not source.stat().st_mode & 0o004:  # not readable by another user: a copy of its own is
            raise PermissionError
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
        os.chmod(target, 0o644)


def stimuli_of(offered: dict[str, Any], folder: Path) -> StimulusSet:
    """The model side's stimulus set from what :meth:`StimulusFolder.offer` sent: ``stimulus_id`` (and the offered
    columns), each id's file in ``folder``."""
    files = {str(k): Path(folder) / Path(str(v)).name for k, v in dict(offered["files"]).items()}
    frame = pd.DataFrame({"stimulus_id": np.asarray(offered["ids"], dtype=object),
                          **{str(k): (np.asarray(v).astype(object) if np.asarray(v).dtype.kind == "U" else np.asarray(v))
                             for k, v in dict(offered.get("columns") or {}).items()}})
    return StimulusSet(frame, identifier=offered.get("identifier"), stimulus_paths=files)


# ------------------------------------------------------------------------------ back: assemblies
def assembly_message(assembly: Any, what: str = "look_at") -> dict[str, Any]:
    """The model side: ``assembly`` as a message (type, dims, values, 0-d and 1-d coordinates as arrays).

    Raises
    ------
    BoundaryViolation
        If ``assembly`` is not an xarray DataArray (what ``look_at`` must return).
    """
    import xarray as xr

    if not isinstance(assembly, xr.DataArray):
        raise BoundaryViolation(f"{what} returned a {type(assembly).__name__}, not an assembly (a NeuroidAssembly or "
                                f"BehavioralAssembly with a presentation dim)")
    kind = next((cls.__name__ for cls in type(assembly).__mro__ if cls.__name__ in ASSEMBLY_TYPES), "DataAssembly")
    coords = [[str(name), [str(d) for d in coord.dims], np.asarray(coord.values)]
              for name, coord in assembly.coords.items() if coord.ndim <= 1]
    return {"type": kind, "dims": [str(d) for d in assembly.dims], "values": np.asarray(assembly.values),
            "coords": coords}


def _strings(values: np.ndarray) -> np.ndarray:
    return values.astype(object) if values.dtype.kind == "U" else values


def answer_of(message: Any, shown: StimulusSet, what: str, task: str | None = None,
              opaque: dict[str, str] | None = None, region: str | None = None,
              order: Sequence[str] | None = None) -> DataAssembly:
    """The trusted side: the model's answer to showing it ``shown``, checked and rebuilt (see the module).

    Parameters
    ----------
    message : dict
        What :func:`assembly_message` sent (as received: anything at all).
    shown : StimulusSet
        The trusted stimulus set that was shown (its columns become the answer's presentation coordinates).
    what : str
        The call, for messages (``"look_at"``, ``"the features of layer 'x'"``).
    task : str, optional
        The task the model was started on (None: recording); strings are answers of a task only, and the
        odd-one-out task answers per triplet.
    opaque : dict, optional
        :attr:`Offered.opaque` of the offer ``shown`` was sent in: the answer names those tokens, mapped back to the
        real ids here (a real id in the answer is refused). None: the answer names the real ids.
    region : str, optional
        The region being recorded: a ``region`` coordinate of the model crosses only where it names this region.
    order : sequence of str, optional
        :attr:`Offered.order`: the real ids in the order they were sent (a shuffled offer). The answer's presentations
        are put back in ``shown``'s order before anything else reads them: the answer's row for the stimulus sent at
        position q (its j-th, for repeated trials) takes the place of the row for ``shown``'s stimulus at position q
        (its j-th), so an answer laid out as the model lays out any order (stimuli in the order given, trials
        grouped or tiled) becomes the one it gives in-process, on ``shown`` as it is. None: sent as ``shown``.

    Raises
    ------
    BoundaryViolation
        Naming what is wrong with the answer.
    """
    said = f"the model's answer to {what} on {len(shown)} stimuli"
    if not isinstance(message, dict) or set(message) != {"type", "dims", "values", "coords"}:
        raise BoundaryViolation(f"{said} is not an assembly message")
    cls = ASSEMBLY_TYPES.get(message["type"]) if isinstance(message["type"], str) else None
    dims, values, coords = message["dims"], message["values"], message["coords"]
    if cls is None:
        raise BoundaryViolation(f"{said} is of type {message['type']!r}; expected one of {sorted(ASSEMBLY_TYPES)}")
    if not isinstance(dims, list) or not all(isinstance(d, str) for d in dims) or len(set(dims)) != len(dims) \
            or not set(dims) <= set(ALLOWED_DIMS) or "presentation" not in dims:
        raise BoundaryViolation(f"{said} has dims {dims!r}; expected presentation (with neuroid, time_bin or choice "
                                f"among {ALLOWED_DIMS})")
    if not isinstance(values, np.ndarray) or values.ndim != len(dims):
        raise BoundaryViolation(f"{said} has values of shape {getattr(values, 'shape', None)} for dims {dims}")
    if values.dtype.kind == "U":
        if task is None:
            raise BoundaryViolation(f"{said} holds strings; a recording's responses are numbers")
    elif values.dtype.kind == "f":
        bad = int(np.count_nonzero(~np.isfinite(values)))
        if bad:
            raise BoundaryViolation(f"{said}: {bad} of its {values.size} values are NaN or infinite; a model's "
                                    f"responses must be finite numbers")
    if not isinstance(coords, list) or len(coords) > MAX_COORDS:
        raise BoundaryViolation(f"{said} has {len(coords) if isinstance(coords, list) else 'no list of'} coordinates "
                                f"(at most {MAX_COORDS})")
    sizes = dict(zip(dims, values.shape))
    given: dict[str, tuple[list[str], np.ndarray]] = {}
    for entry in coords:
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str) and isinstance(entry[1], list)
                and isinstance(entry[2], np.ndarray)):
            raise BoundaryViolation(f"{said} has a malformed coordinate")
        name, coord_dims, coord = entry
        if not name or len(name) > MAX_NAME_CHARS or name in given:
            raise BoundaryViolation(f"{said} has a coordinate named {name[:50]!r} (empty, too long or repeated)")
        if len(coord_dims) > 1 or any(d not in sizes for d in coord_dims) or coord.ndim != len(coord_dims) \
                or (coord_dims and len(coord) != sizes[coord_dims[0]]):
            raise BoundaryViolation(f"{said} has coordinate {name!r} of shape {coord.shape} on {coord_dims}, which does "
                                    f"not fit its dims {sizes}")
        given[name] = (coord_dims, coord)
    n = sizes["presentation"]
    stimulus_ids = given.get("stimulus_id")
    if stimulus_ids is None or stimulus_ids[0] != ["presentation"] or stimulus_ids[1].dtype.kind not in "UiuO":
        raise BoundaryViolation(f"{said} has no stimulus_id coordinate on presentation: a model answers per stimulus "
                                f"and names the stimulus_id of each presentation")
    ids = stimulus_ids[1].astype(str)
    sent = [str(i) for i in shown["stimulus_id"]]
    seen = sent if opaque is None else [opaque[i] for i in sent]  # what the model was given
    odd = task == "odd_one_out"
    expected = ["|".join(seen[k:k + 3]) for k in range(0, len(seen) - len(seen) % 3, 3)] if odd else seen
    _check_ids(Counter(ids.tolist()), Counter(expected), said, "triplets" if odd else "stimuli")
    real = None if opaque is None else {token: i for i, token in opaque.items()}
    if real is not None:  # every id is one the model was given (checked): back to the benchmark's ids
        ids = np.asarray(["|".join(real[t] for t in i.split("|")) for i in ids.tolist()] if odd
                         else [real[i] for i in ids.tolist()], dtype=str)
    if order is not None and list(order) != sent:
        rows = _benchmark_rows(ids.tolist(), _units(sent, odd), _units([str(i) for i in order], odd))
        values = np.take(values, rows, axis=dims.index("presentation"))
        ids = ids[rows]
        given = {name: (coord_dims, coord[rows] if coord_dims == ["presentation"] else coord)
                 for name, (coord_dims, coord) in given.items()}
    built: dict[str, Any] = {"stimulus_id": ("presentation", ids.astype(object))}
    trusted: list[str] = []
    if not odd:
        frame = pd.DataFrame(shown).drop_duplicates("stimulus_id")
        rows = presentation_order(frame["stimulus_id"].astype(str).to_numpy(), ids, "stimulus_id", repeats="first",
                                  entry="row", sides=("stimuli shown", "answers"))  # ids were checked: never raises
        for column in frame.columns:
            if column != "stimulus_id":
                built[str(column)] = ("presentation", frame[column].to_numpy()[rows])
                trusted.append(str(column))
    dropped = []
    for name, (coord_dims, coord) in given.items():
        if name == "stimulus_id" or name in trusted:
            continue  # the stimulus set's own columns: never the model's
        if odd and name in ODD_ONE_OUT_COORDS and coord_dims == ["presentation"]:
            built[name] = ("presentation", _odd_ids(coord, ids, real, said, name))
            continue
        if not coord_dims or name not in MODEL_COORDS.get(coord_dims[0], ()) \
                or (name == "region" and not (region is not None and coord.dtype.kind in "UO"
                                              and bool(np.all(coord.astype(str) == region)))):
            dropped.append(name)  # not the interface's: nothing a model invents reaches the metric
            continue
        # the model's own coordinates (neuroid ids, layers: hundreds of thousands of strings) stay fixed-width strings:
        # xarray copies every coordinate it is given, and an array of Python strings is copied string by string
        built[name] = (coord_dims[0], coord)
    if dropped:
        import sys

        print(f"[boundary] {said}: dropped its coordinates {sorted(dropped)[:10]} (only the coordinates the model "
              f"interface defines cross)", file=sys.stderr)
    try:
        return cls(_strings(values), dims=tuple(dims), coords=built)
    except (TypeError, ValueError) as error:
        raise BoundaryViolation(f"{said} cannot be rebuilt as an assembly: {error}"[:1000]) from None


def _units(ids: list[str], odd: bool) -> list[str]:
    """The distinct units of a row order: stimulus ids, or an odd-one-out task's ``a|b|c`` triplets."""
    if odd:
        ids = ["|".join(ids[k:k + 3]) for k in range(0, len(ids) - len(ids) % 3, 3)]
    return list(dict.fromkeys(ids))


def _benchmark_rows(answered: list[str], shown: list[str], sent: list[str]) -> np.ndarray:
    """Indices that put an answer to the units ``sent`` (in that order) in the order it has for ``shown``.

    Row r of the result is the answer's j-th row of the unit ``shown[q]``, where row r of the answer is the j-th row
    of the unit ``sent[q]``: the layout the model gave the order it was sent, applied to the benchmark's order.
    ``answered`` holds each unit equally often (checked before)."""
    position = {unit: q for q, unit in enumerate(sent)}
    rows_of: dict[str, list[int]] = {}
    for row, unit in enumerate(answered):
        rows_of.setdefault(unit, []).append(row)
    taken: Counter = Counter()
    rows = []
    for unit in answered:
        rows.append(rows_of[shown[position[unit]]][taken[unit]])
        taken[unit] += 1
    return np.asarray(rows, dtype=np.int64)


def _odd_ids(coord: np.ndarray, triplets: np.ndarray, real: dict[str, str] | None, said: str,
             name: str) -> np.ndarray:
    """An odd-one-out answer's per-triplet stimulus ids (``stimulus_id_0`` ... ``odd_one_out_id``), mapped back to the
    real ids; each must be a stimulus of its own triplet (``triplets``: the answer's real ``a|b|c`` ids)."""
    values = coord.astype(str).tolist()
    named = [real.get(v, "\0") if real is not None else v for v in values]
    members = [t.split("|") for t in triplets.tolist()]
    if any(r not in m for r, m in zip(named, members)):
        raise BoundaryViolation(f"{said} has a coordinate {name!r} naming a stimulus outside its triplet: an "
                                f"odd-one-out answer names one of the three stimuli it was shown")
    return np.asarray(named, dtype=object)


def _check_ids(answered: Counter, sent: Counter, said: str, unit: str) -> None:
    """Every id sent answered, nothing else, each as often as it was sent times one number of trials."""
    extra = [i for i in answered if i not in sent]
    missing = [i for i in sent if i not in answered]
    if extra or missing:
        parts = []
        if missing:
            parts.append(f"misses {len(missing)} of the {len(sent)} {unit} it was shown (e.g. {missing[:3]})")
        if extra:
            parts.append(f"names {len(extra)} {unit} it was not shown (e.g. {[e[:80] for e in extra[:3]]})")
        raise BoundaryViolation(f"{said} {' and '.join(parts)}: a model answers for exactly the {unit} it is shown")
    trials = {answered[i] // sent[i] if answered[i] % sent[i] == 0 else -1 for i in sent}
    if len(trials) != 1 or -1 in trials or 0 in trials:
        raise BoundaryViolation(f"{said} answers its {unit} unevenly ({sorted(set(answered.values()))[:5]} "
                                f"presentations per stimulus): every stimulus needs the same number of trials")
