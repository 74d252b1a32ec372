"""Plugin discovery: which plugin module declares each identifier, found without importing the plugins.

The built-in plugin folders (``brainscore/plugins/<kind folder>/<name>/``) and the folders of the ``plugin_dirs``
setting (the reference Brain-Score's layout) are scanned statically (their ``__init__.py`` parsed, never executed,
by :func:`brainscore.plugin_sources.scan_plugin`); a module is imported only when one of its identifiers is loaded,
and one that fails to import breaks only its own identifiers (:class:`PluginImportError` naming its folder and
whose fault it is). Entry points of the group :data:`ENTRY_POINT_GROUP` and plugins registering computed
identifiers are imported for listing. :mod:`brainscore.registry` keeps the one :class:`PluginDiscovery` of the
process and documents the plugin layouts.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import warnings
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Callable

from brainscore.errors import PluginConflictError, PluginImportError
from brainscore.plugin_imports import import_failure, plugin_dir_package
from brainscore.plugin_sources import (BUILTIN_PREFIX, PLUGIN_DIR_PACKAGE_PREFIX, Index, check_folder_name,
                                       check_reference_api, plugin_dirs, reference_parents, reference_plugins,
                                       scan_plugin)

PLUGIN_ROOT = Path(__file__).parent / "plugins"
"""The built-in plugins' root: ``brainscore/plugins/<kind folder>/<name>/``."""

ENTRY_POINT_GROUP = "brainscore.plugins"
"""The entry-point group third-party packages declare their plugin modules in."""

LISTED_ONLY: list[Path] = []
"""Plugin folders of :func:`brainscore.registry.list_only_dirs`: listed, never imported in this process."""


class PluginWarning(UserWarning):
    """A third-party plugin failed to import; the other plugins keep working."""


class PluginDiscovery:
    """Finds plugins: built-in folders (by static scan), the ``plugin_dirs`` setting's folders (the reference's
    layout, by static scan), entry points (imported on demand) and folders listed only (:data:`LISTED_ONLY`).

    Parameters
    ----------
    root : Path
        The built-in plugin folders' root (``brainscore/plugins``; a test's own tree).
    """

    def __init__(self, root: Path = PLUGIN_ROOT):
        self.root = Path(root)
        self._index: Index | None = None
        self._lock = threading.RLock()
        self._imported: set[str] = set()
        self._dynamic_done = False
        self._broken: dict[str, BaseException] = {}      # module -> its import error
        self._broken_ids: dict[tuple[str, str], str] = {}  # (kind, identifier) -> broken module
        self._warned: set[str] = set()
        self._listed_only: set[str] = set()  # plugin modules of list_only_dirs(): listed, never imported here
        self._noticed: set[tuple[str, str]] = set()  # (kind, identifier) of twins whose notice was printed

    def index(self) -> Index:
        with self._lock:
            if self._index is None:
                index = Index()
                for init_file in sorted(self.root.glob("*/*/__init__.py")):
                    folder, name = init_file.parent.parent.name, init_file.parent.name
                    scan_plugin(init_file, f"brainscore.plugins.{folder}.{name}", index)
                for root in plugin_dirs():
                    self._scan_plugin_dir(root, index)
                self._listed_only = set()
                for root in LISTED_ONLY:
                    self._scan_plugin_dir(root, index, imports=False)
                self._index = index
            return self._index

    def _scan_plugin_dir(self, root: Path, index: Index, imports: bool = True) -> None:
        """Add the plugin folders under ``root`` (the reference's layout) to ``index``; problems are warned about.

        ``imports=False`` (:func:`list_only_dirs`): its modules are never imported in this process; only their
        literal declarations are listed, an identifier declared before (a built-in's) stays the earlier one's
        (no conflict is recorded: the built-in keeps working) and computed identifiers are not listed."""
        try:
            plugins = reference_plugins(root)
        except ValueError as problem:
            self._warn_once(f"dir:{root}", f"{problem}; it is skipped")
            return
        for module, folder in plugins:
            index.folders[module] = folder
            if not imports:
                self._listed_only.add(module)
            own = Index()
            try:
                scan_plugin(folder / "__init__.py", module, own)
            except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
                # declares nothing readable: imported for listing, where its error is reported by the folder's name
                if imports:
                    index.dynamic.add(module)
                continue
            for kind, identifiers in own.modules.items():
                for identifier, declared in identifiers.items():
                    if identifier.startswith(BUILTIN_PREFIX):  # names only built-ins (registering it is refused)
                        continue
                    existing = index.modules[kind].get(identifier)
                    if existing is not None and not imports:
                        continue  # the earlier declaration serves it
                    if existing is not None and existing.startswith("brainscore.plugins."):
                        # the user's folder replaces the built-in (its twin); the built-in keeps a name of its own
                        index.twins[(kind, identifier)] = existing
                        index.modules[kind][BUILTIN_PREFIX + identifier] = existing
                        builtin_metadata = index.metadata[kind].pop(identifier, None)
                        if builtin_metadata is not None:
                            index.metadata[kind][BUILTIN_PREFIX + identifier] = builtin_metadata
                        existing = None
                    if existing is not None and existing != declared:
                        index.conflicts.setdefault((kind, identifier), (existing, declared))
                        continue
                    index.modules[kind][identifier] = declared
                    if identifier in own.metadata[kind]:
                        index.metadata[kind][identifier] = own.metadata[kind][identifier]
            if imports:
                index.dynamic |= own.dynamic
            for node, parent in own.tree_nodes.items():
                index.tree_nodes.setdefault(node, parent)
            # the parents of its benchmarks, read from its code (parsing every file: only where benchmarks are declared)
            for identifier, parent in (reference_parents(folder) if own.modules["benchmark"] else {}).items():
                if index.modules["benchmark"].get(identifier) == module:
                    index.metadata["benchmark"].setdefault(identifier, {}).setdefault("parent", parent)

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, PluginWarning, stacklevel=4)

    def is_listed_only(self, module: str) -> bool:
        """Whether ``module`` is a plugin of a folder of :data:`LISTED_ONLY` (listed, never imported here)."""
        self.index()
        return module in self._listed_only

    def describe(self, module: str) -> str:
        """``the plugin folder /path/models/NAME`` for a plugin-folder module, else ``plugin MODULE``."""
        folder = self.index().folders.get(module)
        return f"the plugin folder {folder}" if folder is not None else f"plugin {module}"

    def name_of(self, module: str) -> str:
        """A plugin folder's path, else the module's name (for lists of plugins in messages)."""
        folder = self.index().folders.get(module)
        return str(folder) if folder is not None else module

    def folder_of(self, kind: str, identifier: str) -> Path | None:
        """The folder of the plugin that declares ``identifier`` (built-in or plugin folder), or None when it is
        registered without a declaration (e.g. by an entry point or at run time)."""
        module = self.index().modules[kind].get(identifier)
        if module is None:
            return None
        folder = self.index().folders.get(module)
        if folder is not None:
            return folder
        if module.startswith("brainscore.plugins."):
            return self.root.joinpath(*module.split(".")[2:])
        return None

    def same_plugin(self, kind: str, identifier: str, module: str | None) -> bool:
        """Whether ``module`` (imported, e.g. ``compat_smallnet`` or ``compat_smallnet.model``) lives in the folder of
        the plugin folder that declares ``identifier``, under another module name."""
        index = self.index()
        declared = index.modules[kind].get(identifier)
        folder = index.folders.get(declared) if declared is not None else None
        if folder is None or module is None or module == declared or (kind, identifier) in index.conflicts:
            return False
        file = getattr(sys.modules.get(module), "__file__", None)
        try:
            return file is not None and Path(file).resolve().is_relative_to(folder.resolve())
        except OSError:
            return False

    def owns(self, kind: str, identifier: str, module: str | None) -> bool:
        """Whether ``module`` is the code of the plugin folder that declares ``identifier`` (its module, a submodule,
        or the folder imported under another name, e.g. by pytest running its test.py)."""
        declared = self.index().modules[kind].get(identifier)
        if declared is None or module is None:
            return False
        if module == declared or module.startswith(declared + "."):
            return True
        folder = self.index().folders.get(declared)
        file = getattr(sys.modules.get(module), "__file__", None)
        try:
            return folder is not None and file is not None and Path(file).resolve().is_relative_to(folder.resolve())
        except OSError:
            return False

    def same_plugin_code(self, factory: Callable[..., Any], module: str) -> bool:
        """Whether ``factory`` was defined in the same plugin folder as the module ``module`` (one folder imported
        under two names)."""
        defined = getattr(sys.modules.get(getattr(factory, "__module__", None) or ""), "__file__", None)
        own = getattr(sys.modules.get(module), "__file__", None)
        if defined is None or own is None:
            return False
        try:
            folder = Path(own).resolve().parent
            return Path(defined).resolve().is_relative_to(folder) and folder != self.root.resolve()
        except OSError:
            return False

    def builtin_of(self, kind: str, identifier: str) -> str | None:
        """The built-in plugin module declaring ``identifier`` of ``kind`` literally (also where a plugin folder
        replaces it), or None."""
        index = self.index()
        module = index.twins.get((kind, identifier)) or index.modules[kind].get(identifier)
        return module if module is not None and module.startswith("brainscore.plugins.") else None

    def notice(self, kind: str, identifier: str) -> None:
        """Say once per process, on stderr, that the plugin folder declaring ``identifier`` replaces the built-in."""
        index = self.index()
        builtin = index.twins.get((kind, identifier))
        if builtin is None or (kind, identifier) in self._noticed:
            return
        self._noticed.add((kind, identifier))
        print(f"brainscore: the {kind} {identifier!r} is your plugin folder's "
              f"{self.name_of(index.modules[kind][identifier])}, in place of brainscore's built-in {builtin} "
              f"(the built-in is {BUILTIN_PREFIX}{identifier})", file=sys.stderr, flush=True)

    def check_conflict(self, kind: str, identifier: str, module: str | None = None) -> None:
        """Raise :class:`PluginConflictError` if two plugins declare ``identifier`` (or, with ``module``, if a
        plugin other than ``module`` or its package declares it)."""
        index = self.index()
        pair = index.conflicts.get((kind, identifier))
        if pair is None and module is not None:
            declared = index.modules[kind].get(identifier)
            mine = module == declared or (declared is not None and module.startswith(declared + "."))
            if declared is not None and not mine:
                pair = (declared, module)
        if pair is None:
            return
        first, second = pair
        raise PluginConflictError(
            f"the {kind} identifier {identifier!r} is declared twice: by {self.describe(first)} and by "
            f"{self.describe(second)}. Identifiers are unique: rename the one in your plugin folder (its "
            f"__init__.py), or remove that folder from the plugin_dirs setting (BRAINSCORE_PLUGIN_DIRS, "
            f"--plugin-dir)")

    def conflicts(self) -> dict[tuple[str, str], tuple[str, str]]:
        """(kind, identifier) -> the two plugins that declare it, as described by :meth:`describe`."""
        return {key: (self.describe(a), self.describe(b)) for key, (a, b) in self.index().conflicts.items()}

    def import_module(self, module: str) -> None:
        """Import a plugin module; its failure is raised as :class:`PluginImportError` naming it (so is a module of
        :func:`list_only_dirs`, which is never imported in this process)."""
        self.index()
        if any(module == m or module.startswith(m + ".") for m in self._listed_only):
            raised = PluginImportError(f"{self.describe(module)} is listed only in this process (an approved plugin "
                                       f"of the website): its code runs where scoring needs it, never here")
            raised.failure, raised.folder, raised.plugin = None, self.index().folders.get(module), module
            raise raised
        if module in self._broken:
            error = self._broken[module]
            raise self.failure(module, error) from error
        if module not in self._imported:
            self._imported.add(module)
            try:
                if module.startswith(PLUGIN_DIR_PACKAGE_PREFIX):
                    check_folder_name(self.index().folders.get(module))
                    check_reference_api()
                    plugin_dir_package(module.split(".")[0])
                importlib.import_module(module)
            except Exception as error:  # noqa: BLE001 - any failure of third-party code
                self._imported.discard(module)
                self._broken[module] = error
                raise self.failure(module, error) from error
            except BaseException:
                self._imported.discard(module)
                raise

    def failure(self, module: str, error: BaseException) -> PluginImportError:
        """The one-line error of a plugin that failed to import: its folder, the cause and whose fault it is
        (:func:`brainscore.plugin_imports.import_failure`); ``.failure`` and ``.folder`` keep them apart."""
        folder = self.index().folders.get(module)
        if folder is None and module.startswith("brainscore.plugins."):
            folder = self.root.joinpath(*module.split(".")[2:])
        failure = import_failure(error, folder)
        raised = PluginImportError(failure.message(self.describe(module)))
        raised.failure, raised.folder, raised.plugin = failure, folder, module
        return raised

    def import_or_warn(self, module: str, origin: str) -> None:
        """Import a plugin found by discovery; a broken one is warned about (by name) and skipped."""
        try:
            self.import_module(module)
        except PluginImportError as failure:
            error = failure.__cause__ or failure
            if module not in self._warned:
                self._warned.add(module)
                where = self.describe(module) if module.startswith(PLUGIN_DIR_PACKAGE_PREFIX) else f"{origin} {module}"
                warnings.warn(f"{where} failed to import and is skipped ({type(error).__name__}: {error}); "
                              f"the other plugins work, its identifiers raise this error", PluginWarning, stacklevel=4)
            self._scan_broken(module)

    def _scan_broken(self, module: str) -> None:
        """Record the identifiers a broken module declares (parsed from its source, not executed)."""
        folder = self.index().folders.get(module)
        if folder is not None:
            origin = str(folder / "__init__.py")
        else:
            try:
                spec = importlib.util.find_spec(module)
            except Exception:  # noqa: BLE001 - a broken parent package
                return
            if spec is None or not spec.origin or not spec.origin.endswith(".py"):
                return
            origin = spec.origin
        index = Index()
        try:
            scan_plugin(Path(origin), module, index)
        except (OSError, SyntaxError, ValueError):
            return
        for kind, identifiers in index.modules.items():
            for identifier in identifiers:
                self._broken_ids[(kind, identifier)] = module

    def broken_for(self, kind: str, identifier: str) -> tuple[str, BaseException] | None:
        """(module, import error) of the broken plugin that declares ``identifier``, or None."""
        module = self._broken_ids.get((kind, identifier))
        return (module, self._broken[module]) if module is not None else None

    def broken_modules(self) -> dict[str, BaseException]:
        """Plugin modules that failed to import, with their errors."""
        return dict(self._broken)

    def import_for(self, kind: str, identifier: str) -> None:
        module = self.index().modules[kind].get(identifier)
        if module is not None:
            self.import_module(module)
        else:
            self.import_dynamic()

    def reimport_for(self, kind: str, identifier: str) -> None:
        """Run again the module that declares ``identifier`` when it was imported but its registration is gone (a
        registration undone in this process, e.g. by ``Registry.unregister`` or a test restoring the factories): the
        module registers it again; an identifier no module declares is left unknown."""
        module = self.index().modules[kind].get(identifier)
        if module is None or module not in self._imported or module in self._broken:
            return
        with self._lock:
            self._imported.discard(module)
            for name in [m for m in sys.modules if m == module or m.startswith(module + ".")]:
                del sys.modules[name]
        self.import_module(module)

    def import_dynamic(self) -> None:
        with self._lock:
            if self._dynamic_done:
                return
            self._dynamic_done = True
            for module in sorted(self.index().dynamic):
                self.import_or_warn(module, "built-in plugin")
            for ep in entry_points(group=ENTRY_POINT_GROUP):
                self.import_or_warn(ep.value.split(":")[0], f"plugin {ep.name!r} (entry point of "
                                                             f"{getattr(ep.dist, 'name', '?')}):")

    def reset(self) -> None:
        """Forget the scan and the failed imports (for tests that add plugin folders)."""
        with self._lock:
            self._index, self._dynamic_done = None, False
            self._broken.clear()
            self._broken_ids.clear()
            self._warned.clear()
            self._noticed.clear()
