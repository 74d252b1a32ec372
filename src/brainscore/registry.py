"""Registries of datasets, stimulus sets, metrics, ceilings, benchmarks and models.

A plugin is a folder ``brainscore/plugins/<kind>/<name>/`` whose ``__init__.py`` registers
identifiers with the decorators below, or an installed package that declares an entry point in
the group ``brainscore.plugins`` pointing at such a module. Factories are cheap zero-cost
callables: heavy imports and work happen when the factory is called, never at registration.

Discovery does not import every plugin. The ``__init__.py`` of each built-in plugin folder is
parsed (not executed) for ``register_<kind>("literal identifier", ...)`` calls; the module that
declares an identifier is imported only when that identifier is loaded. A plugin that registers
identifiers computed at run time (a loop, an f-string) is imported when an identifier is not found
statically, and by the ``list_*`` functions.

A factory whose only work is to import a class and build it is declared in one line with
:func:`lazy` (the import happens when the identifier is loaded, never at registration).

Plugin folders in the reference's layout
----------------------------------------
Folders named by the ``plugin_dirs`` setting (``BRAINSCORE_PLUGIN_DIRS``, ``--plugin-dir``) are laid
out like the reference Brain-Score's ``brainscore_vision/`` folder: ``models/NAME/``,
``benchmarks/NAME/``, ``data/NAME/``, ``metrics/NAME/``, each with an ``__init__.py`` that registers
identifiers as the reference's tutorials show (``model_registry['my-model'] = lambda: ...``). A
folder may also be a clone of the reference's repository (holding ``brainscore_vision/``) or one
plugin folder itself. Their ``__init__.py`` files are parsed, not executed, for those assignments,
exactly like the built-ins' ``register_<kind>(...)`` calls; a folder is imported, as the package
``brainscore_plugindir_<hash>.<kind folder>.<NAME>`` (so its relative imports work), only when one
of its identifiers is loaded. A folder that fails to import breaks only its own identifiers, and an
identifier declared by two plugin folders is a :class:`~brainscore.errors.PluginConflictError` naming both.
This module never imports ``brainscore_vision``: the folder's own code does, when it runs.

A user's folder replaces a built-in (twins)
-------------------------------------------
An identifier that a plugin folder of the ``plugin_dirs`` setting declares literally and a built-in plugin declares
too is the folder's (the user's choice wins, as on ``PATH``): its code and data are what ``load_*``, ``score`` and
``run`` use, the first load in a process says so in one line on stderr (the folder and the built-in it replaces),
and the score's provenance names the folder (:func:`plugin_source`). The built-in stays reachable as
``builtin:IDENTIFIER`` (:data:`BUILTIN_PREFIX`; e.g. ``load_benchmark("builtin:Geirhos2021edge-top1")``), listed by
``list("builtin:*")``. Code of the folder that loads data or metrics by the identifiers it declares gets its own
registrations; the built-in's code gets the built-in's.

Example
-------
>>> from brainscore.registry import lazy, register_metric
>>> @register_metric("my_metric")
... def _my_metric():
...     return MyMetric()
>>> register_metric("my_cka", lazy("brainscore.metrics.similarity.cka:CKAMetric", unbiased=True))
"""
from __future__ import annotations

import difflib
import fnmatch
import sys
from pathlib import Path
from typing import Any, Callable

from brainscore import config
from brainscore.errors import BrainScoreError, PluginImportError, UnknownIdentifierError, ValidationError
from brainscore.plugin_discovery import (ENTRY_POINT_GROUP, LISTED_ONLY, PluginDiscovery,  # noqa: F401 (re-exported)
                                         PluginWarning)
from brainscore.plugin_sources import (BUILTIN_PREFIX, KINDS, PLUGIN_DIR_PACKAGE_PREFIX,  # noqa: F401 (re-exported)
                                       LazyFactory, lazy, plugin_dirs)


# the plugin folder in which each kind is declared by convention
_PLUGIN_FOLDERS = {"dataset": "data", "stimulus_set": "data", "metric": "metrics",
                   "ceiling": "metrics", "benchmark": "benchmarks", "model": "models"}


#: Kinds whose loading is reported as a progress stage (data read and verified, networks built), by their names.
_REPORTED = {"dataset": "dataset", "stimulus_set": "stimulus set", "model": "model"}


class Registry:
    """Identifier -> factory for one kind of thing (e.g. benchmarks).

    Parameters
    ----------
    kind : str
        One of :data:`KINDS`.
    """

    def __init__(self, kind: str):
        if kind not in KINDS:
            raise ValueError(f"unknown registry kind {kind!r}; expected one of {KINDS}")
        self.kind = kind
        self._factories: dict[str, Callable[..., Any]] = {}
        self._metadata: dict[str, dict[str, Any]] = {}
        # (identifier, the plugin-folder module declaring it) -> the factory (metadata) of a folder that replaces a
        # built-in's identifier: kept apart, so the built-in's registration stays under its own name
        self._overrides: dict[tuple[str, str], Callable[..., Any]] = {}
        self._override_metadata: dict[tuple[str, str], dict[str, Any]] = {}

    def _override_key(self, identifier: str, module: str | None) -> tuple[str, str] | None:
        """(identifier, declaring folder module) when ``identifier`` is a built-in's replaced by a plugin folder (a
        twin) and ``module`` is that folder's code (under its plugin-folder name or another, e.g. pytest's); else
        None."""
        if module is None or not isinstance(identifier, str):
            return None
        index = _discovery.index()
        if (self.kind, identifier) not in index.twins or not _discovery.owns(self.kind, identifier, module):
            return None
        return identifier, index.modules[self.kind][identifier]

    def _twin_key(self, identifier: str) -> tuple[str, str] | None:
        """(identifier, declaring folder module) when a plugin folder replaces the built-in ``identifier``."""
        index = _discovery.index()
        if (self.kind, identifier) not in index.twins:
            return None
        return identifier, index.modules[self.kind][identifier]

    def register(self, identifier: str, factory: Callable[..., Any] | None = None, **metadata: Any):
        """Register ``factory`` under ``identifier``; usable as a decorator when ``factory`` is None.

        ``metadata`` are declarations the framework reads without building the object. Benchmarks
        declare ``parent`` (their node in the leaderboard tree) and, for data that serve only to
        choose a model's layers, ``selection_for`` (the region whose layer selection they serve;
        such benchmarks never count toward the leaderboard). Give them as literals so that they are
        read by a static scan, without importing the plugin.

        Raises
        ------
        ValueError
            If the identifier is empty, starts with ``builtin:`` or is already registered by a different factory.
        """
        return self._register(identifier, factory, metadata, sys._getframe(1).f_globals.get("__name__"))

    def _register(self, identifier: str, factory: Callable[..., Any] | None, metadata: dict[str, Any],
                  module: str | None):
        """:meth:`register` on behalf of the module ``module`` (the code registering): the registration of the
        plugin folder that replaces a built-in's identifier (its twin) is kept apart from the built-in's."""
        if not isinstance(identifier, str) or not identifier:
            raise ValueError(f"a {self.kind} identifier must be a non-empty string, got {identifier!r}")
        if identifier.startswith(BUILTIN_PREFIX):
            raise ValueError(f"{identifier!r}: the prefix {BUILTIN_PREFIX!r} names built-in plugins replaced by a plugin "
                             f"folder; register {identifier[len(BUILTIN_PREFIX):]!r} instead")
        override = self._override_key(identifier, module)
        if metadata:
            if override is not None:
                self._override_metadata[override] = dict(metadata)
            else:
                self._metadata[identifier] = dict(metadata)

        def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
            if override is not None:  # the user's folder replacing a built-in: kept apart from the built-in's
                self._overrides[override] = fn
                return fn
            existing = self._factories.get(identifier)
            if existing is not None and existing is not fn and _qualname(existing) != _qualname(fn):
                raise ValueError(f"{self.kind} {identifier!r} is already registered by {_qualname(existing)}; "
                                 f"choose another identifier for {_qualname(fn)}")
            self._factories[identifier] = fn
            return fn

        return decorator(factory) if factory is not None else decorator

    def factory(self, identifier: str) -> Callable[..., Any]:
        """The factory registered under ``identifier``, importing its plugin on demand.

        Raises
        ------
        UnknownIdentifierError
            If no plugin registers it; the message lists the closest known identifiers.
        """
        if not isinstance(identifier, str) or not identifier:
            raise UnknownIdentifierError(f"a {self.kind} identifier must be a non-empty string, got {identifier!r}; "
                                         f"see brainscore.list_{self.kind}s() for the known ones")
        if identifier.startswith(BUILTIN_PREFIX):
            return self._builtin_factory(identifier)
        _discovery.check_conflict(self.kind, identifier)
        key = self._twin_key(identifier)
        if key is not None:  # a plugin folder replaces the built-in: the folder's own registration
            if key not in self._overrides:
                _discovery.import_module(key[1])
            if key not in self._overrides:
                raise BrainScoreError(f"{_discovery.describe(key[1])} declares the {self.kind} {identifier!r} but did "
                                      f"not register it when imported; register it there, or use brainscore's built-in "
                                      f"as {BUILTIN_PREFIX}{identifier}")
            _discovery.notice(self.kind, identifier)
            return self._overrides[key]
        if identifier not in self._factories:
            _discovery.import_for(self.kind, identifier)
        if identifier not in self._factories:
            _discovery.reimport_for(self.kind, identifier)
        if identifier not in self._factories:
            broken = _discovery.broken_for(self.kind, identifier)
            if broken is not None:
                module, error = broken
                failure = _discovery.failure(module, error)
                raised = PluginImportError(f"{self.kind} {identifier!r}: {failure}")
                raised.failure, raised.folder, raised.plugin = failure.failure, failure.folder, module
                raise raised from error
            known = self.list()
            close = difflib.get_close_matches(identifier, known, n=5, cutoff=0.4)
            hint = f" Closest known: {', '.join(close)}." if close else ""
            failed = _discovery.broken_modules()
            note = (f" (Plugins that failed to import, which may provide it: "
                    f"{', '.join(f'{_discovery.name_of(m)} ({type(e).__name__}: {e})' for m, e in failed.items())}.)"
                    if failed else "")
            raise UnknownIdentifierError(
                f"no {self.kind} is registered as {identifier!r}.{hint} "
                f"See brainscore.list_{self.kind}s() (or `brainscore list {self.kind}s`) for all {len(known)}.{note}")
        return self._factories[identifier]

    def _builtin_factory(self, name: str) -> Callable[..., Any]:
        """The factory of the built-in plugin's ``builtin:IDENTIFIER`` (:data:`BUILTIN_PREFIX`), also where a plugin
        folder replaces ``IDENTIFIER``.

        Raises
        ------
        UnknownIdentifierError
            If no built-in plugin declares ``IDENTIFIER`` literally.
        """
        base = name[len(BUILTIN_PREFIX):]
        module = _discovery.builtin_of(self.kind, base)
        if module is not None and base not in self._factories:
            _discovery.import_module(module)
        if module is None or base not in self._factories:
            replaced = sorted(i for k, i in _discovery.index().twins if k == self.kind)
            close = difflib.get_close_matches(base, self.list(), n=3, cutoff=0.6)
            raise UnknownIdentifierError(
                f"no built-in plugin declares the {self.kind} {base!r}: {BUILTIN_PREFIX}NAME names brainscore's own "
                f"{self.kind}s" + (f" (closest known: {', '.join(close)})" if close else "")
                + (f"; built-ins replaced by a plugin folder here: "
                   f"{', '.join(BUILTIN_PREFIX + i for i in replaced[:10])}" if replaced else ""))
        return self._factories[base]

    def register_from(self, module: str | None, identifier: str, factory: Callable[..., Any]) -> Callable[..., Any]:
        """Register ``factory`` as ``identifier`` on behalf of the plugin module ``module`` (the reference's
        ``model_registry['x'] = factory`` in a plugin folder's code).

        Raises
        ------
        PluginConflictError
            If another plugin (another plugin folder, or a built-in one the plugin path does not replace) declares
            ``identifier``; the message names both.
        ValueError
            If the identifier is empty or already registered by a different factory.
        """
        if isinstance(identifier, str) and identifier:
            if self._override_key(identifier, module) is not None:  # the user's folder replacing a built-in
                return self._register(identifier, factory, {}, module)
            if _discovery.same_plugin(self.kind, identifier, module) or (
                    _discovery.owns(self.kind, identifier, module) and identifier in self._factories
                    and _discovery.same_plugin_code(self._factories[identifier], module)):
                # the declaring folder imported under another name (e.g. by pytest running its test.py, then under
                # its plugin-folder name by the reference's absolute imports): the same code registering again
                self._factories[identifier] = factory
                return factory
            _discovery.check_conflict(self.kind, identifier, module)
        return self._register(identifier, factory, {}, module)

    def unregister(self, identifier: str) -> None:
        """Remove the factory registered under ``identifier`` in this process (a run-time registration).

        Raises
        ------
        KeyError
            If nothing was registered as ``identifier`` in this process; declared plugins are removed by removing
            their folder.
        """
        if identifier not in self._factories:
            raise KeyError(f"no {self.kind} {identifier!r} was registered in this process; declared plugins are "
                           f"removed by removing their folder")
        del self._factories[identifier]

    def load(self, identifier: str, *args, **kwargs) -> Any:
        """Call the factory of ``identifier`` with ``args`` and ``kwargs`` and return what it builds.

        A benchmark built without a declared ``parent`` (a reference-style plugin that computes it)
        has its own ``parent`` attribute recorded as its declaration from then on. A factory that returns None
        raises BrainScoreError naming its plugin (not an error where the missing object is first used).
        """
        factory = self.factory(identifier)
        try:
            if self.kind in _REPORTED:  # data and networks can take long to load: reported (brainscore.progress)
                from brainscore.progress import stage

                with stage(f"loading the {_REPORTED[self.kind]} {identifier}"):
                    built = factory(*args, **kwargs)
            else:
                built = factory(*args, **kwargs)
        except ModuleNotFoundError as error:  # a package the plugin imports while building: one line, as at import
            raise self._missing_package(identifier, error) or error
        if built is None:
            plugin = _discovery.describe(_discovery.index().modules[self.kind].get(identifier) or "registered here")
            raise BrainScoreError(f"the {self.kind} factory of {identifier!r} ({plugin}) returned None instead of "
                                  f"the {self.kind} it builds; make it return it")
        if self.kind == "benchmark" and "parent" not in self.metadata(identifier):
            parent = getattr(built, "parent", None)
            if isinstance(parent, str) and parent:
                self._learnt(identifier)["parent"] = parent
        return built

    def _missing_package(self, identifier: str, error: ModuleNotFoundError) -> PluginImportError | None:
        """The one-line error of a third-party package missing while ``identifier`` is built (the same as when its
        plugin's import lacks it: :func:`brainscore.plugin_imports.import_failure`), or None for another cause."""
        module = _discovery.index().modules[self.kind].get(identifier)
        if module is None:
            return None
        failure = _discovery.failure(module, error)
        if failure.failure is None or not failure.failure.missing_package:
            return None
        raised = PluginImportError(f"{self.kind} {identifier!r} cannot be built: {failure}")
        raised.failure, raised.folder, raised.plugin = failure.failure, failure.folder, module
        raised.__cause__, raised.__suppress_context__ = error, True
        return raised

    def _learnt(self, identifier: str) -> dict[str, Any]:
        """Where what is learnt of ``identifier`` when it is built is kept (its folder's, where it replaces a
        built-in; the built-in's for ``builtin:IDENTIFIER``)."""
        if identifier.startswith(BUILTIN_PREFIX):
            return self._metadata.setdefault(identifier[len(BUILTIN_PREFIX):], {})
        key = self._twin_key(identifier)
        if key is not None:
            return self._override_metadata.setdefault(key, {})
        return self._metadata.setdefault(identifier, {})

    def list(self, pattern: str | None = None) -> list[str]:
        """Sorted identifiers, optionally filtered by a shell-style ``pattern`` (e.g. ``"Cowley*"``).

        The built-ins that plugin folders replace are listed under their own names (``builtin:IDENTIFIER``) only for a
        pattern that starts with ``builtin:`` (e.g. ``"builtin:*"``)."""
        _discovery.import_dynamic()
        names = set(self._factories) | set(_discovery.index().modules[self.kind])
        if not (pattern or "").startswith(BUILTIN_PREFIX):
            names = {n for n in names if not n.startswith(BUILTIN_PREFIX)}
        if pattern:
            names = {n for n in names if fnmatch.fnmatchcase(n, pattern)}
        return sorted(names)

    def __contains__(self, identifier: str) -> bool:
        if isinstance(identifier, str) and identifier.startswith(BUILTIN_PREFIX):
            return _discovery.builtin_of(self.kind, identifier[len(BUILTIN_PREFIX):]) is not None
        return identifier in self.list()

    def metadata(self, identifier: str) -> dict[str, Any]:
        """What the plugin declared with ``identifier`` (e.g. ``{"parent": "V4"}``), without building it.

        Raises
        ------
        UnknownIdentifierError
            If no plugin registers ``identifier``.
        """
        index = _discovery.index()
        if isinstance(identifier, str) and identifier.startswith(BUILTIN_PREFIX):
            base = identifier[len(BUILTIN_PREFIX):]
            if _discovery.builtin_of(self.kind, base) is None:
                self._builtin_factory(identifier)  # raises, naming the built-ins
            static = index.metadata[self.kind].get(identifier if (self.kind, base) in index.twins else base, {})
            return {**static, **self._metadata.get(base, {})}
        key = self._twin_key(identifier)
        if key is not None:
            return {**index.metadata[self.kind].get(identifier, {}), **self._override_metadata.get(key, {})}
        if identifier in self._metadata:
            return dict(self._metadata[identifier])
        if identifier in index.metadata[self.kind]:
            return dict(index.metadata[self.kind][identifier])
        if identifier in index.modules[self.kind]:  # declared by a literal call: its metadata are literal too (none)
            return {}
        self.factory(identifier)  # imports a dynamic plugin, or raises with the closest identifiers
        return dict(self._metadata.get(identifier, {}))

    def declaring(self, key: str, value: Any = None) -> list[str]:
        """Sorted identifiers whose declared ``key`` is set (and equals ``value`` when given)."""
        found = []
        for identifier in self.list():
            try:
                declared = self.metadata(identifier).get(key)
            except PluginImportError:  # a broken plugin breaks only its own identifiers (warned when imported)
                continue
            if declared is not None and (value is None or declared == value):
                found.append(identifier)
        return found


def _qualname(fn: Callable[..., Any]) -> str:
    """Module, qualified name and source line: equal for the same definition re-imported."""
    from brainscore.caching.code import callable_identity  # only on a clash: keeps start-up free of numpy

    return callable_identity(fn)


def reset_discovery() -> None:
    """Forget what the plugin scan found (the plugin path changed: ``BRAINSCORE_PLUGIN_DIRS`` was set after the first
    scan, by a clone of the reference's repository or by pytest naming a plugin tree's test file); the next
    ``load_*``/``list_*`` scans again."""
    _discovery.reset()


def add_plugin_dirs(folders) -> list[Path]:
    """Scan ``folders`` too (before the configured ones), in this process and in the processes it starts.

    The folders are put in front of ``BRAINSCORE_PLUGIN_DIRS`` (which then also carries the configured
    ones, since the environment overrides the configuration file), so Dask workers and scoring
    children started afterwards see them as well; discovery is scanned anew. This is what
    ``--plugin-dir`` does.

    Returns
    -------
    list of Path
        The plugin folders now scanned.

    Raises
    ------
    ValidationError
        If a folder does not exist.
    """
    import os

    added = []
    for folder in folders:
        path = Path(folder).expanduser().resolve()
        if not path.is_dir():
            raise ValidationError(f"the plugin folder {path} does not exist; --plugin-dir (and BRAINSCORE_PLUGIN_DIRS) "
                             f"name a folder laid out like the reference's brainscore_vision/ (models/, "
                             f"benchmarks/, data/, metrics/) or one plugin folder with an __init__.py")
        added.append(str(path))
    current = [str(p) for p in config.plugin_dirs()]
    os.environ[config.SETTINGS["plugin_dirs"].env] = os.pathsep.join(
        dict.fromkeys(added + [p for p in current if p not in added]))
    _discovery.reset()
    return plugin_dirs()


_discovery = PluginDiscovery()
"""The process's plugin discovery (replaced by tests that scan a tree of their own)."""


def list_only_dirs(folders) -> None:
    """List what the plugin folders ``folders`` declare, literally, without ever importing them in this process
    (replacing the folders of an earlier call; not passed on to the processes it starts).

    The website lists its approved plugins so (:mod:`brainscore.web.approval`): their identifiers and the parents
    of their benchmarks show in its listings, while their code runs only in the scorer's processes. Loading one of
    their identifiers here raises :class:`~brainscore.errors.PluginImportError`; an identifier declared already (by
    a built-in plugin or a configured plugin folder) stays that plugin's.
    """
    LISTED_ONLY[:] = [Path(folder).resolve() for folder in folders if Path(folder).is_dir()]
    _discovery.reset()


def listed_only(kind: str, identifier: str) -> bool:
    """Whether ``identifier`` of ``kind`` is declared by a folder of :func:`list_only_dirs` (never imported here)."""
    module = _discovery.index().modules[kind].get(identifier)
    return module is not None and _discovery.is_listed_only(module)


def plugin_folder_of(kind: str, identifier: str) -> Path | None:
    """The folder of the plugin that declares ``identifier`` of ``kind``, or None (see :meth:`PluginDiscovery.folder_of`)."""
    return _discovery.folder_of(kind, identifier)


def plugin_source(kind: str, identifier: str) -> dict[str, str] | None:
    """Where the plugin folder declaring ``identifier`` of ``kind`` was found: ``{"folder": its folder, "plugin_dir":
    the scanned folder (``--plugin-dir``, ``plugin_dirs``) holding it}``; None for built-in plugins, entry points
    and identifiers registered at run time. Recorded in a score's provenance (``plugin_sources``), so
    ``brainscore reproduce`` can scan it again. Where the folder replaces a built-in plugin declaring the same
    identifier, ``"replaces"`` names that built-in's module."""
    module = _discovery.index().modules[kind].get(identifier) if kind in KINDS else None
    folder = _discovery.index().folders.get(module) if module is not None else None
    if folder is None:
        return None
    folder = Path(folder).resolve()
    root = next((r for r in plugin_dirs() if folder == r or folder.is_relative_to(r)), folder)
    source = {"folder": str(folder), "plugin_dir": str(root)}
    replaced = _discovery.index().twins.get((kind, identifier))
    if replaced is not None:  # the folder replaces a built-in of the same identifier (reachable as builtin:ID)
        source["replaces"] = replaced
    return source


def twins() -> dict[tuple[str, str], tuple[Path, str]]:
    """(kind, identifier) -> (the user's plugin folder declaring it, the built-in plugin module it replaces there);
    the built-in is reachable as ``builtin:IDENTIFIER`` (:data:`BUILTIN_PREFIX`)."""
    index = _discovery.index()
    return {key: (index.folders[index.modules[key[0]][key[1]]], builtin) for key, builtin in sorted(index.twins.items())}


def plugin_conflicts() -> dict[tuple[str, str], tuple[str, str]]:
    """(kind, identifier) -> descriptions of the two plugins that declare it (an error when it is loaded)."""
    return _discovery.conflicts()

datasets = Registry("dataset")
stimulus_sets = Registry("stimulus_set")
metrics = Registry("metric")
ceilings = Registry("ceiling")
benchmarks = Registry("benchmark")
models = Registry("model")
REGISTRIES = {"dataset": datasets, "stimulus_set": stimulus_sets, "metric": metrics,
              "ceiling": ceilings, "benchmark": benchmarks, "model": models}

register_dataset = datasets.register
register_stimulus_set = stimulus_sets.register
register_metric = metrics.register
register_ceiling = ceilings.register
register_benchmark = benchmarks.register
register_model = models.register

_tree_nodes: dict[str, str] = {}


def register_tree_node(node: str, parent: str) -> None:
    """Declare a node of the leaderboard tree under ``parent`` (e.g. a study's family of benchmarks).

    A family node makes several benchmarks of one study count once in their parent's mean (e.g.
    ``register_tree_node("Geirhos2021", parent="behavior_vision")``). Call it in a benchmark plugin's
    ``__init__.py`` with literal arguments, so the tree is known without importing the plugin.

    Raises
    ------
    ValueError
        If ``node`` is already declared under another parent.
    """
    existing = _tree_nodes.get(node) or _discovery.index().tree_nodes.get(node)
    if existing is not None and existing != parent:
        raise ValueError(f"tree node {node!r} is already declared under {existing!r}, not {parent!r}")
    _tree_nodes[node] = parent


def tree_nodes() -> dict[str, str]:
    """Every node declared by a plugin -> its parent (static declarations and imported plugins)."""
    _discovery.import_dynamic()
    return {**_discovery.index().tree_nodes, **_tree_nodes}


def declaring_plugin(kind: str, identifier: str) -> str | None:
    """The module of the built-in plugin that declares ``identifier`` of ``kind`` literally, or None.

    From the static scan of the plugin folders (no plugin is imported): None for identifiers
    registered at run time, by entry-point plugins or outside a plugin. Used to key cached results
    on the code of the plugin that defines a model or benchmark.

    Raises
    ------
    ValueError
        If ``kind`` is not one of :data:`KINDS`.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {KINDS}")
    if identifier.startswith(BUILTIN_PREFIX):
        return _discovery.builtin_of(kind, identifier[len(BUILTIN_PREFIX):])
    return _discovery.index().modules[kind].get(identifier)


def load_dataset(identifier: str) -> Any:
    """The assembly registered as ``identifier`` (e.g. ``"Cowley2026.210325"``).

    Raises
    ------
    UnknownIdentifierError
        With the closest registered identifiers.
    DataNotFoundError, HashMismatchError
        If its files are missing or corrupt; the message says which file and how to fix it.
    """
    return datasets.load(identifier)


def load_stimulus_set(identifier: str) -> Any:
    """The :class:`~brainscore.data.StimulusSet` registered as ``identifier``."""
    return stimulus_sets.load(identifier)


def load_metric(identifier: str, *args, **kwargs) -> Any:
    """A metric (e.g. ``"pls"``); ``args``/``kwargs`` go to its factory (e.g. ``crossvalidation_kwargs``)."""
    return metrics.load(identifier, *args, **kwargs)


def load_ceiling(identifier: str, *args, **kwargs) -> Any:
    """A ceiling (e.g. ``"internal_consistency"``); arguments go to its factory."""
    return ceilings.load(identifier, *args, **kwargs)


def load_benchmark(identifier: str) -> Any:
    """The benchmark registered as ``identifier`` (e.g. ``"Cowley2026.210325.V4-pls"``)."""
    return benchmarks.load(identifier)


def import_plugins(folder: str = "data") -> list[str]:
    """Import every built-in plugin under ``plugins/<folder>/`` and every entry-point plugin.

    Normally plugins are imported one at a time, when an identifier they declare is loaded. Commands
    that must see everything a kind of plugin declares at import time (for example the data
    sources listed by ``brainscore data list``) call this first.

    Parameters
    ----------
    folder : str
        One of ``"data"``, ``"metrics"``, ``"benchmarks"``, ``"models"``.

    Returns
    -------
    list of str
        The module names of the built-in plugins imported, sorted.

    Raises
    ------
    ValueError
        If ``folder`` is not a plugin folder.
    """
    if folder not in set(_PLUGIN_FOLDERS.values()):
        raise ValueError(f"unknown plugin folder {folder!r}; expected one of {sorted(set(_PLUGIN_FOLDERS.values()))}")
    modules = [f"brainscore.plugins.{folder}.{init.parent.name}"
               for init in sorted((_discovery.root / folder).glob("*/__init__.py"))]
    for module in modules:
        _discovery.import_module(module)
    for module in sorted(m for m in _discovery.index().folders if m.split(".")[1:2] == [folder]):
        _discovery.import_or_warn(module, "plugin folder")  # one broken folder never breaks the others
    _discovery.import_dynamic()
    return modules
