"""Pages that list and relate: every benchmark (``/benchmarks``), every model (``/models``, "my models"), how the
benchmarks agree over all models (``/agreement``) with the scatter of two, and the site's icon."""
from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, HTMLResponse, Response

from brainscore.web import catalogue, plots, views
from brainscore.web.site import HERE, json_bytes, page_key, site_of

router = APIRouter()


@router.get("/favicon.ico", include_in_schema=False)
def favicon():
    """The site's icon (an SVG; browsers that ask for ``/favicon.ico`` take it as it is)."""
    return Response((HERE / "static" / "favicon.svg").read_bytes(), media_type="image/svg+xml",
                    headers={"Cache-Control": "public, max-age=86400"})


def _facets_chosen(request: Request) -> dict[str, list[str]]:
    return {key: request.query_params.getlist(key) for key, _ in catalogue.FACETS}


@router.get("/benchmarks", response_class=HTMLResponse)
def benchmarks_page(request: Request, q: str = ""):
    """Every leaderboard benchmark with its metadata (region, species, task, data type, year), searchable (``q``)
    and filterable (``region=V4&species=human...``, each repeatable)."""
    site = site_of(request)
    user = site.current_user(request)
    chosen = _facets_chosen(request)
    if user is None:
        return site.shared(request, lambda version: site.render(
            request, "benchmarks.html", **catalogue.benchmark_index(site, None, q, chosen)).body, "text/html")
    return site.render(request, "benchmarks.html", **catalogue.benchmark_index(site, user, q, chosen))


@router.get("/api/catalogue/benchmarks")
def api_benchmark_index(request: Request, q: str = ""):
    """The ``/benchmarks`` page as JSON (the same query parameters)."""
    site = site_of(request)
    index = catalogue.benchmark_index(site, site.reader(request), q, _facets_chosen(request))
    return {"rows": index["rows"], "total": index["total"], "choices": index["choices"]}


@router.get("/models", response_class=HTMLResponse)
def models_page(request: Request, q: str = "", mine: int = 0, page: int = 1):
    """Every model the reader may see, best average first, searchable (``q``), filterable by metadata
    (``m.<field>=``, ``params_min``, ``params_max``) and, logged in, ``mine=1``: the reader's own models."""
    site = site_of(request)
    user = site.current_user(request)
    explore = views.explore_params(request.query_params)
    if user is None and mine:  # like every other page of one's own: log in first
        return RedirectResponse("/login", status_code=303)
    if user is None:
        return site.shared(request, lambda version: site.render(
            request, "models.html", **catalogue.model_index(site, None, q, False, explore, page)).body, "text/html",
            name=(page_key(request), catalogue.names_token(site)))
    return site.render(request, "models.html", **catalogue.model_index(site, user, q, bool(mine), explore, page))


@router.get("/agreement", response_class=HTMLResponse)
def agreement_page(request: Request, a: str = "", b: str = ""):
    """How the benchmarks agree: Pearson's r of every two benchmarks over the models scored on both, and the
    scatter of two (``a``, ``b``; default the first two) with every model as a point."""
    site = site_of(request)
    user = site.current_user(request)
    matrix = catalogue.agreement(site, user)
    names = matrix["benchmarks"]
    a = a if a in names else names[0] if names else ""
    b = b if b in names else names[1] if len(names) > 1 else a
    pair = None
    if a and b:
        i, j = names.index(a), names.index(b)
        pair = {"r": matrix["r"][i][j], "n": matrix["n"][i][j]}
    return site.render(request, "agreement.html", **matrix, a=a, b=b, pair=pair)


@router.get("/api/agreement")
def api_agreement(request: Request):
    """The benchmark x benchmark correlation of ``/agreement`` as JSON: ``{"benchmarks", "r", "n", "models"}``."""
    site = site_of(request)
    reader = site.reader(request)
    if reader is None:
        return site.shared(request, lambda version: json_bytes(catalogue.agreement(site, None)), "application/json")
    return catalogue.agreement(site, reader)


@router.get("/plots/scatter.svg")
def scatter_plot(request: Request, a: str, b: str):
    """SVG: every visible model's value on benchmark ``a`` against benchmark ``b``."""
    site = site_of(request)
    points = catalogue.scatter_points(site, site.current_user(request), a, b)
    return Response(plots.scatter(a, b, points), media_type="image/svg+xml")
