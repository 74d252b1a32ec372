"""The leaderboard: recorded scores aggregated through the tree, as Brain-Score aggregates them.

Brain-Score computes its leaderboard in SQL (brain-score.web ``benchmarks/sql/mv.sql``,
``populate_final_agg_scores``; Schrimpf et al. 2020, Neuron): a cross join of every model with every
leaf benchmark, left-joined to the scores, rolled up bottom-up with
``SUM(COALESCE(NULLIF(score, 'NaN'), 0)) / COUNT(*)``. The same rules here:

- every inner node is the **unweighted mean of its direct children** (leaves and inner nodes);
- a **missing, NaN or failed** child counts as **0**; a node **all of whose children are missing**
  is missing (None);
- leaves are the benchmarks plugins register with a ``parent``; **selection-only** benchmarks
  (declared ``selection_for``) are never leaves; a node with no leaf below it is not part of the
  tree (it has no row in the reference's cross join);
- only the **latest version** of each benchmark counts (the newer of the registered version and
  the newest version recorded): scores of older versions are ignored, so a benchmark whose latest
  version has no score is missing;
- of several scores of one model on one benchmark version, the latest **done** one counts: a later
  failure never hides a done score (issue 36: a failed resubmission blanked a model's good scores on the
  board while its own page still showed them); the failure is shown beside it (``failed``);
- leaves under ``engineering_vision`` use the **raw** score; ``engineering_vision`` is not part of
  ``average_vision``.

Beyond the reference, every node carries the number of its leaves that are missing, so a 0 that
comes from a missing benchmark is visible as such; every entry says which of its leaves' latest run
failed and why (``failed``: leaf -> one-line reason, whether or not an earlier run is done) and how
complete it is (``complete``: ``[done leaves, leaves]``).
"""
from __future__ import annotations

import datetime as dt
import fnmatch
import math
from dataclasses import dataclass
from typing import Callable, Iterable

from brainscore import registry
from brainscore.errors import BrainScoreError
from brainscore.leaderboard import tree as _tree
from brainscore.results import Database, StoredScore

__all__ = ["leaderboard", "leaderboard_records", "record_time", "failure_line", "Standings", "latest_versions", "aggregate", "reweight", "check_weights", "excluded_leaves", "Tree", "build_tree", "registered_tree", "store_tree"]

NODE_ORDER = ("neural_vision", "behavior_vision", "V1", "V2", "V4", "IT")


@dataclass(frozen=True)
class Tree:
    """The leaderboard tree: ``parents`` maps every node (leaves included) to its parent (None for a root).

    ``engineering`` is the set of nodes under ``engineering_vision`` (their leaves use raw scores).
    """

    parents: dict[str, str | None]
    leaves: frozenset[str]
    engineering: frozenset[str]

    def children(self, node: str) -> list[str]:
        """Direct children of ``node``, in display order (neural before behaviour, V1, V2, V4, IT, then
        inner nodes before benchmarks, by name)."""
        found = [n for n, p in self.parents.items() if p == node]
        return sorted(found, key=lambda n: (NODE_ORDER.index(n) if n in NODE_ORDER else len(NODE_ORDER),
                                            n in self.leaves, n))

    def roots(self) -> list[str]:
        return [r for r in _tree.ROOTS if r in self.parents]

    def order(self) -> list[str]:
        """Every node, depth first from the roots (``average_vision`` first)."""
        ordered: list[str] = []

        def visit(node: str) -> None:
            ordered.append(node)
            for child in self.children(node):
                visit(child)

        for root in self.roots():
            visit(root)
        return ordered


def build_tree(leaf_parents: dict[str, str], inner: dict[str, str] | None = None) -> Tree:
    """The tree of ``leaf_parents`` (benchmark -> parent node) over the inner nodes ``inner`` (node -> parent).

    Inner nodes without a leaf below them are left out.

    Parameters
    ----------
    leaf_parents : dict
        Benchmark identifier -> its declared parent node.
    inner : dict, optional
        Inner node -> parent (default: :func:`brainscore.leaderboard.tree.inner_nodes`).

    Raises
    ------
    ValueError
        If a benchmark names a parent that is not a node of the tree.
    """
    inner = dict(_tree.inner_nodes() if inner is None else inner)
    parents: dict[str, str | None] = {}
    for leaf, parent in leaf_parents.items():
        if parent not in inner and parent not in _tree.ROOTS:
            raise ValueError(f"benchmark {leaf!r} declares parent {parent!r}, which is not a node of the leaderboard tree")
        parents[leaf] = parent
        node = parent
        while node is not None and node not in parents:
            parents[node] = inner.get(node)
            node = parents[node]
    engineering = set()
    for node in parents:
        walk = node
        while walk is not None:
            if walk == "engineering_vision":
                engineering.add(node)
                break
            walk = parents.get(walk)
    return Tree(parents, frozenset(leaf_parents), frozenset(engineering))


def registered_tree(benchmarks: str | Iterable[str] | None = None) -> Tree:
    """The tree the registered plugins declare, its leaves restricted to benchmarks matching ``benchmarks``.

    Raises
    ------
    BrainScoreError
        If no leaderboard benchmark matches.
    """
    leaf_parents = _tree.benchmark_parents()
    if benchmarks is not None:
        patterns = [benchmarks] if isinstance(benchmarks, str) else list(benchmarks)
        leaf_parents = {b: p for b, p in leaf_parents.items() if any(fnmatch.fnmatchcase(b, pat) for pat in patterns)}
        if not leaf_parents:
            raise BrainScoreError(f"no leaderboard benchmark matches {', '.join(patterns)}; see `brainscore list "
                                  f"benchmarks` (selection-only benchmarks are not on the leaderboard)")
    return build_tree(leaf_parents)


def _registered_version(benchmark: str) -> int | None:
    try:
        return int(registry.load_benchmark(benchmark).version)
    except (BrainScoreError, AttributeError, TypeError):
        return None


def _value(record: StoredScore | None, engineering: bool) -> float | None:
    """The leaf value of ``record``: ceiled (raw for engineering); None if absent, failed or NaN."""
    if record is None or record.status != "done":
        return None
    value = record.raw if engineering and record.raw is not None else record.score
    if value is None or math.isnan(value):
        return None
    return float(value)


FAILURE_SHOWN = 200
"""Characters of a failure's first line shown beside a cell (the whole message is on the model's page)."""


def failure_line(record: StoredScore) -> str:
    """The one-line reason of a failed ``record``: the first non-empty line of its ``failure``, at most
    :data:`FAILURE_SHOWN` characters ("failed" when it has none)."""
    text = next((line.strip() for line in str(record.failure or "").splitlines() if line.strip()), "") or "failed"
    return text if len(text) <= FAILURE_SHOWN else text[:FAILURE_SHOWN - 1] + "…"


def layer_method(record: StoredScore | None) -> str | None:
    """How the layer behind ``record`` was chosen: ``declared``, ``selection``, ``rule``, or None.

    Read from the provenance's ``model.commitment`` (:func:`brainscore.scoring.job.commitment_of`); None
    for a failure, a benchmark without a region, or a record made before methods were kept.
    """
    if record is None or record.status != "done":
        return None
    commitment = ((record.provenance or {}).get("model") or {}).get("commitment") or {}
    return commitment.get("method")


def weights_flag(records) -> str | None:
    """The worst weights status of ``records`` (their provenance's ``weights``, :mod:`brainscore.models.weights`)
    where it is not verified: ``"stand-in"`` or ``"unverified"``; None when every record's weights are verified or
    unrecorded. A leaderboard row with a flag is never presented as the pretrained network's."""
    from brainscore.models.weights import weights_status

    found = {weights_status(record.provenance) for record in records if record is not None}
    return "stand-in" if "stand-in" in found else "unverified" if "unverified" in found else None


def children_map(tree: Tree) -> dict[str, list[str]]:
    """Every inner node of ``tree`` -> :meth:`Tree.children` (computed once for many records)."""
    kids: dict[str, list[str]] = {}
    for node, parent in tree.parents.items():
        if parent is not None:
            kids.setdefault(parent, []).append(node)
    return {node: sorted(found, key=lambda n: (NODE_ORDER.index(n) if n in NODE_ORDER else len(NODE_ORDER),
                                                n in tree.leaves, n)) for node, found in kids.items()}


def rule_counts(tree: Tree, leaf_rule: dict[str, bool], kids: dict[str, list[str]] | None = None) -> dict[str, int]:
    """Per node of ``tree``, the number of leaves at or below it whose layer came from the layer rule
    (``kids``: :func:`children_map` of ``tree``, when already computed)."""
    counts: dict[str, int] = {}
    kids = children_map(tree) if kids is None else kids

    def visit(node: str) -> int:
        if node in tree.leaves:
            counts[node] = int(bool(leaf_rule.get(node)))
        else:
            counts[node] = sum(visit(child) for child in kids.get(node, []))
        return counts[node]

    for root in tree.roots():
        visit(root)
    return counts


def check_weights(tree: Tree, weights: dict[str, float] | None) -> dict[str, float]:
    """``weights`` checked against ``tree``: node -> finite weight >= 0 (nodes not named weigh 1).

    Raises
    ------
    ValueError
        If a weight names a node that is not in ``tree`` (with the nodes it has), or is negative, NaN or infinite.
    """
    checked: dict[str, float] = {}
    for node, weight in (weights or {}).items():
        if node not in tree.parents:
            raise ValueError(f"weight for {node!r}, which is not a column of this leaderboard; its columns: "
                             f"{', '.join(tree.order())}")
        try:
            value = float(weight)
        except (TypeError, ValueError):
            raise ValueError(f"the weight of {node!r} must be a number >= 0, got {weight!r}") from None
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"the weight of {node!r} must be a finite number >= 0, got {weight!r}")
        checked[node] = value
    return checked


def aggregate(tree: Tree, leaf_values: dict[str, float | None], weights: dict[str, float] | None = None,
              kids: dict[str, list[str]] | None = None) -> tuple[dict[str, float | None], dict[str, int]]:
    """Values and missing-leaf counts of every node of ``tree`` from the leaves' values.

    Parameters
    ----------
    tree : Tree
    leaf_values : dict
        Leaf -> value; None, NaN or absent means missing.
    weights : dict, optional
        Node (leaf or inner) -> its weight (>= 0) in its parent's mean; nodes not named weigh 1, which is the
        reference's unweighted mean of the direct children (the default). A weight of 0 leaves the node out of
        its parent's mean (its own value is still computed), and a parent all of whose children are left out is
        itself left out of its own parent (its value is None).
    kids : dict, optional
        :func:`children_map` of ``tree``, when already computed (many records, one tree).

    Returns
    -------
    (scores, missing) : (dict, dict)
        ``scores[node]``: the leaf's value, or the weighted mean ``sum(w_c v_c) / sum(w_c)`` of the children
        left in, with missing children as 0, or None when every child left in is missing. ``missing[node]``:
        number of missing leaves at or below ``node`` that count in it.

    Raises
    ------
    ValueError
        For a weight of a node not in ``tree``, or one that is negative or not finite.

    Examples
    --------
    >>> t = build_tree({"a": "V4", "b": "V4"}, {"V4": "neural_vision", "neural_vision": "average_vision"})
    >>> aggregate(t, {"a": 0.4, "b": None})[0]["V4"]
    0.2
    >>> round(aggregate(t, {"a": 0.4, "b": 0.1}, weights={"a": 3})[0]["V4"], 12)  # (3 * 0.4 + 0.1) / 4
    0.325
    """
    weights = check_weights(tree, weights)
    kids = children_map(tree) if kids is None else kids
    scores: dict[str, float | None] = {}
    missing: dict[str, int] = {}
    counted: dict[str, bool] = {}  # whether the node has anything left in to count in its parent

    def visit(node: str) -> None:
        if node in tree.leaves:
            value = leaf_values.get(node)
            value = None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)
            scores[node], missing[node], counted[node] = value, int(value is None), True
            return
        children = kids.get(node, [])
        for child in children:
            visit(child)
        used = [c for c in children if counted[c] and weights.get(c, 1.0) > 0]
        counted[node] = bool(used)
        missing[node] = sum(missing[c] for c in used)
        if not used:
            scores[node] = None
            return
        mean = float(weighted_mean([[math.nan if scores[c] is None else scores[c]] for c in used],
                                   [weights.get(c, 1.0) for c in used])[0])
        scores[node] = None if math.isnan(mean) else mean

    for root in tree.roots():
        visit(root)
    return scores, missing


def weighted_mean(columns: list, weights: list[float]):
    """The weighted tree mean of one inner node, for every model at once: ``sum(w_c v_c) / sum(w_c)`` over its
    children ``c`` (``columns[i]``: child i's values, shape (n_models,), NaN where missing, counting 0), NaN where
    every child is missing. The one formula :func:`aggregate` and :func:`reweight` use, so they give the same floats.
    """
    import numpy as np  # imported on use: the leaderboard's module stays cheap to import

    total, acc = sum(weights), np.zeros(len(columns[0]))
    for weight, column in zip(weights, columns):
        acc = acc + weight * np.nan_to_num(column, nan=0.0)
    every_missing = np.logical_and.reduce([np.isnan(column) for column in columns])
    return np.where(every_missing, np.nan, acc / total)


def excluded_leaves(tree: Tree, weights: dict[str, float] | None) -> set[str]:
    """The leaves that count in no aggregate under ``weights``: a weight of 0 on the leaf or on any ancestor."""
    zero = {node for node, weight in check_weights(tree, weights).items() if weight == 0}
    out = set()
    for leaf in tree.leaves:
        node = leaf
        while node is not None:
            if node in zero:
                out.add(leaf)
                break
            node = tree.parents.get(node)
    return out


def reweight(records: list[dict], tree: Tree, weights: dict[str, float] | None) -> list[dict]:
    """``records`` (as :func:`leaderboard_records` returns them) aggregated again with ``weights``.

    Each record is copied with its aggregates (``scores`` of inner nodes, ``missing`` and ``rule`` counts)
    computed from its leaves' values under ``weights`` by the rules of :func:`aggregate` (the same floats: each
    parent sums its children left to right, then divides), for all records at once, one array operation per
    node (704 models: milliseconds); leaves keep their values. The records keep their order (the caller sorts).
    ``tree`` must hold the records' columns (leaves absent from a record count as missing).

    Raises
    ------
    ValueError
        As :func:`check_weights`.
    """
    import numpy as np

    weights = check_weights(tree, weights)
    left_out = excluded_leaves(tree, weights)
    order = tree.order()
    kids = children_map(tree)
    n = len(records)
    value: dict[str, np.ndarray] = {}
    missing: dict[str, np.ndarray] = {}
    rule: dict[str, np.ndarray] = {}
    counted: dict[str, bool] = {}

    def visit(node: str) -> None:
        if node in tree.leaves:
            column = np.array([r["scores"].get(node) for r in records], dtype=float) if n else np.zeros(0)
            value[node], missing[node], counted[node] = column, np.isnan(column).astype(int), True
            rule[node] = np.array([int(bool((r.get("rule") or {}).get(node)) and node not in left_out)
                                   for r in records], dtype=int)
            return
        children = kids.get(node, [])
        for child in children:
            visit(child)
        used = [c for c in children if counted[c] and weights.get(c, 1.0) > 0]
        counted[node] = bool(used)
        missing[node] = sum((missing[c] for c in used), np.zeros(n, dtype=int))
        rule[node] = sum((rule[c] for c in children), np.zeros(n, dtype=int))
        if not used:
            value[node] = np.full(n, np.nan)
            return
        value[node] = weighted_mean([value[c] for c in used], [weights.get(c, 1.0) for c in used])

    for root in tree.roots():
        visit(root)
    out = []
    for i, record in enumerate(records):
        scores = {node: (None if np.isnan(value[node][i]) else float(value[node][i])) for node in order}
        out.append({**record, "scores": scores, "missing": {node: int(missing[node][i]) for node in order},
                    "rule": {node: int(rule[node][i]) for node in order}})
    return out


def latest_versions(db: Database, tree: Tree) -> dict[str, int | None]:
    """Leaf of ``tree`` -> the version of it that counts: the newer of the registered version and the
    newest version recorded in ``db`` (None: neither known)."""
    latest = {leaf: _registered_version(leaf) for leaf in tree.leaves}
    for benchmark, version in db.benchmark_versions().items():
        if benchmark in latest:
            latest[benchmark] = max(version, latest[benchmark] or version)
    return latest


def _open(db: Database | str | None) -> Database:
    return db if isinstance(db, Database) else Database(db)


def leaderboard_records(db: Database | str | None = None, benchmarks: str | Iterable[str] | None = None,
                        tree: Tree | None = None, at: dt.datetime | None = None,
                        scores: Iterable[StoredScore] | None = None,
                        describe_failure: Callable[[StoredScore], str] | None = None) -> list[dict]:
    """The leaderboard as a list of ``{"model", "scores": {node: value|None}, "missing": {node: count},
    "rule": {node: count}, "failed": {leaf: reason}, "complete": [done, leaves]}``.

    ``failed`` names the leaves whose latest run of the counted version failed, with its one-line reason
    (:func:`failure_line`); the leaf's value is still its latest done score, if any (a failure never hides
    one). ``complete``: how many of the tree's leaves have a done score, of how many.

    ``rule[node]`` counts the leaves at or below ``node`` whose score answered with a layer the model
    committed by the layer rule (:mod:`brainscore.models.layer_rule`: no map entry and no selection
    data for the region), so a reader can tell them from declared or selected layers.

    One entry per model with at least one successful score (a model whose every run failed, e.g. weights
    that could not load, is not listed: its failures are on its page), sorted by ``average_vision`` (highest
    first, models without one last, then by identifier). ``scores`` and ``missing`` have every node
    of the tree, depth first: leaves are benchmark identifiers, the others ``average_vision``,
    ``neural_vision``, ``V4``, ... (see the module docstring for the rules).

    Parameters
    ----------
    db : Database or str, optional
        The results database or its URL (default: :func:`brainscore.results.default_url`).
    benchmarks : str or list of str, optional
        Shell-style patterns: only matching benchmarks are leaves (e.g. ``"Cowley*"``).
    tree : Tree, optional
        Default: the tree the registered plugins declare.
    at : datetime, optional
        The leaderboard as it was at this time (UTC): only records that ended by then, each benchmark at the
        newest version recorded by then, and benchmarks without any record by then left out of the tree (as
        the reference's "wayback" view leaves out benchmarks that did not exist yet). A record without an end
        time counts from its start time (:func:`record_time`); one with neither counts only for a time not
        before now (it was recorded by now, when is not known).
    scores : iterable of StoredScore, optional
        ``db.scores(include_failed=True)`` already read (oldest first); read here when not given.
    describe_failure : callable, optional
        The one-line reason of a failure in ``failed`` (default :func:`failure_line`).

    Raises
    ------
    BrainScoreError
        If no leaderboard benchmark matches ``benchmarks``.
    """
    db = _open(db)
    tree = tree or registered_tree(benchmarks)
    records = db.scores(include_failed=True) if scores is None else list(scores)  # oldest first: later rows win
    if at is None:
        latest = latest_versions(db, tree)
    else:
        at = at if at.tzinfo is not None else at.replace(tzinfo=dt.timezone.utc)  # naive: UTC, as the records
        now = dt.datetime.now(dt.timezone.utc)
        records = [r for r in records if (record_time(r) or now) <= at]
        latest = {}
        for r in records:
            if r.benchmark in tree.leaves and r.benchmark_version is not None:
                latest[r.benchmark] = max(r.benchmark_version, latest.get(r.benchmark, r.benchmark_version))
        existing = {leaf: tree.parents[leaf] for leaf in tree.leaves if leaf in latest}
        if not existing:
            return []
        tree = build_tree(existing)
    return Standings(tree, latest, records, describe_failure).records


class Standings:
    """The leaderboard of a set of score records, kept up to date as new records arrive.

    :func:`leaderboard_records` computes it whole; the website keeps one and gives it only the records
    added since (:meth:`add`): a new score changes one model's entry, so only that entry is aggregated
    again and the entries are sorted anew, not all 700 aggregated (Schrimpf et al. 2020's rules, the
    module docstring). :meth:`add` gives the same entries :func:`leaderboard_records` would give for all
    records read at once, or refuses (False) when a new record would change every model's entry.

    Parameters
    ----------
    tree : Tree
    latest : dict
        Leaf -> the version of it that counts (the newest registered or recorded).
    records : list of StoredScore
        Oldest first (the latest done record of a model on a benchmark version counts).
    describe_failure : callable (StoredScore) -> str, optional
        The reason shown beside a failed leaf (default :func:`failure_line`; the website redacts it).

    Attributes
    ----------
    records : list of dict
        The entries, sorted as :func:`leaderboard_records` sorts them (a new list after each :meth:`add`;
        entries are shared: copy one to change it).
    """

    def __init__(self, tree: Tree, latest: dict[str, int | None], records: Iterable[StoredScore],
                 describe_failure: Callable[[StoredScore], str] | None = None):
        self.tree, self.latest = tree, dict(latest)
        self._describe = describe_failure or failure_line
        self._order, self._kids = tree.order(), children_map(tree)
        self._chosen: dict[tuple[str, str], StoredScore] = {}  # the latest done record of each pair
        self._failed: dict[tuple[str, str], StoredScore] = {}  # a failure recorded after it (or with none done)
        self._listed: set[str] = set()  # models with a successful score (of any benchmark or version)
        self._entries = {model: self._entry(model) for model in self._take(records)}
        self._sort()

    def _take(self, records: Iterable[StoredScore]) -> set[str]:
        """Note ``records`` (oldest first); returns the listed models whose entry they may change."""
        changed: set[str] = set()
        for record in records:
            if record.status == "done" and record.model not in self._listed:
                self._listed.add(record.model)  # listed from its first successful score on
                changed.add(record.model)
            if record.benchmark in self.tree.leaves and record.benchmark_version == self.latest.get(record.benchmark):
                pair = (record.model, record.benchmark)
                if record.status == "done":
                    self._chosen[pair] = record
                    self._failed.pop(pair, None)
                else:  # a failure never hides a done score: it is kept beside it
                    self._failed[pair] = record
                changed.add(record.model)
        return changed & self._listed

    def copy(self) -> "Standings":
        """A copy that :meth:`add` may change while this one is still read (by a page being rendered)."""
        twin = object.__new__(Standings)
        twin.__dict__.update(self.__dict__)
        twin.latest, twin._chosen, twin._listed = dict(self.latest), dict(self._chosen), set(self._listed)
        twin._failed = dict(self._failed)
        return twin

    def add(self, records: list[StoredScore]) -> bool:
        """Take ``records``, recorded after every record given so far (oldest first).

        Returns
        -------
        bool
            False, with nothing changed, if a record is of a leaf's version newer than the one that
            counts (every model's value of that leaf changes: compute the standings anew).
        """
        for record in records:
            if record.benchmark in self.tree.leaves and record.benchmark_version is not None:
                counted = self.latest.get(record.benchmark)
                if counted is None or record.benchmark_version > counted:
                    return False
        changed = self._take(records)
        if changed:
            self._entries = {**self._entries, **{model: self._entry(model) for model in changed}}
            self._sort()
        return True

    def _entry(self, model: str) -> dict:
        """The entry of ``model`` from the records taken."""
        chosen, tree = self._chosen, self.tree
        values = {leaf: _value(chosen.get((model, leaf)), leaf in tree.engineering) for leaf in tree.leaves}
        scores, missing = aggregate(tree, values, kids=self._kids)
        rule = rule_counts(tree, {leaf: layer_method(chosen.get((model, leaf))) == "rule" for leaf in tree.leaves},
                           self._kids)
        order = self._order
        failed = {leaf: self._describe(self._failed[model, leaf]) for leaf in order
                  if leaf in tree.leaves and (model, leaf) in self._failed}
        done = sum(values[leaf] is not None for leaf in tree.leaves)
        flag = weights_flag(chosen.get((model, leaf)) for leaf in tree.leaves)
        return {"model": model, "scores": {n: scores[n] for n in order},
                "missing": {n: missing[n] for n in order}, "rule": {n: rule[n] for n in order},
                "failed": failed, "complete": [done, len(tree.leaves)], **({"weights": flag} if flag else {})}

    def _sort(self) -> None:
        top = self.tree.roots()[0] if self.tree.roots() else None
        self.records = sorted(self._entries.values(),
                              key=lambda e: (e["scores"].get(top) is None, -(e["scores"].get(top) or 0.0), e["model"]))


def record_time(record: StoredScore) -> dt.datetime | None:
    """When ``record`` counts from (UTC): its end time, else its start time (rows recorded without an end time,
    issue 36: 4 of 706 models were missing from the board "as of today"); None when it has neither."""
    when = getattr(record, "end", None) or getattr(record, "start", None)
    return None if when is None else _aware(when)


def _aware(when: dt.datetime) -> dt.datetime:
    return when if when.tzinfo is not None else when.replace(tzinfo=dt.timezone.utc)


def leaderboard(db: Database | str | None = None, benchmarks: str | Iterable[str] | None = None) -> "pd.DataFrame":
    """The leaderboard as a DataFrame: one row per model (index ``model``), one column per tree node.

    Columns are the nodes depth first (``average_vision``, ``neural_vision``, ``V4``, its benchmarks,
    ...), then ``"<node> missing"`` (the number of missing leaves) for every inner node. Values are
    floats, NaN where missing. The same numbers as :func:`leaderboard_records`.
    """
    import pandas as pd

    records = leaderboard_records(db, benchmarks)
    tree = registered_tree(benchmarks)
    order = tree.order()
    inner = [n for n in order if n not in tree.leaves]
    rows = [{**{n: (float("nan") if e["scores"][n] is None else e["scores"][n]) for n in order},
             **{f"{n} missing": e["missing"][n] for n in inner}} for e in records]
    frame = pd.DataFrame(rows, index=pd.Index([e["model"] for e in records], name="model"),
                         columns=order + [f"{n} missing" for n in inner])
    return frame


def store_tree(db: Database | str | None = None) -> Tree:
    """Write the registered tree (nodes, leaves, engineering flags, sibling order) into ``benchmark_types``."""
    tree = registered_tree(None)
    order = {}
    for node in tree.parents:
        for position, child in enumerate(tree.children(node)):
            order[child] = position
    _open(db).sync_tree(tree.parents, engineering=tree.engineering, order=order)
    return tree
