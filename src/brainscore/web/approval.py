"""Submissions that hold benchmark, data or metric plugins: trusted code, run only after an administrator approves it.

A model is the only untrusted part of a score (:mod:`brainscore.boundary`): the benchmark, its data and its metric
compute the score in the trusted scorer, in the server's own process. A submission that registers any of those
(``register_benchmark``, ``benchmark_registry[...] = ...``, data, metrics, tree nodes; found in its sources without
running them, :func:`brainscore.web.checks.check_zip`) is therefore accepted but not queued: it waits,
``awaiting approval``, until an administrator of the site (``brainscore admin add NAME``) has reviewed it and
approves it (``POST /submissions/<key>/approve``), as brain-score.org reviews a benchmark's pull request. Nothing of
it runs on the server before: not its requirements' installation, not its models, not its benchmarks.

On approval its plugin folder becomes one of the server's plugin folders: it is listed in
``<submissions>/approved_plugins.json`` (with who approved it and when), scanned by the web process from then on and
by every trusted scorer (:func:`approved_folders`, :mod:`brainscore.web.pairs`), and the submission is queued to
score its models on the benchmarks it chose (its own among them). Its model server still runs the whole plugin in the
sandbox, like any submission's.
"""
from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

from fastapi import HTTPException
from sqlalchemy.orm import Session

from brainscore.web.checks import reference_plugin_dir
from brainscore.web.tasks import SubmissionTask, update_task

__all__ = ["AWAITING", "APPROVED_FILE", "approved_folders", "plugin_folder_of", "approve"]

AWAITING = "awaiting approval"
"""The status of a submission task that holds trusted code and waits for an administrator."""
APPROVED_FILE = "approved_plugins.json"


def plugin_folder_of(task: SubmissionTask) -> Path:
    """The plugin folder of ``task`` as a plugin folder of the server: the reference layout's folder, else the
    package folder (brainscore's layout, ``register_benchmark`` in its ``__init__.py``)."""
    site = Path(task.folder) / "site"
    return reference_plugin_dir(site) or site / task.package


def approved_folders(root: Path) -> list[str]:
    """The plugin folders administrators approved under the submissions folder ``root`` (those that exist)."""
    try:
        entries = json.loads((Path(root) / APPROVED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [entry["folder"] for entry in entries if isinstance(entry, dict) and Path(str(entry.get("folder"))).is_dir()]


def _remember(root: Path, entry: dict) -> None:
    """Add ``entry`` to the approved list (a lock, a temporary file and a rename: never half a list)."""
    from filelock import FileLock

    path = Path(root) / APPROVED_FILE
    with FileLock(str(path) + ".lock"):
        try:
            entries = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            entries = []
        entries.append(entry)
        partial = path.with_suffix(".json.partial")
        partial.write_text(json.dumps(entries, indent=1) + "\n", encoding="utf-8")
        os.replace(partial, path)


def approve(site, key: str, admin) -> SubmissionTask:
    """Approve submission ``key`` (any user's): its plugin folder joins the server's plugin folders and it is queued.

    Raises
    ------
    HTTPException
        403 unless ``admin`` is an administrator of the site; 404 for no such submission; 409 unless it is
        awaiting approval.
    """
    from brainscore import registry

    if not site.is_admin(admin):
        raise HTTPException(403, "only an administrator of this site approves submissions with benchmark, data or "
                                 "metric plugins")
    with Session(site.engine, expire_on_commit=False) as session:
        task = session.query(SubmissionTask).filter(SubmissionTask.key == str(key)[:64]).one_or_none()
    if task is None:
        raise HTTPException(404, "no such submission")
    if task.status != AWAITING:
        raise HTTPException(409, f"submission {task.key} is {task.status}, not awaiting approval")
    folder = plugin_folder_of(task)
    at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    _remember(site.root, {"task": task.id, "key": task.key, "folder": str(folder), "by": admin.username, "at": at})
    registry.add_plugin_dirs([folder])  # the web process lists its benchmarks from now on
    update_task(site.engine, task.id, status="queued",
                log_append=f"approved by {admin.username} at {at}: its plugins are the server's from now on\n")
    if task.submission_id is not None:
        site.store.update_submission(task.submission_id, status="queued")
    site.dispatcher.notify()
    with Session(site.engine, expire_on_commit=False) as session:
        return session.get(SubmissionTask, task.id)
