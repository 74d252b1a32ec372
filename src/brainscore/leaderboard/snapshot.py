"""The leaderboard's standings kept on disk between commands, brought up to date with the rows added since.

``brainscore leaderboard`` runs in a new process each time: aggregating the whole table again (reading
every score with its provenance, at brain-score.org's scale 704 models x 23 benchmarks) took seconds.
The website keeps its :class:`~brainscore.leaderboard.aggregate.Standings` in memory and gives them only
the rows recorded since (:class:`~brainscore.leaderboard.cache.ResultsCache`); this module does the same
across processes, with the same code: the standings are kept in a file under
``$BRAINSCORE_HOME/cache/leaderboard/`` with the results state they were read at, and a later command
reads only the rows added since (:meth:`~brainscore.results.Database.scores_after`), or nothing when the
database's :meth:`~brainscore.results.Database.results_state` has not moved.

The file is trusted only as far as the website trusts its memory: it is keyed by the database's
identity, the leaderboard tree and the benchmark versions that count, and the source of the modules that
aggregate; it is read back only when its checksum holds; and it is rebuilt from every row whenever
anything other than new scores changed (the ``rewrites`` counter, a row count that does not add up, a
benchmark version newer than the one counted) or when it cannot be read. The records it keeps hold
only what the standings read (status, values, versions, failures' messages and the layer's commitment
method), not the
whole provenance.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import pickle
import tempfile
from pathlib import Path
from typing import Iterable

from brainscore import config, registry
from brainscore.caching import commit_file, enabled, verified
from brainscore.leaderboard.aggregate import Standings, Tree, _registered_version, registered_tree
from brainscore.results import Database, StoredScore

__all__ = ["standings", "registered_versions"]

#: Bumped when what is kept changes shape (the source of the modules is in the key too).
_FORMAT = 2
_CODE = (Path(__file__), Path(__file__).with_name("aggregate.py"))


def _sha256(*parts: object) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(repr(part).encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _files_sha256(paths: Iterable[Path]) -> str:
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(str(path).encode())
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"(unreadable)")
    return digest.hexdigest()


def _folder() -> Path:
    return config.cache_dir("leaderboard")


def _load(path: Path):
    if not enabled() or not verified(path):
        return None
    try:
        with open(path, "rb") as f:
            return pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError):
        return None


def _save(path: Path, value) -> None:
    if not enabled():
        return
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        commit_file(Path(tmp), path, hashlib.sha256(data).hexdigest())
    except OSError:  # a full disk or a read-only home: the leaderboard is shown all the same
        Path(tmp).unlink(missing_ok=True)


def registered_versions(tree: Tree) -> dict[str, int | None]:
    """Leaf -> the version its plugin registers, kept on disk by the content of the plugins that declare them.

    Building the benchmarks to read their versions imports every benchmark plugin (about a second); the
    versions change only when that code does, so they are kept under a key of the source files of the
    declaring plugins' folders and of :mod:`brainscore.benchmarks` (their base classes), and of the package
    version. A leaf whose plugin folder is not known (registered at run time) is built each time.
    """
    folders = {}
    for leaf in tree.leaves:
        folder = registry.plugin_folder_of("benchmark", leaf)
        folders[leaf] = Path(folder).resolve() if folder is not None else None
    sources = {path for folder in folders.values() if folder is not None for path in folder.rglob("*.py")}
    sources |= set((Path(registry.__file__).parent / "benchmarks").glob("*.py"))
    key = _sha256(_FORMAT, sorted(folders.items(), key=lambda item: item[0]), _files_sha256(sources),
                  config.package_version())
    path = _folder() / f"versions-{key[:32]}.pkl"
    known = _load(path) or {}
    versions = {leaf: known[leaf] if leaf in known else _registered_version(leaf)
                for leaf in sorted(tree.leaves)}
    kept = {leaf: versions[leaf] for leaf, folder in folders.items() if folder is not None}
    if kept and kept != {leaf: known.get(leaf) for leaf in kept}:
        _save(path, kept)
    return versions


_DROPPED = {f.name: None for f in dataclasses.fields(StoredScore)
            if f.name not in ("model", "benchmark", "benchmark_version", "score", "raw", "status", "id", "provenance",
                             "failure")}


def _slim(record: StoredScore) -> StoredScore:
    """``record`` with only what the standings read: status, values, version, a failure's message, the layer's
    commitment method and a weights status that is not verified."""
    from brainscore.models.weights import weights_status

    method = (((record.provenance or {}).get("model") or {}).get("commitment") or {}).get("method")
    status = weights_status(record.provenance)
    kept = {**({"model": {"commitment": {"method": method}}} if method else {}),
            **({"weights": {"status": status}} if status in ("unverified", "stand-in") else {})}
    return dataclasses.replace(record, provenance=kept, **_DROPPED)


def standings(db: Database, benchmarks: str | Iterable[str] | None = None, tree: Tree | None = None) -> Standings:
    """The :class:`~brainscore.leaderboard.aggregate.Standings` of ``db`` now: their ``records`` are
    :func:`~brainscore.leaderboard.aggregate.leaderboard_records` ``(db, benchmarks)``, computed from the
    standings kept on disk and the rows recorded since.

    Raises
    ------
    BrainScoreError
        If no leaderboard benchmark matches ``benchmarks``.
    DatabaseUnavailable
        If the database cannot be read.
    """
    tree = tree or registered_tree(benchmarks)
    latest = registered_versions(tree)
    for benchmark, version in db.benchmark_versions().items():
        if benchmark in latest:
            latest[benchmark] = max(version, latest[benchmark] or version)
    key = _sha256(_FORMAT, db.identity, sorted(tree.parents.items()), sorted(tree.engineering),
                  tree.order(), sorted(latest.items()), _files_sha256(_CODE))
    path = _folder() / f"standings-{key[:32]}.pkl"
    kept = _load(path)
    if kept is not None:
        version, rewrites = db.results_state()
        if (kept["version"], kept["rewrites"]) == (version, rewrites):
            return kept["standings"]
        read = db.scores_after(kept["last_id"])
        if read is not None and read.rewrites == kept["rewrites"] and read.count == kept["count"] + len(read.scores):
            current = kept["standings"]
            if current.add([_slim(record) for record in read.scores]):
                _save(path, {"version": read.version, "rewrites": read.rewrites, "count": read.count,
                             "last_id": max([kept["last_id"]] + [record.id for record in read.scores]),
                             "standings": current})
                return current
    read = db.scores_after(0)
    if read is None:  # writers kept committing while everything was read: not kept
        return Standings(tree, latest, [_slim(record) for record in db.scores(include_failed=True)])
    current = Standings(tree, latest, [_slim(record) for record in read.scores])
    _save(path, {"version": read.version, "rewrites": read.rewrites, "count": read.count,
                 "last_id": max((record.id for record in read.scores), default=0), "standings": current})
    return current
