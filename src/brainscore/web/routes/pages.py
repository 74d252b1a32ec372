"""Pages anyone may read: the leaderboard, a model's page, a benchmark's page and their plots (SVG)."""
from __future__ import annotations

import math

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from brainscore.web import plots, views
from brainscore.web.site import site_of

router = APIRouter()


PAGE_SIZE = 100
"""Leaderboard rows per page: a page a browser lays out at once (all 704 models were 6.2 MB of HTML)."""


@router.get("/", response_class=HTMLResponse)
def leaderboard_page(request: Request, sort: str = "average_vision", q: str = "", desc: int = 1, page: int = 1):
    """The leaderboard: every visible model's scores in tree columns, sorted by ``sort``, filtered by ``q``,
    :data:`PAGE_SIZE` rows per ``page``."""
    site = site_of(request)
    user = site.current_user(request)
    if user is None and not q:  # anonymous visitors all see the same pages: rendered once per change
        hidden = frozenset(site.hidden_from(None))
        return site.shared(request, ("leaderboard page", hidden, sort, bool(desc), page),
                           lambda version: _leaderboard(request, site, None, sort, q, desc, page).body, "text/html")
    return _leaderboard(request, site, user, sort, q, desc, page)


def _leaderboard(request: Request, site, user, sort: str, q: str, desc: int, page: int):
    records = site.board(user)
    if q:
        records = [r for r in records if q.lower() in r["model"].lower()]
    cols = views.columns()
    if sort not in {c["node"] for c in cols}:
        sort = "average_vision"
    records.sort(key=lambda r: (r["scores"].get(sort) is None,
                                -(r["scores"].get(sort) or 0) if desc else (r["scores"].get(sort) or 0),
                                r["model"]))
    # subtrees without any score start folded (a click unfolds them)
    empty = {c["node"] for c in cols if not c["leaf"]
             and all(r["scores"].get(c["node"]) is None for r in records)}
    pages = max(1, math.ceil(len(records) / PAGE_SIZE))
    page = min(max(1, page), pages)
    offset = (page - 1) * PAGE_SIZE
    return site.render(request, "leaderboard.html", records=records[offset:offset + PAGE_SIZE], total=len(records),
                       offset=offset, page=page, pages=pages, columns=cols, sort=sort, q=q, desc=desc, folded=empty)


@router.get("/models/{identifier}", response_class=HTMLResponse)
def model_page(request: Request, identifier: str):
    """A model's scores, failures (with logs for its owner), layer selection and provenance."""
    site = site_of(request)
    user = site.current_user(request)
    if user is None:  # every anonymous visitor sees the same page: rendered once per change of the results
        return site.shared(request, ("model page", frozenset(site.hidden_from(None)), identifier),
                           lambda version: site.render(request, "model.html",
                                                       **views.model_json(site, identifier, None)).body, "text/html")
    return site.render(request, "model.html", **views.model_json(site, identifier, user))


@router.get("/benchmarks/{identifier}", response_class=HTMLResponse)
def benchmark_page(request: Request, identifier: str):
    """A benchmark's facts, its ranking of the visible models and their distribution."""
    site = site_of(request)
    user = site.current_user(request)
    if user is None:
        return site.shared(request, ("benchmark page", frozenset(site.hidden_from(None)), identifier),
                           lambda version: site.render(request, "benchmark.html",
                                                       **views.benchmark_json(site, identifier, None)).body,
                           "text/html")
    return site.render(request, "benchmark.html", **views.benchmark_json(site, identifier, user))


@router.get("/plots/benchmarks/{identifier}.svg")
def benchmark_plot(request: Request, identifier: str, highlight: str | None = None):
    """SVG: the distribution of the visible models' scores on a benchmark (``highlight`` one in red)."""
    site = site_of(request)
    hidden = site.hidden_from(site.current_user(request))
    scores = {m: r.score for m, r in views.latest_scores(site, identifier).items()
              if r.score is not None and m not in hidden}
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
