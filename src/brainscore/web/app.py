"""The FastAPI application of ``brainscore serve``: leaderboard, model and benchmark pages, accounts,
model submission with live status and logs, and the same data as JSON under ``/api/...``.

Pages are rendered on the server with Jinja2 (a few lines of plain JavaScript poll a submission's
status and fold the leaderboard's tree). Scoring never runs here: submissions are queued in the
database and handed by :class:`brainscore.web.jobs.Dispatcher` to a Dask cluster, whose tasks run
each (model, benchmark) pair in a separate, limited process.

Security: the session is a signed (itsdangerous), HttpOnly, SameSite=Lax cookie; every form and
every session-authenticated API POST carries a CSRF token bound to the session; log-ins are rate
limited per user name and per client address (:mod:`brainscore.web.accounts`).
"""
from __future__ import annotations

import glob
import html
import json
import math
import os
import secrets
from pathlib import Path

from fastapi import FastAPI, File, Form, HTTPException, Request, UploadFile
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.middleware.sessions import SessionMiddleware

import brainscore.plugins.models as builtin_model_plugins
from brainscore import registry
from brainscore.errors import UnknownIdentifierError
from brainscore.leaderboard import tree
from brainscore.web import accounts, checks, plots
from brainscore.leaderboard.aggregate import leaderboard_records
from brainscore.results import Database
from brainscore.web.jobs import Dispatcher, Job, place_in_queue, write_entry_point

HERE = Path(__file__).parent


def _home() -> Path:
    home = Path(os.environ.get("BRAINSCORE_HOME", Path.home() / ".brainscore"))
    home.mkdir(parents=True, exist_ok=True)
    return home


def _secret(home: Path) -> str:
    """The session-signing key: ``$BRAINSCORE_WEB_SECRET``, else a random key kept in BRAINSCORE_HOME."""
    if os.environ.get("BRAINSCORE_WEB_SECRET"):
        return os.environ["BRAINSCORE_WEB_SECRET"]
    path = home / "web-secret"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(48))
        path.chmod(0o600)
    return path.read_text().strip()


def _fmt(value, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.{digits}f}"


def _colour(value) -> str:
    """Background colour of a score: a red (0) to green (1) scale, grey when missing."""
    if value is None:
        return "#eeeeee"
    value = min(max(float(value), 0.0), 1.0)
    return f"hsl({int(120 * value)}, 65%, {88 - 30 * value:.0f}%)"


def columns() -> list[dict]:
    """The leaderboard's columns in tree order: each node or benchmark with its depth and ancestors."""
    parents = {**tree.inner_nodes(), **tree.benchmark_parents()}
    kids: dict[str, list[str]] = {}
    for child, parent in parents.items():
        kids.setdefault(parent, []).append(child)
    leaves = set(tree.benchmark_parents())
    out: list[dict] = []

    def has_leaves(node):
        return node in leaves or any(has_leaves(c) for c in kids.get(node, []))

    def visit(node, depth, ancestors):
        if not has_leaves(node):
            return
        out.append({"node": node, "depth": depth, "ancestors": ancestors, "leaf": node in leaves,
                    "children": [c for c in kids.get(node, []) if has_leaves(c)]})
        for child in sorted(kids.get(node, []), key=lambda c: (c in leaves, c)):
            visit(child, depth + 1, ancestors + [node])

    for root in tree.ROOTS:
        visit(root, 0, [])
    return out


def create_app(db_url: str | None = None, root: Path | None = None, weights_dirs: tuple = (),
               start_worker: bool = True, memory_limit: int | None = None, wall_limit: int | None = None,
               workers: int | None = None, scheduler: str | None = None, dask_client=None) -> FastAPI:
    """The web application.

    Parameters
    ----------
    db_url : str, optional
        SQLAlchemy URL of the results database (default ``$BRAINSCORE_DB_URL`` or
        ``sqlite:///$BRAINSCORE_HOME/results.sqlite``); the web's account and queue tables live there too.
    root : Path, optional
        Folder of uploaded submissions (default ``$BRAINSCORE_HOME/submissions``).
    weights_dirs : tuple of Path
        Server folders that submitted plugin code may reference by absolute path.
    start_worker : bool
        Start the submission dispatcher (and its Dask cluster) on start-up (tests of pages alone may skip it).
    memory_limit, wall_limit : int, optional
        Per-child limits in bytes and seconds (default :data:`~brainscore.web.jobs.MEMORY_LIMIT_BYTES`,
        :data:`~brainscore.web.jobs.WALL_LIMIT_S`).
    workers : int, optional
        Worker processes of the Dask LocalCluster started for the submissions (default: one per core,
        at most one per 4 GiB of memory).
    scheduler : str, optional
        Address of an existing Dask scheduler (``tcp://host:8786``) to use instead; its workers must see
        the database and the submissions folder.
    dask_client : distributed.Client, optional
        A client to use as is (tests).
    """
    home = _home()
    store = Database(db_url)
    url = str(getattr(store, "url", None) or db_url)
    engine = store.engine  # the web tables are in the results database (migration 0002)
    root = Path(root or home / "submissions")
    root.mkdir(parents=True, exist_ok=True)
    limits = {k: v for k, v in (("memory_limit", memory_limit), ("wall_limit", wall_limit)) if v}
    worker = Dispatcher(engine, store, url, root, workers=workers, scheduler=scheduler, client=dask_client, **limits)
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.filters["fmt"] = _fmt
    templates.env.filters["colour"] = _colour
    weights_dirs = tuple(Path(d) for d in weights_dirs)

    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def lifespan(app):
        if start_worker:
            worker.start()
        yield
        worker.stop()

    app = FastAPI(title="brainscore", lifespan=lifespan)
    app.add_middleware(SessionMiddleware, secret_key=_secret(home), session_cookie="brainscore_session",
                       same_site="lax", https_only=False, max_age=14 * 24 * 3600)
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    app.state.store, app.state.engine, app.state.worker = store, engine, worker

    # ---------------------------------------------------------------- helpers
    def current_user(request: Request):
        return accounts.user_by_id(engine, request.session.get("user_id"))

    def api_user(request: Request, csrf_needed: bool):
        header = request.headers.get("authorization", "")
        if header.lower().startswith("bearer "):
            user = accounts.user_by_token(engine, header[7:].strip())
            if user is None:
                raise HTTPException(401, "the API token is not valid; create one on your account page")
            return user
        user = current_user(request)
        if user is None:
            raise HTTPException(401, "log in, or send an API token as 'Authorization: Bearer TOKEN'")
        if csrf_needed and not _csrf_ok(request, request.headers.get("x-csrf-token")):
            raise HTTPException(403, "CSRF token missing or wrong: send the X-CSRF-Token header")
        return user

    def csrf_token(request: Request) -> str:
        if "csrf" not in request.session:
            request.session["csrf"] = secrets.token_urlsafe(32)
        return request.session["csrf"]

    def _csrf_ok(request: Request, token: str | None) -> bool:
        expected = request.session.get("csrf")
        return bool(token and expected and secrets.compare_digest(token, expected))

    def check_csrf(request: Request, token: str | None) -> None:
        if not _csrf_ok(request, token):
            raise HTTPException(403, "CSRF token missing or wrong: reload the page and submit the form again")

    def render(request: Request, name: str, status_code: int = 200, **context):
        context.update(user=current_user(request), csrf_token=csrf_token(request))
        return templates.TemplateResponse(request, name, context, status_code=status_code)

    def owner_of(identifier: str):
        model = store.model(identifier)
        return getattr(model, "owner", None) if model is not None else None

    def visible(identifier: str, user) -> bool:
        """Public models and built-ins to everyone; private ones to their owner only."""
        model = store.model(identifier)
        if model is None or getattr(model, "public", True):
            return True
        return user is not None and getattr(model, "owner", None) == user.username

    def board(user) -> list[dict]:
        return [r for r in leaderboard_records(store) if visible(r["model"], user)]

    def view(job: Job) -> dict:
        """A job as JSON: its state, its place in the queue, and why the cluster cannot be reached (if so)."""
        return {**job.as_dict(place_in_queue(engine, job)), "cluster_problem": worker.problem}

    def job_for(job_id: int, user) -> Job:
        with Session(engine, expire_on_commit=False) as session:
            job = session.get(Job, job_id)
        if job is None or user is None or job.owner != user.username:
            raise HTTPException(404, f"no submission {job_id} of yours")
        return job

    def latest_job_of(model: str):
        with Session(engine, expire_on_commit=False) as session:
            for job in session.scalars(select(Job).order_by(Job.id.desc())):
                if model in (job.models or []):
                    return job
        return None

    def queue(user, data: bytes, filename: str, benchmarks: list[str] | None, public: bool) -> Job:
        """Check an upload and queue it; raises SubmissionRejected with every reason."""
        known = tree.benchmark_parents()
        chosen = [b for b in (benchmarks or []) if b] or sorted(known)
        unknown = [b for b in chosen if b not in registry.benchmarks.list()]
        if unknown:
            raise checks.SubmissionRejected([f"unknown benchmark {b!r}; see GET /api/benchmarks" for b in unknown])

        class Owners:
            def get(self, identifier, default=None):
                return owner_of(identifier) or default

        builtin = set(registry.models.list())
        checked = checks.check_zip(data, taken=Owners(), owner=user.username, weights_dirs=weights_dirs,
                                   builtin=builtin - {i for i in builtin if owner_of(i)})
        with Session(engine, expire_on_commit=False) as session:
            job = Job(owner=user.username, package=checked.package, filename=filename[:300], models=checked.identifiers,
                      benchmarks=chosen, requirements=checked.requirements, public=public, status="preparing")
            session.add(job)
            session.commit()
            folder = root / str(job.id)
            checks.extract(data, folder / "site")
            write_entry_point(folder / "site", checked.package, job.id)
            job.folder, job.status = str(folder), "queued"
            job.submission_id = store.create_submission(
                user.username, checked.identifiers, chosen, status="queued",
                meta={"web_job": job.id, "public": public, "package": checked.package,
                      "requirements": checked.requirements, "filename": filename[:300]})
            job.log = (f"submission {job.id} by {user.username}: {filename}\npackage {checked.package}, models "
                       f"{', '.join(checked.identifiers)}\nrequirements (never installed): "
                       f"{', '.join(checked.requirements) or 'none'}\n{len(chosen)} benchmark(s)\n")
            session.commit()
        for identifier in checked.identifiers:
            store.add_model(identifier, owner=user.username, public=public)
        worker.notify()
        return job

    def rerun(job: Job, benchmark: str, user) -> Job:
        if job.owner != user.username:
            raise HTTPException(404, f"no submission {job.id} of yours")
        if benchmark not in job.benchmarks:
            raise HTTPException(400, f"{benchmark!r} is not a benchmark of submission {job.id}")
        failed = [key for key, r in (job.results or {}).items()
                  if key.endswith("|" + benchmark) and r.get("status") == "failed"]
        if not failed:
            raise HTTPException(400, f"{benchmark!r} did not fail in submission {job.id}; nothing to re-run")
        with Session(engine, expire_on_commit=False) as session:
            new = Job(owner=job.owner, package=job.package, filename=job.filename, models=job.models,
                      benchmarks=[benchmark], requirements=job.requirements, public=job.public,
                      folder=job.folder, rerun_of=job.id, status="queued",
                      log=f"re-run of {benchmark} from submission {job.id}\n",
                      submission_id=store.create_submission(job.owner, job.models, [benchmark], status="queued",
                                                            meta={"rerun_of_web_job": job.id}))
            session.add(new)
            session.commit()
        worker.notify()
        return new

    # ---------------------------------------------------------------- pages
    @app.get("/", response_class=HTMLResponse)
    def leaderboard_page(request: Request, sort: str = "average_vision", q: str = "", desc: int = 1, norule: int = 0):
        user = current_user(request)
        records = board(user)
        if q:
            records = [r for r in records if q.lower() in r["model"].lower()]
        if norule:  # only models all of whose layers were declared or selected on data
            records = [r for r in records if not any((r.get("rule") or {}).values())]
        cols = columns()
        if sort not in {c["node"] for c in cols}:
            sort = "average_vision"
        records.sort(key=lambda r: (r["scores"].get(sort) is None,
                                    -(r["scores"].get(sort) or 0) if desc else (r["scores"].get(sort) or 0),
                                    r["model"]))
        # subtrees without any score start folded (a click unfolds them)
        empty = {c["node"] for c in cols if not c["leaf"]
                 and all(r["scores"].get(c["node"]) is None for r in records)}
        return render(request, "leaderboard.html", records=records, columns=cols, sort=sort, q=q, desc=desc,
                      folded=empty, norule=norule)

    @app.get("/models/{identifier}", response_class=HTMLResponse)
    def model_page(request: Request, identifier: str):
        user = current_user(request)
        data = model_json(identifier, user)
        return render(request, "model.html", **data)

    @app.get("/benchmarks/{identifier}", response_class=HTMLResponse)
    def benchmark_page(request: Request, identifier: str):
        user = current_user(request)
        return render(request, "benchmark.html", **benchmark_json(identifier, user))

    @app.get("/register", response_class=HTMLResponse)
    def register_form(request: Request):
        return render(request, "register.html")

    @app.post("/register")
    def register(request: Request, username: str = Form(""), password: str = Form(""),
                 csrf_token: str | None = Form(None)):
        check_csrf(request, csrf_token)
        try:
            user = accounts.register(engine, username, password)
        except accounts.AccountError as error:
            return render(request, "register.html", status_code=400, error=str(error), username=username)
        request.session.clear()  # a new session for the new user (no fixation)
        request.session["user_id"] = user.id
        return RedirectResponse("/submit", status_code=303)

    @app.get("/login", response_class=HTMLResponse)
    def login_form(request: Request):
        return render(request, "login.html")

    @app.post("/login")
    def login(request: Request, username: str = Form(""), password: str = Form(""),
              csrf_token: str | None = Form(None)):
        check_csrf(request, csrf_token)
        address = request.client.host if request.client else "?"
        try:
            user = accounts.authenticate(engine, username, password, address)
        except accounts.AccountError as error:
            code = 429 if isinstance(error, accounts.RateLimited) else 400
            return render(request, "login.html", status_code=code, error=str(error), username=username)
        request.session.clear()
        request.session["user_id"] = user.id
        return RedirectResponse("/submissions", status_code=303)

    @app.post("/logout")
    def logout(request: Request, csrf_token: str | None = Form(None)):
        check_csrf(request, csrf_token)
        request.session.clear()
        return RedirectResponse("/", status_code=303)

    @app.get("/account", response_class=HTMLResponse)
    def account_page(request: Request):
        if current_user(request) is None:
            return RedirectResponse("/login", status_code=303)
        return render(request, "account.html")

    @app.post("/account/tokens", response_class=HTMLResponse)
    def new_token(request: Request, csrf_token: str | None = Form(None)):
        check_csrf(request, csrf_token)
        user = current_user(request)
        if user is None:
            raise HTTPException(401, "log in first")
        return render(request, "account.html", token=accounts.create_token(engine, user))

    @app.get("/submit", response_class=HTMLResponse)
    def submit_form(request: Request):
        if current_user(request) is None:
            return RedirectResponse("/login", status_code=303)
        return render(request, "submit.html", benchmarks=sorted(tree.benchmark_parents()))

    @app.post("/submit")
    async def submit(request: Request, file: UploadFile = File(...), csrf_token: str | None = Form(None),
                     visibility: str = Form("public"), benchmarks: list[str] = Form([])):
        check_csrf(request, csrf_token)
        user = current_user(request)
        if user is None:
            raise HTTPException(401, "log in first")
        data = await file.read(checks.MAX_ZIP_BYTES + 1)
        try:
            job = queue(user, data, file.filename or "upload.zip", benchmarks, visibility != "private")
        except checks.SubmissionRejected as rejected:
            return render(request, "submit.html", status_code=400, problems=rejected.problems,
                          filename=file.filename, benchmarks=sorted(tree.benchmark_parents()))
        return RedirectResponse(f"/submissions/{job.id}", status_code=303)

    @app.get("/submissions", response_class=HTMLResponse)
    def my_submissions(request: Request):
        user = current_user(request)
        if user is None:
            return RedirectResponse("/login", status_code=303)
        with Session(engine) as session:
            jobs = session.scalars(select(Job).where(Job.owner == user.username).order_by(Job.id.desc())).all()
            rows = [view(j) for j in jobs]
        return render(request, "submissions.html", jobs=rows)

    @app.get("/submissions/{job_id}", response_class=HTMLResponse)
    def submission_page(request: Request, job_id: int):
        user = current_user(request)
        if user is None:
            return RedirectResponse("/login", status_code=303)
        job = job_for(job_id, user)
        return render(request, "submission.html", job=view(job))

    @app.post("/submissions/{job_id}/rerun")
    def rerun_form(request: Request, job_id: int, benchmark: str = Form(...), csrf_token: str | None = Form(None)):
        check_csrf(request, csrf_token)
        user = current_user(request)
        if user is None:
            raise HTTPException(401, "log in first")
        new = rerun(job_for(job_id, user), benchmark, user)
        return RedirectResponse(f"/submissions/{new.id}", status_code=303)

    # ---------------------------------------------------------------- JSON
    @app.get("/api/leaderboard")
    def api_leaderboard(request: Request):
        return board(current_user(request) or _token_user(request))

    def _token_user(request: Request):
        header = request.headers.get("authorization", "")
        return accounts.user_by_token(engine, header[7:].strip()) if header.lower().startswith("bearer ") else None

    def model_json(identifier: str, user) -> dict:
        if not visible(identifier, user):
            raise HTTPException(404, f"no model {identifier!r}")
        records = store.scores(model_identifier=identifier, include_failed=True)
        owner = owner_of(identifier)
        is_owner = user is not None and owner == user.username
        if not records and identifier not in registry.models.list() and owner is None:
            raise HTTPException(404, f"no model {identifier!r}")
        done = {r.benchmark: r for r in records if r.status == "done"}  # oldest first: the latest wins
        failed = {r.benchmark: r for r in records if r.status == "failed"}
        rows = []
        for r in sorted(records, key=lambda r: r.benchmark):
            if r.status == "failed" and (failed[r.benchmark] is not r
                                         or (r.benchmark in done and _later(done[r.benchmark], r))):
                continue  # an older failure, or one a later run fixed
            if r.status == "done" and done.get(r.benchmark) is not r:
                continue
            rows.append({"benchmark": r.benchmark, "status": r.status, "score": r.score, "raw": r.raw,
                         "ceiling": r.ceiling, "error": r.error, "ci95": list(r.ci95) if r.ci95 else None,
                         "layers": r.layers, "provenance": r.provenance, "failure": r.failure,
                         "benchmark_version": r.benchmark_version,
                         "log": r.log if (r.status == "failed" and is_owner) else None,
                         "end": r.end.isoformat() if getattr(r, "end", None) else None})
        job = latest_job_of(identifier)
        submission = None
        if job is not None and is_owner:
            submission = {"id": job.id, "status": job.status, "results": job.results}
        aggregates = next((rec for rec in leaderboard_records(store) if rec["model"] == identifier), None)
        return {"model": identifier, "owner": owner, "is_owner": is_owner,
                "public": getattr(store.model(identifier), "public", True) if store.model(identifier) else True,
                "scores": rows, "submission": submission, "aggregates": aggregates,
                "layer_selection": selection_curves(identifier), "commitments": commitment_table(identifier)}

    @app.get("/api/models/{identifier}")
    def api_model(request: Request, identifier: str):
        return model_json(identifier, current_user(request) or _token_user(request))

    def benchmark_json(identifier: str, user) -> dict:
        parents = tree.benchmark_parents(include_selection=True)
        if identifier not in parents and identifier not in registry.benchmarks.list():
            raise HTTPException(404, f"no benchmark {identifier!r}")
        info = _benchmark_info(identifier)
        latest = {r.model: r for r in store.scores(benchmark_identifier=identifier)}  # oldest first
        records = [r for r in latest.values() if visible(r.model, user)]
        ranking = sorted(({"model": r.model, "score": r.score, "raw": r.raw, "error": r.error,
                           "ci95": list(r.ci95) if r.ci95 else None} for r in records),
                         key=lambda x: -(x["score"] if x["score"] is not None else -math.inf))
        ceilings = [r.ceiling for r in records if r.ceiling is not None]
        prov = next((r.provenance for r in records if r.provenance), {}) or {}
        ceiling_error = (prov.get("ceiling") or {}).get("error") if isinstance(prov, dict) else None
        versions = sorted({r.benchmark_version for r in records if r.benchmark_version is not None})
        if versions and info.get("version") is None:
            info["version"] = versions[-1]
        return {"benchmark": identifier, **info, "ancestors": tree.path_to_root(info["parent"]) if info.get("parent") else [],
                "ceiling": ceilings[-1] if ceilings else None, "ceiling_error": ceiling_error,
                "data_files": (prov.get("benchmark") or {}).get("data_files") or {},
                "metric": prov.get("metric"), "ceiling_method": (prov.get("ceiling") or {}).get("method"),
                "ranking": ranking}

    @app.get("/api/benchmarks")
    def api_benchmarks():
        return sorted(tree.benchmark_parents())

    @app.get("/api/benchmarks/{identifier}")
    def api_benchmark(request: Request, identifier: str):
        return benchmark_json(identifier, current_user(request) or _token_user(request))

    @app.post("/api/submissions")
    async def api_submit(request: Request, file: UploadFile | None = File(None), benchmarks: str = Form(""),
                         public: bool = Form(True)):
        user = api_user(request, csrf_needed=True)
        if file is None:
            raise HTTPException(400, "send the plugin zip in the multipart field 'file'")
        data = await file.read(checks.MAX_ZIP_BYTES + 1)
        try:
            job = queue(user, data, file.filename or "upload.zip", [b.strip() for b in benchmarks.split(",")], public)
        except checks.SubmissionRejected as rejected:
            return JSONResponse({"status": "rejected", "problems": rejected.problems}, status_code=400)
        return JSONResponse(view(job), status_code=201)

    @app.get("/api/submissions/{job_id}")
    def api_submission(request: Request, job_id: int):
        user = api_user(request, csrf_needed=False)
        job = job_for(job_id, user)
        return view(job)

    @app.post("/api/submissions/{job_id}/rerun")
    def api_rerun(request: Request, job_id: int, benchmark: str = Form(...)):
        user = api_user(request, csrf_needed=True)
        new = rerun(job_for(job_id, user), benchmark, user)
        return JSONResponse(view(new), status_code=201)

    # ---------------------------------------------------------------- plots
    @app.get("/plots/benchmarks/{identifier}.svg")
    def benchmark_plot(request: Request, identifier: str, highlight: str | None = None):
        user = current_user(request)
        latest = {r.model: r.score for r in store.scores(benchmark_identifier=identifier)}  # oldest first
        scores = {m: v for m, v in latest.items() if v is not None and visible(m, user)}
        return Response(plots.distribution(identifier, scores, highlight), media_type="image/svg+xml")

    def commitment_table(model: str) -> dict[str, dict]:
        """Region -> {"layer", "method", "how", "benchmarks"}: how the model's layer for each region was chosen.

        From the recorded scores' provenance (``model.commitment``, :func:`brainscore.scoring.job.commitment_of`),
        the newest per region; ``benchmarks`` are the scored benchmarks that used it.
        """
        from brainscore.models.layer_rule import describe

        table: dict[str, dict] = {}
        for record in store.scores(model_identifier=model):  # oldest first: the newest wins
            provenance = record.provenance if isinstance(record.provenance, dict) else {}
            commitment = (provenance.get("model") or {}).get("commitment")
            if record.status != "done" or not isinstance(commitment, dict) or not commitment.get("region"):
                continue
            region = str(commitment["region"])
            used = table.get(region, {}).get("benchmarks", [])
            table[region] = {"layer": commitment.get("layer"), "method": commitment.get("method"),
                             "how": describe(commitment),
                             "benchmarks": sorted(set(used) | {record.benchmark})}
        order = {region: i for i, region in enumerate(("V1", "V2", "V4", "IT"))}
        return dict(sorted(table.items(), key=lambda item: (order.get(item[0], len(order)), item[0])))

    def selection_curves(model: str) -> dict[str, dict]:
        """Region -> {"layer", "scores", "source"}: every candidate layer's selection score and the committed layer.

        From the newest recorded score whose provenance holds the region's layer selection (any model whose
        layer was chosen automatically, :func:`brainscore.scoring.job.layer_selection_of`); else from the
        ``<model>.<region>-selection.json`` files a plugin ships with its ``region_layer_map``.
        """
        curves = {}
        for record in store.scores(model_identifier=model):  # oldest first: the newest wins
            provenance = record.provenance if isinstance(record.provenance, dict) else {}
            for region, curve in (provenance.get("layer_selection") or {}).items():
                try:
                    curves[region] = {"layer": curve.get("layer"),
                                      "source": f"recorded with its score on {record.benchmark}",
                                      "scores": {str(layer): float(value) for layer, value in curve["scores"]}}
                except (ValueError, KeyError, TypeError, AttributeError):
                    continue  # not a selection record: no curve rather than a wrong one
        folders = [Path(p) for p in builtin_model_plugins.__path__]
        job = latest_job_of(model)
        if job is not None and job.folder:
            folders.append(Path(job.folder) / "site")
        for folder in folders:
            for path in sorted(folder.glob(f"*/region_layer_map/{glob.escape(model)}.*-selection.json")):
                region = path.name[len(model) + 1:-len("-selection.json")]
                if region in curves:
                    continue
                try:
                    data = json.loads(path.read_text())
                    curves[region] = {"layer": data.get("layer"), "source": "the plugin's selection record",
                                      "scores": {str(k): float(v) for k, v in data["scores"].items()}}
                except (ValueError, KeyError, TypeError, AttributeError):
                    continue  # not a selection record: no curve rather than a wrong one
        return curves

    @app.get("/plots/models/{model}/layers/{region}.svg")
    def layer_plot(request: Request, model: str, region: str):
        if not visible(model, current_user(request)):
            raise HTTPException(404, f"no model {model!r}")
        curve = selection_curves(model).get(region)
        if curve is None:
            raise HTTPException(404, f"no stored layer selection of {model} for {region}")
        return Response(plots.layer_curve(model, f"{region} selection data", list(curve["scores"].items()),
                                          curve["layer"]), media_type="image/svg+xml")

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException):
        if request.url.path.startswith(("/api/", "/plots/")) or "text/html" not in request.headers.get("accept", ""):
            return JSONResponse({"detail": error.detail}, status_code=error.status_code)
        return HTMLResponse(f"<!doctype html><title>{error.status_code}</title><link rel=stylesheet href=/static/style.css>"
                            f"<main><h1>{error.status_code}</h1><p class=error>{html.escape(str(error.detail))}</p>"
                            f"<p><a href='/'>leaderboard</a></p></main>", status_code=error.status_code)

    return app


def _later(a, b) -> bool:
    """Whether record ``a`` ended after record ``b`` (unknown times: ``a`` wins)."""
    ta, tb = getattr(a, "end", None), getattr(b, "end", None)
    return ta is None or tb is None or ta >= tb


_INFO: dict[str, dict] = {}


def _benchmark_info(identifier: str) -> dict:
    """Version, parent, bibtex and data of a benchmark (its object is built, no data is loaded)."""
    if identifier not in _INFO:
        declared = registry.benchmarks.metadata(identifier)
        info = {"parent": declared.get("parent"), "selection_for": declared.get("selection_for"),
                "version": None, "bibtex": "", "kind": None, "region": None, "data": None}
        try:
            benchmark = registry.load_benchmark(identifier)
            info.update(version=getattr(benchmark, "version", None), bibtex=getattr(benchmark, "bibtex", "") or "",
                        kind=type(benchmark).__name__, region=getattr(benchmark, "region", None),
                        parent=getattr(benchmark, "parent", None) or info["parent"])
            for attribute in ("assembly_identifier", "dataset_identifier", "data_identifier", "stimulus_set_identifier"):
                if getattr(benchmark, attribute, None):
                    info["data"] = getattr(benchmark, attribute)
                    break
        except (UnknownIdentifierError, ImportError) as error:  # a broken plugin shows as such
            info["problem"] = str(error)
        _INFO[identifier] = info
    return dict(_INFO[identifier])
