"""Reproducing a recorded score: re-run it with its recorded settings and compare, bit for bit.

``brainscore reproduce RECORD_ID`` (:mod:`brainscore.cli.reproduce`) is a thin shell over
:func:`reproduce`. A record (a row of the results database, the ``#N`` of ``recorded as #N``) keeps
in its provenance (:mod:`brainscore.scoring.provenance`) everything needed to compute it again:

- the model and benchmark identifiers and the benchmark's version;
- the model's factory arguments (``model.kwargs``: an explicit ``region_layer_map``, the device);
- the bootstrap's resamples and seed;
- the committed layer and how it was chosen (``model.commitment``). A layer chosen by *selection* or
  by the *rule* is pinned for the rerun (``region_layer_map={region: layer}``), so the rerun is the
  same computation without repeating the selection; a *declared* layer is left to the model's own
  map, so a changed map shows up as a changed ``model.layers`` item;
- the sha256 of every data file it read (``benchmark.data_files``).

What is checked
    Before the rerun, every recorded data file found locally (data mirror or store) is read again and
    hashed, so a file that changed since the record is named with both hashes. The rerun bypasses
    the cache (``BRAINSCORE_CACHE=0``: activations, ceilings, layer selections and packaged
    assemblies are all computed again; nothing is written) unless ``use_cache=True``, which reuses
    cache entries, each verified against its checksum as it is read. The score, raw score, ceiling,
    bootstrap error and 95% interval are then compared bit for bit (:meth:`float.hex`), and the
    rerun's provenance item by item with the record's (timestamps, durations and the layer selection's
    curve aside; the host is listed apart, since it is not part of the computation's key).

The rerun is never written to the results database unless ``record=True``.
"""
from __future__ import annotations

import contextlib
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from brainscore.errors import (BrainScoreError, DataNotFoundError, HomeUnusableError, MissingDependencyError,
                               UnknownIdentifierError, ValidationError)

__all__ = ["reproduce", "reproduce_record", "fetch_record", "Reproduction", "ValueComparison", "ProvenanceChange", "DataFileCheck", "UnknownRecordError",
           "settings_of", "find_plugins", "check_data_files", "provenance_changes", "COMPARED"]

#: The numbers compared bit for bit, as the results database stores them.
COMPARED = ("score", "raw", "ceiling", "error", "ci95_low", "ci95_high")

#: Provenance entries not compared: when and how long it ran, where plugin folders were found, the selection's
#: per-layer curve (an outcome, whose committed layer is compared), a run's key and what a recorded rerun reproduces.
_NOT_COMPARED = ("start", "end", "duration_s", "layer_selection", "run_key", "reproduction_of", "plugin_sources")

#: Errors that say the rerun cannot be attempted here (a plugin or package missing, no such device,
#: an unusable home, a data file neither here nor downloadable): bad input, not a difference.
_CANNOT_RUN = (UnknownIdentifierError, MissingDependencyError, HomeUnusableError, ValidationError, DataNotFoundError)


class UnknownRecordError(BrainScoreError, LookupError):
    """No score is recorded under the record id asked for, or the record cannot be re-run."""


@dataclass(frozen=True)
class ValueComparison:
    """One number of the record and of the rerun (``None``: no value), and whether they are the same bits."""

    name: str
    recorded: float | None
    rerun: float | None

    @property
    def equal(self) -> bool:
        """True when both are None, or both are floats with the same bits (``float.hex``)."""
        return _hex(self.recorded) == _hex(self.rerun)

    @property
    def difference(self) -> float | None:
        """``rerun - recorded``, None where either is missing."""
        if self.recorded is None or self.rerun is None:
            return None
        return self.rerun - self.recorded


@dataclass(frozen=True)
class ProvenanceChange:
    """A provenance item whose value differs between the record and the rerun.

    ``item`` is a dotted path (``environment.numpy``, ``benchmark.data_files[path]``); ``recorded``
    or ``now`` is :data:`MISSING` where the item exists on one side only. ``in_key``: whether the item
    is part of the computation's key (the host is not).
    """

    item: str
    recorded: Any
    now: Any
    in_key: bool = True


class _Missing:
    def __repr__(self) -> str:
        return "(absent)"


#: Marks a provenance item that one side lacks.
MISSING = _Missing()


@dataclass(frozen=True)
class DataFileCheck:
    """A data file the record was computed from: its recorded sha256 and what the local copy has now.

    ``found`` is the local copy (mirror or store), None where there is none (the rerun would
    download it); ``actual`` its sha256 read now (None where not found or not readable).
    """

    path: str
    recorded: str
    found: Path | None
    actual: str | None

    @property
    def changed(self) -> bool:
        """True when a local copy exists and its bytes no longer hash to the recorded sha256."""
        return self.found is not None and self.actual != self.recorded


@dataclass
class Reproduction:
    """What :func:`reproduce` found: the record, the settings it re-ran with, and every difference.

    Attributes
    ----------
    record : StoredScore
        The record as the database holds it.
    settings : dict
        ``device``, ``bootstrap``, ``bootstrap_seed``, ``model_kwargs``, ``pinned`` (region -> layer
        pinned from the record, or None), ``cache`` (``"bypassed"`` or ``"reused, verified"``) and ``plugins``
        (the recorded plugin folders scanned again, :func:`find_plugins`).
    values : list of ValueComparison
        :data:`COMPARED` for a recorded score; empty for a recorded failure.
    provenance : list of ProvenanceChange
        Items that differ (those in the key first).
    data_files : list of DataFileCheck
        Every recorded data file, checked before the rerun.
    rerun_failure : str or None
        ``"ExceptionType: message"`` when the rerun failed.
    rerun_provenance : dict
        The rerun's provenance (empty when it failed).
    rerun_id : int or None
        The row the rerun was recorded as (``record=True``).
    duration_s : float
    """

    record: Any
    settings: dict
    values: list[ValueComparison] = field(default_factory=list)
    provenance: list[ProvenanceChange] = field(default_factory=list)
    data_files: list[DataFileCheck] = field(default_factory=list)
    rerun_failure: str | None = None
    rerun_provenance: dict = field(default_factory=dict)
    rerun_id: int | None = None
    duration_s: float = 0.0

    @property
    def changed_files(self) -> list[DataFileCheck]:
        """The recorded data files whose local copy changed since the record."""
        return [check for check in self.data_files if check.changed]

    @property
    def matches(self) -> bool:
        """True when the rerun gave the record's numbers bit for bit (or, for a recorded failure, the same
        failure message)."""
        if self.record.status == "failed":
            return self.rerun_failure is not None and self.rerun_failure == (self.record.failure or "")
        return self.rerun_failure is None and all(value.equal for value in self.values)

    def to_json(self) -> dict:
        """Plain JSON data: ``matches``, the record, settings, values (with ``hex``), provenance changes, files."""
        def plain(value):
            return None if value is MISSING else value

        return {"record": self.record.id, "model": self.record.model, "benchmark": self.record.benchmark,
                "benchmark_version": self.record.benchmark_version, "matches": self.matches,
                "settings": self.settings, "rerun_failure": self.rerun_failure, "rerun_id": self.rerun_id,
                "values": [{"name": v.name, "recorded": v.recorded, "rerun": v.rerun, "recorded_hex": _hex(v.recorded),
                            "rerun_hex": _hex(v.rerun), "equal": v.equal, "difference": v.difference}
                           for v in self.values],
                "provenance_changes": [{"item": c.item, "recorded": plain(c.recorded), "now": plain(c.now),
                                        "in_key": c.in_key} for c in self.provenance],
                "changed_data_files": [{"path": c.path, "recorded": c.recorded, "found": str(c.found),
                                        "actual": c.actual} for c in self.changed_files],
                "data_files_checked": sum(1 for c in self.data_files if c.found is not None),
                "duration_s": round(self.duration_s, 2)}

    def text(self) -> str:
        """The report ``brainscore reproduce`` prints: what was re-run how, then MATCHES or DIFFERS and why."""
        r = self.record
        when = f", recorded {r.end:%Y-%m-%d %H:%M} UTC" if r.end is not None else ""
        lines = [f"record #{r.id}: {r.model} on {r.benchmark} (benchmark version {r.benchmark_version}){when}"]
        s = self.settings
        pinned = s.get("pinned")
        recorded_device = ((r.provenance or {}).get("environment") or {}).get("device")
        how = [f"device {s['device']}" if s["device"] else f"device {recorded_device or 'cpu'} (the model's own)"]
        if s.get("bootstrap") is not None:
            how.append(f"bootstrap {s['bootstrap']} resamples, seed {s['bootstrap_seed']}")
        if pinned:
            how += [f"layer {region} -> {layer} pinned as recorded ({s.get('method')})" for region, layer in
                    pinned.items()]
        elif s.get("layer"):
            how.append(f"layer {s.get('region')} -> {s['layer']} ({s.get('method') or 'declared'})")
        how.append(f"cache {s['cache']}")
        lines.append("re-ran with " + ", ".join(how) + f" in {self.duration_s:.1f} s")
        for found in s.get("plugins") or ():
            lines.append(f"plugins: {found}")
        checked = [c for c in self.data_files if c.found is not None]
        if self.data_files:
            changed = self.changed_files
            lines.append(f"data files: {len(checked)} of {len(self.data_files)} recorded files read again and hashed, "
                         + (f"{len(changed)} changed since the record" if changed else "all unchanged"))
            for c in changed:
                lines.append(f"  data file {c.path} changed since the record: recorded sha256 {c.recorded}, "
                             f"{c.found} now has sha256 {c.actual or '(unreadable)'}")
        if self.rerun_failure is not None:
            lines.append(f"the rerun failed: {self.rerun_failure}")
        if r.status == "failed":
            lines.append(f"the record is a failure: {r.failure}")
        if self.matches:
            if r.status == "failed":
                lines.append(f"MATCHES: the rerun fails with the recorded failure")
            else:
                shown = ", ".join(f"{v.name} {_hex(v.recorded)} ({_short(v.recorded)})" for v in self.values
                                  if v.recorded is not None)
                lines.append(f"MATCHES bit for bit: {shown}")
        elif self.rerun_failure is not None and r.status == "done":
            changed = self.changed_files
            cause = (f": {len(changed)} data file{'s' if len(changed) > 1 else ''} changed since the record ("
                     + ", ".join(c.path for c in changed) + ")" if changed else "")
            lines.append(f"DIFFERS from record #{r.id}: the rerun failed and gives no score{cause}")
        else:
            lines.append(f"DIFFERS from record #{r.id}:")
            for v in self.values:
                if not v.equal:
                    diff = "" if v.difference is None else f"   difference {v.difference:+.6g}"
                    lines.append(f"  {v.name:9s} recorded {_short(v.recorded)} ({_hex(v.recorded)})   rerun "
                                 f"{_short(v.rerun)} ({_hex(v.rerun)}){diff}")
        in_key = [c for c in self.provenance if c.in_key]
        others = [c for c in self.provenance if not c.in_key]
        if in_key:
            lines.append("provenance items that changed since the record:")
            lines += [f"  {c.item}: recorded {_item(c.recorded)}, now {_item(c.now)}" for c in in_key]
        elif not self.matches and self.rerun_failure is None:
            lines.append("no provenance item changed: the same inputs gave other numbers (a nondeterministic step)")
        if others and not self.matches:
            lines.append("also different (not part of the computation's key): "
                         + "; ".join(f"{c.item} {_item(c.recorded)} -> {_item(c.now)}" for c in others))
        if self.rerun_id is not None:
            lines.append(f"the rerun was recorded as #{self.rerun_id}")
        return "\n".join(lines)


def _hex(value: float | None) -> str | None:
    return None if value is None else float(value).hex()


def _short(value: float | None) -> str:
    return "none" if value is None else repr(float(value))


def _item(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= 120 else text[:117] + "..."


# ------------------------------------------------------------------------------------------ settings
def settings_of(record) -> dict:
    """The settings a record was computed with, read from its provenance.

    Returns
    -------
    dict
        ``device`` (the device asked for, None: the model's own), ``bootstrap`` and ``bootstrap_seed``,
        ``model_kwargs`` (factory arguments other than the device), ``region``, ``layer`` and ``method``
        (the recorded commitment) and ``pinned`` (``{region: layer}`` where the layer was chosen by
        selection or the rule, else None).

    Raises
    ------
    UnknownRecordError
        If the record has no provenance (nothing says how it was computed, e.g. a score typed in
        with ``Score.of``) or no bootstrap settings.
    """
    provenance = record.provenance or {}
    model = provenance.get("model") or {}
    bootstrap = provenance.get("bootstrap") or {}
    if (not model or "resamples" not in bootstrap) and record.status == "failed":
        raise UnknownRecordError(
            f"record #{record.id} is a failure of {record.model} on {record.benchmark} ({record.failure}), which "
            f"records no settings to re-run with and no numbers to compare; see whether it still fails with "
            f"`brainscore score --model {record.model} --benchmark {record.benchmark} --no-record`")
    if not model or "resamples" not in bootstrap:
        raise UnknownRecordError(
            f"record #{record.id} ({record.model} on {record.benchmark}) has no provenance saying how it was computed "
            f"(model settings and bootstrap); only scores recorded by `brainscore score`, `brainscore run` or the "
            f"website can be reproduced")
    kwargs = dict(model.get("kwargs") or {})
    device = kwargs.pop("device", None)
    commitment = model.get("commitment") or {}
    region, layer, method = commitment.get("region"), commitment.get("layer"), commitment.get("method")
    pinned = None
    explicit = dict(kwargs.get("region_layer_map") or {})
    if region and layer and method not in (None, "declared") and region not in explicit:
        pinned = {str(region): str(layer)}
        kwargs["region_layer_map"] = {**explicit, **pinned}
    return {"device": device, "bootstrap": int(bootstrap["resamples"]), "bootstrap_seed": int(bootstrap.get("seed") or 0),
            "model_kwargs": kwargs, "region": region, "layer": layer, "method": method, "pinned": pinned}


def find_plugins(record) -> list[str]:
    """Scan again the plugin folders (``--plugin-dir``) the record's model and benchmark came from, where they are not
    known here; returns what was added, as sentences for the report.

    A score's provenance keeps where each plugin folder was found (``plugin_sources``,
    :func:`brainscore.registry.plugin_source`): the folder given to ``--plugin-dir`` is scanned again
    (:func:`brainscore.registry.add_plugin_dirs`, so the processes the rerun starts see it too), else the plugin's
    own folder.

    Raises
    ------
    UnknownIdentifierError
        If the model or benchmark is not known here and its recorded folder is gone: the message names the folder
        and how to point at the one that holds the plugin now.
    """
    from brainscore import registry

    added = []
    sources = (record.provenance or {}).get("plugin_sources") or {}
    for kind, identifier in (("model", record.model), ("benchmark", record.benchmark)):
        source = sources.get(kind)
        if not source or _known(kind, identifier):
            continue
        folders = [folder for folder in dict.fromkeys((source.get("plugin_dir"), source.get("folder"))) if folder]
        there = next((folder for folder in folders if Path(folder).is_dir()), None)
        if there is None:
            raise UnknownIdentifierError(
                f"record #{record.id}'s {kind} {identifier} came from the plugin folder {source.get('folder')} "
                f"(scanned as --plugin-dir {source.get('plugin_dir')}), which is no longer there; pass the folder that "
                f"holds the plugin now: `brainscore reproduce {record.id} --plugin-dir DIR`")
        registry.add_plugin_dirs([there])
        added.append(f"the {kind}'s plugin folder {there}, where the record says it came from (no --plugin-dir needed)")
    return added


def _known(kind: str, identifier: str) -> bool:
    from brainscore import registry

    try:
        registry.REGISTRIES[kind].factory(identifier)
    except UnknownIdentifierError:
        return False
    return True


def check_data_files(data_files: dict[str, str]) -> list[DataFileCheck]:
    """Read every recorded data file's local copy (mirror, else store) again and hash it.

    Parameters
    ----------
    data_files : dict
        Path (as the data plugin declares it) -> the sha256 recorded.

    Returns
    -------
    list of DataFileCheck
        One per file, in path order; ``found`` None where no local copy exists.
    """
    from brainscore.caching import file_sha256
    from brainscore.data import store

    checks = []
    for path, recorded in sorted((data_files or {}).items()):
        found = store.locate(store.Source(path=str(path), sha256=str(recorded)))
        actual = None
        if found is not None:
            try:
                actual = file_sha256(found)  # read afresh: no remembered verification
            except OSError:
                actual = None
        checks.append(DataFileCheck(str(path), str(recorded), found, actual))
    return checks


# ------------------------------------------------------------------------------------------ provenance
def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> dict[str, Any]:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            key = str(key)
            simple = key.isidentifier()
            name = (f"{prefix}.{key}" if prefix else key) if simple else f"{prefix}[{key}]"
            _flatten(item, name, out)
    else:
        out[prefix] = value
    return out


def provenance_changes(recorded: dict, now: dict, *, pinned: bool = False) -> list[ProvenanceChange]:
    """The provenance items that differ between a record and its rerun, those in the key first.

    Parameters
    ----------
    recorded, now : dict
        The record's provenance and the rerun's.
    pinned : bool
        The rerun pinned the recorded layer: ``model.commitment`` and ``model.kwargs`` then differ by
        construction (the method becomes ``declared``), so only the committed layer is compared.

    Returns
    -------
    list of ProvenanceChange
        Sorted by (not in key, item).
    """
    def prepared(provenance: dict) -> dict:
        kept = {k: v for k, v in (provenance or {}).items() if k not in _NOT_COMPARED}
        if pinned:
            model = dict(kept.get("model") or {})
            layer = (model.pop("commitment", None) or {}).get("layer")
            model.pop("kwargs", None)
            kept["model"] = {**model, "committed_layer": layer}
        return _flatten(kept, "", {})

    before, after = prepared(recorded), prepared(now)
    changes = []
    for item in sorted(set(before) | set(after)):
        old, new = before.get(item, MISSING), after.get(item, MISSING)
        if old != new and not (_nan(old) and _nan(new)):
            changes.append(ProvenanceChange(item, old, new, in_key=not item.startswith("host")))
    return sorted(changes, key=lambda c: (not c.in_key, c.item))


def _nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


# ------------------------------------------------------------------------------------------ the rerun
@contextlib.contextmanager
def _cache(enabled: bool) -> Iterator[None]:
    """``BRAINSCORE_CACHE=0`` inside the block unless ``enabled`` (then the cache is left as it is)."""
    saved = os.environ.get("BRAINSCORE_CACHE")
    if not enabled:
        os.environ["BRAINSCORE_CACHE"] = "0"
    try:
        yield
    finally:
        if not enabled:
            if saved is None:
                os.environ.pop("BRAINSCORE_CACHE", None)
            else:
                os.environ["BRAINSCORE_CACHE"] = saved


def _numbers(score: float | None, raw: float | None, ceiling: float | None, error: float | None,
             ci95) -> dict[str, float | None]:
    low, high = ci95 if ci95 is not None else (None, None)
    return {"score": score, "raw": raw, "ceiling": ceiling, "error": error, "ci95_low": low, "ci95_high": high}


def _outcome_numbers(outcome) -> dict[str, float | None]:
    """The rerun's numbers as :meth:`Database.record` would store them (an unceiled score's raw is its score)."""
    raw = outcome.raw if outcome.raw is not None or outcome.ceiling is not None else outcome.score
    return _numbers(outcome.score, raw, outcome.ceiling, outcome.error, outcome.ci95)


def fetch_record(server: str, record_id: int, token: str | None = None):
    """The record ``record_id`` as the website at ``server`` shows it (``GET /api/scores/ID``), as a StoredScore.

    Parameters
    ----------
    server : str
        The website's address, e.g. ``http://127.0.0.1:8000``.
    token : str, optional
        An API token (from the account page) for a private model's score.

    Raises
    ------
    UnknownRecordError
        If the website has no such score (or it is private to another user).
    BrainScoreError
        If the website cannot be reached or answers with an error.
    """
    import datetime as dt

    import httpx

    from brainscore.results import StoredScore

    server = server.rstrip("/")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        response = httpx.get(f"{server}/api/scores/{int(record_id)}", headers=headers, timeout=60)
    except httpx.TransportError as error:  # nothing listening, DNS, TLS, timeout
        raise BrainScoreError(f"could not reach {server} ({type(error).__name__}: {error}); is the address right, "
                              f"and is the website running?") from None
    if response.status_code == 404:
        raise UnknownRecordError(f"{server} has no score #{record_id} (or it is a private model's, then pass the "
                                 f"owner's --token); its model pages link every score to its page, which names the id")
    if response.status_code >= 400 or not response.headers.get("content-type", "").startswith("application/json"):
        raise BrainScoreError(f"{server} answered {response.status_code} for /api/scores/{record_id}: "
                              f"{response.text[:300]}")
    data = response.json()
    end = data.get("end")
    return StoredScore(model=data["model"], benchmark=data["benchmark"], benchmark_version=data["benchmark_version"],
                       score=data.get("score"), raw=data.get("raw"), ceiling=data.get("ceiling"),
                       error=data.get("error"), ci95=tuple(data["ci95"]) if data.get("ci95") else None,
                       provenance=data.get("provenance") or {}, layers=data.get("layers"), start=None,
                       end=dt.datetime.fromisoformat(end) if end else None, status=data.get("status") or "done",
                       failure=data.get("failure"), id=int(data["id"]), provenance_key=data.get("provenance_key"))


def reproduce(record_id: int, database=None, *, server: str | None = None, token: str | None = None,
              device: str | None = None, use_cache: bool = False, record: bool = False) -> Reproduction:
    """Re-run record ``record_id`` with its recorded model, benchmark and settings, and compare.

    Parameters
    ----------
    record_id : int
        The row id (``recorded as #N``; ``brainscore records`` lists them; a score's web page shows it).
    database : Database or str, optional
        The results database or its URL (default ``$BRAINSCORE_DB_URL``, else
        ``sqlite:///$BRAINSCORE_HOME/results.sqlite``): where the record is read from (unless ``server``)
        and where ``record=True`` writes the rerun.
    server : str, optional
        Read the record from this website instead (``GET /api/scores/ID``, :func:`fetch_record`);
        ``token``: an API token for a private model's score.
    device : str, optional
        Re-run on this device instead of the recorded one (the difference is then listed as the
        ``environment.device`` / ``model.kwargs.device`` items).
    use_cache : bool
        Reuse cache entries (each verified against its checksum on read) instead of computing every
        step again (the default: ``BRAINSCORE_CACHE=0`` during the rerun).
    record : bool
        Record the rerun as a new row of ``database`` (its provenance names the record it reproduces,
        ``reproduction_of``, which is not part of the provenance key); default: never.

    Returns
    -------
    Reproduction
        ``.matches`` says whether the numbers are the same bits; ``.text()`` is the report.

    Raises
    ------
    UnknownRecordError
        If no score is recorded as ``record_id`` (the message says how to list records), or the
        record has no provenance to re-run it from.
    UnknownIdentifierError, MissingDependencyError, ValidationError, DataNotFoundError
        If the model's or benchmark's plugin, a package it needs, the recorded device or a data file
        is not available here (nothing can be re-run).
    """
    from brainscore.results import Database

    if server is not None:
        return reproduce_record(fetch_record(server, record_id, token), database, device=device,
                                use_cache=use_cache, record=record)
    opened = None
    db = (opened := Database(database)) if database is None or isinstance(database, str) else database
    try:
        stored = db.score_by_id(int(record_id))
        if stored is None:
            raise UnknownRecordError(
                f"no score is recorded as #{record_id} in {db!r}. List the recorded scores and their ids with "
                f"`brainscore records` (with the same --db), or read the id on the score's web page and pass "
                f"--server URL")
        return reproduce_record(stored, db, device=device, use_cache=use_cache, record=record)
    finally:
        if opened is not None:
            opened.close()


def reproduce_record(stored, database=None, *, device: str | None = None, use_cache: bool = False,
                     record: bool = False) -> Reproduction:
    """Re-run ``stored`` (a :class:`~brainscore.results.StoredScore`) and compare; see :func:`reproduce`.

    ``database`` (a Database or URL) is used only with ``record=True``, to record the rerun.
    """
    from brainscore.results.records import record as record_outcome
    from brainscore.scoring import job
    from brainscore.scoring.outcome import Outcome

    settings = settings_of(stored)
    settings["plugins"] = find_plugins(stored)
    if device is not None:
        settings["device"] = device
    settings["cache"] = "reused, each entry verified on read" if use_cache else "bypassed (BRAINSCORE_CACHE=0)"
    recorded_provenance = stored.provenance or {}
    files = check_data_files((recorded_provenance.get("benchmark") or {}).get("data_files") or {})
    result = Reproduction(record=stored, settings=settings, data_files=files)
    started = time.perf_counter()
    with _cache(use_cache):
        try:
            score = job.score(stored.model, stored.benchmark, device=settings["device"],
                              bootstrap=settings["bootstrap"], bootstrap_seed=settings["bootstrap_seed"],
                              **settings["model_kwargs"])
            outcome = Outcome.from_score(score, stored.model, stored.benchmark)
        except UnknownIdentifierError as error:
            if not (stored.provenance or {}).get("plugin_sources"):  # recorded before the folders were kept
                raise UnknownIdentifierError(f"{error}. If record #{stored.id}'s model or benchmark came from a plugin "
                                             f"folder, name it: `brainscore reproduce {stored.id} --plugin-dir DIR`"
                                             ) from None
            raise
        except _CANNOT_RUN:
            raise
        except Exception as failure:  # noqa: BLE001 - a failed rerun is a result: reported, compared
            result.rerun_failure = f"{type(failure).__name__}: {failure}"
            outcome = Outcome.from_failure(stored.model, stored.benchmark, failure)
    result.duration_s = time.perf_counter() - started
    if stored.status == "done":
        before = _numbers(stored.score, stored.raw, stored.ceiling, stored.error, stored.ci95)
        after = _outcome_numbers(outcome) if result.rerun_failure is None else dict.fromkeys(COMPARED)
        result.values = [ValueComparison(name, before[name], after[name]) for name in COMPARED]
    if result.rerun_failure is None:
        result.rerun_provenance = outcome.provenance
        result.provenance = provenance_changes(recorded_provenance, outcome.provenance,
                                               pinned=bool(settings["pinned"]))
    if record:
        result.rerun_id = record_outcome(outcome.with_provenance(reproduction_of=stored.id), database)
    return result
