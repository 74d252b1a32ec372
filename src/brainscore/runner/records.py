"""Where a run records its results: the results database when it exists, else a JSON-lines file.

The results layer (:mod:`brainscore.results`, issue 11) is the permanent home of scores:
:class:`DatabaseRecords` writes each score with ``Database.record_score`` and each failure with
``record_failure``. Where that package is not installed, results go to
``$BRAINSCORE_HOME/runs/results.jsonl`` (:class:`JsonLinesRecords`), one JSON object per result or
failure. :func:`open_records` picks the backend; both have the same two methods, ``find`` and ``record``.

A pair is *already done* when a successful record carries the same ``run_key``: a hash of the
model and its arguments, the benchmark and its version, the package version and the cache's code
version (:func:`run_key`). ``--rerun`` ignores this.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from brainscore import config
from brainscore.caching import content_key
from brainscore.caching.code import code_hash


def run_key(model: str, benchmark: str, benchmark_version: Any, model_kwargs: dict[str, Any]) -> str:
    """sha256 naming a pair's computation (not its timing): equal keys mean a recorded score can be reused."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        package = version("brainscore")
    except PackageNotFoundError:
        package = "unknown"
    # the device (not a model argument: Pair.device) never changes the score, so it is not in the key
    return content_key(kind="run", model=model, benchmark=benchmark, benchmark_version=benchmark_version,
                       model_kwargs=dict(model_kwargs), package=package, code=_code(model, benchmark))


def _code(model: str, benchmark: str) -> str:
    """Hash of the code that computes the pair's score: the job, the benchmark classes, model commitment,
    and the plugins that declare the model and the benchmark (never a version bumped by hand)."""
    from brainscore import registry

    plugins = [module for module in (registry.declaring_plugin("model", model),
                                     registry.declaring_plugin("benchmark", benchmark)) if module]
    return code_hash("brainscore.scoring.job", "brainscore.benchmarks.neural", "brainscore.benchmarks.rsa",
                     "brainscore.benchmarks.behavioral", "brainscore.benchmarks.properties",
                     "brainscore.models.commitment", *plugins)


class JsonLinesRecords:
    """Results and failures appended to a JSON-lines file (one object per line, flushed per record).

    Parameters
    ----------
    path : path, optional
        Default ``$BRAINSCORE_HOME/runs/results.jsonl``.
    """

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path) if path is not None else config.home() / "runs" / "results.jsonl"

    def _lines(self) -> list[dict[str, Any]]:
        if not self.path.is_file():
            return []
        stat = self.path.stat()
        if getattr(self, "_read", (None,))[0] == (stat.st_size, stat.st_mtime_ns):
            return self._read[1]  # unchanged since the last read (a grid looks up every pair)
        records = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a line cut short by a killed run
        self._read = ((stat.st_size, stat.st_mtime_ns), records)
        return records

    def find(self, model: str, benchmark: str, key: str) -> dict[str, Any] | None:
        """The latest successful record of (model, benchmark) with run key ``key``, or None."""
        for record in reversed(self._lines()):
            if (record.get("model") == model and record.get("benchmark") == benchmark
                    and record.get("status") == "done" and record.get("run_key") == key):
                return record
        return None

    def record(self, summary: dict[str, Any], key: str, score=None) -> None:
        """Append ``summary`` (a result or a failure) with its run key and the time."""
        record = {**summary, "run_key": key, "recorded": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record, default=str) + "\n")
            f.flush()
            os.fsync(f.fileno())


class DatabaseRecords:
    """Results and failures in the results database (:class:`brainscore.results.Database`).

    The run key is stored in each row's provenance (``provenance["run_key"]``).
    """

    def __init__(self, database):
        self.database = database

    def find(self, model: str, benchmark: str, key: str) -> dict[str, Any] | None:
        """The latest successful record of (model, benchmark) whose provenance carries run key ``key``, or None."""
        for record in reversed(self.database.scores(model, benchmark)):
            if (record.provenance or {}).get("run_key") == key:
                layers = record.layers or None
                commitment = ((record.provenance or {}).get("model") or {}).get("commitment")
                layer = (commitment or {}).get("layer") or (
                    next(iter(layers.values())) if layers and len(layers) == 1 else None)
                return {"model": model, "benchmark": benchmark, "status": "done", "score": record.score,
                        "raw": record.raw, "ceiling": record.ceiling, "error": record.error,
                        "layer": layer, "layers": layers, "commitment": commitment,
                        "method": (commitment or {}).get("method"), "duration_s": None}
        return None

    def record(self, summary: dict[str, Any], key: str, score=None) -> None:
        """Record a score (with the run key added to its provenance) or a failure with its log."""
        if summary.get("status") == "done" and score is not None:
            score.attrs["provenance"] = {**(score.attrs.get("provenance") or {}), "run_key": key}
            self.database.record_score(score)
        else:
            self.database.record_failure(summary["model"], summary["benchmark"], error=summary.get("failure") or "",
                                         log=summary.get("log") or "", provenance={"run_key": key})


def open_records(path: str | os.PathLike | None = None):
    """The records a run writes to: the results database where installed, else the JSON-lines file at ``path``.

    ``path`` (a JSON-lines file) forces the file backend.
    """
    if path is None:
        try:
            from brainscore.results import Database
        except ImportError:
            return JsonLinesRecords()
        return DatabaseRecords(Database())
    return JsonLinesRecords(path)
