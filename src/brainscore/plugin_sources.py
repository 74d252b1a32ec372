"""Where plugins come from and what they declare, read without running them.

:func:`scan_plugin` reads a plugin's ``__init__.py`` (``ast``, never executed) for the identifiers
it registers; :mod:`brainscore.registry` scans the built-in plugin folders with it and imports a
plugin only when one of its identifiers is loaded.

Plugin folders in the reference Brain-Score's layout are scanned beside the built-in plugins.

``--plugin-dir`` and the ``plugin_dirs`` setting (``BRAINSCORE_PLUGIN_DIRS``) name folders laid out
like the reference's ``brainscore_vision/`` (``models/*/``, ``benchmarks/*/``, ``data/*/``,
``metrics/*/``), a clone of its repository, or one plugin folder. Each folder's parent is imported
as a synthetic package ``brainscore_plugindir_<hash of its path>`` (:func:`package_name`, stable across processes;
the import hooks are in :mod:`brainscore.plugin_imports`). :mod:`brainscore.registry` scans what these functions
list.
"""
from __future__ import annotations

import ast
import threading
import hashlib
import importlib.util
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from brainscore import config

__all__ = ["LazyFactory", "lazy", "KINDS", "REFERENCE_REGISTRIES", "Index", "parse_source", "scan_plugin",
           "REFERENCE_FOLDERS", "PLUGIN_DIR_PACKAGE_PREFIX", "BUILTIN_PREFIX", "plugin_dirs", "reference_plugins", "check_folder_name",
           "check_reference_api", "package_name", "private_bytecode"]

KINDS = ("dataset", "stimulus_set", "metric", "ceiling", "benchmark", "model")
#: the reference's registry names (``brainscore_vision.model_registry`` ...) -> our kinds
REFERENCE_REGISTRIES = {"model_registry": "model", "benchmark_registry": "benchmark", "data_registry": "dataset",
                        "stimulus_set_registry": "stimulus_set", "metric_registry": "metric"}


_PARSER = threading.Lock()
"""One :func:`ast.parse` at a time in this process: on CPython 3.11 two at once in threads (the website checks uploads
in its thread pool) can fail with ``SystemError: AST constructor recursion depth mismatch``."""


def parse_source(text: str, filename: str = "<unknown>") -> ast.Module:
    """``text`` parsed as Python (never run), by :func:`ast.parse`.

    CPython's parser raises ``MemoryError`` or ``RecursionError`` on deeply nested code (``x = ----...1``
    100,000 signs deep, a chain of 200,000 ``+`` or attribute lookups) where it raises ``SyntaxError`` on other
    bad code; a plugin's source is untrusted input, so both become the ``SyntaxError`` its callers expect.

    Raises
    ------
    SyntaxError
        If ``text`` is not valid Python or nests too deeply for the parser (the message says which).
    ValueError
        If it holds null bytes (Python before 3.12).
    """
    try:
        with _PARSER:  # CPython 3.11's AST conversion is not thread-safe (python/cpython#106905)
            return ast.parse(text, filename=filename)
    except (MemoryError, RecursionError) as error:
        raise SyntaxError(f"{filename}: the code nests too deeply for Python's parser ({type(error).__name__}); "
                          f"write it with fewer nested expressions") from None


@dataclass
class Index:
    """Where each identifier is declared, from a static scan of the plugin folders (:func:`scan_plugin`)."""

    modules: dict[str, dict[str, str]] = field(default_factory=lambda: {k: {} for k in KINDS})
    dynamic: set[str] = field(default_factory=set)  # modules whose identifiers are computed
    # identifier -> declared metadata (literal keyword arguments of register_<kind>(...))
    metadata: dict[str, dict[str, dict[str, Any]]] = field(default_factory=lambda: {k: {} for k in KINDS})
    tree_nodes: dict[str, str] = field(default_factory=dict)  # node -> parent, from register_tree_node
    # (kind, identifier) -> (the module that keeps it, the module that declares it too)
    conflicts: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    folders: dict[str, Path] = field(default_factory=dict)  # plugin-folder module -> its folder
    # (kind, identifier) -> the built-in plugin module that declares it too, replaced by the user's plugin folder that
    # declares it (its twin): ``modules`` names the folder, ``modules[kind][BUILTIN_PREFIX + identifier]`` the built-in
    twins: dict[tuple[str, str], str] = field(default_factory=dict)


#: The prefix naming a built-in plugin's identifier where a user's plugin folder declares the same one (its twin):
#: ``builtin:Geirhos2021edge-top1`` is brainscore's own benchmark, ``Geirhos2021edge-top1`` the folder's.
BUILTIN_PREFIX = "builtin:"


def reference_parents(folder: Path) -> dict[str, str]:
    """benchmark identifier -> ``parent``, read statically from a plugin folder in the reference's layout.

    The reference declares a benchmark's leaderboard node when building it (``NeuralBenchmark(...,
    parent='IT')``, ``super().__init__(..., parent=region)``), not when registering it. For each
    ``benchmark_registry['X'] = F`` (``F`` a function or class of the folder, or ``lambda: F(...)``),
    the folder's code is parsed for a ``parent=`` keyword given a literal, or a parameter that the
    calls leading to it bind to a literal (three calls deep at most). Nothing is imported; a parent
    computed otherwise is learnt when the benchmark is built (:meth:`Registry.load`).
    """
    trees = []
    for source in sorted(folder.glob("*.py")):
        try:
            trees.append(parse_source(source.read_text(encoding="utf-8"), source.name))
        except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
            continue
    definitions: dict[str, ast.AST] = {}
    for tree in trees:
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                definitions.setdefault(node.name, node)

    def from_call(call: ast.Call, bindings: dict, depth: int) -> str | None:
        for keyword in call.keywords:
            if keyword.arg == "parent":
                value = _literal(keyword.value)
                if isinstance(value, str):
                    return value
                if isinstance(keyword.value, ast.Name) and isinstance(bindings.get(keyword.value.id), str):
                    return bindings[keyword.value.id]
        name = call.func.id if isinstance(call.func, ast.Name) else None
        if name in definitions and depth < 3:
            return from_definition(definitions[name], call, depth + 1)
        return None

    def from_definition(definition: ast.AST, call: ast.Call | None, depth: int) -> str | None:
        if isinstance(definition, ast.ClassDef):
            definition = next((n for n in definition.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"),
                              None)
            if definition is None:
                return None
        arguments = definition.args
        parameters = [a.arg for a in arguments.posonlyargs + arguments.args if a.arg != "self"]
        defaults = dict(zip(parameters[len(parameters) - len(arguments.defaults):], arguments.defaults))
        bindings = {name: _literal(value) for name, value in defaults.items()}
        if call is not None:
            bindings.update({name: _literal(arg) for name, arg in zip(parameters, call.args)})
            bindings.update({k.arg: _literal(k.value) for k in call.keywords if k.arg})
        for node in ast.walk(definition):
            if isinstance(node, ast.Call):
                found = from_call(node, bindings, depth)
                if found is not None:
                    return found
        return None

    parents = {}
    for tree in trees:
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assign) or not node.targets or _registry_target(node.targets[0]) != "benchmark":
                continue
            identifier = _literal(node.targets[0].slice)
            value = node.value
            if isinstance(value, ast.Lambda) and isinstance(value.body, ast.Call):
                parent = from_call(value.body, {}, 0)
            elif isinstance(value, ast.Name) and value.id in definitions:
                parent = from_definition(definitions[value.id], None, 0)
            else:
                parent = None
            if isinstance(identifier, str) and parent is not None:
                parents[identifier] = parent
    return parents


def _registry_target(node: ast.AST) -> str | None:
    """The kind a subscript assignment target ``model_registry['x']`` (or ``brainscore_vision.model_registry['x']``)
    registers into, else None."""
    if not isinstance(node, ast.Subscript):
        return None
    holder = node.value
    name = holder.id if isinstance(holder, ast.Name) else holder.attr if isinstance(holder, ast.Attribute) else None
    return REFERENCE_REGISTRIES.get(name)


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        return _NOT_LITERAL


_NOT_LITERAL = object()


def scan_plugin(init_file: Path, module: str, index: Index) -> None:
    """Add what the plugin module ``module`` (its file ``init_file``) declares to ``index``, without running it.

    Reads literal ``register_<kind>("identifier", ..., key=literal)`` and ``register_tree_node`` calls and the
    reference's ``model_registry["identifier"] = ...`` assignments; a module whose identifiers are computed is
    marked dynamic (imported when an identifier is not found statically).

    Raises
    ------
    OSError, SyntaxError, ValueError
        If the file cannot be read or parsed.
    """
    tree = parse_source(init_file.read_text(encoding="utf-8"), str(init_file))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):  # the reference's model_registry['x'] = factory
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                kind = _registry_target(target)
                if kind is None:
                    continue
                key = _literal(target.slice)
                if isinstance(key, str) and key:
                    index.modules[kind].setdefault(key, module)
                else:
                    index.dynamic.add(module)
            continue
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if not name or not name.startswith("register_"):
            continue
        kind = name[len("register_"):]
        values = [_literal(arg) for arg in node.args]
        keywords = {k.arg: _literal(k.value) for k in node.keywords if k.arg}
        if kind == "tree_node":
            if len(values) == 2 and all(isinstance(v, str) for v in values):
                index.tree_nodes.setdefault(values[0], values[1])
            elif keywords.get("parent") is not None and values and isinstance(values[0], str):
                index.tree_nodes.setdefault(values[0], keywords["parent"])
            else:
                index.dynamic.add(module)
            continue
        if kind not in KINDS:
            continue
        if values and isinstance(values[0], str) and all(v is not _NOT_LITERAL for v in keywords.values()):
            index.modules[kind].setdefault(values[0], module)
            if keywords:
                index.metadata[kind].setdefault(values[0], keywords)
        else:
            index.dynamic.add(module)


def _callable_identity(fn) -> str:
    from brainscore.caching.code import callable_identity  # only for a callable target: keeps start-up light

    return callable_identity(fn)


class LazyFactory:
    """A factory declared by what it builds: the target is imported when the factory is called.

    Built by :func:`lazy`. Calling it with ``*args, **kwargs`` returns
    ``target(*bound_args, *args, **bound_kwargs, **kwargs)``; a keyword given both at declaration
    and at the call is a TypeError, as for a written-out ``target(key=..., **kwargs)``. Two
    factories with the same target and bound arguments are equal (a plugin imported again
    registers equal factories), and the repr names them.
    """

    def __init__(self, target: str | Callable[..., Any], *args: Any, **kwargs: Any):
        if isinstance(target, str):
            module, colon, attribute = target.partition(":")
            if not colon or not module or not attribute:
                raise ValueError(f"a lazy target is 'package.module:attribute', got {target!r}")
        elif not callable(target):
            raise TypeError(f"a lazy target is 'package.module:attribute' or a callable, got {target!r}")
        self.target, self.args, self.kwargs = target, args, kwargs

    def resolve(self) -> Callable[..., Any]:
        """The target itself, its module imported on first use.

        Raises
        ------
        ImportError, AttributeError
            If the module or the attribute does not exist.
        """
        if not isinstance(self.target, str):
            return self.target
        module, _, attribute = self.target.partition(":")
        found: Any = importlib.import_module(module)
        for part in attribute.split("."):
            found = getattr(found, part)
        return found

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*self.args, *args, **self.kwargs, **kwargs)

    def _key(self) -> tuple:
        target = self.target if isinstance(self.target, str) else _callable_identity(self.target)
        return target, self.args, tuple(sorted(self.kwargs.items()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LazyFactory) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(repr(self._key()))

    def __repr__(self) -> str:
        target, args, kwargs = self._key()
        bound = [repr(target), *map(repr, args), *(f"{k}={v!r}" for k, v in kwargs)]
        return f"lazy({', '.join(bound)})"


def lazy(target: str | Callable[..., Any], *args: Any, **kwargs: Any) -> LazyFactory:
    """A factory that imports ``target`` only when called, with ``args``/``kwargs`` bound first.

    One line replaces a written-out wrapper (``def f(**kw): from m import C; return C(x=1, **kw)``)
    and keeps registration free of heavy imports, e.g.
    ``register_metric("cka", lazy("brainscore.metrics.similarity.cka:CKAMetric", unbiased=True))``.
    The identifier stays a literal, so discovery finds it without importing the plugin.

    Parameters
    ----------
    target : str or callable
        ``"package.module:attribute"`` (dots in ``attribute`` walk into it, e.g. a class method),
        or a callable of the plugin itself that does the heavy import inside.
    *args, **kwargs
        Bound arguments, passed before the caller's.

    Raises
    ------
    ValueError
        If a string ``target`` is not ``module:attribute``.
    TypeError
        If ``target`` is neither a string nor callable.
    """
    return LazyFactory(target, *args, **kwargs)


#: the plugin folders of the reference's layout, in the order they are scanned
REFERENCE_FOLDERS = ("data", "metrics", "benchmarks", "models")
PLUGIN_DIR_PACKAGE_PREFIX = "brainscore_plugindir_"


def plugin_dirs() -> list[Path]:
    """The plugin folders in the reference's layout that discovery scans: the ``plugin_dirs`` setting
    (``BRAINSCORE_PLUGIN_DIRS``, folders separated by ``:``), absolute, without duplicates, in order."""
    seen, found = set(), []
    for folder in config.plugin_dirs():
        folder = folder.expanduser().resolve()
        if folder not in seen:
            seen.add(folder)
            found.append(folder)
    return found


def reference_plugins(root: Path) -> list[tuple[str, Path]]:
    """(module name, folder) of every plugin in ``root``, a folder in the reference's layout.

    ``root`` is either laid out like the reference's ``brainscore_vision/`` (plugins in ``models/*/``,
    ``benchmarks/*/``, ``data/*/``, ``metrics/*/``), or holds such a ``brainscore_vision/`` folder (a
    clone of the reference's repository), or is one plugin folder (with an ``__init__.py``).

    Raises
    ------
    ValueError
        If ``root`` is none of these; the message says what it must hold.
    """
    root = Path(root)
    base = root / "brainscore_vision" if (root / "brainscore_vision").is_dir() else root
    if any((base / folder).is_dir() for folder in REFERENCE_FOLDERS):
        package = package_name(base)
        return [(f"{package}.{folder}.{init.parent.name}", init.parent)
                for folder in REFERENCE_FOLDERS for init in sorted((base / folder).glob("*/__init__.py"))]
    if (root / "__init__.py").is_file():
        return [(f"{package_name(root.parent)}.{root.name}", root)]
    raise ValueError(f"the plugin folder {root} holds neither models/, benchmarks/, data/ nor metrics/ folders "
                     f"(the reference's brainscore_vision/ layout) nor an __init__.py (one plugin)")


def check_folder_name(folder: Path | None) -> None:
    """Raise ImportError naming the dot when a plugin folder's name (``my.model``) has one: Python imports it as a
    module ``model`` of a package ``my`` that does not exist ("No module named ...models.my", which did not say why).
    """
    if folder is not None and "." in folder.name:
        package, module = folder.name.split(".", 1)
        error = ImportError(f"its name {folder.name!r} has a '.', which Python reads as a module {module!r} of a "
                            f"package {package!r}; rename the folder, e.g. to {folder.name.replace('.', '_')!r}")
        error.plugin_fault = True  # the plugin's, though raised here (brainscore.plugin_imports.import_failure)
        raise error


def check_reference_api() -> None:
    """Raise if ``brainscore_vision`` (which plugin folders import) would not be brainscore's own adapter package.

    With the reference's own ``brainscore_vision`` first on ``sys.path``, a plugin folder's
    ``model_registry['x'] = ...`` would register into the reference's registry, not brainscore's.
    Found with :func:`importlib.util.find_spec`, without importing it.
    """
    ours = Path(__file__).resolve().parent.parent / "brainscore_vision"
    try:
        spec = importlib.util.find_spec("brainscore_vision")
    except (ImportError, ValueError):
        spec = None
    origin = Path(spec.origin).resolve().parent if spec is not None and spec.origin else None
    if origin != ours:
        where = f"from {origin}" if origin is not None else "not importable"
        raise ImportError(f"plugin folders register through brainscore_vision, which is {where} instead of "
                          f"brainscore's adapter package {ours}: the reference Brain-Score's own package is first on "
                          f"sys.path. Put {ours.parent} first on PYTHONPATH or `pip uninstall brainscore-vision` to "
                          f"score plugin folders with brainscore")


def package_name(base: Path) -> str:
    """The package name a plugin folder's parent ``base`` is imported under (stable across processes)."""
    digest = hashlib.sha1(str(Path(base).resolve()).encode("utf-8")).hexdigest()[:12]
    return f"{PLUGIN_DIR_PACKAGE_PREFIX}{digest}"


def private_bytecode(folder: Path | None = None) -> Path:
    """Keep this process's compiled bytecode in a private ``folder`` (default ``<home>/cache/pycache``, made mode
    0700), never beside a source: every trusted process that imports plugin code from submissions calls it first (the
    trusted scorer, the stimuli helper, the website and its pair tasks; the sandboxed model server, which runs only
    the submitter's own code, writes no bytecode and reads the installed packages' own).

    With :data:`sys.pycache_prefix` set, Python looks for a module's bytecode under the prefix only: a
    ``__pycache__/*.pyc`` beside a reviewed source (one compiled from other code with
    ``invalidation_mode=UNCHECKED_HASH``, which Python would otherwise run without reading the source) is never read,
    and none is written beside a submission's files. ``PYTHONPYCACHEPREFIX`` is set too, for the Python processes
    this one starts. A prefix already set (by the operator, or an earlier call) is kept. Where ``folder`` cannot be
    made (a read-only home), a fresh temporary folder is the prefix and nothing is written
    (:data:`sys.dont_write_bytecode`).

    Returns
    -------
    Path
        The prefix in effect.
    """
    if sys.pycache_prefix:
        os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix
        return Path(sys.pycache_prefix)
    try:
        folder = Path(folder) if folder is not None else config.home() / "cache" / "pycache"
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except (OSError, ValueError):  # an unusable home (a ValidationError is a ValueError too)
        folder = Path(tempfile.mkdtemp(prefix="brainscore-pycache-"))
        sys.dont_write_bytecode = True
    sys.pycache_prefix = str(folder)
    os.environ["PYTHONPYCACHEPREFIX"] = str(folder)
    return folder
