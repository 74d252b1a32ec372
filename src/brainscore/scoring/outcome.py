"""A score's outcome: the one type that says how scoring a model on a benchmark ended.

:class:`Outcome` holds what every consumer of a score reads (the command line's output, the
runner's summaries and table, the results database, the website): the ceiled score, its raw value
and ceiling, the bootstrap standard error and 95% interval, the committed layers, the provenance,
or, for a pair that failed, the failure message and its log. It is built in one place,
:meth:`Outcome.from_score` (from the :class:`~brainscore.metrics.score.Score` that
:func:`brainscore.score` returns) or :meth:`Outcome.from_failure` (from the exception). Adding a
field to a result means adding it here, once.

Names
    ``error`` is only ever the bootstrap standard error of the ceiled score (see
    :mod:`brainscore.scoring.bootstrap`); the reference's own error (e.g. the SEM over
    cross-validation splits) is ``error_reference``; a failure's message is ``failure``.
"""
from __future__ import annotations

import dataclasses
import math
import traceback
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Outcome", "number", "SUMMARY_FIELDS"]

_HIDDEN = {"summary": False}  # a field kept in the outcome and the database, not in the printed summary


def number(value: Any) -> float | None:
    """``value`` as a Python float, or None where it is absent, not a scalar, or NaN.

    The one conversion of a score's numbers (a 0-d Score, a numpy scalar, a float) into what is
    printed, sent and stored: a NaN is never stored as a number, it is None ("no value").

    Examples
    --------
    >>> number(0.5), number(None), number(float("nan")), number("x")
    (0.5, None, None, None)
    """
    if value is None:
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(value) else value


def _own_error(ceiling: Any) -> float | None:
    """The ceiling's own error (its split-half spread): ``error_reference`` where the bootstrap took ``error``."""
    attrs = getattr(ceiling, "attrs", {})
    return number(attrs.get("error_reference", attrs.get("error")))


def _pair(values: Any) -> tuple[float, float] | None:
    return None if values is None else (float(values[0]), float(values[1]))


def _range(values: Any) -> tuple[float | None, float | None] | None:
    """A declared score range as plain JSON values: ``(low, high)``, an infinite bound as None; None if absent.

    Raises
    ------
    ValueError
        If ``values`` is not two numbers (or None), low first.
    """
    if values is None:
        return None
    try:
        low, high = (None if v is None or (isinstance(v, (int, float)) and math.isinf(v)) else float(v)
                     for v in values)
    except (TypeError, ValueError):
        raise ValueError(f"a score range is two numbers (low, high), got {values!r}") from None
    if low is not None and high is not None and not low <= high:
        raise ValueError(f"a score range is (low, high) with low <= high, got {values!r}")
    return low, high


@dataclass(frozen=True)
class Outcome:
    """How scoring ``model`` on ``benchmark`` ended: a score with its parts, or a failure.

    Attributes
    ----------
    model, benchmark : str
        Identifiers.
    status : {"done", "failed", "skipped"}
        ``skipped``: a run found the pair already recorded with the same run key.
    score : float or None
        The ceiled score (the leaderboard value); None for a failure.
    raw, ceiling : float or None
        The unceiled score and the ceiling it was normalised by.
    error : float or None
        Bootstrap standard error of ``score`` (never a failure message).
    ci95 : (float, float) or None
        Bootstrap 95% percentile interval of ``score``.
    ceiling_error, ceiling_ci95 : float, (float, float) or None
        The same for the ceiling.
    error_reference : float or None
        The error as the reference reports it (e.g. SEM over cross-validation splits).
    formula : str or None
        How ``score`` was computed from ``raw`` and ``ceiling`` (``r2_over_ceiling``, ``raw``, ...).
    layer : str or None
        The layer committed for the benchmark's region (or the model's only layer).
    layers : dict or None
        Region -> committed layer.
    method : str or None
        How ``layer`` was chosen: ``declared`` (the model's map), ``selection`` (on the region's
        selection data) or ``rule`` (the relative-depth rule, :mod:`brainscore.models.layer_rule`);
        None for a benchmark without a region.
    duration_s : float or None
        Seconds the job took.
    failure : str or None
        ``"ExceptionType: message"`` of a failed pair; None otherwise.
    log : str or None
        The failure's traceback (or a submission's log).
    region : str or None
        The benchmark's region (not in the summary).
    commitment : dict or None
        How the region's layer was committed, with the method's parameters (the selection's
        benchmarks, the rule's relative depth and index; :func:`brainscore.scoring.job.commitment_of`;
        not in the summary, also in the provenance's ``model.commitment``).
    layer_selection : dict or None
        How the layers were committed: for each region whose layer was chosen automatically, every
        candidate layer's selection score (the method's record; not in the summary).
    bootstrap_unit : str or None
        What the bootstrap resampled (``stimulus``, ``neuroid``, ...; not in the summary).
    benchmark_version : int or None
    benchmark_parent : str or None
        The leaderboard node the benchmark is averaged into, as its plugin declares it.
    ceiling_error_reference : float or None
        The ceiling's own error as the reference computes it (split-half spread).
    visual_degrees : float or None
    provenance : dict
        ``score.attrs["provenance"]`` as plain JSON data (:mod:`brainscore.scoring.provenance`).
    provenance_key : str or None
        Its key (:func:`brainscore.scoring.provenance.provenance_key`); None without provenance.
    score_range : (float or None, float or None) or None
        The ceiled scores the benchmark declares it can give (``Benchmark.score_range``; None for no bound on
        that side); None: not declared, [0, 1]. The results database refuses a score outside it
        (:func:`brainscore.results.validity.check_outcome`).
    """

    model: str
    benchmark: str
    status: str
    score: float | None = None
    raw: float | None = None
    ceiling: float | None = None
    error: float | None = None
    ci95: tuple[float, float] | None = None
    ceiling_error: float | None = None
    ceiling_ci95: tuple[float, float] | None = None
    error_reference: float | None = None
    formula: str | None = None
    layer: str | None = None
    layers: dict | None = None
    method: str | None = None
    duration_s: float | None = None
    failure: str | None = None
    log: str | None = None
    region: str | None = field(default=None, metadata=_HIDDEN)
    commitment: dict | None = field(default=None, metadata=_HIDDEN)
    layer_selection: dict | None = field(default=None, metadata=_HIDDEN)
    bootstrap_unit: str | None = field(default=None, metadata=_HIDDEN)
    benchmark_version: int | None = field(default=None, metadata=_HIDDEN)
    benchmark_parent: str | None = field(default=None, metadata=_HIDDEN)
    ceiling_error_reference: float | None = field(default=None, metadata=_HIDDEN)
    visual_degrees: float | None = field(default=None, metadata=_HIDDEN)
    provenance: dict = field(default_factory=dict, metadata=_HIDDEN)
    provenance_key: str | None = field(default=None, metadata=_HIDDEN)
    score_range: tuple[float | None, float | None] | None = field(default=None, metadata=_HIDDEN)

    # ------------------------------------------------------------------------------ built here only
    @classmethod
    def from_score(cls, score, model: str | None = None, benchmark: str | None = None) -> "Outcome":
        """The outcome of a score as :func:`brainscore.score` returns it.

        Parameters
        ----------
        score : Score
            Scalar, with attrs ``model_identifier`` and ``benchmark_identifier`` (unless ``model``
            and ``benchmark`` are given) and, where present, ``raw``, ``ceiling``, ``error``,
            ``ci95``, ``layers``, ``region``, ``provenance``, ...
        model, benchmark : str, optional
            Identifiers (default: the score's attrs).

        Raises
        ------
        ValueError
            If ``score`` is not scalar, or neither the arguments nor its attrs name the model and
            the benchmark.
        """
        from brainscore.scoring.provenance import jsonable, provenance_key

        attrs = dict(getattr(score, "attrs", {}))
        model = model or attrs.get("model_identifier")
        benchmark = benchmark or attrs.get("benchmark_identifier")
        if not model or not benchmark:
            raise ValueError("an outcome needs a Score with attrs['model_identifier'] and attrs['benchmark_identifier'] "
                             "(as brainscore.score() returns it)")
        if getattr(score, "ndim", 0) != 0:
            raise ValueError(f"an outcome needs a scalar score; got dims {getattr(score, 'dims', None)} for "
                             f"{model} on {benchmark}: reduce it to the benchmark's single value first")
        layers = attrs.get("layers") or {}
        commitment = attrs.get("commitment") or None
        region = attrs.get("region") or (commitment or {}).get("region")
        layer = layers.get(region) if region else (next(iter(layers.values())) if len(layers) == 1 else None)
        ceiling = attrs.get("ceiling")
        provenance = jsonable(attrs.get("provenance") or {})
        version, parent = _benchmark_facts(benchmark, attrs.get("benchmark_version"), provenance)
        return cls(model=model, benchmark=benchmark, status="done",
                   score=number(score), raw=number(attrs.get("raw")), ceiling=number(ceiling),
                   error=number(attrs.get("error")), ci95=_pair(attrs.get("ci95")),
                   ceiling_error=number(attrs.get("ceiling_error")), ceiling_ci95=_pair(attrs.get("ceiling_ci95")),
                   error_reference=number(attrs.get("error_reference")), formula=attrs.get("formula"),
                   layer=layer, layers=jsonable(layers) or None, method=(commitment or {}).get("method"),
                   commitment=jsonable(commitment),
                   duration_s=float(attrs.get("duration_s", float("nan"))),
                   region=region, layer_selection=jsonable(attrs.get("layer_selection")),
                   bootstrap_unit=attrs.get("bootstrap_unit"), benchmark_version=version, benchmark_parent=parent,
                   ceiling_error_reference=_own_error(ceiling),
                   visual_degrees=number(attrs.get("visual_degrees")),
                   provenance=provenance, provenance_key=provenance_key(provenance) if provenance else None,
                   score_range=_range(attrs.get("score_range")))

    @classmethod
    def from_failure(cls, model: str, benchmark: str, failure: BaseException | str, log: str | None = None,
                     provenance: dict | None = None) -> "Outcome":
        """The outcome of a pair that failed with ``failure`` (an exception, or its message).

        An exception gives ``failure`` ``"ExceptionType: message"`` and, unless ``log`` is given, its
        traceback as ``log``. ``provenance``: what was known when it failed (e.g. the run key).
        """
        from brainscore.scoring.provenance import jsonable, provenance_key

        if isinstance(failure, BaseException):
            if log is None:
                log = "".join(traceback.format_exception(failure))
            failure = f"{type(failure).__name__}: {failure}"
        provenance = jsonable(provenance or {})
        version, parent = _benchmark_facts(benchmark, None, provenance)
        return cls(model=model, benchmark=benchmark, status="failed", failure=str(failure),
                   log=log if log is not None else "", benchmark_version=version, benchmark_parent=parent,
                   provenance=provenance, provenance_key=provenance_key(provenance) if provenance else None)

    # --------------------------------------------------------------------------------------- views
    def replace(self, **changes: Any) -> "Outcome":
        """A copy with ``changes`` (e.g. ``status="skipped"``, or a run key added to the provenance)."""
        return dataclasses.replace(self, **changes)

    def with_provenance(self, **entries: Any) -> "Outcome":
        """A copy whose provenance has ``entries`` added (and its key recomputed)."""
        from brainscore.scoring.provenance import jsonable, provenance_key

        provenance = jsonable({**self.provenance, **entries})
        return self.replace(provenance=provenance, provenance_key=provenance_key(provenance))

    def summary(self) -> dict[str, Any]:
        """The printed and sent form: :data:`SUMMARY_FIELDS` as plain JSON values.

        ``ci95`` as a list, ``duration_s`` rounded to 0.01 s; ``failure`` and ``log`` only for a
        failed pair.
        """
        out: dict[str, Any] = {}
        for name in SUMMARY_FIELDS:
            value = getattr(self, name)
            if name in ("failure", "log") and self.status != "failed":
                continue
            if name in ("ci95", "ceiling_ci95") and value is not None:
                value = [float(v) for v in value]
            elif name == "duration_s" and value is not None:
                value = round(float(value), 2)
            out[name] = value
        return out

    def to_json(self) -> dict[str, Any]:
        """Every field as plain JSON data (the journal's form; :meth:`from_json` reads it back)."""
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v)
                for f in dataclasses.fields(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Outcome":
        """The outcome :meth:`to_json` wrote; unknown keys are ignored, missing ones take their defaults.

        Raises
        ------
        ValueError
            If ``model``, ``benchmark`` or ``status`` is missing.
        """
        missing = [name for name in ("model", "benchmark", "status") if not data.get(name)]
        if missing:
            raise ValueError(f"an outcome's JSON lacks {', '.join(missing)}: {sorted(data)}")
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in names}
        for name in ("ci95", "ceiling_ci95"):
            values[name] = _pair(values.get(name))
        values["score_range"] = _range(values.get("score_range"))
        values["provenance"] = values.get("provenance") or {}
        return cls(**values)


#: The fields of :meth:`Outcome.summary`, in the order they are printed.
SUMMARY_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Outcome) if f.metadata.get("summary", True))


def _benchmark_facts(benchmark: str, version: Any, provenance: dict) -> tuple[int | None, str | None]:
    """The benchmark's version (given, from the provenance, else the registry) and its declared parent.

    Both None where the registry does not know the benchmark, or cannot load it (a score computed by a
    plugin that is not installed here; a benchmark whose loading is what failed); the database then
    refuses a score whose version is unknown.
    """
    from brainscore import registry

    if version is None and provenance:
        version = (provenance.get("benchmark") or {}).get("version")
    parent = None
    try:
        parent = registry.benchmarks.metadata(benchmark).get("parent")
        if version is None:
            version = registry.load_benchmark(benchmark).version
    except Exception:  # noqa: BLE001 - an unknown or broken benchmark: the database says what is missing
        pass
    return (None if version is None else int(version)), parent
