"""The code part of cache keys: a hash of the source of the modules that compute a value.

The reference keys its caches by hand-bumped versions and serves stale numbers when a kernel is
edited without a bump. Here the code part of a key is derived, never written by hand:

- the *roots* (modules, or the modules of callables) that compute a value are resolved to files;
- their import closure is followed through the files' ``import`` statements (including imports
  inside functions) as long as the imported module belongs to the same top-level package as a root
  (``brainscore`` for the framework, a third-party plugin's own package for its plugins);
- each file contributes the sha256 of its bytes: any edit (a comment too) gives new keys, which
  costs a recomputation, never a stale value;
- the package version and the versions of the numeric libraries (numpy, scipy, torch,
  scikit-learn, xarray, pillow, h5py) are added.

``from package import submodule`` follows the submodule only, not the package's ``__init__``
(which usually only re-exports); ``from package import name`` follows the ``__init__``.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import re
import sys
import types
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["callable_identity", "code_hash", "library_versions", "module_closure"]

#: Distributions whose versions change numbers (added to every code hash).
NUMERIC_LIBRARIES = ("brainscore", "numpy", "scipy", "torch", "scikit-learn", "xarray", "pillow", "h5py")


@lru_cache(maxsize=None)
def library_versions() -> tuple[tuple[str, str], ...]:
    """(distribution, version) of :data:`NUMERIC_LIBRARIES` (``"absent"`` when not installed)."""
    versions = []
    for name in NUMERIC_LIBRARIES:
        try:
            versions.append((name, importlib.metadata.version(name)))
        except importlib.metadata.PackageNotFoundError:
            versions.append((name, "absent"))
    return tuple(versions)


def _locate(name: str) -> str | None:
    """Source file of module ``name``, found without importing anything (None for builtins, compiled modules,
    namespace packages or unknown names).

    ``importlib.util.find_spec('a.b.c')`` imports ``a.b``: for a plugin not imported yet that would run its code
    (and raise its errors) while merely hashing it. Here a submodule is looked up in the folders of its parent
    package: those of the imported parent, else the folder of the parent's own ``__init__.py``.
    """
    module = sys.modules.get(name)
    if module is not None:
        path = getattr(module, "__file__", None)
        return str(path) if path is not None and str(path).endswith(".py") else None
    parent, _, child = name.rpartition(".")
    if not parent:
        try:
            spec = importlib.util.find_spec(name)  # a top-level name: nothing is imported to find it
        except (ImportError, ValueError, AttributeError):
            return None
        origin = spec.origin if spec is not None and spec.has_location else None
        return str(origin) if origin is not None and str(origin).endswith(".py") else None
    for folder in _search_path(parent):
        for candidate in (Path(folder) / f"{child}.py", Path(folder) / child / "__init__.py"):
            if candidate.is_file():
                return str(candidate)
    return None


def _search_path(package: str) -> list[str]:
    """The folders submodules of ``package`` are found in, without importing it."""
    module = sys.modules.get(package)
    if module is not None:
        return [str(p) for p in (getattr(module, "__path__", None) or [])]
    path = _locate(package)
    if path is not None:
        return [str(Path(path).parent)] if Path(path).name == "__init__.py" else []
    parent, _, child = package.rpartition(".")  # a namespace package: its folders in the parent's
    folders = _search_path(parent) if parent else []
    return [str(Path(f) / child) for f in folders if (Path(f) / child).is_dir()]


@lru_cache(maxsize=None)
def _module_file(name: str) -> str | None:
    """Source file of module ``name`` (None for builtins, namespace packages or unknown names); imports nothing."""
    return _locate(name)


_FROM_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)", re.MULTILINE)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n#;]+)", re.MULTILINE)


@lru_cache(maxsize=None)
def _parsed(path: str) -> tuple[str, tuple[tuple[int, str, tuple[str, ...]], ...]]:
    """(sha256 of the file's bytes, its imports as (level, module, names)).

    Imports are found by a line-based scan (also inside functions, and inside docstrings, which can
    only add modules to a closure, never drop one): ten times faster than walking the syntax tree.
    """
    source = Path(path).read_bytes()
    text = source.decode("utf-8", errors="replace")
    imports = []
    for match in _FROM_IMPORT.finditer(text):
        module = match.group(1)
        level = len(module) - len(module.lstrip("."))
        names = tuple(n.split(" as ")[0].strip() for n in match.group(2).strip("()").replace("\\", " ").split(",")
                      if n.strip())
        imports.append((level, module.lstrip("."), names))
    for match in _IMPORT.finditer(text):
        for name in match.group(1).split(","):
            name = name.split(" as ")[0].strip()
            if name:
                imports.append((0, name, ()))
    return hashlib.sha256(source).hexdigest(), tuple(imports)


def _resolve(level: int, module: str, importer: str, importer_is_package: bool) -> str:
    if level == 0:
        return module
    base = importer.split(".")
    base = base if importer_is_package else base[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _is_module(name: str) -> bool:
    """Whether ``name`` is a module (imported, or a source file or package folder found without importing)."""
    if name in sys.modules:
        return isinstance(sys.modules[name], types.ModuleType)
    if _locate(name) is not None:
        return True
    parent, _, child = name.rpartition(".")
    return bool(parent) and any((Path(f) / child).is_dir() for f in _search_path(parent))


@lru_cache(maxsize=None)
def module_closure(root: str) -> tuple[str, ...]:
    """Names of ``root`` and every module of its top-level package it imports, transitively (sorted)."""
    package = root.split(".")[0]
    seen: set[str] = set()
    todo = [root]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = _module_file(name)
        if path is None:
            continue
        seen.add(name)
        is_package = Path(path).name == "__init__.py"
        for level, module, names in _parsed(path)[1]:
            target = _resolve(level, module, name, is_package)
            if target.split(".")[0] != package:
                continue
            if names:
                submodules = [f"{target}.{n}" for n in names if n != "*" and _is_module(f"{target}.{n}")]
                todo.extend(submodules)
                if len(submodules) < len(names):
                    todo.append(target)
            else:
                parts = target.split(".")  # `import a.b.c` runs a, a.b and a.b.c; follow the last
                todo.append(".".join(parts))
    return tuple(sorted(seen))


def callable_identity(fn: Any, line: bool = True) -> str:
    """A stable name of a callable for cache keys, provenance and messages: where it is defined.

    Parameters
    ----------
    fn : callable
        A function or method: ``"module.qualname:first_line"`` (``"module.qualname"`` without
        ``line``), equal for the same definition imported again in another process. Any other
        callable (an object with ``__call__``, a ``functools.partial``): ``"module.Type:repr"``
        (``"module.Type"`` without ``line``).
    line : bool
        Include the first line number (functions) or the repr (other callables).

    Returns
    -------
    str
    """
    code = getattr(fn, "__code__", None)
    if code is None:
        kind = f"{type(fn).__module__}.{type(fn).__qualname__}"
        return f"{kind}:{fn!r}" if line else kind
    name = f"{fn.__module__}.{fn.__qualname__}"
    return f"{name}:{code.co_firstlineno}" if line else name


def _root_name(root: Any) -> str | None:
    if isinstance(root, str):
        return root
    if isinstance(root, types.ModuleType):
        return root.__name__
    target = getattr(root, "__func__", root)
    target = getattr(target, "func", target)  # functools.partial
    name = getattr(target, "__module__", None)
    if name is None or not isinstance(name, str):
        name = type(target).__module__
    return name


def code_hash(*roots: Any) -> str:
    """sha256 hex over the code that computes a value, and the numeric libraries' versions.

    Parameters
    ----------
    *roots : str, module or callable
        Module names, modules, or functions/objects (their defining module is used).

    Returns
    -------
    str
        64 hex characters; changes when the code of any module in the roots' import closure (within
        each root's top-level package) changes, or when a numeric library's version changes.
    """
    digest = hashlib.sha256(repr(library_versions()).encode())
    names = sorted({module for root in roots if (name := _root_name(root))
                    for module in module_closure(name)})
    for name in names:
        digest.update(f"\0{name}:{_parsed(_module_file(name))[0]}".encode())
    return digest.hexdigest()
