"""The JSON API under ``/api``: the leaderboard, models, benchmarks, and submissions (by API token, or by
session with its CSRF header)."""
from __future__ import annotations

from fastapi import APIRouter, File, Form, HTTPException, Request, UploadFile
from fastapi.responses import JSONResponse

from brainscore.leaderboard import tree
from brainscore.web import checks, new_benchmarks, views
from brainscore.web.routes.submissions import enqueue, rerun
from brainscore.web.security import upload_limit
from brainscore.web.site import json_bytes, site_of
from brainscore.web.tasks import QuotaExceeded

router = APIRouter(prefix="/api")


@router.get("/leaderboard")
def api_leaderboard(request: Request, at: str | None = None, q: str = "", sort: str | None = None, desc: int = 1,
                    page: int | None = None, per_page: int = 100):
    """The leaderboard's records the caller may see (the same JSON as ``brainscore leaderboard --format json``);
    ``at=YYYY-MM-DD``: as it was at the end of that day (UTC). The leaderboard page's query applies too: ``q`` (a
    part of the model's name), ``sort`` (a column; ``desc=0``: lowest first), ``page`` (``per_page`` records a page,
    default 100, at most 1,000; each record then carries its ``rank``), and its filters and weights
    (``m.<field>=``, ``params_min=``, ``params_max=``, ``only=``, ``w.<node>=``: see
    :func:`brainscore.web.views.explore_params`; records are then sorted by the re-weighted average).

    Raises
    ------
    HTTPException
        400 for a ``page`` or ``per_page`` below 1 or a ``per_page`` over 1,000.
    """
    site = site_of(request)
    reader = site.reader(request)
    explore = views.explore_params(request.query_params)
    if q or sort or page is not None or not desc:  # the page's query: a view of the leaderboard, one page of it
        if page is not None and page < 1 or not 1 <= per_page <= 1000:
            raise HTTPException(400, "page must be 1 or more and per_page between 1 and 1000")

        def build(who):
            records = views.leaderboard_view(site, who, sort or "average_vision", q, desc, None, 0, at,
                                             explore)["records"]
            if page is not None:
                records = records[(page - 1) * per_page:page * per_page]
            return records

        if reader is not None:
            return build(reader)
        return site.shared(request, lambda version: json_bytes(build(None)), "application/json")
    if explore:  # filtered or re-weighted
        if reader is not None:
            return views.leaderboard_view(site, reader, at=at, explore=explore)["records"]
        return site.shared(request, lambda version: json_bytes(
            views.leaderboard_view(site, None, at=at, explore=explore)["records"]), "application/json")
    if at:  # a past day
        return site.shared(request, lambda version: json_bytes(site.board(reader, at)), "application/json", reader)
    return site.shared(request, lambda version: json_bytes(
        [r for r in site.results.records(version) if r["model"] not in site.hidden_from(reader, version)]),
        "application/json", reader)


@router.get("/compare")
def api_compare(request: Request, models: str = ""):
    """Two or more models side by side (``?models=A,B``): see :func:`brainscore.web.views.compare`."""
    site = site_of(request)
    return views.compare(site, [m.strip() for m in models.split(",") if m.strip()], site.reader(request))


@router.get("/models/{identifier}")
def api_model(request: Request, identifier: str):
    """A model's scores, layer selection and (for its owner) its latest submission."""
    site = site_of(request)
    user = site.reader(request)
    if user is None:  # every anonymous reader gets the same JSON: built once per change of the results
        return site.shared(request, lambda version: json_bytes(views.model_json(site, identifier, None)),
                           "application/json")
    return views.model_json(site, identifier, user)


@router.get("/benchmarks")
def api_benchmarks():
    """The leaderboard's benchmark identifiers."""
    return sorted(tree.benchmark_parents())


@router.get("/benchmarks/{identifier}")
def api_benchmark(request: Request, identifier: str):
    """A benchmark's facts and ranking."""
    site = site_of(request)
    user = site.reader(request)
    if user is None:
        return site.shared(request, lambda version: json_bytes(views.benchmark_json(site, identifier, None)),
                           "application/json", depends=lambda version: site.benchmark_token(identifier, version))
    return views.benchmark_json(site, identifier, user)


@router.get("/benchmarks/{identifier}/progress")
def api_benchmark_progress(request: Request, identifier: str):
    """How far the benchmark's newest version, queued for every public model, has come (computed per request:
    ``{"version", "total", "scored", "queued", "running", "failed", "models"}``), or null if it never was queued."""
    site = site_of(request)
    if identifier not in tree.benchmark_parents(include_selection=True):
        raise HTTPException(404, f"no benchmark {identifier!r}")
    return new_benchmarks.progress(site, identifier, site.hidden_from(site.reader(request)))


@router.post("/submissions", max_body_size=upload_limit())  # cut off while streaming: 413
def api_submit(request: Request, file: UploadFile | None = File(None), benchmarks: str = Form(""),
               public: bool = Form(True)):
    """Queue a plugin zip (``benchmarks``: comma-separated); 201 with its state, 400 with every problem.

    A ``def`` route (run in FastAPI's thread pool): its token lookup, checks, unpacking and database
    writes do not block the worker's event loop and so the other requests it serves.
    """
    site = site_of(request)
    user = site.api_user(request, csrf_needed=True)
    if file is None:
        raise HTTPException(400, "send the plugin zip in the multipart field 'file'")
    data = file.file.read(checks.MAX_ZIP_BYTES + 1)  # the parsed upload's spooled file
    try:
        task = enqueue(site, user, data, file.filename or "upload.zip", [b.strip() for b in benchmarks.split(",")],
                       public)
    except (checks.SubmissionRejected, QuotaExceeded) as rejected:  # 400, or 429 for a user's quota (wait)
        return JSONResponse({"status": "rejected", "problems": rejected.problems},
                            status_code=getattr(rejected, "status_code", 400))
    return JSONResponse(site.view(task), status_code=201)


@router.get("/submissions/{key}")
def api_submission(request: Request, key: str):
    """A submission's state, results and log (its owner only)."""
    site = site_of(request)
    return site.view(site.task_for(key, site.api_user(request, csrf_needed=False)))


@router.post("/submissions/{key}/rerun")
def api_rerun(request: Request, key: str, benchmark: str = Form(...)):
    """Re-run a failed benchmark of a submission; 201 with the new submission's state."""
    site = site_of(request)
    user = site.api_user(request, csrf_needed=True)
    new = rerun(site, site.task_for(key, user), benchmark, user)
    return JSONResponse(site.view(new), status_code=201)


@router.get("/scores/{score_id}")
def api_score(request: Request, score_id: int):
    """One recorded score with its provenance (what ``brainscore reproduce ID --server URL`` re-runs)."""
    site = site_of(request)
    return views.score_json(site, score_id, site.reader(request), str(request.base_url).rstrip("/"))
