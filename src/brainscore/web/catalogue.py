"""The site's index pages and cross-benchmark views: every benchmark with its metadata (region, species, task,
data type, year) and every model, each searchable and filterable; which value of a score the pages show (one
value everywhere); how the benchmarks agree over all models (a correlation matrix, a scatter of two).

Pages (:mod:`brainscore.web.routes.explore`) render these dictionaries; the API returns them as they are.
"""
from __future__ import annotations

import datetime as dt
import math

import numpy as np
from fastapi import HTTPException

from brainscore.leaderboard import tree
from brainscore.web import views
from brainscore.web.benchmark_facts import FACETS, REGIONS, facets  # noqa: F401  (re-exported)
from brainscore.web.values import engineering, no_ceiling, shown_value  # noqa: F401  (re-exported)
from brainscore.web.site import Site

# ------------------------------------------------------------------------------------------------ benchmarks
def benchmark_index(site: Site, user, q: str = "", chosen: dict[str, list[str]] | None = None) -> dict:
    """Every leaderboard benchmark with its metadata, how many visible models it scored, their median and best
    score (the value the pages show, :func:`shown_value`), its ceiling (None: not measured or none), filtered.

    Parameters
    ----------
    q : str
        Only benchmarks whose identifier or description contains it (case-insensitive).
    chosen : dict of str to list of str
        Facet (:data:`FACETS`) -> the values kept (any of them); empty: all.

    Returns
    -------
    dict
        ``rows`` (each ``{"benchmark", "description", "parent", "ceiling", "no_ceiling", "models", "median",
        "best", **facets}``, by identifier), ``total`` (before filtering), ``choices`` (facet -> its values),
        ``facets`` (:data:`FACETS`), ``q``, ``chosen``.
    """
    chosen = {k: [v for v in values if v] for k, values in (chosen or {}).items() if k in dict(FACETS)}
    hidden = site.hidden_from(user)
    rows = []
    for benchmark in sorted(tree.benchmark_parents()):
        info = views.benchmark_info(benchmark)
        latest = [r for m, r in views.latest_scores(site, benchmark).items() if m not in hidden]
        values = [v for v in (shown_value(benchmark, r.score, r.raw) for r in latest) if v is not None]
        ceilings = [r.ceiling for r in latest if r.ceiling is not None]
        without = no_ceiling(benchmark, info)
        rows.append({"benchmark": benchmark, "description": info.get("description"), "parent": info.get("parent"),
                     "no_ceiling": without, "ceiling": None if without or not ceilings else ceilings[-1],
                     "models": len(values), "median": float(np.median(values)) if values else None,
                     "best": max(values) if values else None, **facets(benchmark)})
    choices = {key: sorted({str(r[key]) for r in rows if r[key]}, key=str.lower) for key, _ in FACETS}
    total = len(rows)
    if q:
        needle = q.lower()
        rows = [r for r in rows if needle in r["benchmark"].lower() or needle in (r["description"] or "").lower()]
    for key, values in chosen.items():
        if values:
            wanted = {v.lower() for v in values}
            rows = [r for r in rows if str(r[key] or "").lower() in wanted]
    return {"rows": rows, "total": total, "choices": choices, "facets": FACETS, "q": q, "chosen": chosen}


# ------------------------------------------------------------------------------------------------ models
MODELS_PAGE = 100
"""Rows per page of the models index."""


def model_index(site: Site, user, q: str = "", mine: bool = False, explore: dict | None = None,
                page: int = 1) -> dict:
    """Every model the reader may see, best average first: rank, average, its card's facts (architecture,
    training data, submitter) and when it was submitted, filtered by name (``q``), metadata (``explore``, as the
    leaderboard's :func:`brainscore.web.views.explore_params`) and, for a logged-in reader, ``mine`` (the models
    they submitted, private ones included). :data:`MODELS_PAGE` rows a ``page``.

    Raises
    ------
    HTTPException
        401 for ``mine`` without a log-in.
    """
    if mine and user is None:
        raise HTTPException(401, "log in to see your models")
    view = views.leaderboard_view(site, user, q=q, explore=explore or {})
    catalogue = views.model_catalogue(site)
    records = view["records"]
    if mine:
        records = [r for r in records if (catalogue.get(r["model"]) or {}).get("submitter") == user.username]
    total = len(records)
    pages = max(1, math.ceil(total / MODELS_PAGE))
    page = min(max(1, page), pages)
    rows = []
    names = display_names(site)
    for r in records[(page - 1) * MODELS_PAGE:page * MODELS_PAGE]:
        facts = catalogue.get(r["model"]) or {}
        row = site.model_row(r["model"])
        rows.append({"rank": r["rank"], "model": r["model"], "average_vision": r["scores"].get("average_vision"),
                     "architecture": facts.get("architecture"), "training_dataset": facts.get("training_dataset"),
                     "submitter": display_name(site, facts.get("submitter"), names),
                     "public": getattr(row, "public", True) if row is not None else True})
    return {"rows": rows, "total": total, "page": page, "pages": pages, "q": q, "mine": bool(mine),
            "choices": view["choices"], "filters": view["filters"], "explore": view["explore"],
            "explore_q": view["explore_q"]}


def display_names(site: Site) -> dict[str, str]:
    """User name -> display name of the accounts that set one (read per call: one query; a shared page that shows
    them keys its cache on them, :func:`names_token`)."""
    from brainscore.web import accounts

    return accounts.display_names(site.engine)


def names_token(site: Site) -> tuple:
    """What the pages that show display names are built from besides the results (part of their cache key)."""
    return tuple(sorted(display_names(site).items()))


def display_name(site: Site, username: str | None, names: dict[str, str] | None = None) -> str | None:
    """The name an account shows: ``"Display Name (@username)"``, or ``"@username"`` without a display name
    (:func:`~brainscore.web.site.person`); ``built-in`` and None as they are; ``names``: :func:`display_names`
    when already read."""
    from brainscore.web.site import person

    if not username or username == "built-in":
        return username
    names = display_names(site) if names is None else names
    return person(username, names.get(username))


# ------------------------------------------------------------------------------------------------ agreement
def score_matrix(site: Site, user) -> tuple[list[str], list[str], np.ndarray]:
    """``(models, benchmarks, values)``: every visible model's leaderboard value on every leaderboard benchmark
    (models x benchmarks, NaN where it has none)."""
    records = site.board(user)
    benchmarks = sorted(tree.benchmark_parents())
    values = np.full((len(records), len(benchmarks)), np.nan)
    for i, r in enumerate(records):
        for j, b in enumerate(benchmarks):
            v = r["scores"].get(b)
            if v is not None:
                values[i, j] = v
    return [r["model"] for r in records], benchmarks, values


def agreement(site: Site, user) -> dict:
    """How the benchmarks agree over all models: Pearson's r between every two benchmarks' scores, over the models
    scored on both (None with fewer than 3 such models or a constant column).

    Returns
    -------
    dict
        ``benchmarks`` (leaderboard order of identifiers), ``r`` (benchmarks x benchmarks, list of lists of float
        or None) and ``n`` (the models behind each r).
    """
    def build():
        models, benchmarks, values = score_matrix(site, user)
        k = len(benchmarks)
        r = [[None] * k for _ in range(k)]
        n = [[0] * k for _ in range(k)]
        present = ~np.isnan(values)
        for a in range(k):
            for b in range(a, k):
                both = present[:, a] & present[:, b]
                count = int(both.sum())
                n[a][b] = n[b][a] = count
                if count < 3:
                    continue
                x, y = values[both, a], values[both, b]
                if x.std() == 0 or y.std() == 0:
                    continue
                value = float(np.corrcoef(x, y)[0, 1])
                r[a][b] = r[b][a] = value
        return {"benchmarks": benchmarks, "r": r, "n": n, "models": len(models)}

    if user is None:
        return site.results.get("agreement", build)
    return build()


def scatter_points(site: Site, user, a: str, b: str) -> list[tuple[str, float, float]]:
    """``(model, value on a, value on b)`` of every visible model scored on both benchmarks.

    Raises
    ------
    HTTPException
        404 if ``a`` or ``b`` is not a leaderboard benchmark.
    """
    known = tree.benchmark_parents()
    for name in (a, b):
        if name not in known:
            raise HTTPException(404, f"no leaderboard benchmark {name!r}; see /benchmarks")
    points = []
    for r in site.board(user):
        x, y = r["scores"].get(a), r["scores"].get(b)
        if x is not None and y is not None:
            points.append((r["model"], float(x), float(y)))
    return points


# ------------------------------------------------------------------------------------------------ over time
TIMELINE_DAYS = 12
"""The most recent days a model's timeline shows (each is one past leaderboard to aggregate)."""


def model_timeline(site: Site, user, model: str) -> list[dict]:
    """``model``'s average vision score and rank at the end of each day (UTC) one of its scores was recorded and
    today (the current leaderboard), the last :data:`TIMELINE_DAYS` of them, oldest first: ``[{"day", "score", "rank", "of"}, ...]`` (``of``: the models
    on that day's leaderboard). Each day is the leaderboard as :meth:`~brainscore.web.site.Site.board` gives it
    for ``at=day`` (the "wayback" view); computed once per results version for an anonymous reader."""
    def build():
        today = dt.datetime.now(dt.timezone.utc).date().isoformat()
        days = sorted({r.end.date().isoformat() for r in site.results.scores_of(model=model)
                       if r.status == "done" and getattr(r, "end", None)} | {today})[-TIMELINE_DAYS:]
        out = []
        for day in days:
            board = [r for r in site.board(user, None if day == today else day)
                     if r["scores"].get("average_vision") is not None]
            board.sort(key=lambda r: (-r["scores"]["average_vision"], r["model"]))
            for rank, r in enumerate(board, start=1):
                if r["model"] == model:
                    out.append({"day": day, "score": r["scores"]["average_vision"], "rank": rank, "of": len(board)})
                    break
        return out

    if user is None:
        return site.results.get(("timeline", model), build)
    return build()
