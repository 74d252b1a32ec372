"""The leaderboard tree: where each benchmark's score is averaged in.

Brain-Score aggregates scores bottom-up through a tree of benchmark types (brain-score.web,
``BenchmarkType.parent``): every node's score is the unweighted mean of its direct children, and
a child without a score counts as 0. The tree's roots are ``average_vision`` (the Brain-Score) and
``engineering`` (reported separately, not part of the average). Under ``average_vision`` sit the
neural regions (through ``neural_vision``) and ``behavior``, so each region weighs equally within
the neural score, and neural and behavioural scores weigh equally in the average.

A benchmark's plugin declares its parent node when it registers the benchmark
(``register_benchmark(identifier, parent="V4")``), and may declare family nodes that group several
benchmarks of one study so that the study counts once (``register_tree_node("Geirhos2021",
parent="behavior")``). The framework knows only the study-independent nodes (:data:`TREE`)::

    average_vision
    ├── neural_vision
    │   ├── V1
    │   ├── V2
    │   ├── V4
    │   └── IT
    └── behavior
    engineering

Benchmarks a plugin declares with ``selection_for=<region>`` serve only to choose a model's layers
and are not part of the tree.
"""
from __future__ import annotations

from brainscore import registry
from brainscore.errors import UnknownIdentifierError

ROOTS = ("average_vision", "engineering")
"""Nodes without a parent. ``engineering`` is not part of the Brain-Score average."""

TREE: dict[str, str] = {
    "neural_vision": "average_vision",
    "behavior": "average_vision",
    "V1": "neural_vision",
    "V2": "neural_vision",
    "V4": "neural_vision",
    "IT": "neural_vision",
}
"""The study-independent inner nodes of the tree -> their parent (child -> parent)."""


def inner_nodes() -> dict[str, str]:
    """Every inner node -> its parent: :data:`TREE` and the family nodes plugins declare.

    Raises
    ------
    ValueError
        If a plugin declares a node whose parent is not in the tree.
    """
    declared = registry.tree_nodes()
    full = {**declared, **TREE}
    for node, parent in declared.items():
        if parent not in full and parent not in ROOTS:
            raise ValueError(f"plugin tree node {node!r} names parent {parent!r}, which is not a node of the tree")
    return full


def nodes() -> list[str]:
    """Every node a benchmark may name as its parent (roots included)."""
    return sorted(set(inner_nodes()) | set(ROOTS))


def path_to_root(node: str) -> list[str]:
    """``node`` and its ancestors up to its root, e.g. ``["V4", "neural_vision", "average_vision"]``.

    Raises
    ------
    UnknownIdentifierError
        If ``node`` is not in the tree.
    """
    tree = inner_nodes()
    if node not in tree and node not in ROOTS:
        raise UnknownIdentifierError(f"{node!r} is not a node of the leaderboard tree; nodes: {', '.join(nodes())}")
    path = [node]
    while path[-1] in tree:
        path.append(tree[path[-1]])
    return path


def children(node: str) -> list[str]:
    """The inner nodes directly under ``node`` (benchmarks name their parent themselves)."""
    return sorted(child for child, parent in inner_nodes().items() if parent == node)


def benchmark_parents(include_selection: bool = False) -> dict[str, str]:
    """Benchmark identifier -> the parent node its plugin declares (selection-only benchmarks left out).

    Read from the plugins' declarations, without building any benchmark.
    """
    parents = {}
    for identifier in registry.benchmarks.list():
        declared = registry.benchmarks.metadata(identifier)
        if declared.get("selection_for") and not include_selection:
            continue
        if "parent" in declared:
            parents[identifier] = declared["parent"]
    return parents


def root_of(node: str) -> str:
    """The root ``node`` belongs to (``average_vision`` or ``engineering``)."""
    return path_to_root(node)[-1]
