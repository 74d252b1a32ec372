"""Submissions: the upload form, checking and queueing a plugin zip, a user's submissions, a submission's
live status page, and re-running a failed benchmark. :func:`enqueue` and :func:`rerun` serve the JSON API too.
"""
from __future__ import annotations

import difflib
import fcntl
import logging
import threading
from contextlib import contextmanager

from fastapi import APIRouter, Depends, File, Form, HTTPException, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse
from sqlalchemy import select
from sqlalchemy.orm import Session

from brainscore import registry
from brainscore.leaderboard import tree
from brainscore.web import approval, catalogue, checks, environments, storage
from brainscore.web.queue import SubmissionTask, write_entry_point
from brainscore.web.tasks import QuotaExceeded, check_quotas, now
from brainscore.web.security import upload_limit
from brainscore.web.security import require_user
from brainscore.web.site import Site, check_csrf, site_of

router = APIRouter()
logger = logging.getLogger(__name__)
_QUOTA_LOCK = threading.Lock()
"""Held from counting a user's unfinished submissions to queueing the new one (in this process; across web worker
processes on SQLite, :func:`_one_writer` serializes them too)."""


class _Owners:
    """``taken`` of :func:`~brainscore.web.checks.check_zip`: model identifier -> its submitter, or
    :data:`~brainscore.web.checks.SITE_OWNER` for a recorded model no account owns (one the site's operator scored
    from the command line): it belongs to the site, so an upload of its identifier is refused (issue 36: the first
    verified user to upload it became its owner, could hide it and delete it with its scores)."""

    def __init__(self, site: Site):
        self.site = site

    def get(self, identifier, default=None):
        model = self.site.model_row(identifier)
        if model is None:
            return default
        return getattr(model, "owner", None) or checks.SITE_OWNER


class _Builtins:
    """``builtin`` of :func:`~brainscore.web.checks.check_zip`: the identifiers the installed plugins register
    that no user owns (a user's submitted model may carry an identifier a plugin registers too).

    Asked only about the uploaded zip's identifiers: one owner lookup for each of them that a plugin registers,
    not one database query per registered model on every upload (37 queries, 20 of an upload's 27 ms).
    """

    def __init__(self, site: Site, registered: set[str]):
        self.site, self.registered = site, registered

    def __contains__(self, identifier) -> bool:
        return identifier in self.registered and not self.site.owner_of(identifier)


def benchmark_problem(identifier: str) -> str | None:
    """Why ``identifier`` cannot be chosen for a submission (None if it can): it is unknown (with the closest
    leaderboard benchmarks) or serves layer selection only (it is not on the leaderboard)."""
    leaderboard = tree.benchmark_parents()
    if identifier in leaderboard:
        return None
    selection = tree.benchmark_parents(include_selection=True)
    if identifier in selection or identifier in registry.benchmarks.list():
        serves = registry.benchmarks.metadata(identifier).get("selection_for")
        return (f"{identifier!r} serves layer selection only{f' (of {serves})' if serves else ''} and is not on the "
                f"leaderboard; choose leaderboard benchmarks (GET /api/benchmarks lists the {len(leaderboard)})")
    close = difflib.get_close_matches(identifier, sorted(leaderboard), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return f"unknown benchmark {identifier!r}{hint} (GET /api/benchmarks lists the {len(leaderboard)})"


@contextmanager
def _one_writer(site: Site):
    """Uploads write to a SQLite database one at a time, waiting on a file lock (``.writing.lock`` in the
    submissions folder, shared by every web worker process) that wakes the next one as soon as it is free.

    Without it, uploads that meet SQLite's write lock retry it in sleeps of 1 to 100 ms, and one unlucky
    upload could sleep through many commits of others. Other writers (the queue, scoring) still meet
    SQLite's lock and its busy timeout. Other databases let concurrent writers in at once: no lock there.
    """
    if site.engine.dialect.name != "sqlite":
        yield
        return
    with open(site.root / ".writing.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def enqueue(site: Site, user, data: bytes, filename: str, benchmarks: list[str] | None,
            public: bool) -> SubmissionTask:
    """Check an uploaded zip, unpack it and queue it as a new submission task of ``user``.

    ``benchmarks``: identifiers to score on (empty: every leaderboard benchmark).

    Nothing is installed here: a requirement the server lacks (an allowed package, in no other version than the
    server's) is installed by the queue before the submission's first pair (:mod:`brainscore.web.environments`).

    Raises
    ------
    SubmissionRejected
        With every reason (unknown benchmarks, any problem :func:`~brainscore.web.checks.check_zip` finds, a
        requirement on another version of a package the server has), or
        alone the reason ``user`` may not submit yet (:meth:`~brainscore.web.site.Site.submit_problem`: an
        address not verified where the site sends mail).
    QuotaExceeded
        Naming the quota of :class:`~brainscore.web.tasks.Quotas` (``site.dispatcher.quotas``) the submission would
        exceed: 429 for the user's unfinished submissions or pairs, 400 for the submission's own pairs.
    """
    waiting = site.submit_problem(user)  # an unverified address, where the site sends mail
    if waiting:
        raise checks.SubmissionRejected([waiting])
    quotas = site.dispatcher.quotas
    check_quotas(site.engine, user.username, 0, quotas)  # before the zip is even read: nothing spent on it
    chosen = [b for b in (benchmarks or []) if b] or sorted(tree.benchmark_parents())
    checked = checks.check_zip(data, taken=_Owners(site), owner=user.username, weights_dirs=site.weights_dirs,
                               builtin=_Builtins(site, set(registry.models.list())),
                               allowed=site.allowed_requirements)
    problems = [benchmark_problem(b) for b in chosen if b not in checked.benchmarks]  # its own: after approval
    problems += environments.conflicts(checked.requirements)  # another version of a package the server runs on
    if any(problems):
        raise checks.SubmissionRejected([p for p in problems if p])
    # what the server lacks is installed by the queue before the first pair (environments.python_for), not here
    held = bool(checked.trusted)  # benchmark, data or metric code: nothing runs before an administrator approves
    status = approval.AWAITING if held else "queued"
    def new_task() -> SubmissionTask:  # repeatable: a lock or read-only moment is retried (storage.retrying)
        with Session(site.engine, expire_on_commit=False) as session:
            made = SubmissionTask(owner=user.username, package=checked.package, filename=filename[:300],
                                  models=checked.identifiers, benchmarks=chosen, requirements=checked.requirements,
                                  public=public, status="preparing")
            with _QUOTA_LOCK, _one_writer(site):  # counted and queued at once: two uploads never both pass the count
                check_quotas(site.engine, user.username, len(checked.identifiers) * len(chosen), quotas,
                             session=session)
                session.add(made)
                session.commit()
            return made

    task = storage.retrying(new_task)
    folder = site.root / str(task.id)
    try:
        checks.extract(data, folder / "site", strip=checked.strip)
        if checked.layout == "brainscore":  # a reference plugin folder is scanned (BRAINSCORE_PLUGIN_DIRS)
            write_entry_point(folder / "site", checked.package, task.id)
        checks.make_durable(folder)  # on disk before the task is queued and the upload answered
    except BaseException as error:  # never left `preparing`: failed with the reason, its files removed
        _failed_preparing(site, task.id, folder, error)
        raise
    log = (f"submission {task.key} by {user.username}: {filename}\npackage {checked.package}, models "
           f"{', '.join(checked.identifiers)}\nrequirements: {', '.join(checked.requirements) or 'none'}"
           f"{_to_install(checked.requirements)}\n{len(chosen)} benchmark(s)\n")
    if held:
        log += (f"awaiting approval: it holds trusted code ({'; '.join(checked.trusted)}), which runs on the "
                f"server only after an administrator of this site has reviewed and approved it\n")

    def queue() -> None:  # repeatable: nothing is written until its one commit
        # one transaction queues the task with its results-database submission and model rows (it was three,
        # each waiting for the write lock and syncing to disk)
        with Session(site.engine, expire_on_commit=False) as session:
            row = session.get(SubmissionTask, task.id)
            row.folder, row.status, row.log = str(folder), status, log
            with _one_writer(site):
                row.submission_id = site.store.create_submission(
                    user.username, checked.identifiers, chosen, status=status,
                    meta={"web_job": task.id, "public": public, "package": checked.package,
                          "requirements": checked.requirements, "filename": filename[:300]}, session=session)
                for identifier in checked.identifiers:
                    site.store.add_model(identifier, owner=user.username, public=public, session=session)
                session.commit()
            task.folder, task.status, task.log, task.submission_id = row.folder, row.status, row.log, row.submission_id

    try:
        storage.retrying(queue)
    except BaseException as error:
        _failed_preparing(site, task.id, folder, error)
        raise
    if not held:
        site.dispatcher.notify()
    return task


def _failed_preparing(site: Site, task_id: int, folder, error: BaseException) -> None:
    """Mark submission task ``task_id``, whose unpacking into ``folder`` failed with ``error``, ``failed`` with the
    reason (a task left ``preparing`` would hold its model forever) and remove what was unpacked of it."""
    import shutil

    from brainscore.web.tasks import update_task

    shutil.rmtree(folder, ignore_errors=True)
    reason = ("; ".join(error.problems) if isinstance(error, checks.SubmissionRejected)
              else "the server could not store the upload (its disk); nothing of it was kept, upload it again later")
    try:
        with _one_writer(site):
            update_task(site.engine, task_id, log_append=f"not accepted: {reason}\n", status="failed", failure=reason,
                        finished=now())
    except Exception:  # noqa: BLE001 - the database too is failing: the original error is what the caller reports
        logger.exception("submission task %s could not be marked failed after: %s", task_id, reason)


def _to_install(requirements: list[str]) -> str:
    """`` (to install before scoring: X, Y)`` for the requirements the server lacks, else ``" (the server's)"``."""
    missing = environments.unsatisfied(requirements)
    if not requirements:
        return ""
    return f" (to install as wheels before scoring: {', '.join(missing)})" if missing else " (the server's)"


def rerun(site: Site, task: SubmissionTask, benchmark: str, user) -> SubmissionTask:
    """Queue a new submission task that re-runs ``benchmark``, which failed in ``task``.

    Raises
    ------
    HTTPException
        404 if ``task`` is not ``user``'s; 400 if ``benchmark`` is not one of it or did not fail; 429 (or 400) if
        the re-run would exceed one of ``user``'s quotas (:func:`~brainscore.web.tasks.check_quotas`).
    """
    if task.owner != user.username:
        raise HTTPException(404, "no such submission of yours")
    if benchmark not in task.benchmarks:
        raise HTTPException(400, f"{benchmark!r} is not a benchmark of submission {task.key}")
    failed = [key for key, r in (task.results or {}).items()
              if key.endswith("|" + benchmark) and r.get("status") == "failed"]
    if not failed:
        raise HTTPException(400, f"{benchmark!r} did not fail in submission {task.key}; nothing to re-run")
    with Session(site.engine, expire_on_commit=False) as session, _QUOTA_LOCK:
        try:
            check_quotas(site.engine, user.username, len(task.models), site.dispatcher.quotas, session=session)
        except QuotaExceeded as exceeded:
            raise HTTPException(exceeded.status_code, "; ".join(exceeded.problems)) from None
        new = SubmissionTask(owner=task.owner, package=task.package, filename=task.filename, models=task.models,
                             benchmarks=[benchmark], requirements=task.requirements, public=task.public,
                             folder=task.folder, rerun_of=task.id, status="queued",
                             log=f"re-run of {benchmark} from submission {task.key}\n",
                             submission_id=site.store.create_submission(task.owner, task.models, [benchmark],
                                                                        status="queued",
                                                                        meta={"rerun_of_web_job": task.id}))
        session.add(new)
        session.commit()
    site.dispatcher.notify()
    return new


def _form(site: Site, request: Request, status_code: int = 200, **context):
    """The upload form; it says first why the user may not submit yet (an address to verify), if so."""
    user = site.current_user(request)
    return site.render(request, "submit.html", status_code=status_code, benchmarks=sorted(tree.benchmark_parents()),
                       allowed=sorted(site.allowed_requirements),
                       submit_problem=site.submit_problem(user) if user is not None else None, **context)


@router.get("/submit", response_class=HTMLResponse, dependencies=[Depends(require_user)])
def submit_form(request: Request):
    """The upload form."""
    return _form(site_of(request), request)


@router.post("/submit", max_body_size=upload_limit())  # cut off while streaming: 413
def submit(request: Request, file: UploadFile = File(...), csrf_token: str | None = Form(None),
           visibility: str = Form("public"), benchmarks: list[str] = Form([])):
    """Queue an uploaded zip and go to its status page (the form again, 400, with every reason it was rejected).

    A ``def`` route: FastAPI runs it in its thread pool, so checking, unpacking and the database writes
    (tens of ms) do not hold up the worker's other requests as they did in an ``async def`` route.
    """
    check_csrf(request, csrf_token)
    site = site_of(request)
    user = site.logged_in(request)
    data = file.file.read(checks.MAX_ZIP_BYTES + 1)  # the parsed upload's spooled file
    try:
        task = enqueue(site, user, data, file.filename or "upload.zip", benchmarks, visibility != "private")
    except (checks.SubmissionRejected, QuotaExceeded) as rejected:
        return _form(site, request, status_code=getattr(rejected, "status_code", 400), problems=rejected.problems,
                     filename=file.filename)
    return RedirectResponse(f"/submissions/{task.key}", status_code=303)


@router.get("/submissions", response_class=HTMLResponse)
def my_submissions(request: Request, user=Depends(require_user)):
    """The logged-in user's submissions, newest first."""
    site = site_of(request)
    with Session(site.engine) as session:
        tasks = session.scalars(select(SubmissionTask).where(SubmissionTask.owner == user.username)
                                .order_by(SubmissionTask.id.desc())).all()
        rows = [site.view(t) for t in tasks]
    return site.render(request, "submissions.html", tasks=rows)


@router.get("/submissions/{key}", response_class=HTMLResponse)
def submission_page(request: Request, key: str, user=Depends(require_user)):
    """A submission's status, results and live log (its owner only)."""
    site = site_of(request)
    task = site.task_for(key, user)
    admin = site.is_admin(user)
    return site.render(request, "submission.html", task=site.view(task), admin=admin,
                       owner_name=catalogue.display_name(site, task.owner),  # an administrator sees whose it is
                       clashes=approval.approval_problems(site.root, task) if task.status == approval.AWAITING else [],
                       withdrawable=admin and approval.is_approved(site.root, task.key))


@router.post("/submissions/{key}/approve")
def approve_form(request: Request, key: str, csrf_token: str | None = Form(None)):
    """An administrator approves a submission that holds benchmark, data or metric plugins (trusted code): its
    plugins become the server's and it is queued (:mod:`brainscore.web.approval`)."""
    check_csrf(request, csrf_token)
    site = site_of(request)
    task = approval.approve(site, key, site.logged_in(request))
    return RedirectResponse(f"/submissions/{task.key}", status_code=303)


@router.post("/submissions/{key}/withdraw")
def withdraw_form(request: Request, key: str, csrf_token: str | None = Form(None)):
    """An administrator withdraws a submission's approved plugins from the site: they leave its listings and are
    never scored again (:func:`~brainscore.web.approval.withdraw`)."""
    check_csrf(request, csrf_token)
    site = site_of(request)
    task = approval.withdraw(site, key, site.logged_in(request))
    return RedirectResponse(f"/submissions/{task.key}", status_code=303)


@router.post("/submissions/{key}/rerun")
def rerun_form(request: Request, key: str, benchmark: str = Form(...), csrf_token: str | None = Form(None)):
    """Re-run a failed benchmark of a submission and go to the new submission's page."""
    check_csrf(request, csrf_token)
    site = site_of(request)
    user = site.logged_in(request)
    new = rerun(site, site.task_for(key, user), benchmark, user)
    return RedirectResponse(f"/submissions/{new.key}", status_code=303)
