"""Pages anyone may read: the leaderboard, a model's page, a benchmark's page and their plots (SVG)."""
from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from brainscore.web import plots, views
from brainscore.web.site import site_of

router = APIRouter()


@router.get("/", response_class=HTMLResponse)
def leaderboard_page(request: Request, sort: str = "average_vision", q: str = "", desc: int = 1, norule: int = 0):
    """The leaderboard: every visible model's scores in tree columns, sorted by ``sort``, filtered by ``q``
    (and, with ``norule=1``, without models that answered any benchmark with a rule-committed layer)."""
    site = site_of(request)
    records = site.board(site.current_user(request))
    if q:
        records = [r for r in records if q.lower() in r["model"].lower()]
    if norule:  # only models all of whose layers were declared or selected on data
        records = [r for r in records if not any((r.get("rule") or {}).values())]
    cols = views.columns()
    if sort not in {c["node"] for c in cols}:
        sort = "average_vision"
    records.sort(key=lambda r: (r["scores"].get(sort) is None,
                                -(r["scores"].get(sort) or 0) if desc else (r["scores"].get(sort) or 0),
                                r["model"]))
    # subtrees without any score start folded (a click unfolds them)
    empty = {c["node"] for c in cols if not c["leaf"]
             and all(r["scores"].get(c["node"]) is None for r in records)}
    return site.render(request, "leaderboard.html", records=records, columns=cols, sort=sort, q=q, desc=desc,
                       folded=empty, norule=norule)


@router.get("/models/{identifier}", response_class=HTMLResponse)
def model_page(request: Request, identifier: str):
    """A model's scores, failures (with logs for its owner), layer selection and provenance."""
    site = site_of(request)
    return site.render(request, "model.html", **views.model_json(site, identifier, site.current_user(request)))


@router.get("/benchmarks/{identifier}", response_class=HTMLResponse)
def benchmark_page(request: Request, identifier: str):
    """A benchmark's facts, its ranking of the visible models and their distribution."""
    site = site_of(request)
    return site.render(request, "benchmark.html", **views.benchmark_json(site, identifier, site.current_user(request)))


@router.get("/plots/benchmarks/{identifier}.svg")
def benchmark_plot(request: Request, identifier: str, highlight: str | None = None):
    """SVG: the distribution of the visible models' scores on a benchmark (``highlight`` one in red)."""
    site = site_of(request)
    user = site.current_user(request)
    latest = {r.model: r.score for r in site.store.scores(benchmark_identifier=identifier)}  # oldest first
    scores = {m: v for m, v in latest.items() if v is not None and site.visible(m, user)}
    return Response(plots.distribution(identifier, scores, highlight), media_type="image/svg+xml")


@router.get("/plots/models/{model}/layers/{region}.svg")
def layer_plot(request: Request, model: str, region: str):
    """SVG: a model's selection score against layer for ``region``, the committed layer marked."""
    site = site_of(request)
    if not site.visible(model, site.current_user(request)):
        raise HTTPException(404, f"no model {model!r}")
    curve = views.selection_curves(site, model).get(region)
    if curve is None:
        raise HTTPException(404, f"no stored layer selection of {model} for {region}")
    return Response(plots.layer_curve(model, f"{region} selection data", list(curve["scores"].items()),
                                      curve["layer"]), media_type="image/svg+xml")
