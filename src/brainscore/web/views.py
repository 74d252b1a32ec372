"""The data behind the website's pages and its JSON: the leaderboard's columns, a model's scores and
layer selection, a benchmark's facts and ranking. Pages (:mod:`brainscore.web.routes.pages`) render these
dictionaries; the API (:mod:`brainscore.web.routes.api`) returns them as they are.
"""
from __future__ import annotations

import glob
import json
import math
from pathlib import Path

from fastapi import HTTPException

import brainscore.plugins.models as builtin_model_plugins
from brainscore import registry
from brainscore.leaderboard import tree
from brainscore.web import cards, new_benchmarks
from brainscore.web.redact import redact
from brainscore.web.benchmark_facts import FORMULAS, benchmark_info, summary  # noqa: F401  (kept importable from here)
from brainscore.web.values import no_ceiling, shown_value
from brainscore.web.filters import (  # noqa: F401  (the explore state's functions, kept importable from here)
    _explore, _number, _records_tree, effective_weights, explore_params, explore_query, filter_choices,
    model_catalogue, parameter_count_of)
from brainscore.web.site import Site


def columns() -> list[dict]:
    """The leaderboard's columns in tree order (a node's inner children in the tree's declared order, then its
    benchmarks by name): each node or benchmark with its depth and ancestors."""
    parents = {**tree.inner_nodes(), **tree.benchmark_parents()}
    kids: dict[str, list[str]] = {}
    for child, parent in parents.items():
        kids.setdefault(parent, []).append(child)
    leaves = set(tree.benchmark_parents())
    # inner nodes in the order the tree declares them (the reference's: neural before behavior, V1 V2 V4 IT),
    # benchmarks by name after them
    declared = {node: k for k, node in enumerate(tree.inner_nodes())}
    out: list[dict] = []

    def has_leaves(node):
        return node in leaves or any(has_leaves(c) for c in kids.get(node, []))

    def visit(node, depth, ancestors):
        if not has_leaves(node):
            return
        out.append({"node": node, "depth": depth, "ancestors": ancestors, "leaf": node in leaves,
                    "children": [c for c in kids.get(node, []) if has_leaves(c)]})
        for child in sorted(kids.get(node, []), key=lambda c: (c in leaves, declared.get(c, 0), c)):
            visit(child, depth + 1, ancestors + [node])

    for root in tree.ROOTS:
        visit(root, 0, [])
    return out


def model_json(site: Site, identifier: str, user) -> dict:
    """Everything the model page shows, as ``GET /api/models/{identifier}`` returns it.

    Raises
    ------
    HTTPException
        404 if the model is unknown or private to another user.
    """
    if not site.visible(identifier, user):
        raise HTTPException(404, f"no model {identifier!r}")
    records = site.results.scores_of(model=identifier, include_failed=True)
    owner = site.owner_of(identifier)
    is_owner = user is not None and owner == user.username
    if not records and identifier not in registry.models.list() and owner is None:
        raise HTTPException(404, f"no model {identifier!r}")
    task = site.latest_task_of(identifier)
    submission = None
    if task is not None and is_owner:
        submission = {"id": task.key, "status": task.status, "results": task.results}
    aggregates = site.results.aggregates_of(identifier)
    model = site.model_row(identifier)
    rows = _latest_rows(records, is_owner)
    roots = (f"{task.folder}/site", task.folder) if task is not None and task.folder else ()
    for row in rows:
        row["log"], row["failure"] = redact(row["log"], roots), redact(row["failure"], roots)
        row["score"] = shown_value(row["benchmark"], row["score"], row["raw"])
        if no_ceiling(row["benchmark"]):
            row["ceiling"] = None
        # a benchmark that serves a region's layer selection: scored, but in no average (the page marks it)
        row["selection_for"] = (registry.benchmarks.metadata(row["benchmark"]).get("selection_for")
                                if row["benchmark"] in registry.benchmarks.list() else None)
    return {"model": identifier, "owner": owner, "is_owner": is_owner,
            "public": getattr(model, "public", True) if model else True,
            "card": cards.model_card(identifier, task, owner, rows, parameter_count_of(
                model, next((r["provenance"] for r in reversed(rows) if isinstance(r.get("provenance"), dict)), None))),
            "scores": rows, "history": score_history(records), "submission": submission, "aggregates": aggregates,
            "layer_selection": selection_curves(site, identifier, task), "commitments": commitment_table(site, identifier),
            "ranks": node_ranks(site, identifier, user)}


def node_ranks(site: Site, identifier: str, user) -> list[dict]:
    """The model's rank at every node of the leaderboard tree where it has a value, in the board's column order:
    ``{"node", "score", "rank", "of"}``; ``rank`` is 1 + the number of models ``user`` may see with a higher
    value there (ties share a rank), ``of`` the number of them with a value there. Empty when the model is not
    on the board (no done score)."""
    records = site.board(user)
    mine = next((r for r in records if r["model"] == identifier), None)
    if mine is None:
        return []
    out = []
    for column in columns():
        node = column["node"]
        value = mine["scores"].get(node)
        if value is None:
            continue
        values = [r["scores"].get(node) for r in records]
        values = [v for v in values if v is not None]
        out.append({"node": node, "leaf": column["leaf"], "score": value,
                    "rank": 1 + sum(v > value for v in values), "of": len(values)})
    return out


def commitment_table(site: Site, model: str) -> dict[str, dict]:
    """Region -> {"layer", "method", "how", "benchmarks"}: how the model's layer for each region was chosen.

    From the recorded scores' provenance (``model.commitment``, :func:`brainscore.scoring.job.commitment_of`),
    the newest per region; ``benchmarks`` are the scored benchmarks that used it.
    """
    from brainscore.models.layer_rule import describe

    table: dict[str, dict] = {}
    for record in site.results.scores_of(model=model):  # oldest first: the newest wins
        provenance = record.provenance if isinstance(record.provenance, dict) else {}
        commitment = (provenance.get("model") or {}).get("commitment")
        if record.status != "done" or not isinstance(commitment, dict) or not commitment.get("region"):
            continue
        region = str(commitment["region"])
        used = table.get(region, {}).get("benchmarks", [])
        table[region] = {"layer": commitment.get("layer"), "method": commitment.get("method"),
                         "how": describe(commitment), "benchmarks": sorted(set(used) | {record.benchmark})}
    order = {region: i for i, region in enumerate(("V1", "V2", "V4", "IT"))}
    return dict(sorted(table.items(), key=lambda item: (order.get(item[0], len(order)), item[0])))


def score_history(records) -> dict[str, list[dict]]:
    """Benchmark -> every successful score of the model on it, oldest first (``version``, ``score``, ``error``,
    ``end``), for the benchmarks scored more than once (across benchmark versions or re-runs)."""
    history: dict[str, list[dict]] = {}
    for r in records:  # oldest first
        if r.status == "done":
            history.setdefault(r.benchmark, []).append(
                {"version": r.benchmark_version, "score": r.score, "error": r.error,
                 "end": r.end.isoformat() if getattr(r, "end", None) else None})
    return {benchmark: runs for benchmark, runs in sorted(history.items()) if len(runs) > 1}


def _latest_rows(records, is_owner: bool) -> list[dict]:
    """Per benchmark its latest score, or its latest failure when no later run succeeded."""
    done = {r.benchmark: r for r in records if r.status == "done"}  # oldest first: the latest wins
    failed = {r.benchmark: r for r in records if r.status == "failed"}
    rows = []
    for r in sorted(records, key=lambda r: r.benchmark):
        if r.status == "failed" and (failed[r.benchmark] is not r
                                     or (r.benchmark in done and _later(done[r.benchmark], r))):
            continue  # an older failure, or one a later run fixed
        if r.status == "done" and done.get(r.benchmark) is not r:
            continue
        rows.append({"id": r.id, "benchmark": r.benchmark, "status": r.status, "score": r.score, "raw": r.raw,
                     "ceiling": r.ceiling, "error": r.error, "ci95": list(r.ci95) if r.ci95 else None,
                     "layers": r.layers, "provenance": r.provenance, "failure": r.failure,
                     "benchmark_version": r.benchmark_version,
                     "log": r.log if (r.status == "failed" and is_owner) else None,
                     "end": r.end.isoformat() if getattr(r, "end", None) else None})
    return rows


def latest_scores(site: Site, benchmark: str) -> dict:
    """Model -> its latest successful score record on ``benchmark`` (computed once per change of the results)."""
    return site.results.get(("latest scores", benchmark),  # oldest first: the latest of each model wins
                            lambda: {r.model: r for r in site.results.scores_of(benchmark=benchmark)})


def benchmark_json(site: Site, identifier: str, user) -> dict:
    """Everything the benchmark page shows, as ``GET /api/benchmarks/{identifier}`` returns it.

    Raises
    ------
    HTTPException
        404 if no such benchmark is registered.
    """
    known_benchmark(identifier)
    info = benchmark_info(identifier)
    latest = latest_scores(site, identifier)
    hidden = site.hidden_from(user)
    records = [r for r in latest.values() if r.model not in hidden]
    raw_shown = shown_value(identifier, 0.0, 1.0) == 1.0  # an engineering benchmark: the raw value is its score
    ranking = sorted(({"model": r.model, "score": r.raw if raw_shown and r.raw is not None else r.score, "raw": r.raw,
                       "error": r.error, "ci95": list(r.ci95) if r.ci95 else None} for r in records),
                     key=lambda x: -(x["score"] if x["score"] is not None else -math.inf))
    without = no_ceiling(identifier, info)
    ceilings = [r.ceiling for r in records if r.ceiling is not None and not without]
    prov = next((r.provenance for r in records if r.provenance), {}) or {}
    ceiling_error = (prov.get("ceiling") or {}).get("error") if isinstance(prov, dict) else None
    versions = sorted({r.benchmark_version for r in records if r.benchmark_version is not None})
    if versions and info.get("version") is None:
        info["version"] = versions[-1]
    example = next((r["model"] for r in ranking), "pixels")
    usage = (f"from brainscore import score\n\nresult = score({json.dumps(example)}, {json.dumps(identifier)})\n"
             f"print(float(result), result.attrs[\"raw\"], result.attrs[\"ceiling\"], result.attrs[\"ci95\"])\n\n"
             f"# or on the command line:\n# brainscore score --model {example} --benchmark {identifier}")
    return {"benchmark": identifier, **info, "usage": usage,
            "ancestors": tree.path_to_root(info["parent"]) if info.get("parent") else [],
            "ceiling": ceilings[-1] if ceilings else None, "ceiling_error": ceiling_error,
            "data_files": (prov.get("benchmark") or {}).get("data_files") or {},
            "metric": prov.get("metric"), "ceiling_method": (prov.get("ceiling") or {}).get("method"),
            "formula": prov.get("formula"), "formula_text": FORMULAS.get(prov.get("formula")),
            "ranking": ranking, "rescoring": new_benchmarks.progress(site, identifier, hidden), "no_ceiling": without}


def known_benchmark(identifier: str) -> None:
    """Raises HTTPException 404 unless ``identifier`` is a registered benchmark."""
    if identifier not in tree.benchmark_parents(include_selection=True) and identifier not in registry.benchmarks.list():
        raise HTTPException(404, f"no benchmark {identifier!r}; every benchmark is listed at /benchmarks")


_NOT_READ = object()


def selection_curves(site: Site, model: str, task=_NOT_READ) -> dict[str, dict]:
    """Region -> {"layer", "scores", "source"}: every candidate layer's selection score and the committed layer.

    From the newest recorded score whose provenance holds the region's layer selection (any model whose
    layer was chosen automatically, :func:`brainscore.scoring.job.layer_selection_of`); else from the
    ``<model>.<region>-selection.json`` files a plugin ships with its ``region_layer_map``. ``task``: the
    model's newest submission task when already read (None: it has none).
    """
    curves = {}
    for record in site.results.scores_of(model=model):  # oldest first: the newest wins
        provenance = record.provenance if isinstance(record.provenance, dict) else {}
        for region, curve in (provenance.get("layer_selection") or {}).items():
            try:
                curves[region] = {"layer": curve.get("layer"),
                                  "source": f"recorded with its score on {record.benchmark}",
                                  "scores": {str(layer): float(value) for layer, value in curve["scores"]}}
            except (ValueError, KeyError, TypeError, AttributeError):
                continue  # not a selection record: no curve rather than a wrong one
    folders = [Path(p) for p in builtin_model_plugins.__path__]
    task = site.latest_task_of(model) if task is _NOT_READ else task
    if task is not None and task.folder:
        folders.append(Path(task.folder) / "site")
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


def _later(a, b) -> bool:
    """Whether record ``a`` ended after record ``b`` (unknown times: ``a`` wins)."""
    ta, tb = getattr(a, "end", None), getattr(b, "end", None)
    return ta is None or tb is None or ta >= tb


def label(node: str, leaf: bool) -> str:
    """A column's header as it reads: inner nodes in words (``average_vision`` -> ``average vision``), benchmark
    identifiers whole, breakable after ``.``, ``_`` and ``-`` (the template marks the breaks)."""
    return node if leaf else node.replace("_", " ")


def leaderboard_view(site: Site, user, sort: str = "average_vision", q: str = "", desc: int = 1,
                     fold: str | None = None, norule: int = 0, at: str | None = None,
                     explore: dict | None = None) -> dict:
    """The leaderboard as one visitor sees it, in the state its URL gives.

    Parameters
    ----------
    sort : str
        A column (node or benchmark) to sort by; an unknown one sorts by ``average_vision``.
    q : str
        Only models whose identifier contains it (case-insensitive).
    desc : int
        1: highest first; 0: lowest first. Models without the column's score come last either way.
    fold : str, optional
        Comma-separated inner nodes whose children are folded away; None: the subtrees without any score.
    norule : int
        1: leave out the models that answered any benchmark with a layer committed by the relative-depth rule.
    at : str, optional
        ``YYYY-MM-DD``: the leaderboard as it was at the end of that day (:meth:`Site.board`).
    explore : dict, optional
        Filters by metadata, by region or benchmark, and weights, as :func:`explore_params` reads them from the
        URL (see :func:`explore` for what each does).

    Returns
    -------
    dict
        ``records`` (sorted, each with its ``rank``), ``columns`` (each with ``label`` and ``hidden``: under a
        folded node), ``sort``, ``q``, ``desc``, ``folded`` (set of folded nodes), ``explore`` (the filters and
        weights applied), ``choices`` (the values each metadata filter offers) and ``query`` (the state as a
        query string, for links and exports).

    Raises
    ------
    HTTPException
        400 for a weight or a region/benchmark that is not a column, or a weight or bound that is not a number.
    """
    from urllib.parse import urlencode

    explore_state = explore or {}
    records = site.board(user, at)
    records, kept, catalogue = _explore(site, records, explore_state)
    cols = [c for c in columns() if kept is None or c["node"] in kept]
    if sort not in {c["node"] for c in cols}:
        sort = "average_vision"
    records.sort(key=lambda r: (r["scores"].get(sort) is None,
                                -(r["scores"].get(sort) or 0) if desc else (r["scores"].get(sort) or 0),
                                r["model"]))
    # a rank, not a position: ties share one (1, 2, 2, 4), and it is the rank on the board before the name and
    # rule filters (a search for one model shows where it stands, not "1"); the explore panel's filters and
    # weights make their own board (the page says so)
    ranks, previous = [], object()
    for position, r in enumerate(records, start=1):
        value = r["scores"].get(sort)
        ranks.append(ranks[-1] if value == previous else position)
        previous = value
    records = [{**r, "rank": rank} for r, rank in zip(records, ranks)]
    if q:
        records = [r for r in records if q.lower() in r["model"].lower()]
    if norule:  # only models all of whose layers were declared or selected on data
        records = [r for r in records if not any((r.get("rule") or {}).values())]
    inner = {c["node"] for c in cols if not c["leaf"]}
    if fold is None:  # subtrees without any score start folded (a click unfolds them)
        folded = {node for node in inner if all(r["scores"].get(node) is None for r in records)}
    else:
        folded = {node for node in fold.split(",") if node in inner}
    weights = explore_state.get("weights") or {}
    for c in cols:
        c["label"] = label(c["node"], c["leaf"])
        c["weight"] = weights.get(c["node"])  # None: the default 1
        c["hidden_by"] = sum(a in folded for a in c["ancestors"])  # folded ancestors (the page's script counts them)
        c["hidden"] = c["hidden_by"] > 0
    state = {"sort": sort, "desc": int(bool(desc))}
    if q:
        state["q"] = q
    if fold is not None:
        state["fold"] = ",".join(sorted(folded))
    if norule:
        state["norule"] = 1
    if at:
        state["at"] = at
    state.update(explore_query(explore_state))
    return {"records": records, "columns": cols, "sort": sort, "q": q, "desc": int(bool(desc)), "folded": folded,
            "norule": int(bool(norule)), "at": at or "", "query": urlencode(state, doseq=True),
            "explore": explore_state, "choices": filter_choices(catalogue), "filters": cards.FILTERS,
            "explore_q": urlencode(explore_query(explore_state)), "explore_active": len(explore_query(explore_state)),
            **explore_choices(explore_state)}


def explore_choices(state: dict) -> dict:
    """What the leaderboard's explore panel offers: ``region_nodes`` (the inner nodes under the roots, to count
    alone or weigh), ``benchmark_nodes`` (every leaderboard benchmark) and ``weights`` (node -> its weight in
    the view: 1 unless ``state`` says otherwise)."""
    from brainscore.web.benchmark_facts import FACETS, facets

    everything = columns()
    regions = [c["node"] for c in everything if not c["leaf"] and 1 <= c["depth"] <= 2]
    leaves = [c["node"] for c in everything if c["leaf"]]
    known = [facets(b) for b in leaves]
    return {"region_nodes": regions, "benchmark_nodes": leaves,
            "weights": {**{node: 1.0 for node in regions}, **(state.get("weights") or {})},
            "bench_facets": FACETS, "all_nodes": [c["node"] for c in everything],
            "bench_choices": {key: sorted({str(k[key]) for k in known if k[key]}, key=str.lower) for key, _ in FACETS},
            "score_range": next(iter((state.get("ranges") or {}).items()), (None, (None, None)))}


def leaderboard_rows(view: dict) -> tuple[list[str], list[dict]]:
    """``(header, rows)`` of a :func:`leaderboard_view` for export: the columns shown (not folded away), each row
    ``{"rank", "model", <column>: score or None, "failed": {benchmark shown: reason of its failed latest run},
    "complete": [done benchmarks, benchmarks]}`` (``header`` names the columns written to CSV: rank, model and
    the scores)."""
    shown = [c["node"] for c in view["columns"] if not c["hidden"]]
    rows = [{"rank": r["rank"], "model": r["model"], **{node: r["scores"].get(node) for node in shown},
             "failed": {node: reason for node, reason in (r.get("failed") or {}).items() if node in shown},
             "complete": r.get("complete")}
            for r in view["records"]]
    return ["rank", "model", *shown], rows


def compare(site: Site, models: list[str], user) -> dict:
    """Two or more models side by side: every leaderboard column's score of each, and per benchmark the
    difference to the first model with its 95% interval.

    The interval of a difference is ``±1.96 sqrt(e_a² + e_b²)`` from the two scores' bootstrap standard errors
    (independent resamples; None when either has no error). Aggregates get no interval (their errors are not
    recorded).

    Raises
    ------
    HTTPException
        400 with fewer than two models; 404 for one that is unknown or private to another user.
    """
    if len(models) < 2:
        raise HTTPException(400, "compare two or more models: /compare?models=A,B")
    board = {r["model"]: r for r in site.board(user)}
    missing = [m for m in models if m not in board]
    if missing:
        raise HTTPException(404, f"no scores of {', '.join(repr(m) for m in missing)}; see the leaderboard for the "
                                 f"models with scores")
    errors = {m: {r["benchmark"]: r for r in model_json(site, m, user)["scores"] if r["status"] == "done"}
              for m in models}
    rows = []
    for c in columns():
        node = c["node"]
        values = [board[m]["scores"].get(node) for m in models]
        row = {"node": node, "label": label(node, c["leaf"]), "leaf": c["leaf"], "depth": c["depth"],
               "scores": values, "ci95": [], "differences": []}
        for m in models:
            found = errors[m].get(node) if c["leaf"] else None
            row["ci95"].append(found["ci95"] if found else None)
        base, base_error = values[0], (errors[models[0]].get(node) or {}).get("error") if c["leaf"] else None
        for m, value in zip(models[1:], values[1:]):
            error = (errors[m].get(node) or {}).get("error") if c["leaf"] else None
            if base is None or value is None:
                row["differences"].append(None)
                continue
            difference = value - base
            half = 1.96 * math.sqrt(base_error ** 2 + error ** 2) if None not in (base_error, error) else None
            row["differences"].append({"value": difference,
                                       "ci95": [difference - half, difference + half] if half is not None else None})
        rows.append(row)
    return {"models": models, "rows": rows}


def score_json(site: Site, score_id: int, user, server: str | None = None) -> dict:
    """Everything a score's page shows: the record's numbers, layer, settings, provenance summary, and the
    command that re-runs it (``brainscore reproduce ID --server URL``, :mod:`brainscore.runner.reproduce`;
    ``server``: this website's address, None leaves ``--server`` out).

    Raises
    ------
    HTTPException
        404 if no score is recorded as ``score_id`` or its model is private to another user.
    """
    from brainscore.models.layer_rule import describe
    from brainscore.models.weights import weights_note, weights_status

    stored = site.store.score_by_id(score_id) if 0 < score_id < 2**63 else None  # (a row number fits 64 bits)
    if stored is None or not site.visible(stored.model, user):
        raise HTTPException(404, f"no score #{score_id}")
    provenance = stored.provenance if isinstance(stored.provenance, dict) else {}
    model = provenance.get("model") or {}
    commitment = model.get("commitment") if isinstance(model.get("commitment"), dict) else {}
    bootstrap = provenance.get("bootstrap") or {}
    data_files = (provenance.get("benchmark") or {}).get("data_files") or {}
    return {"id": stored.id, "model": stored.model, "benchmark": stored.benchmark,
            "benchmark_version": stored.benchmark_version, "status": stored.status,
            # the value every other page shows (raw for top-1 benchmarks), and no ceiling where there is none
            "score": shown_value(stored.benchmark, stored.score, stored.raw),
            "raw": stored.raw, "ceiling": None if no_ceiling(stored.benchmark) else stored.ceiling, "error": stored.error,
            "ci95": list(stored.ci95) if stored.ci95 else None, "failure": stored.failure,
            "layer": commitment.get("layer"), "region": commitment.get("region"), "method": commitment.get("method"),
            "how": describe(commitment) if commitment else None, "formula": provenance.get("formula"),
            "bootstrap": bootstrap or None, "device": (provenance.get("environment") or {}).get("device"),
            "code": provenance.get("code") or {}, "environment": provenance.get("environment") or {},
            "data_files": dict(sorted(data_files.items())), "weights_sha256": model.get("weights_sha256"),
            "weights_status": weights_status(provenance), "weights_note": weights_note(provenance),
            "weights_files": ((provenance.get("weights") or {}).get("files") or {}),
            "provenance_key": stored.provenance_key, "provenance": provenance, "layers": stored.layers,
            "end": stored.end.isoformat() if stored.end else None,
            "reproducible": bool(model) and "resamples" in bootstrap,
            "command": f"brainscore reproduce {stored.id}" + (f" --server {server}" if server else "")}
