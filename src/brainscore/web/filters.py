"""The leaderboard's explore state (issue 25, 29): filters by model metadata, parameter count and score ranges,
the regions and benchmarks that count, and the weights of the average, read from the URL; the model catalogue the
metadata filters read. :mod:`brainscore.web.views` builds the leaderboard view from them.
"""
from __future__ import annotations

import datetime as dt
import math

from fastapi import HTTPException
from sqlalchemy import select
from sqlalchemy.orm import Session

from brainscore.web import cards
from brainscore.web.site import Site


def explore_params(params) -> dict:
    """The leaderboard's explore state from a URL's query parameters (a Starlette ``QueryParams`` or a list of
    pairs), in the form :func:`leaderboard_view` takes.

    - ``m.<field>=value`` (repeatable): only models whose metadata field (:data:`brainscore.web.cards.FILTERS`,
      or any other ``metadata.yml`` key) equals one of the values (case-insensitive); empty values are ignored;
    - ``params_min`` / ``params_max``: parameter count bounds in millions (models whose count is not known are
      left out when either is given);
    - ``only=node[,node...]`` (repeatable): only these regions, families or benchmarks count and are shown
      (everything else weighs 0 and its columns are left out);
    - ``w.<node>=weight``: the node's weight in its parent's mean (default 1, the reference's equal weights);
    - ``b.<facet>=value`` (repeatable; facets: region, species, task, data_type, year, as
      :func:`brainscore.web.benchmark_facts.facets` gives them): only the benchmarks with that metadata count and are
      shown (as ``only`` naming them);
    - ``min.<node>`` / ``max.<node>``: only models whose score on the column lies in the range (a missing score is
      out of every range); the form's ``range_node``, ``range_min`` and ``range_max`` give one such range.

    Raises
    ------
    HTTPException
        400 for a bound or a weight that is not a number (saying which).
    """
    pairs = params.multi_items() if hasattr(params, "multi_items") else list(params)
    meta: dict[str, list[str]] = {}
    weights: dict[str, float] = {}
    only: list[str] = []
    bounds: dict[str, float] = {}
    benchmeta: dict[str, list[str]] = {}
    ranges: dict[str, list] = {}
    since = None
    form_range = {key: (value or "").strip() for key, value in pairs if key in ("range_node", "range_min", "range_max")}
    for key, value in pairs:
        value = (value or "").strip()
        if not value:
            continue
        if key == "since":
            try:
                since = dt.date.fromisoformat(value).isoformat()
            except ValueError:
                raise HTTPException(400, f"since={value!r} is not a date; give YYYY-MM-DD") from None
        elif key.startswith("b.") and len(key) > 2:
            benchmeta.setdefault(key[2:], []).append(value)
        elif key.startswith(("min.", "max.")) and len(key) > 4:
            ranges.setdefault(key[4:], [None, None])[key.startswith("max.")] = _number(key, value)
        elif key.startswith("m.") and len(key) > 2:
            meta.setdefault(key[2:], []).append(value)
        elif key.startswith("w.") and len(key) > 2:
            weight = _number(key, value)
            if weight != 1.0:  # 1 is every node's default (the reference's equal weights)
                weights[key[2:]] = weight
        elif key == "only":
            only += [node.strip() for node in value.split(",") if node.strip()]
        elif key in ("params_min", "params_max"):
            bounds[key] = _number(key, value)
    if form_range.get("range_node") and (form_range.get("range_min") or form_range.get("range_max")):
        node = form_range["range_node"]
        ranges[node] = [_number("range_min", form_range["range_min"]) if form_range.get("range_min") else None,
                        _number("range_max", form_range["range_max"]) if form_range.get("range_max") else None]
    return {k: v for k, v in (("meta", meta), ("weights", weights), ("only", only),
                               ("params_min", bounds.get("params_min")), ("params_max", bounds.get("params_max")),
                               ("benchmeta", benchmeta), ("ranges", ranges), ("since", since))
            if v not in (None, {}, [])}


def _number(key: str, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise HTTPException(400, f"{key}={value!r} is not a number") from None
    if not math.isfinite(number) or number < 0:
        raise HTTPException(400, f"{key}={value!r} must be a finite number >= 0")
    return number


def explore_query(state: dict) -> list[tuple[str, str]]:
    """``state`` (:func:`explore_params`) as query pairs again, in a stable order (for links and exports)."""
    pairs = [(f"m.{field}", value) for field, values in sorted((state.get("meta") or {}).items()) for value in values]
    for key in ("params_min", "params_max"):
        if state.get(key) is not None:
            pairs.append((key, f"{state[key]:g}"))
    if state.get("only"):
        pairs.append(("only", ",".join(state["only"])))
    pairs += [(f"w.{node}", f"{weight:g}") for node, weight in sorted((state.get("weights") or {}).items())]
    pairs += [(f"b.{facet}", value) for facet, values in sorted((state.get("benchmeta") or {}).items())
              for value in values]
    if state.get("since"):
        pairs.append(("since", state["since"]))
    for node, (low, high) in sorted((state.get("ranges") or {}).items()):
        pairs += [(f"{side}.{node}", f"{bound:g}") for side, bound in (("min", low), ("max", high)) if bound is not None]
    return pairs


def benchmarks_with(benchmeta: dict[str, list[str]]) -> list[str]:
    """The leaderboard benchmarks whose metadata (:func:`brainscore.web.benchmark_facts.facets`) matches every facet of
    ``benchmeta`` (facet -> values, any of them, case-insensitive).

    Raises
    ------
    HTTPException
        400 for an unknown facet, or when no benchmark matches (saying what the facets offer).
    """
    from brainscore.leaderboard import tree
    from brainscore.web.benchmark_facts import FACETS, facets

    unknown = sorted(set(benchmeta) - {key for key, _ in FACETS})
    if unknown:
        raise HTTPException(400, f"not a benchmark facet: {', '.join(unknown)}; the facets are "
                                 f"{', '.join(key for key, _ in FACETS)}")
    found = []
    for benchmark in sorted(tree.benchmark_parents()):
        known = facets(benchmark)
        if all(str(known.get(facet) or "").lower() in {v.lower() for v in values} for facet, values in benchmeta.items()):
            found.append(benchmark)
    if not found:
        raise HTTPException(400, f"no leaderboard benchmark has {benchmeta}; see /benchmarks for their metadata")
    return found


def _records_tree(records: list[dict]):
    """The registered tree, its leaves restricted to the benchmarks the records carry (a past day's board)."""
    from brainscore.leaderboard.aggregate import build_tree, registered_tree

    full = registered_tree(None)
    if not records:
        return full
    present = records[0]["scores"].keys()
    return build_tree({leaf: full.parents[leaf] for leaf in full.leaves if leaf in present})


def effective_weights(board_tree, state: dict) -> tuple[dict[str, float], set[str] | None]:
    """The weights to aggregate with and the columns kept: ``w.<node>`` weights, and weight 0 for every node
    neither at, below nor above an ``only`` node (those columns are not kept; None: all are kept).

    Raises
    ------
    HTTPException
        400 for an ``only`` or weight node that is not a column.
    """
    nodes = set(board_tree.parents)
    unknown = [n for n in list(state.get("only") or []) + list(state.get("weights") or {}) if n not in nodes]
    if unknown:
        raise HTTPException(400, f"not a column of the leaderboard: {', '.join(repr(n) for n in unknown)}; its regions "
                                 f"and benchmarks are GET /api/benchmarks and the columns of /leaderboard.json")
    weights = dict(state.get("weights") or {})
    if not state.get("only"):
        return weights, None

    def path(node):
        out = [node]
        while board_tree.parents.get(out[-1]) is not None:
            out.append(board_tree.parents[out[-1]])
        return out

    chosen = set(state["only"])
    kept = set()
    for node in nodes:
        up = path(node)
        if chosen & set(up):
            kept.update(up)  # at or below a chosen node, and its ancestors
    for node in nodes - kept:
        weights[node] = 0.0
    return weights, kept


def _explore(site: Site, records: list[dict], state: dict):
    """``records`` filtered by metadata and re-aggregated under the state's weights; the columns kept (None:
    all); the model catalogue (None when no metadata filter was asked for and no page needs it)."""
    from brainscore.leaderboard.aggregate import reweight

    kept = None
    if state.get("benchmeta"):
        state = {**state, "only": list(state.get("only") or []) + benchmarks_with(state["benchmeta"])}
    if state.get("weights") or state.get("only"):
        board_tree = _records_tree(records)
        weights, kept = effective_weights(board_tree, state)
        try:
            records = reweight(records, board_tree, weights)
        except ValueError as error:
            raise HTTPException(400, str(error)) from None
    catalogue = model_catalogue(site)
    meta = state.get("meta") or {}
    low, high = state.get("params_min"), state.get("params_max")
    if meta or low is not None or high is not None:
        def keep(record):
            facts = catalogue.get(record["model"]) or {}
            for field, values in meta.items():
                value = facts.get(field, (facts.get("declared") or {}).get(field))
                if value is None or str(value).strip().lower() not in {v.lower() for v in values}:
                    return False
            count = facts.get("parameter_count")
            if low is not None or high is not None:
                if count is None:
                    return False
                if (low is not None and count < low * 1e6) or (high is not None and count > high * 1e6):
                    return False
            return True
        records = [r for r in records if keep(r)]
    if state.get("since"):
        first = first_scored(site)
        records = [r for r in records if (first.get(r["model"]) or "") >= state["since"]]
    for node, (low, high) in (state.get("ranges") or {}).items():
        if kept is not None and node not in kept or records and node not in records[0]["scores"]:
            raise HTTPException(400, f"min./max.{node}: not a column of the leaderboard")
        records = [r for r in records if r["scores"].get(node) is not None
                   and (low is None or r["scores"][node] >= low) and (high is None or r["scores"][node] <= high)]
    return records, kept, catalogue


def first_scored(site: Site) -> dict[str, str]:
    """Model -> the day (``YYYY-MM-DD``, UTC) its first successful score ended (its start when it has no end time,
    :func:`~brainscore.leaderboard.aggregate.record_time`; models with neither left out); computed once per
    change of the results."""
    from brainscore.leaderboard.aggregate import record_time

    def build():
        first: dict[str, str] = {}
        for record in site.results.scores():
            end = record_time(record)
            if record.status == "done" and end is not None:
                day = end.date().isoformat()
                if day < first.get(record.model, "9999"):
                    first[record.model] = day
        return first

    return site.results.get("first scored", build)


def filter_choices(catalogue: dict[str, dict] | None) -> dict[str, list[str]]:
    """Field -> the distinct values the models of ``catalogue`` have for it (sorted; what each filter offers)."""
    choices: dict[str, set] = {field: set() for field, _ in cards.FILTERS}
    for facts in (catalogue or {}).values():
        for field in choices:
            if facts.get(field):
                choices[field].add(str(facts[field]))
    return {field: sorted(values, key=str.lower) for field, values in choices.items()}


def model_catalogue(site: Site) -> dict[str, dict]:
    """Model -> :func:`brainscore.web.cards.model_facts` for every model with a record, computed once per change
    of the results, or, while only new scores arrive, at most once per :attr:`~brainscore.web.site.Site.page_max_age`
    (the leaderboard pages built from it lag as much; the plugin folders are read, never imported)."""
    def build():
        from brainscore.web.queue import SubmissionTask

        latest_task: dict[str, object] = {}
        with Session(site.engine, expire_on_commit=False) as session:
            for task in session.scalars(select(SubmissionTask).order_by(SubmissionTask.id)):
                for model in task.models or []:
                    latest_task[model] = task  # the newest wins
        stored = {m.identifier: m for m in site.store.models()}
        provenance: dict[str, dict] = {}
        for record in site.results.scores():  # oldest first: the newest wins
            if record.status == "done" and isinstance(record.provenance, dict):
                provenance[record.model] = record.provenance
        out = {}
        for model in sorted(set(stored) | set(provenance)):
            row = stored.get(model)
            out[model] = cards.model_facts(model, latest_task.get(model), getattr(row, "owner", None),
                                           provenance.get(model), parameter_count_of(row, provenance.get(model)))
        return out

    return site.results.recent("model catalogue", build, site.results.state(), site.page_max_age)


def parameter_count_of(row, provenance: dict | None) -> int | None:
    """A model's parameter count as counted in its loaded network: the models table's ``parameter_count``,
    else the newest score's ``provenance["model_facts"]["parameter_count"]``; None when never counted."""
    count = getattr(row, "parameter_count", None)
    if count:
        return int(count)
    counted = ((provenance or {}).get("model_facts") or {}).get("parameter_count")
    return int(counted) if isinstance(counted, (int, float)) and counted >= 1 else None
