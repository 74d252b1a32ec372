"""Checks a stimulus set and an assembly against the data standard before they are packaged.

Every check runs, and every failure is collected into one :class:`ValidationReport`, so a benchmark
author sees all problems at once instead of fixing them one exception at a time. Each problem
names the offending stimulus ids, neuroids or coordinates and says how to fix it.

The standard is Brain-Score's (Schrimpf et al. 2018, "Brain-Score: Which Artificial Neural Network
for Object Recognition is most Brain-Like?", bioRxiv 407007): stimulus sets are tables with a unique
``stimulus_id`` per image file; assemblies are labelled arrays with ``presentation`` (``stimulus_id``,
optionally ``repetition``), ``neuroid`` (``neuroid_id``, ``region``) and ``time_bin``
(``time_bin_start``, ``time_bin_end`` in ms) dimensions.

Example
-------
>>> report = validate(stimulus_set=stimuli, assembly=assembly, raise_on_error=False)
>>> print(report)            # every problem, one per line
>>> report.raise_if_failed() # ValidationError listing them
"""
from __future__ import annotations

import math
import numbers
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
import xarray as xr

from brainscore.data.assemblies import BehavioralAssembly, DataAssembly, NeuroidAssembly, PropertiesAssembly
from brainscore.data.links import links_out_of_folder
from brainscore.errors import ValidationError

_SHOWN = 10  # offending values written into a message (all of them are kept in Problem.offending)
_ASSEMBLY_DIMS = ("presentation", "neuroid", "time_bin")


@dataclass(frozen=True)
class Problem:
    """One failed check.

    Attributes
    ----------
    check : str
        Short name of the check, e.g. ``"unique_stimulus_ids"``.
    message : str
        What is wrong and how to fix it.
    offending : tuple
        Every offending value (stimulus ids, neuroid ids, coordinate names...).
    """

    check: str
    message: str
    offending: tuple = ()

    def __str__(self) -> str:
        return f"[{self.check}] {self.message}"


@dataclass
class ValidationReport:
    """Result of validation: every problem found, and warnings that do not block packaging.

    Attributes
    ----------
    subject : str
        What was validated, e.g. ``"stimulus set 'Cowley2026.210325'"``.
    problems : list of Problem
        Failed checks; empty when the data follow the standard.
    warnings : list of str
        Things that will change on packaging or look unintended, but are allowed.
    checks : list of str
        Names of the checks that ran.
    """

    subject: str = "data"
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when there is no problem (warnings allowed)."""
        return not self.problems

    def add(self, check: str, message: str, offending: Iterable = ()) -> None:
        """Record a failed ``check``."""
        self.problems.append(Problem(check, message, tuple(offending)))

    def ran(self, check: str) -> None:
        """Record that ``check`` ran."""
        if check not in self.checks:
            self.checks.append(check)

    def extend(self, other: "ValidationReport") -> "ValidationReport":
        """Add the problems, warnings and checks of ``other`` to this report; returns ``self``."""
        self.problems.extend(other.problems)
        self.warnings.extend(other.warnings)
        for check in other.checks:
            self.ran(check)
        return self

    def __str__(self) -> str:
        if self.ok:
            head = f"{self.subject}: OK ({len(self.checks)} checks passed)"
        else:
            head = f"{self.subject}: {len(self.problems)} problem(s) found by {len(self.checks)} checks"
        lines = [head] + [f"  - {p}" for p in self.problems] + [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def raise_if_failed(self) -> "ValidationReport":
        """Raise :class:`~brainscore.errors.ValidationError` listing every problem; else return ``self``."""
        if not self.ok:
            raise ValidationError(str(self))
        return self


def _show(values: Sequence) -> str:
    values = list(values)
    shown = ", ".join(repr(v) for v in values[:_SHOWN])
    return f"[{shown}, ...] ({len(values)} in all)" if len(values) > _SHOWN else f"[{shown}]"


def _is_missing(value) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    if isinstance(value, np.floating) and np.isnan(value):
        return True
    if value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, str) and value.strip() == ""


def _is_scalar_cell(value) -> bool:
    return value is None or isinstance(value, (str, bytes, bool, numbers.Number, np.generic)) or value is pd.NA


def _unsafe_file_name(stimulus_id: str) -> bool:
    return (stimulus_id in (".", "..") or any(c in stimulus_id for c in "/\\\0") or len(stimulus_id.encode()) > 200
            or any(ord(c) < 32 for c in stimulus_id) or stimulus_id != stimulus_id.strip())


MAX_IDENTIFIER_BYTES = 200
"""Longest identifier in UTF-8 bytes: ``.stimulus_<identifier>.zip.<random>.part`` must fit a 255-byte file name."""


def validate_identifier(identifier, what: str = "identifier") -> ValidationReport:
    """Check a data identifier: a non-empty string without whitespace, slashes or quotes.

    Packaged files are named after it with ``.`` replaced by ``_`` (the reference's naming), and a
    data plugin registers it as a literal string.
    """
    report = ValidationReport(f"{what} {identifier!r}")
    report.ran("identifier")
    if not isinstance(identifier, str) or not identifier:
        report.add("identifier", f"the {what} must be a non-empty string, got {identifier!r}; name the data "
                                 f"after its paper, e.g. 'Cowley2026.210325'", [identifier])
        return report
    bad = sorted({c for c in identifier if c.isspace() or c in "/\\'\"`:*?<>|" or not c.isprintable()})
    if bad:
        report.add("identifier", f"the {what} {identifier!r} contains characters {bad} that cannot appear in file "
                                 f"names or plugin code; use letters, digits, '.', '_' and '-'", [identifier])
    if len(identifier.encode("utf-8")) > MAX_IDENTIFIER_BYTES:  # file names are at most 255 bytes (with prefixes)
        report.add("identifier", f"the {what} is {len(identifier.encode('utf-8'))} bytes long in UTF-8; file names "
                                 f"are made of it, so the limit is {MAX_IDENTIFIER_BYTES}: shorten it", [identifier])
    return report


def _check_type_and_identifier(report: "ValidationReport", value, expected: type, requirement: str,
                               identifier: str | None, what: str) -> bool:
    """Run the ``type`` check (and the identifier's, when given); False if the type is wrong and nothing else can run."""
    report.ran("type")
    if not isinstance(value, expected):
        report.add("type", f"{requirement}, got {type(value).__name__}")
        return False
    if identifier is not None:
        report.extend(validate_identifier(identifier, what))
    return True


def validate_stimulus_set(stimulus_set: pd.DataFrame, *, check_images: bool = True,
                          non_null_columns: Sequence[str] = ("stimulus_id",),
                          identifier: str | None = None) -> ValidationReport:
    """Check a stimulus set: unique, file-safe stimulus ids, every file present and a readable image.

    Parameters
    ----------
    stimulus_set : StimulusSet or DataFrame
        One row per stimulus with a ``stimulus_id`` column; files from ``stimulus_paths`` (or a
        ``stimulus_path`` column).
    check_images : bool
        Open every file with PIL and verify it (catches truncated and non-image files).
    non_null_columns : sequence of str
        Columns in which no value may be missing (NaN, None or empty).
    identifier : str, optional
        Identifier it will be packaged under (default: ``stimulus_set.identifier``).

    Returns
    -------
    ValidationReport
        Never raises for bad data; call :meth:`ValidationReport.raise_if_failed`.
    """
    identifier = identifier if identifier is not None else getattr(stimulus_set, "identifier", None)
    report = ValidationReport(f"stimulus set {identifier!r}")
    if not _check_type_and_identifier(report, stimulus_set, pd.DataFrame,
                                      "a stimulus set must be a StimulusSet (a pandas DataFrame)", identifier,
                                      "stimulus set identifier"):
        return report
    if identifier is None:
        report.warnings.append("the stimulus set has no identifier; give one when packaging it")
    report.ran("stimulus_id_column")
    if "stimulus_id" not in stimulus_set.columns:
        report.add("stimulus_id_column", f"no 'stimulus_id' column; columns are {list(stimulus_set.columns)}. "
                                         f"Add one unique id per stimulus (e.g. the file name without extension)",
                   ["stimulus_id"])
        return report
    if len(stimulus_set) == 0:
        report.add("non_empty", "the stimulus set has no rows")
        return report
    _check_columns(stimulus_set, report, non_null_columns)
    ids = stimulus_set["stimulus_id"]
    valid_ids = [str(i) for i in ids if not _is_missing(i)]

    report.ran("unique_stimulus_ids")
    duplicated = pd.Series(valid_ids)[pd.Series(valid_ids).duplicated()].unique().tolist()
    if duplicated:
        report.add("unique_stimulus_ids", f"stimulus ids {_show(duplicated)} appear on more than one row; each "
                                          f"stimulus needs exactly one row (put trials in the assembly)", duplicated)

    report.ran("file_safe_stimulus_ids")
    unsafe = [i for i in valid_ids if _unsafe_file_name(i)]
    if unsafe:
        report.add("file_safe_stimulus_ids", f"stimulus ids {_show(unsafe)} cannot be file names (slashes, control "
                                             f"characters, surrounding spaces or over 200 bytes); files are zipped as "
                                             f"'<stimulus_id><extension>'", unsafe)

    report.ran("stimulus_files")
    paths = getattr(stimulus_set, "stimulus_paths", None) or {}
    if not paths and "stimulus_path" in stimulus_set.columns:
        paths = dict(zip(stimulus_set["stimulus_id"].astype(str), stimulus_set["stimulus_path"]))
    no_path = [i for i in valid_ids if i not in paths]
    if no_path:
        report.add("stimulus_files", f"stimulus ids {_show(no_path)} have no file; set stimulus_paths "
                                     f"(stimulus_id -> image file) for every row", no_path)
    with_path = [i for i in valid_ids if i in paths]
    missing = [i for i in with_path if not Path(paths[i]).is_file()]
    if missing:
        examples = [str(paths[i]) for i in missing[:3]]
        report.add("stimulus_files", f"the files of stimulus ids {_show(missing)} do not exist (e.g. {examples}); "
                                     f"fix the paths or remove those rows", missing)
    report.ran("no_links_out")
    escaping = links_out_of_folder({i: paths[i] for i in with_path if i not in missing})
    if escaping:
        report.add("no_links_out", f"the files of stimulus ids {_show([e[0] for e in escaping])} are symbolic links "
                                   f"out of the stimulus folder (e.g. {escaping[0][1]} -> {escaping[0][2]}); nothing "
                                   f"outside the folder is packaged: copy the real files in (`cp -L`)",
                   [e[0] for e in escaping])
        missing = missing + [e[0] for e in escaping]  # never opened as images either
    no_suffix = [i for i in with_path if i not in missing and not Path(paths[i]).suffix]
    if no_suffix:
        report.warnings.append(f"files of {len(no_suffix)} stimuli have no extension (e.g. {no_suffix[:3]}); "
                               f"models infer the format from the content")
    if check_images:
        report.ran("images_open")
        broken = []
        for i in with_path:
            if i in missing:
                continue
            error = _image_error(Path(paths[i]))
            if error:
                broken.append((i, error))
        if broken:
            report.add("images_open", f"the files of stimulus ids {_show([b[0] for b in broken])} do not open as "
                                      f"images (e.g. {broken[0][1]}); replace them with valid image files",
                       [b[0] for b in broken])
    return report


def _image_error(path: Path) -> str | None:
    from PIL import UnidentifiedImageError

    from brainscore.data.images import open_image

    try:
        with open_image(path) as image:
            image.verify()
    except ValidationError as error:  # a decompression bomb: the message names the file and its claimed size
        return f"{path.name}: {error}"
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as error:
        return f"{path.name}: {type(error).__name__}: {error}"
    return None


def _check_columns(frame: pd.DataFrame, report: ValidationReport, non_null_columns: Sequence[str]) -> None:
    report.ran("column_names")
    bad_names = [c for c in frame.columns if not isinstance(c, str) or not c.strip()]
    if bad_names:
        report.add("column_names", f"column names {_show(bad_names)} are not non-empty strings", bad_names)
    clashing = [c for c in frame.columns if c in _ASSEMBLY_DIMS]
    if clashing:
        report.add("column_names", f"columns {clashing} have the names of assembly dimensions; they would be "
                                   f"merged onto presentations and clash: rename them", clashing)
    report.ran("non_null_columns")
    ids = frame["stimulus_id"].tolist() if "stimulus_id" in frame.columns else list(range(len(frame)))
    for column in non_null_columns:
        if column not in frame.columns:
            report.add("non_null_columns", f"required column {column!r} is missing; columns are {list(frame.columns)}",
                       [column])
            continue
        rows = [ids[k] if column != "stimulus_id" else f"row {k}"
                for k, v in enumerate(frame[column].tolist()) if _is_missing(v)]
        if rows:
            report.add("non_null_columns", f"column {column!r} has missing values (NaN, None or empty) for "
                                           f"{_show(rows)}; fill them in", rows)
    report.ran("scalar_cells")
    for column in frame.columns:
        if frame[column].dtype != object:
            continue
        values = frame[column].tolist()
        nonscalar = [ids[k] for k, v in enumerate(values) if not _is_scalar_cell(v)]
        if nonscalar:
            report.add("scalar_cells", f"column {column!r} holds lists, arrays or objects for stimuli "
                                       f"{_show(nonscalar)}; a CSV can only store one number or string per cell",
                       nonscalar)
            continue
        kinds = {type(v).__name__ for v in values if not _is_missing(v)}
        if len(kinds & {"str"}) and len(kinds - {"str"}):
            report.warnings.append(f"column {column!r} mixes strings and {sorted(kinds - {'str'})}; after packaging "
                                   f"it is read back as one type")


ASSEMBLY_CLASSES: dict[str, type] = {
    "NeuroidAssembly": NeuroidAssembly, "BehavioralAssembly": BehavioralAssembly,
    "PropertiesAssembly": PropertiesAssembly, "DataAssembly": DataAssembly,
    # the reference's names for the same structures
    "NeuronRecordingAssembly": NeuroidAssembly, "PropertyAssembly": PropertiesAssembly,
}
"""Assembly class names accepted where a class is expected (including the reference's names)."""


def assembly_class_of(assembly: xr.DataArray, assembly_class: type | str | None = None) -> type:
    """The assembly type to check ``assembly`` against and to load it as.

    ``assembly_class`` (a class or a name in :data:`ASSEMBLY_CLASSES`) wins; else the assembly's own
    type if it is a specific assembly type; else it is inferred from the dims: ``presentation`` and
    ``neuroid`` (and at most ``time_bin``) -> NeuroidAssembly; ``presentation`` first without
    ``neuroid`` -> BehavioralAssembly; ``neuroid`` first without ``presentation`` -> PropertiesAssembly;
    anything else (e.g. RDMs ``(rdm, presentation, presentation_b)``) -> DataAssembly.

    Raises
    ------
    ValueError
        If ``assembly_class`` is an unknown name.
    """
    if isinstance(assembly_class, str):
        if assembly_class not in ASSEMBLY_CLASSES:
            raise ValueError(f"unknown assembly class {assembly_class!r}; expected one of {sorted(ASSEMBLY_CLASSES)}")
        return ASSEMBLY_CLASSES[assembly_class]
    if assembly_class is not None:
        return assembly_class
    if isinstance(assembly, DataAssembly) and type(assembly) is not DataAssembly:
        return type(assembly)
    dims = tuple(assembly.dims)
    if {"presentation", "neuroid"} <= set(dims) <= set(_ASSEMBLY_DIMS):
        return NeuroidAssembly
    if dims and dims[0] == "presentation" and "neuroid" not in dims:
        return BehavioralAssembly
    if dims and dims[0] == "neuroid" and "presentation" not in dims:
        return PropertiesAssembly
    return DataAssembly


def validate_assembly(assembly: xr.DataArray, *, stimulus_set: pd.DataFrame | None = None,
                      assembly_class: type | str | None = None, allow_nan: bool = False,
                      identifier: str | None = None) -> ValidationReport:
    """Check an assembly: dims and their order, required coordinates, values, and its stimulus set.

    Per assembly type:

    - ``NeuroidAssembly``: dims ``(presentation, neuroid[, time_bin])`` in that order; ``stimulus_id``
      on presentation, unique ``neuroid_id`` on neuroid, ``time_bin_start < time_bin_end`` (ms) on
      time_bin; numeric values; presentations distinguishable (e.g. by ``repetition``).
    - ``BehavioralAssembly``: ``presentation`` first; ``stimulus_id`` on presentation.
    - ``PropertiesAssembly``: ``neuroid`` first; unique ``neuroid_id``; numeric values.

    Parameters
    ----------
    assembly : DataArray
        The assembly (a MultiIndex is fine; packaging resets it).
    stimulus_set : DataFrame, optional
        If given, every ``stimulus_id`` of the assembly must be in it, and columns it shares with
        the assembly's presentation coordinates must agree (on loading, the stimulus set's wins).
    assembly_class : type or str, optional
        The type to check against; default: the assembly's own type, else inferred from its dims.
    allow_nan : bool
        Allow NaN values in the data (e.g. missing trials); infinities are never allowed.
    identifier : str, optional
        Identifier it will be packaged under.

    Returns
    -------
    ValidationReport
        Never raises for bad data; call :meth:`ValidationReport.raise_if_failed`.

    Raises
    ------
    ValueError
        If ``assembly_class`` is an unknown name.
    """
    cls = assembly_class_of(assembly, assembly_class)
    report = ValidationReport(f"{cls.__name__} {identifier!r}" if identifier else cls.__name__)
    if not _check_type_and_identifier(report, assembly, xr.DataArray,
                                      f"an assembly must be an xarray DataArray (e.g. {cls.__name__})", identifier,
                                      "assembly identifier"):
        return report
    da = xr.DataArray(assembly)
    multi = [n for n, index in da.indexes.items() if isinstance(index, pd.MultiIndex)]
    if multi:
        da = da.reset_index(multi)
    _check_dims(da, cls, report)
    _check_required_coords(da, cls, report)
    _check_values(da, cls, report, allow_nan)
    if cls is NeuroidAssembly and "presentation" in da.dims:
        _check_distinct_presentations(da, report)
        _check_informative(da, report)
    _check_attrs(da, report)
    if stimulus_set is not None:
        _check_against_stimulus_set(da, stimulus_set, report)
    return report


def _check_dims(da: xr.DataArray, cls: type, report: ValidationReport) -> None:
    report.ran("dims")
    dims = tuple(da.dims)
    empty = [d for d in dims if da.sizes[d] == 0]
    if empty:
        report.add("dims", f"dims {empty} have length 0", empty)
    required = tuple(cls.REQUIRED_DIMS)
    missing = [d for d in required if d not in dims]
    if missing:
        report.add("dims", f"a {cls.__name__} needs dims {required}; {missing} missing (has {dims})", missing)
        return
    if cls is NeuroidAssembly:
        extra = [d for d in dims if d not in _ASSEMBLY_DIMS]
        if extra:
            report.add("dims", f"a NeuroidAssembly has dims (presentation, neuroid[, time_bin]); {extra} are not "
                               f"allowed: select or average them away, or use another assembly type", extra)
        expected = tuple(d for d in _ASSEMBLY_DIMS if d in dims)
        if not extra and dims != expected:
            report.add("dims", f"dims are in order {dims}; a NeuroidAssembly expects {expected}: "
                               f"use assembly.transpose{expected}", list(dims))
    elif required and dims[0] != required[0]:
        report.add("dims", f"dims are in order {dims}; a {cls.__name__} expects {required[0]!r} first: "
                           f"use assembly.transpose({required[0]!r}, ...)", list(dims))


def _check_required_coords(da: xr.DataArray, cls: type, report: ValidationReport) -> None:
    report.ran("required_coords")
    required = dict(cls.REQUIRED_COORDS)
    if "time_bin" in da.dims:
        required.update(time_bin_start="time_bin", time_bin_end="time_bin")
    for coord, dim in required.items():
        if dim not in da.dims:
            continue
        if coord not in da.coords:
            report.add("required_coords", f"coordinate {coord!r} on {dim!r} is missing; coordinates are "
                                          f"{sorted(map(str, da.coords))}", [coord])
            continue
        if da[coord].dims != (dim,):
            report.add("required_coords", f"coordinate {coord!r} must lie along ({dim!r},), lies along "
                                          f"{da[coord].dims}", [coord])
            continue
        values = da[coord].values.tolist()
        missing = [k for k, v in enumerate(values) if _is_missing(v)]
        if missing:
            report.add("required_coords", f"coordinate {coord!r} has missing values (NaN, None or empty) at "
                                          f"{dim} positions {_show(missing)}", missing)
    if "neuroid_id" in da.coords and da["neuroid_id"].dims == ("neuroid",):
        report.ran("unique_neuroid_ids")
        ids = pd.Series(da["neuroid_id"].values)
        duplicated = ids[ids.duplicated()].unique().tolist()
        if duplicated:
            report.add("unique_neuroid_ids", f"neuroid ids {_show(duplicated)} appear more than once; each neuroid "
                                             f"needs its own id", duplicated)
    if "time_bin" in da.dims and {"time_bin_start", "time_bin_end"} <= set(da.coords):
        report.ran("time_bins")
        try:
            start = np.asarray(da["time_bin_start"].values, dtype=float)
            end = np.asarray(da["time_bin_end"].values, dtype=float)
        except (TypeError, ValueError):
            report.add("time_bins", "time_bin_start and time_bin_end must be numbers (ms after stimulus onset)",
                       ["time_bin_start", "time_bin_end"])
            return
        bad = [(s, e) for s, e in zip(start.tolist(), end.tolist()) if not s < e]
        if bad:
            report.add("time_bins", f"time bins {_show(bad)} do not have time_bin_start < time_bin_end (ms)", bad)
        counts = Counter(zip(start.tolist(), end.tolist()))
        repeated = sorted(p for p, n in counts.items() if n > 1)
        if repeated:
            report.add("time_bins", f"time bins {_show(repeated)} appear more than once", repeated)
    report.ran("coordinate_types")
    for name, coord in da.coords.items():
        if coord.dtype != object:
            continue
        kinds = {type(v).__name__ for v in coord.values.ravel().tolist() if not _is_missing(v)}
        nonscalar = kinds & {"list", "dict", "tuple", "ndarray", "set"}
        if nonscalar:
            report.add("coordinate_types", f"coordinate {name!r} holds {sorted(nonscalar)}; netCDF stores one number "
                                           f"or string per entry", [name])
        elif "str" in kinds and len(kinds) > 1:
            report.add("coordinate_types", f"coordinate {name!r} mixes strings with {sorted(kinds - {'str'})}; "
                                           f"netCDF would store them all as strings: convert it to one type", [name])


def _check_values(da: xr.DataArray, cls: type, report: ValidationReport, allow_nan: bool) -> None:
    report.ran("values")
    numeric = np.issubdtype(da.dtype, np.number) or np.issubdtype(da.dtype, np.bool_)
    if not numeric:
        if cls in (NeuroidAssembly, PropertiesAssembly):
            report.add("values", f"a {cls.__name__} holds numbers; the data have dtype {da.dtype}", [str(da.dtype)])
        return
    if not np.issubdtype(da.dtype, np.floating):
        return
    values = np.asarray(da.values)
    infinite = np.isinf(values)
    if infinite.any():
        report.add("values", f"{int(infinite.sum())} values are infinite{_where(da, infinite)}; replace them",
                   _offending(da, infinite))
    if not allow_nan:
        nan = np.isnan(values)
        if nan.any():
            report.add("values", f"{int(nan.sum())} values are NaN{_where(da, nan)}; drop those presentations "
                                 f"(e.g. missing repetitions) or pass allow_nan=True if NaN is meaningful",
                       _offending(da, nan))


def _check_informative(da: xr.DataArray, report: ValidationReport) -> None:
    """Warn of data no metric can use: fewer than 3 stimuli, or neuroids whose value never changes."""
    ids = da["stimulus_id"].values if "stimulus_id" in da.coords else np.arange(da.sizes["presentation"])
    n_stimuli = len(pd.unique(pd.Series(np.asarray(ids).ravel())))
    if n_stimuli < 3:
        report.warnings.append(f"the assembly holds responses to {n_stimuli} stimul{'us' if n_stimuli == 1 else 'i'}: "
                               f"no metric can compare a model with so few (correlations, regressions and RDMs need "
                               f"at least 3); package the responses to every stimulus")
    if "neuroid" not in da.dims or da.sizes["presentation"] < 2 or not np.issubdtype(da.dtype, np.number):
        return
    values = np.moveaxis(np.asarray(da.values, dtype=float), da.get_axis_num("neuroid"), -1)
    values = values.reshape(-1, values.shape[-1])
    with np.errstate(invalid="ignore"):
        constant = np.nanmax(values, axis=0) == np.nanmin(values, axis=0)
    if constant.any():
        ids = (da["neuroid_id"].values[constant] if "neuroid_id" in da.coords else np.flatnonzero(constant)).tolist()
        report.warnings.append(f"{int(constant.sum())} of {constant.size} neuroids (neuroid_id {_show(ids)}) "
                               f"have the same value in every presentation (zero variance): correlations with them are "
                               f"undefined and no model can predict them; drop them or check the recording")


def _offending(da: xr.DataArray, mask: np.ndarray) -> list:
    if "presentation" in da.dims and "stimulus_id" in da.coords and da["stimulus_id"].dims == ("presentation",):
        axis = da.get_axis_num("presentation")
        rows = np.flatnonzero(np.moveaxis(mask, axis, 0).reshape(mask.shape[axis], -1).any(axis=1))
        return pd.unique(da["stimulus_id"].values[rows]).tolist()
    return np.argwhere(mask)[:, 0].tolist()


def _where(da: xr.DataArray, mask: np.ndarray) -> str:
    parts = []
    for dim, coord in (("presentation", "stimulus_id"), ("neuroid", "neuroid_id")):
        if dim in da.dims and coord in da.coords and da[coord].dims == (dim,):
            axis = da.get_axis_num(dim)
            hit = np.moveaxis(mask, axis, 0).reshape(mask.shape[axis], -1).any(axis=1)
            parts.append(f"{coord} {_show(pd.unique(da[coord].values[hit]).tolist())}")
    return f" (at {'; '.join(parts)})" if parts else ""


def _check_distinct_presentations(da: xr.DataArray, report: ValidationReport) -> None:
    report.ran("distinct_presentations")
    names = [n for n, c in da.coords.items() if c.dims == ("presentation",) and n != "presentation"]
    if not names:
        return
    frame = pd.DataFrame({n: da[n].values for n in names})
    duplicated = frame.duplicated(keep=False)
    if duplicated.any():
        ids = pd.unique(frame.loc[duplicated, "stimulus_id"]).tolist() if "stimulus_id" in frame else []
        report.add("distinct_presentations",
                   f"{int(duplicated.sum())} presentations have identical values in every presentation coordinate "
                   f"({names}), for stimulus ids {_show(ids)}; number the trials with a 'repetition' coordinate",
                   ids)


def _check_attrs(da: xr.DataArray, report: ValidationReport) -> None:
    report.ran("attrs")
    dropped = [k for k, v in da.attrs.items()
               if isinstance(v, bool) or not isinstance(v, (str, int, float, np.number, list, tuple))]
    if dropped:
        report.warnings.append(f"attributes {dropped} cannot be stored in netCDF and are dropped on packaging")


def _check_against_stimulus_set(da: xr.DataArray, stimulus_set: pd.DataFrame, report: ValidationReport) -> None:
    report.ran("stimulus_set_alignment")
    if "presentation" not in da.dims:
        return
    if "stimulus_id" not in da.coords or "stimulus_id" not in getattr(stimulus_set, "columns", []):
        report.add("stimulus_set_alignment", "cannot align the assembly with the stimulus set: one of them has no "
                                             "'stimulus_id'", ["stimulus_id"])
        return
    assembly_ids = pd.unique(pd.Series(da["stimulus_id"].values).astype(str))
    set_ids = set(stimulus_set["stimulus_id"].astype(str))
    missing = [i for i in assembly_ids if i not in set_ids]
    if missing:
        report.add("stimulus_set_alignment", f"stimulus ids {_show(missing)} of the assembly are not in the stimulus "
                                             f"set; add their images to it or drop those presentations", missing)
    unused = len(set_ids - set(assembly_ids))
    if unused:
        report.warnings.append(f"{unused} stimuli of the stimulus set have no presentation in the assembly")
    shared = [c for c in stimulus_set.columns if c != "stimulus_id" and c in da.coords
              and da[c].dims == ("presentation",)]
    if not shared:
        return
    lookup = (stimulus_set.assign(_key=stimulus_set["stimulus_id"].astype(str))
              .drop_duplicates("_key").set_index("_key"))
    rows = lookup.reindex(pd.Index(pd.Series(da["stimulus_id"].values).astype(str)))
    for column in shared:
        expected, actual = rows[column].to_numpy(), da[column].values
        differs = [str(i) for i, e, a in zip(da["stimulus_id"].values, expected, actual)
                   if not (_is_missing(e) and _is_missing(a)) and not _equal(e, a)]
        if differs:
            differs = pd.unique(pd.Series(differs)).tolist()
            report.add("stimulus_set_alignment",
                       f"coordinate {column!r} of the assembly differs from the stimulus set's column for stimulus ids "
                       f"{_show(differs)}; on loading the stimulus set's value replaces the assembly's: make them "
                       f"agree or rename one", differs)


def _equal(a, b) -> bool:
    try:
        if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
            return bool(a == b) or (math.isnan(float(a)) and math.isnan(float(b)))
    except (TypeError, ValueError):
        pass
    return str(a) == str(b)


def validate(stimulus_set: pd.DataFrame | None = None, assembly: xr.DataArray | None = None, *,
             check_images: bool = True, allow_nan: bool = False, assembly_class: type | str | None = None,
             stimulus_set_identifier: str | None = None, assembly_identifier: str | None = None,
             raise_on_error: bool = True) -> ValidationReport:
    """Validate a stimulus set, an assembly, or both together (every check, all problems at once).

    Parameters
    ----------
    stimulus_set : StimulusSet, optional
    assembly : DataArray, optional
    check_images : bool
        Open every stimulus file as an image.
    allow_nan : bool
        Allow NaN in the assembly's values.
    assembly_class : type or str, optional
        The assembly type to check against (default: its own type or inferred from its dims).
    stimulus_set_identifier, assembly_identifier : str, optional
        Identifiers they will be packaged under.
    raise_on_error : bool
        Raise when there is a problem (default); else return the report.

    Returns
    -------
    ValidationReport

    Raises
    ------
    ValidationError
        If ``raise_on_error`` and any check failed; the message lists every problem.
    """
    if stimulus_set is None and assembly is None:
        raise ValueError("give a stimulus_set, an assembly, or both to validate")
    parts = []
    if stimulus_set is not None:
        parts.append(f"stimulus set {stimulus_set_identifier or getattr(stimulus_set, 'identifier', None)!r}")
    if assembly is not None:
        parts.append(f"assembly {assembly_identifier!r}" if assembly_identifier else "assembly")
    report = ValidationReport(" and ".join(parts))
    if stimulus_set is not None:
        report.extend(validate_stimulus_set(stimulus_set, check_images=check_images,
                                            identifier=stimulus_set_identifier))
    if assembly is not None:
        report.extend(validate_assembly(assembly, stimulus_set=stimulus_set, assembly_class=assembly_class,
                                        allow_nan=allow_nan, identifier=assembly_identifier))
    if raise_on_error:
        report.raise_if_failed()
    return report
