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
    "brainscore.shadowing": 0,  # which brainscore_vision/brainscore_core is in use: the standard library only
    "brainscore.caching": 1,
    "brainscore.data": 2,
    "brainscore.metrics": 3, "brainscore.models": 3,
    "brainscore.benchmarks": 4,
    "brainscore.plugin_sources": 4.5,  # what plugins declare (static scan), reference-layout plugin folders
    "brainscore.plugin_imports": 4.6,  # how plugin code is imported: synthetic packages, reference names, hooks
    "brainscore.plugin_discovery": 4.8,  # which module declares each identifier: static scans, imports on demand
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


# ---- the outer ring: the reference-API adapters over brainscore's public names (issue 38) -------------------------
#: The adapter packages: above ``brainscore.cli``, they may import any of ``brainscore``, but only its public names.
ADAPTERS = ("brainscore_vision", "brainscore_core")
#: Private attributes of objects that are not brainscore's, which adapter code may use (the standard library's).
FOREIGN_PRIVATE = {"sys._getframe"}


def _private(name: str) -> bool:
    """``_x`` is private, ``__x__`` (a dunder) is not."""
    return name.startswith("_") and not name.startswith("__")


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _folder(module: str, root: Path) -> str:
    """The folder (package) ``module`` lives in: itself for a package, its parent for a plain module."""
    return module if (root / Path(*module.split("."))).is_dir() else module.rsplit(".", 1)[0]


def private_uses(source: str, module: str, *, is_package: bool = False, root: Path = ROOT / "src") -> list[str]:
    """Where ``source`` (the code of ``module``) uses a private name of another folder of ``brainscore``.

    For every module: ``from brainscore.x.y import _z``, ``import brainscore.x._y`` and ``from brainscore.x import
    _y`` (a private module), and ``alias._z`` on a name bound to a brainscore module, when the private name lives in
    another folder than ``module``. For an adapter module (:data:`ADAPTERS`) a private name of ``brainscore`` is
    never allowed, whatever folder, and neither is a private attribute of any object but ``self``/``cls``
    (``extractor._device``, ``getattr(extractor, "_device")``), except the standard library's
    (:data:`FOREIGN_PRIVATE`).
    """
    package = module if is_package else module.rsplit(".", 1)[0]
    adapter = module.split(".")[0] in ADAPTERS
    here = module if is_package else _folder(module, root)
    found: list[str] = []
    aliases: dict[str, str] = {}  # local name -> brainscore module it is bound to

    def crosses(target: str) -> bool:  # the private name lives in another folder than this module
        return adapter or _folder(target, root) != here

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "brainscore":
                    continue
                aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else "brainscore"
                parts = alias.name.split(".")
                if any(_private(p) for p in parts) and crosses(alias.name):
                    found.append(f"line {node.lineno}: import {alias.name} (a private module)")
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(node, package)
            if target.split(".")[0] != "brainscore":
                continue
            for alias in node.names:
                full = f"{target}.{alias.name}"
                if (root / Path(*full.split("."))).is_dir() or (root / Path(*full.split("."))).with_suffix(".py").exists():
                    aliases[alias.asname or alias.name] = full
                if any(_private(p) for p in full.split(".")) and crosses(target):
                    found.append(f"line {node.lineno}: from {target} import {alias.name} (a private name)")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = ast.unparse(node.value)
            if base in aliases:
                if crosses(aliases[base]):
                    found.append(f"line {node.lineno}: {base}.{node.attr} (a private name of {aliases[base]})")
            elif adapter and base not in ("self", "cls") and f"{base}.{node.attr}" not in FOREIGN_PRIVATE:
                found.append(f"line {node.lineno}: {base}.{node.attr} (a private attribute)")
        elif (adapter and isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
              and _private(node.args[1].value) and ast.unparse(node.args[0]) not in ("self", "cls")):
            found.append(f"line {node.lineno}: {node.func.id}({ast.unparse(node.args[0])}, {node.args[1].value!r}) "
                         f"(a private attribute)")
    return found


def _modules_under(top: str) -> dict[str, Path]:
    base = ROOT / "src"
    return {".".join(p.relative_to(base).with_suffix("").parts[:-1] if p.name == "__init__.py"
                     else p.relative_to(base).with_suffix("").parts): p
            for p in sorted((base / top).rglob("*.py"))}


ALL_MODULES = {name: path for top in ("brainscore",) + ADAPTERS for name, path in _modules_under(top).items()}


@pytest.mark.parametrize("module", sorted(ALL_MODULES))
def test_private_names_stay_in_their_folder(module):
    """No private name crosses folders inside ``brainscore``; the adapters use only ``brainscore``'s public names."""
    path = ALL_MODULES[module]
    found = private_uses(path.read_text(encoding="utf-8"), module, is_package=path.name == "__init__.py")
    assert not found, (f"{path.relative_to(ROOT)} uses private names of other folders: " + "; ".join(found)
                       + ". Make what is needed public (a name without the leading underscore, with a docstring) "
                         "in the module that owns it, and import that")


@pytest.mark.parametrize("module", sorted(_modules_under("brainscore_core")))
def test_brainscore_core_never_imports_brainscore_vision(module):
    """The reference's direction: vision builds on core, never the reverse."""
    path = ALL_MODULES[module]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            targets.add(node.module or "")
    assert not {t for t in targets if t.split(".")[0] == "brainscore_vision"}, f"{path} imports brainscore_vision"


def test_the_private_name_checker_catches_an_adapter_reaching_in():
    """The ring's rules are not vacuous: each kind of private use, in a synthetic adapter module, is caught."""
    adapter = "brainscore_vision.metrics.synthetic"
    cases = {
        "from brainscore.scoring.job import _device": "private name",
        "from brainscore.models import _torchvision": "private name",
        "import brainscore.models._torchvision": "private module",
        "from brainscore.scoring import job\njob._device(None)": "private name of brainscore.scoring.job",
        "def f(extractor):\n    return extractor._device": "private attribute",
        "def f(extractor):\n    return getattr(extractor, '_device_spec', None)": "private attribute",
        "def f(registry):\n    return registry.native._factories": "private attribute",
    }
    for source, kind in cases.items():
        found = private_uses(source, adapter)
        assert len(found) == 1 and kind in found[0], (source, found)
    # what stays allowed: public names, private names of the adapter's own objects, the standard library's
    assert private_uses("from brainscore.scoring.job import score_model\nimport sys\nsys._getframe(1)\n"
                        "class A:\n    def f(self):\n        return self._x", adapter) == []
    # inside brainscore: a private name of the same folder is fine, of another folder is not
    assert private_uses("from brainscore.scoring.job import _device", "brainscore.scoring.run") == []
    assert len(private_uses("from brainscore.scoring.job import _device", "brainscore.boundary.server")) == 1
    assert len(private_uses("from .job import _device", "brainscore.boundary.server")) == 0  # .job is boundary's own
