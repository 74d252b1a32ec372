"""Submissions that hold benchmark, data or metric plugins: trusted code, run only after an administrator approves it.

A model is the only untrusted part of a score (:mod:`brainscore.boundary`): the benchmark, its data and its metric
compute the score in the trusted scorer, in the server's own process. A submission that registers any of those
(``register_benchmark``, ``benchmark_registry[...] = ...``, data, metrics, tree nodes; found in its sources without
running them, :func:`brainscore.web.checks.check_zip`) is therefore accepted but not queued: it waits,
``awaiting approval``, until an administrator of the site (``brainscore admin add NAME``) has reviewed it and
approves it (``POST /submissions/<key>/approve``), as brain-score.org reviews a benchmark's pull request. Nothing of
it runs on the server before: not its requirements' installation, not its models, not its benchmarks.

On approval its plugin folder becomes one of the server's plugin folders: it is listed in
``<submissions>/approved_plugins.json`` (with who approved it and when), used by every trusted scorer
(:func:`approved_folders`, :mod:`brainscore.web.pairs`), and the submission is queued to score its models on the
benchmarks it chose (its own among them). Its model server still runs the whole plugin in the sandbox, like any
submission's.

Issue 36 (one approval took the site down), what holds now:

- **Approved code never runs in the web process.** The web process lists an approved folder from its sources, read
  and never run (:func:`brainscore.registry.list_only_dirs`: literal identifiers, the parents of its benchmarks,
  its tree nodes); loading one of its identifiers there raises ``PluginImportError``, which the pages show as the
  benchmark's problem. Facts only a built benchmark has (version, metric, stimuli) are not shown for it.
- **A clash is named before approval, and refused.** :func:`problems_of` lists what an approval would break: an
  identifier (benchmark, data, metric, ceiling) a built-in plugin or an approved submission already declares, a
  benchmark parent or tree node outside the leaderboard tree, identifiers computed when the code runs (the site
  cannot read them). The submission's page shows them to the administrator and :func:`approve` refuses (409) while
  any remains: the author renames and submits again. There is no override.
- **A plugin cannot take the site down later.** :func:`approved_folders` (what the scorer and the web process use)
  checks every approved folder again, in approval order, and leaves out one with a problem now (approved before
  this check, or clashing with a built-in added since): its identifiers are unavailable, the built-in keeps its
  own. A folder that raises on import fails only its own pairs, in the scorer.
- **Withdrawal.** :func:`withdraw` (``POST /submissions/<key>/withdraw``, ``brainscore admin withdraw KEY``) takes
  a folder off the list: its benchmarks leave the listings of the web process that withdrew it at once (of other
  web workers at their next start) and are never scored again; recorded scores stay.
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

__all__ = ["AWAITING", "APPROVED_FILE", "ApprovalError", "approved_folders", "approved_entries", "problems_of",
           "plugin_folder_of", "approve", "withdraw", "withdraw_plugins", "list_approved"]


class ApprovalError(ValueError):
    """A submission's plugins cannot be approved or withdrawn as asked (the message says why)."""

AWAITING = "awaiting approval"
"""The status of a submission task that holds trusted code and waits for an administrator."""
APPROVED_FILE = "approved_plugins.json"


def plugin_folder_of(task: SubmissionTask) -> Path:
    """The plugin folder of ``task`` as a plugin folder of the server: the reference layout's folder, else the
    package folder (brainscore's layout, ``register_benchmark`` in its ``__init__.py``)."""
    site = Path(task.folder) / "site"
    return reference_plugin_dir(site) or site / task.package


def approved_entries(root: Path) -> list[dict]:
    """The entries of ``approved_plugins.json`` under the submissions folder ``root`` whose folder exists, in
    approval order."""
    try:
        entries = json.loads((Path(root) / APPROVED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(entries, list):
        return []
    return [entry for entry in entries if isinstance(entry, dict) and Path(str(entry.get("folder"))).is_dir()]


_TRUSTED_KINDS = ("benchmark", "dataset", "stimulus_set", "metric", "ceiling")
"""The kinds an approval adds to the site (a model's identifier is checked on upload: :mod:`brainscore.web.checks`)."""


def _declared(folder: Path) -> tuple[dict, dict, list[str]]:
    """What plugin folder ``folder`` declares, from its sources (never run): ``{kind: {identifier: metadata}}``,
    its tree nodes (node -> parent) and what cannot be read so."""
    from brainscore.plugin_sources import KINDS, Index, reference_parents, reference_plugins, scan_plugin

    index, problems = Index(), []
    try:
        plugins = reference_plugins(Path(folder))
    except ValueError as error:
        return {}, {}, [str(error)]
    for module, plugin in plugins:
        try:
            scan_plugin(plugin / "__init__.py", module, index)
        except (OSError, SyntaxError, ValueError, UnicodeDecodeError) as error:
            problems.append(f"{plugin.name}/__init__.py cannot be read without running it ({error})")
            continue
        for identifier, parent in (reference_parents(plugin) if index.modules["benchmark"] else {}).items():
            index.metadata["benchmark"].setdefault(identifier, {}).setdefault("parent", parent)
    if index.dynamic:
        problems.append("it registers identifiers computed when its code runs: the site reads identifiers without "
                        "running the code, so write each register_...(\"identifier\") with a literal string")
    declared = {kind: {i: dict(index.metadata[kind].get(i, {})) for i in index.modules[kind]} for kind in KINDS}
    return declared, dict(index.tree_nodes), problems


def _site_identifiers() -> dict[str, set[str]]:
    """kind -> the identifiers of the site's own plugins (built-in and configured folders, not approved ones)."""
    from brainscore import registry

    return {kind: {i for i in registry.REGISTRIES[kind].list() if not registry.listed_only(kind, i)}
            for kind in _TRUSTED_KINDS}


def problems_of(folder: Path, earlier: dict | None = None, site: dict | None = None) -> list[str]:
    """What approving plugin folder ``folder`` would break (empty: nothing), read from its sources.

    ``earlier``: ``{(kind, identifier): submission key}`` of the folders approved before it; ``site``: kind -> the
    site's own identifiers (default: :func:`_site_identifiers`).
    """
    from brainscore.leaderboard import tree

    declared, nodes, problems = _declared(folder)
    site = _site_identifiers() if site is None else site
    earlier = earlier or {}
    for kind in _TRUSTED_KINDS:
        for identifier in sorted(declared.get(kind, {})):
            word = kind.replace("_", " ")
            if identifier in site.get(kind, ()):
                problems.append(f"its {word} {identifier!r} is the site's own (a built-in plugin declares it): "
                                f"approving it would replace it for every user; the author must rename it")
            elif (kind, identifier) in earlier:
                problems.append(f"its {word} {identifier!r} is declared by approved submission "
                                f"{earlier[(kind, identifier)]}; the author must rename it")
    known = set(tree.TREE) | set(tree.ROOTS) | set(nodes)
    for node, parent in sorted(nodes.items()):
        if parent not in known:
            problems.append(f"its tree node {node!r} names parent {parent!r}, which is not a node of the leaderboard "
                            f"tree")
    for identifier, metadata in sorted(declared.get("benchmark", {}).items()):
        parent = metadata.get("parent")
        if parent is not None and (not isinstance(parent, str) or parent not in known):
            problems.append(f"its benchmark {identifier!r} names parent {parent!r}, which is not a node of the "
                            f"leaderboard tree ({', '.join(sorted(tree.TREE))} or a node it declares)")
    return problems


def list_approved(root: Path) -> list[dict]:
    """Every approved entry under ``root``, in approval order, each with ``"problems"``: what it breaks now (it
    clashes with a built-in or an earlier approved folder, or declares nonsense); one with problems is left out of
    :func:`approved_folders`."""
    site, earlier, listed = _site_identifiers(), {}, []
    for entry in approved_entries(root):
        problems = problems_of(Path(entry["folder"]), earlier, site)
        listed.append({**entry, "problems": problems})
        if not problems:
            declared, _, _ = _declared(Path(entry["folder"]))
            for kind in _TRUSTED_KINDS:
                for identifier in declared.get(kind, {}):
                    earlier.setdefault((kind, identifier), entry.get("key"))
    return listed


def approved_folders(root: Path) -> list[str]:
    """The plugin folders administrators approved under the submissions folder ``root`` that exist and break
    nothing now (:func:`list_approved`): the scorer's approved plugin folders and what the web process lists."""
    import logging

    folders = []
    for entry in list_approved(root):
        if entry["problems"]:
            logging.getLogger(__name__).warning("approved plugin folder %s (submission %s) is left out: %s",
                                                entry["folder"], entry.get("key"), "; ".join(entry["problems"]))
        else:
            folders.append(entry["folder"])
    return folders


def list_on_site(root: Path) -> None:
    """List the usable approved folders in this (web) process, without running them
    (:func:`brainscore.registry.list_only_dirs`)."""
    from brainscore import registry

    registry.list_only_dirs([])  # the site's own identifiers first, unshadowed by what was listed before
    registry.list_only_dirs(approved_folders(root))


def _remember(root: Path, entry: dict | None = None, drop: str | None = None) -> list[dict]:
    """Add ``entry`` to the approved list, or drop the entries of submission key ``drop`` (a lock, a temporary file
    and a rename: never half a list); returns the entries dropped."""
    from filelock import FileLock

    path = Path(root) / APPROVED_FILE
    with FileLock(str(path) + ".lock"):
        try:
            entries = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            entries = []
        dropped = [e for e in entries if isinstance(e, dict) and drop is not None and e.get("key") == drop]
        entries = [e for e in entries if e not in dropped]
        if entry is not None:
            entries.append(entry)
        partial = path.with_suffix(".json.partial")
        partial.write_text(json.dumps(entries, indent=1) + "\n", encoding="utf-8")
        os.replace(partial, path)
    return dropped


def approve(site, key: str, admin) -> SubmissionTask:
    """Approve submission ``key`` (any user's): its plugin folder joins the server's plugin folders and it is queued.

    Raises
    ------
    HTTPException
        403 unless ``admin`` is an administrator of the site; 404 for no such submission; 409 unless it is
        awaiting approval, or while its plugins clash with the site's or another approved submission's identifiers
        or declare nonsense (:func:`problems_of`, each named).
    """
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
    problems = approval_problems(site.root, task)
    if problems:
        raise HTTPException(409, f"submission {task.key} cannot be approved: {'; '.join(problems)}")
    at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    _remember(site.root, {"task": task.id, "key": task.key, "folder": str(folder), "by": admin.username, "at": at})
    list_on_site(site.root)  # the web process lists its benchmarks from now on (never running them)
    update_task(site.engine, task.id, status="queued",
                log_append=f"approved by {admin.username} at {at}: its plugins are the server's from now on\n")
    if task.submission_id is not None:
        site.store.update_submission(task.submission_id, status="queued")
    site.dispatcher.notify()
    with Session(site.engine, expire_on_commit=False) as session:
        return session.get(SubmissionTask, task.id)


def approval_problems(root: Path, task: SubmissionTask) -> list[str]:
    """What approving ``task`` would break now (:func:`problems_of` against the site and the approved folders)."""
    earlier = {}
    for entry in list_approved(root):
        if not entry["problems"] and entry.get("key") != task.key:
            declared, _, _ = _declared(Path(entry["folder"]))
            for kind in _TRUSTED_KINDS:
                for identifier in declared.get(kind, {}):
                    earlier.setdefault((kind, identifier), entry.get("key"))
    return problems_of(plugin_folder_of(task), earlier)


def is_approved(root: Path, key: str) -> bool:
    """Whether submission ``key``'s plugins are on the approved list."""
    return any(entry.get("key") == key for entry in approved_entries(root))


def withdraw_plugins(engine, root: Path, key: str, by: str) -> str:
    """Take submission ``key``'s plugin folder off the approved list; its task's log says who did it and when.

    Returns the folder withdrawn. The caller lists what is left (:func:`list_on_site`) in its web process.

    Raises
    ------
    ApprovalError
        If no approved plugin folder belongs to submission ``key``.
    """
    dropped = _remember(root, drop=str(key)[:64])
    if not dropped:
        raise ApprovalError(f"submission {key} has no approved plugins (brainscore admin withdraw takes the key of an "
                            f"approved submission, the last part of its page's address)")
    at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    for entry in dropped:
        if isinstance(entry.get("task"), int):
            update_task(engine, entry["task"], log_append=f"plugins withdrawn by {by} at {at}: they are no longer "
                                                          f"the server's\n")
    return str(dropped[0].get("folder"))


def withdraw(site, key: str, admin) -> SubmissionTask:
    """An administrator withdraws submission ``key``'s approved plugins from the site (:func:`withdraw_plugins`).

    Raises
    ------
    HTTPException
        403 unless ``admin`` is an administrator; 404 for no such submission; 409 if its plugins are not approved.
    """
    if not site.is_admin(admin):
        raise HTTPException(403, "only an administrator of this site withdraws approved plugins")
    with Session(site.engine, expire_on_commit=False) as session:
        task = session.query(SubmissionTask).filter(SubmissionTask.key == str(key)[:64]).one_or_none()
    if task is None:
        raise HTTPException(404, "no such submission")
    try:
        withdraw_plugins(site.engine, site.root, task.key, admin.username)
    except ApprovalError as error:
        raise HTTPException(409, str(error)) from None
    list_on_site(site.root)
    site.results.invalidate()  # the shared pages list its benchmarks no more
    with Session(site.engine, expire_on_commit=False) as session:
        return session.get(SubmissionTask, task.id)
