"""Where plugins come from and what they declare, read without running them.

:func:`scan_plugin` reads a plugin's ``__init__.py`` (``ast``, never executed) for the identifiers
it registers; :mod:`brainscore.registry` scans the built-in plugin folders with it and imports a
plugin only when one of its identifiers is loaded.

Plugin folders in the reference Brain-Score's layout are scanned beside the built-in plugins.

``--plugin-dir`` and the ``plugin_dirs`` setting (``BRAINSCORE_PLUGIN_DIRS``) name folders laid out
like the reference's ``brainscore_vision/`` (``models/*/``, ``benchmarks/*/``, ``data/*/``,
``metrics/*/``), a clone of its repository, or one plugin folder. Each folder's parent is imported
as a synthetic package ``brainscore_plugindir_<hash of its path>`` (stable across processes), so
a Dask worker that unpickles an object of a plugin folder's class finds its module through
the import hook installed here. :mod:`brainscore.registry` scans what these functions list.
"""
from __future__ import annotations

import ast
import hashlib
import re
import traceback
import importlib.machinery
import importlib.util
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from brainscore import config

__all__ = ["LazyFactory", "lazy", "ImportFailure", "import_failure", "KINDS", "REFERENCE_REGISTRIES", "Index",
           "parse_source", "scan_plugin", "REFERENCE_FOLDERS", "PLUGIN_DIR_PACKAGE_PREFIX",
           "plugin_dirs", "reference_plugins", "check_reference_api", "package_name", "plugin_dir_package"]

KINDS = ("dataset", "stimulus_set", "metric", "ceiling", "benchmark", "model")
#: the reference's registry names (``brainscore_vision.model_registry`` ...) -> our kinds
REFERENCE_REGISTRIES = {"model_registry": "model", "benchmark_registry": "benchmark", "data_registry": "dataset",
                        "stimulus_set_registry": "stimulus_set", "metric_registry": "metric"}


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
    # (kind, identifier) -> the plugin-folder module that declares it too, served by the built-in plugin of the same
    # kind folder and name (the reference's own copy of that plugin, e.g. its metrics/rdm beside brainscore's)
    shadowed: dict[tuple[str, str], str] = field(default_factory=dict)


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


#: top-level packages whose missing names are gaps of this installation (its reference API), not a plugin's fault
OWN_PACKAGES = ("brainscore", "brainscore_vision", "brainscore_core")


@dataclass(frozen=True)
class ImportFailure:
    """Why a plugin failed to import, in one line, and whose fault it is (:func:`import_failure`).

    ``environment`` is True when the cause is this installation rather than the plugin's code: a name of
    brainscore's reference API it lacks, a file it does not have (weights, data), or an installed package that
    fails while it is imported (e.g. a library built for another torch). ``missing_package`` names a third-party
    package the plugin imports that is not installed. ``where`` is the plugin's own file and line (relative to its
    folder) or the installed module that failed.
    """

    summary: str
    environment: bool
    missing_package: str | None = None
    where: str | None = None

    def message(self, plugin: str) -> str:
        """One line: ``plugin`` (e.g. ``the plugin folder /x/models/y``), the cause, and what to do."""
        if self.missing_package:
            return (f"{plugin} needs the package {self.missing_package!r}, which is not installed here: install it "
                    f"(pip install {self.missing_package}) or list it in the folder's requirements.txt ({self.summary})")
        if self.environment:
            return (f"{plugin} failed to import because of this installation, not the plugin's code: {self.summary}"
                    + (f" (raised in {self.where})" if self.where else ""))
        return (f"{plugin} failed to import: {self.summary}" + (f" (at {self.where})" if self.where else "")
                + ". Fix that plugin's code, or remove it from the plugin path")


def import_failure(error: BaseException, folder: Path | None = None) -> ImportFailure:
    """Whose fault a plugin's import failure is, from the exception and its traceback (nothing is re-run).

    Parameters
    ----------
    error : BaseException
        What importing the plugin raised.
    folder : Path, optional
        The plugin's folder: frames in its files are the plugin's code.
    """
    from brainscore.errors import BrainScoreError, DataNotFoundError, HashMismatchError, NetworkError

    summary = " ".join(f"{type(error).__name__}: {error}".split())
    if isinstance(error, (DataNotFoundError, HashMismatchError, NetworkError)):
        return ImportFailure(summary, environment=True)
    if isinstance(error, ImportError):
        found = re.search(r"cannot import name '([^']+)' from '([^']+)'", str(error))
        module = found.group(2) if found else (error.name or "")
        if module.split(".")[0] in OWN_PACKAGES:
            what = f"{module}.{found.group(1)}" if found else module
            return ImportFailure(f"it imports {what}, which this brainscore does not provide ({summary}); a gap of "
                                 f"brainscore's reference API", environment=True, where=None)
        if isinstance(error, ModuleNotFoundError) and error.name and not found:
            top = error.name.split(".")[0]
            if not top.startswith(PLUGIN_DIR_PACKAGE_PREFIX) and not _in_folder(_innermost(error), folder, top):
                return ImportFailure(summary, environment=False, missing_package=top)
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith("<frozen")]
    if isinstance(error, SyntaxError) and error.filename and _inside(error.filename, folder):
        return ImportFailure(summary, environment=False, where=f"{_relative(error.filename, folder)}:{error.lineno}")
    own = [index for index, f in enumerate(frames) if _inside(f.filename, folder)]
    if frames and own and own[-1] == len(frames) - 1:  # raised by the plugin's own code
        return ImportFailure(summary, environment=False,
                             where=f"{_relative(frames[-1].filename, folder)}:{frames[-1].lineno}")
    after = frames[own[-1] + 1:] if own else frames
    installed = [f for f in after if f.name == "<module>" and not _inside(f.filename, folder)]
    if installed or isinstance(error, BrainScoreError) or any(_is_own_package(f.filename) for f in after[-1:]):
        # module-level code of an installed package failed while being imported, or brainscore itself raised
        culprit = installed[-1].filename if installed else (after[-1].filename if after else None)
        return ImportFailure(summary, environment=True, where=_module_of(culprit) if culprit else None)
    where = f"{_relative(frames[own[-1]].filename, folder)}:{frames[own[-1]].lineno}" if own else None
    return ImportFailure(summary, environment=False, where=where)


def _innermost(error: BaseException) -> str | None:
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith("<frozen")]
    return frames[-1].filename if frames else None


def _in_folder(filename: str | None, folder: Path | None, top: str) -> bool:
    """Whether a missing module ``top`` is one of the plugin folder's own (a file or package beside its code)."""
    return folder is not None and ((folder / f"{top}.py").is_file() or (folder / top).is_dir())


def _inside(filename: str | None, folder: Path | None) -> bool:
    if filename is None or folder is None:
        return False
    try:
        return Path(filename).resolve().is_relative_to(Path(folder).resolve())
    except (OSError, ValueError):
        return False


def _relative(filename: str, folder: Path | None) -> str:
    try:
        return str(Path(filename).resolve().relative_to(Path(folder).resolve()))
    except (OSError, ValueError, TypeError):
        return Path(filename).name


def _is_own_package(filename: str) -> bool:
    parts = Path(filename).parts
    return any(part in OWN_PACKAGES for part in parts[-4:-1])


def _module_of(filename: str) -> str:
    """A dotted module name for an installed file (``.../site-packages/torchvision/ops/x.py`` -> ``torchvision.ops.x``)."""
    parts = list(Path(filename).with_suffix("").parts)
    for marker in ("site-packages", "dist-packages", "src"):
        if marker in parts:
            parts = parts[len(parts) - parts[::-1].index(marker):]
            break
    else:
        parts = parts[-2:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


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


def _bases() -> dict[str, tuple[Path, bool]]:
    """Package name -> (folder it is the parent of, whether that folder is laid out like ``brainscore_vision/``)."""
    bases = {}
    for root in plugin_dirs():
        candidate = root / "brainscore_vision" if (root / "brainscore_vision").is_dir() else root
        layout = any((candidate / folder).is_dir() for folder in REFERENCE_FOLDERS)
        bases.setdefault(package_name(candidate), (candidate, layout))
        bases.setdefault(package_name(root.parent), (root.parent, False))
    return bases


def _synthetic_package(name: str, path: Path, doc: str):
    """An empty package ``name`` whose submodules are found in ``path`` (no ``__init__.py`` of it runs)."""
    spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
    spec.submodule_search_locations = [str(path)]
    module = importlib.util.module_from_spec(spec)
    module.__path__ = [str(path)]
    module.__doc__ = doc
    sys.modules[name] = module
    return module


def plugin_dir_package(name: str, base: Path | None = None):
    """The synthetic package ``name`` whose path is a plugin folder's parent ``base`` (created on first use).

    When ``base`` is laid out like the reference's ``brainscore_vision/``, its kind folders (``models``,
    ``benchmarks``, ``data``, ``metrics``) are synthetic packages as well: their own ``__init__.py`` (in the
    reference's tree, its framework code: ``Benchmark``, ``Ceiling``, ``result_caching``) never runs; a plugin
    gets those names from ``brainscore_vision``.
    """
    module = sys.modules.get(name)
    if module is not None:
        return module
    layout = base is not None and any((Path(base) / folder).is_dir() for folder in REFERENCE_FOLDERS)
    if base is None:
        base, layout = _bases().get(name, (None, False))
        if base is None:
            raise ModuleNotFoundError(f"no plugin folder of the plugin_dirs setting is imported as {name!r}; "
                                      f"set BRAINSCORE_PLUGIN_DIRS as in the process that made it", name=name)
    module = _synthetic_package(name, Path(base), f"Plugins of the folder {base} (the reference Brain-Score's layout).")
    if layout:
        for folder in REFERENCE_FOLDERS:
            if (Path(base) / folder).is_dir():
                setattr(module, folder, _synthetic_package(f"{name}.{folder}", Path(base) / folder,
                                                           f"The {folder} plugin folders of {base}."))
    return module


_OWN_VISION = Path(__file__).resolve().parent.parent / "brainscore_vision"


def _own_vision_module(parts: list[str]) -> bool:
    """Whether brainscore's own ``brainscore_vision`` package provides the module ``brainscore_vision.<parts>``."""
    path = _OWN_VISION.joinpath(*parts)
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def reference_folder_module(fullname: str) -> str | None:
    """The plugin-folder module that ``brainscore_vision.<kind>.<name>[.<sub>...]`` means, or None.

    The reference's plugins import each other by absolute names (``brainscore_vision.models.X.model``,
    ``brainscore_vision.data.Y``); here ``brainscore_vision`` is brainscore's adapter package, so such a name
    that the adapter package does not provide itself is the plugin folder ``<kind>/<name>`` of the first folder
    of the plugin_dirs setting that has it, imported under its plugin-folder name (one module, one registration).
    """
    parts = fullname.split(".")
    if len(parts) < 3 or parts[0] != "brainscore_vision" or parts[1] not in REFERENCE_FOLDERS \
            or _own_vision_module(parts[1:3]):
        return None
    for name, (base, layout) in _bases().items():
        if layout and (base / parts[1] / parts[2] / "__init__.py").is_file():
            return ".".join([name, *parts[1:]])
    return None


class _AliasLoader:
    """Loads ``brainscore_vision.<kind>.<name>...`` as the already importable plugin-folder module ``target``."""

    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module):
        pass


class _PluginDirFinder:
    """Finds ``brainscore_plugindir_<hash>`` packages in a process that did not scan them yet (e.g. a Dask
    worker unpickling an object of a plugin folder's class), their kind folders, the reference's absolute
    names of plugin folders (:func:`reference_folder_module`), and ``result_caching`` where that package is not
    installed (:mod:`brainscore_vision._result_caching`). Placed first on ``sys.meta_path``; it answers only for
    those names."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):
        if fullname.startswith(PLUGIN_DIR_PACKAGE_PREFIX):
            parts = fullname.split(".")
            if len(parts) == 1:
                try:
                    return plugin_dir_package(fullname).__spec__
                except ModuleNotFoundError:
                    return None
            if len(parts) == 2 and parts[1] in REFERENCE_FOLDERS:
                parent = sys.modules.get(parts[0])
                module = getattr(parent, parts[1], None) if parent is not None else None
                return module.__spec__ if module is not None and module.__spec__.loader is None else None
            return None
        if fullname == "result_caching" and path is None:  # the reference's dependency, when not installed here
            try:
                installed = importlib.machinery.PathFinder.find_spec(fullname)
            except (ImportError, ValueError):
                installed = None
            if installed is None:
                return importlib.machinery.ModuleSpec(fullname, _AliasLoader("brainscore_vision._result_caching"))
            return None
        if fullname.startswith("brainscore_vision."):
            parts = fullname.split(".")
            if len(parts) == 2 and parts[1] in REFERENCE_FOLDERS and not _own_vision_module(parts[1:2]) \
                    and any(layout for _, layout in _bases().values()):
                # brainscore_vision.models / .data: a package of nothing but the plugin folders' aliases
                spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
                spec.submodule_search_locations = []
                return spec
            module = reference_folder_module(fullname)
            if module is not None:
                return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module),
                                                      is_package=len(parts) == 3 or None)
        return None

    @staticmethod
    def invalidate_caches():
        pass


class _AfterExecLoader:
    """A module's own loader, calling ``after()`` once the module has run (a post-import hook)."""

    def __init__(self, loader, after):
        self._loader, self._after = loader, after

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = self._loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        self._after()

    def __getattr__(self, name):
        return getattr(self._loader, name)


def _prepare_torchvision() -> None:
    from brainscore.models._torchvision import prepare

    prepare()


def _guard_downloads() -> None:
    from brainscore.models.downloads import install

    install()


class _ThirdPartyImportHook:
    """Makes third-party code behave here as brainscore's own models need, in every process that imports the
    registry (so plugin code gets it too): before ``torchvision`` is imported, the operators its CUDA wheel lacks
    next to a CPU torch are defined (:func:`brainscore.models._torchvision.prepare`); after ``torch.hub``,
    ``huggingface_hub`` or timm's hub module is imported, their downloads are served from the weights mirror or
    fail fast (:mod:`brainscore.models.downloads`). It answers no name itself."""

    _AFTER = {name: _guard_downloads for name in (  # brainscore.models.downloads.MODULES (kept light: no import)
        "torch.hub", "torch.utils.model_zoo", "torchvision._internally_replaced_utils", "torchvision.models._api",
        "huggingface_hub", "huggingface_hub.file_download", "timm.models._hub")}
    _busy = threading.local()

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "torchvision":
            _prepare_torchvision()
            return None
        after = self._AFTER.get(fullname)
        if after is None or getattr(self._busy, "active", False):
            return None
        self._busy.active = True
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                        spec.loader = _AfterExecLoader(spec.loader, after)
                    return spec
            return None
        finally:
            self._busy.active = False

    @staticmethod
    def invalidate_caches():
        pass


if not any(isinstance(finder, _PluginDirFinder) for finder in sys.meta_path):
    sys.meta_path.insert(0, _PluginDirFinder())
if not any(isinstance(finder, _ThirdPartyImportHook) for finder in sys.meta_path):
    sys.meta_path.insert(0, _ThirdPartyImportHook())
if any(name in sys.modules for name in _ThirdPartyImportHook._AFTER):  # imported before brainscore's registry
    _guard_downloads()
