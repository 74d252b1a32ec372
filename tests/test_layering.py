"""The package's imports point down its layers and never form a cycle.

Built from the code's own imports (``ast``, imports inside functions included), not from a hand-kept
list of edges: adding an upward import or a cycle anywhere under ``src/brainscore`` fails here.
The layers, lowest first, are those of ``docs/architecture.md`` (its table of ranks must equal
:data:`RANKS`, which :func:`test_the_architecture_document_shows_these_layers` checks); a module may
import its own component and any component of a lower rank, never one of its own rank or above.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "brainscore"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

RANKS = {
    "brainscore.errors": -1, "brainscore.config": 0, "brainscore.progress": 0,  # config raises errors
    "brainscore.device": 0,  # the device argument, checked once: imports errors only
    "brainscore.caching": 1,
    "brainscore.data": 2,
    "brainscore.metrics": 3, "brainscore.models": 3,
    "brainscore.benchmarks": 4,
    "brainscore.plugin_sources": 4.5,  # what plugins declare (static scan), reference-layout plugin folders
    "brainscore.plugin_imports": 4.6,  # how plugin code is imported: synthetic packages, reference names, hooks
    "brainscore.registry": 5,
    "brainscore.plugins": 6,
    "brainscore.scoring": 7, "brainscore.boundary": 7.1,  # the model in a sandbox, the score trusted (issue 32)
    "brainscore.results": 7.3, "brainscore.leaderboard": 7.6,
    "brainscore.runner": 8, "brainscore.testing": 8,
    "brainscore.api": 9, "brainscore.legacy": 9,
    "brainscore.web": 10,
    "brainscore.cli": 11,
    "brainscore": 12, "brainscore.__main__": 12,
}


def module_name(path: Path) -> str:
    parts = ("brainscore",) + path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def component(module: str) -> str:
    """The longest prefix of ``module`` that :data:`RANKS` names."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in RANKS:
            return ".".join(parts[:end])
    raise AssertionError(f"{module} belongs to no layer; add its component to RANKS")


def imports_of(module: str) -> set[str]:
    """Every brainscore module ``module`` imports, at the top or inside functions."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from brainscore import config` imports the submodule brainscore.config
            submodules = [f"{target}.{alias.name}" for alias in node.names if f"{target}.{alias.name}" in MODULES]
            found.update(submodules or [target])
            if submodules and len(submodules) < len(node.names):
                found.add(target)
    return {name for name in found if name.split(".")[0] == "brainscore" and name in MODULES}


GRAPH = {module: imports_of(module) for module in MODULES}


def test_every_module_has_a_layer():
    for module in MODULES:
        component(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module):
    mine = component(module)
    upward = [target for target in sorted(GRAPH[module])
              if component(target) != mine and RANKS[component(target)] >= RANKS[mine]]
    assert not upward, (f"{module} (layer {mine}, rank {RANKS[mine]}) imports "
                        + ", ".join(f"{t} (rank {RANKS[component(t)]})" for t in upward))


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module (or a self-import)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.append(member)
                if member == node:
                    break
            if len(members) > 1 or node in graph[node]:
                found.append(sorted(members))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle():
    # a package's __init__ re-exporting its own modules is not a cycle of logic: drop package -> own child
    graph = {module: {t for t in targets if not (MODULES[module].name == "__init__.py" and t.startswith(module + "."))}
             for module, targets in GRAPH.items()}
    cycles = strongly_connected(graph)
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_checker_sees_an_upward_import():
    """The rule is not vacuous: data importing metrics, or a two-module cycle, is caught."""
    assert RANKS[component("brainscore.metrics.score")] > RANKS[component("brainscore.data.assemblies")]
    assert strongly_connected({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
    assert "brainscore.config" in imports_of("brainscore.data.store")  # `from brainscore import config`


def documented_ranks() -> dict[str, float]:
    """The table of ranks in docs/architecture.md: rows ``| rank | `component` | what it holds |``."""
    rows = re.findall(r"^\|\s*(-?\d+(?:\.\d+)?)\s*\|\s*`(brainscore[\w.]*)`\s*\|", ARCHITECTURE.read_text(encoding="utf-8"),
                      flags=re.MULTILINE)
    return {name: float(rank) for rank, name in rows}


def test_the_architecture_document_shows_these_layers():
    """docs/architecture.md is the picture of these layers: the same components at the same ranks."""
    documented = documented_ranks()
    assert documented, f"{ARCHITECTURE} has no table of ranks"
    enforced = {name: float(rank) for name, rank in RANKS.items()}
    missing = {name: rank for name, rank in enforced.items() if name not in documented}
    stale = {name: rank for name, rank in documented.items() if name not in enforced}
    moved = {name: (documented[name], rank) for name, rank in enforced.items() if name in documented and documented[name] != rank}
    assert not (missing or stale or moved), (
        f"docs/architecture.md and RANKS disagree; update the table of ranks in docs/architecture.md (and its "
        f"picture) together with RANKS. Missing from the document: {missing}; documented but not a layer: {stale}; "
        f"documented rank != RANKS: {moved}")
