"""Pages anyone may read: the leaderboard, a model's page, a benchmark's page and their plots (SVG)."""
from __future__ import annotations

import csv
import io
import math

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from brainscore.leaderboard.csv_cells import safe_row
from brainscore.web import catalogue, plots, stimuli, views
from brainscore.web.values import shown_value
from brainscore.web.site import page_key, site_of

router = APIRouter()


PAGE_SIZE = 100
"""Leaderboard rows per page: a page a browser lays out at once (all 704 models were 6.2 MB of HTML)."""


@router.get("/", response_class=HTMLResponse)
def leaderboard_page(request: Request, sort: str = "average_vision", q: str = "", desc: int = 1,
                     fold: str | None = None, norule: int = 0, at: str | None = None, page: int = 1):
    """The leaderboard: every visible model's scores in tree columns; its state (sort, filter, folded columns,
    ``norule=1``: without models that answered any benchmark with a rule-committed layer) is in the URL, so a
    view can be shared and exported as it is. :data:`PAGE_SIZE` rows per ``page``.

    Anonymous visitors all see the same page for the same query: each is rendered and gzipped once per
    change of the results (:meth:`~brainscore.web.site.Site.shared`, keyed by every query parameter,
    the explore filters and weights included).
    """
    site = site_of(request)
    user = site.current_user(request)
    explore = views.explore_params(request.query_params)
    if user is None:
        # a query that names no column sorts by the average: the page of the canonical query, built once (a
        # never-seen ?sort=zzz was built anew for each such address)
        if sort not in {c["node"] for c in views.columns()}:
            sort = "average_vision"
        name = (request.url.path, tuple(sorted((k, v) for k, v in request.query_params.multi_items() if k != "sort")
                                        + ([("sort", sort)] if sort != "average_vision" else [])))
        return site.shared(request, lambda version: _leaderboard(request, site, None, sort, q, desc, fold, norule,
                                                                 at, page, explore).body, "text/html", name=name)
    return _leaderboard(request, site, user, sort, q, desc, fold, norule, at, page, explore)


def _leaderboard(request: Request, site, user, sort: str, q: str, desc: int, fold: str | None, norule: int,
                 at: str | None, page: int, explore: dict | None = None):
    """The leaderboard page's response (its ``body`` is the HTML): one page of the view."""
    view = views.leaderboard_view(site, user, sort, q, desc, fold, norule, at, explore)
    total = len(view["records"])
    pages = max(1, math.ceil(total / PAGE_SIZE))
    page = min(max(1, page), pages)
    offset = (page - 1) * PAGE_SIZE
    view["records"] = view["records"][offset:offset + PAGE_SIZE]
    has_rule = any(any((r.get("rule") or {}).values()) for r in view["records"])  # then the † needs its legend
    return site.render(request, "leaderboard.html", **view, total=total, offset=offset, page=page, pages=pages,
                       has_rule=has_rule)


@router.get("/leaderboard.csv")
def leaderboard_csv(request: Request, sort: str = "average_vision", q: str = "", desc: int = 1,
                    fold: str | None = None, norule: int = 0, at: str | None = None):
    """The leaderboard view of the same query as CSV: the rows and columns shown, scores to 6 decimals; a text
    cell that a spreadsheet would read as a formula starts with ``'`` (:func:`~brainscore.leaderboard.csv_cells.safe_cell`)."""
    site = site_of(request)
    view = views.leaderboard_view(site, site.reader(request), sort, q, desc, fold, norule, at,
                                 views.explore_params(request.query_params))
    header, rows = views.leaderboard_rows(view)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(safe_row(header))  # no cell a spreadsheet would run as a formula (issue 36)
    for row in rows:
        writer.writerow(safe_row([row["rank"], row["model"]]
                                 + ["" if row[h] is None else f"{row[h]:.6f}" for h in header[2:]]))
    return Response(buffer.getvalue(), media_type="text/csv",
                    headers={"content-disposition": 'attachment; filename="brainscore-leaderboard.csv"'})


@router.get("/leaderboard.json")
def leaderboard_json(request: Request, sort: str = "average_vision", q: str = "", desc: int = 1,
                     fold: str | None = None, norule: int = 0, at: str | None = None):
    """The leaderboard view of the same query as JSON: ``{"columns": [...], "rows": [{"rank", "model", ..., "bibtex"}],
    "filters": {...}}`` (``filters``: the metadata filters, regions and weights applied, :func:`views.explore_params`)."""
    site = site_of(request)
    view = views.leaderboard_view(site, site.reader(request), sort, q, desc, fold, norule, at,
                                 views.explore_params(request.query_params))
    header, rows = views.leaderboard_rows(view)
    for row in rows:
        row["bibtex"] = model_bibtex(site, row["model"]) or None
    return {"columns": header[2:], "rows": rows, "filters": view["explore"]}


@router.get("/leaderboard.bib")
def leaderboard_bibtex(request: Request, sort: str = "average_vision", q: str = "", desc: int = 1,
                       fold: str | None = None, norule: int = 0, at: str | None = None):
    """BibTeX of every benchmark shown in the view, then of every model shown whose plugin gives one (each entry
    once)."""
    site = site_of(request)
    view = views.leaderboard_view(site, site.reader(request), sort, q, desc, fold, norule, at,
                                 views.explore_params(request.query_params))
    entries: list[str] = []
    for c in view["columns"]:
        if c["leaf"] and not c["hidden"]:
            for entry in _entries(views.benchmark_info(c["node"]).get("bibtex") or ""):
                if entry not in entries:
                    entries.append(entry)
    for model in view["records"]:  # then the models shown: each one's BibTeX, where its plugin gives one
        for entry in _entries(model_bibtex(site, model["model"])):
            if entry not in entries:
                entries.append(entry)
    return Response("\n\n".join(entries) + "\n", media_type="application/x-bibtex",
                    headers={"content-disposition": 'attachment; filename="brainscore-leaderboard.bib"'})


def model_bibtex(site, model: str) -> str:
    """A model's BibTeX: its ``metadata.yml``'s ``bibtex``, else a literal ``BIBTEX`` in its plugin's sources
    (:func:`brainscore.web.cards.bibtex`); "" when neither gives one."""
    from brainscore.web import cards

    facts = views.model_catalogue(site).get(model) or {}
    declared = (facts.get("declared") or {}).get("bibtex")
    if declared:
        return str(declared)
    return cards.bibtex(facts["folder"]) if facts.get("folder") is not None else ""


def _entries(bibtex: str) -> list[str]:
    """The ``@type{...}`` (or ``@type(...)``) entries of a BibTeX text, each stripped, read as BibTeX reads them:
    an entry starts at an ``@`` outside every entry and ends at the brace (or parenthesis) that closes its
    opening one, so an ``@`` inside a field (an address in a ``url`` or ``note``, a title) stays in its entry
    (issue 36: the export split entries there). Text between entries is a comment, as in BibTeX, and is left
    out; an entry never closed runs to the end of the text."""
    entries: list[str] = []
    i, n = 0, len(bibtex)
    while True:
        start = bibtex.find("@", i)
        if start < 0:
            return entries
        opening = next((j for j in range(start + 1, n) if bibtex[j] in "{("), None)
        if opening is None:
            return entries + ([bibtex[start:].strip()] if bibtex[start:].strip() != "@" else [])
        closing = "}" if bibtex[opening] == "{" else ")"
        depth, j = 0, opening + 1  # depth: braces inside the entry (a ")" inside braces closes nothing)
        while j < n:
            char = bibtex[j]
            if char == "{":
                depth += 1
            elif char == "}" and depth > 0:
                depth -= 1
            elif char == closing and depth == 0:
                break
            j += 1
        entries.append(bibtex[start:j + 1].strip())
        i = j + 1


@router.get("/compare", response_class=HTMLResponse)
def compare_page(request: Request, models: str = ""):
    """Two or more models side by side (``?models=A,B``): scores, 95% intervals, differences to the first."""
    site = site_of(request)
    user = site.current_user(request)
    chosen = list(dict.fromkeys(m.strip() for m in models.split(",") if m.strip()))
    # a shared link outlives its models: the ones still on the board (for this reader) are compared, the others
    # named as gone; with fewer than two left, an empty page that says how to pick models (the API keeps 400/404)
    shown = {r["model"] for r in site.board(user)}
    known, gone = [m for m in chosen if m in shown], [m for m in chosen if m not in shown]
    if len(known) < 2:
        return site.render(request, "compare.html", models=known, rows=[], gone=gone)
    return site.render(request, "compare.html", **views.compare(site, known, user), gone=gone)


@router.get("/models/{identifier}", response_class=HTMLResponse)
def model_page(request: Request, identifier: str):
    """A model's scores, failures (with logs for its owner), layer selection and provenance."""
    site = site_of(request)
    user = site.current_user(request)

    def page(reader):
        view = views.model_json(site, identifier, reader)
        return site.render(request, "model.html", **view, owner_name=catalogue.display_name(site, view["owner"]),
                           timeline=catalogue.model_timeline(site, reader, identifier))

    if user is None:  # every anonymous visitor sees the same page: rendered once per change of the results
        return site.shared(request, lambda version: page(None).body, "text/html",
                           name=(page_key(request), catalogue.names_token(site)))
    return page(user)


@router.get("/plots/models/{model}/timeline.svg")
def timeline_plot(request: Request, model: str, what: str = "rank"):
    """SVG: a model's rank (``what=rank``) or average vision score (``what=score``) over time."""
    site = site_of(request)
    user = site.current_user(request)
    if not site.visible(model, user):
        raise HTTPException(404, f"no model {model!r}")
    points = [(t["day"], t["rank"] if what == "rank" else t["score"])
              for t in catalogue.model_timeline(site, user, model)]
    return Response(plots.timeline(model, "rank" if what == "rank" else "average vision", points,
                                   invert=what == "rank"), media_type="image/svg+xml")


def _stimuli_root():
    from brainscore.web.site import home

    return home() / "web-stimuli"


@router.get("/benchmarks/{identifier}", response_class=HTMLResponse)
def benchmark_page(request: Request, identifier: str, page: int = 1):
    """A benchmark's description, sample stimuli, ranking of the visible models (:data:`PAGE_SIZE` rows per
    ``page``, as the leaderboard; a rank stays the model's rank on the whole benchmark) and their distribution;
    how it is scored; its provenance (folded)."""
    site = site_of(request)
    user = site.current_user(request)
    views.known_benchmark(identifier)  # 404 before anything is prepared for an unknown one
    root = _stimuli_root()
    shown = stimuli.ready(root, identifier)
    if not shown:
        stimuli.request(root, identifier)

    def render(view):
        # one page of the ranking (issue 36: all 705 models in one table); past the end: the last page
        pages = max(1, math.ceil(len(view["ranking"]) / PAGE_SIZE))
        number = min(max(1, page), pages)
        offset = (number - 1) * PAGE_SIZE
        return site.render(request, "benchmark.html", **view, stimuli=shown,
                           stimuli_problem=stimuli.problem(root, identifier), page=number, pages=pages,
                           offset=offset, ranking_page=view["ranking"][offset:offset + PAGE_SIZE])

    if user is None:
        return site.shared(request, lambda version: render(views.benchmark_json(site, identifier, None)).body,
                           "text/html", depends=lambda version: (site.benchmark_token(identifier, version), tuple(shown)))
    return render(views.benchmark_json(site, identifier, user))


@router.get("/benchmarks/{identifier}/stimuli/{number}.jpg")
def benchmark_stimulus(identifier: str, number: int):
    """One of a benchmark's sample stimuli (a JPEG thumbnail, :mod:`brainscore.web.stimuli`)."""
    if number not in stimuli.ready(_stimuli_root(), identifier):
        raise HTTPException(404, f"no sample stimulus {number} of {identifier!r}")
    path = stimuli.folder(_stimuli_root(), identifier) / f"{number}.jpg"
    return Response(path.read_bytes(), media_type="image/jpeg", headers={"Cache-Control": "public, max-age=3600"})


@router.get("/plots/benchmarks/{identifier}.svg")
def benchmark_plot(request: Request, identifier: str, highlight: str | None = None):
    """SVG: the distribution of the visible models' scores on a benchmark (``highlight`` one in red)."""
    site = site_of(request)
    views.known_benchmark(identifier)  # 404, not an empty plot, for an unknown benchmark
    hidden = site.hidden_from(site.current_user(request))
    scores = {m: value for m, r in views.latest_scores(site, identifier).items()
              if (value := shown_value(identifier, r.score, r.raw)) is not None and m not in hidden}
    return Response(plots.distribution(identifier, scores, highlight), media_type="image/svg+xml")


@router.get("/plots/models/{model}/layers/{region}.svg")
def layer_plot(request: Request, model: str, region: str):
    """SVG: a model's selection score against layer for ``region``, the committed layer marked."""
    site = site_of(request)
    # a private model of someone else answers as a model without a curve does: nothing to learn by asking
    curve = views.selection_curves(site, model).get(region) if site.visible(model, site.current_user(request)) else None
    if curve is None:
        raise HTTPException(404, f"no stored layer selection of {model} for {region}")
    return Response(plots.layer_curve(model, f"{region} selection data", list(curve["scores"].items()),
                                      curve["layer"]), media_type="image/svg+xml")


@router.get("/scores/{score_id}", response_class=HTMLResponse)
def score_page(request: Request, score_id: int):
    """One recorded score: its numbers, layer and settings, what it was computed from, and the one command
    that re-runs it and checks the bits (``brainscore reproduce ID``)."""
    site = site_of(request)
    server = str(request.base_url).rstrip("/")
    return site.render(request, "score.html", **views.score_json(site, score_id, site.current_user(request), server))
