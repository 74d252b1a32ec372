"""The reference Brain-Score's ``brainscore_vision`` API, on top of brainscore's own machinery.

Plugins written for the reference (its model, benchmark and data tutorials) register themselves
here and score with brainscore's code: every name is a thin adapter, so a number computed through
it is computed by the same code as the native call (see ``docs/coming_from_brain_score.md``).

>>> from brainscore_vision import model_registry, score                                  # doctest: +SKIP
>>> model_registry['my-model'] = lambda: ModelCommitment(identifier='my-model', ...)      # doctest: +SKIP
>>> score(model_identifier='my-model', benchmark_identifier='Cowley2026.210325.V4-pls')  # doctest: +SKIP

The five registries (:data:`model_registry`, :data:`benchmark_registry`, :data:`data_registry`,
:data:`stimulus_set_registry`, :data:`metric_registry`) are dict-like views of brainscore's registries
(:mod:`brainscore.registry`): ``registry['id'] = factory`` registers ``factory`` there, reading
``registry['id']`` gives the factory (importing the plugin that declares it, on demand), and
``in``/``len``/iteration see every declared identifier, built-in or from a plugin folder, without
running plugin code. Plugin folders in the reference's layout are found through the ``plugin_dirs``
setting (``BRAINSCORE_PLUGIN_DIRS``) and ``--plugin-dir`` (see :mod:`brainscore.registry`).

Importing this package is cheap: only :mod:`brainscore.registry` is imported; the submodules
(``brainscore_vision.benchmarks``, ``.model_helpers``, ...) load when first used.
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

from brainscore.shadowing import check as _check_shadow

_check_shadow("brainscore_vision")

from brainscore import registry as _registry  # noqa: E402 (after the check that no reference package is mixed in)

__all__ = ["model_registry", "benchmark_registry", "data_registry", "stimulus_set_registry", "metric_registry",
           "load_model", "load_benchmark", "load_dataset", "load_stimulus_set", "load_metric", "load_ceiling",
           "score", "PluginRegistry", "BrainModel", "Ceiling", "Score"]

_SUBMODULES = ("model_interface", "benchmarks", "benchmark_helpers", "model_helpers", "utils", "metrics",
               "metric_helpers")
#: names exported at the top level, as the reference does, from the module that defines them (PEP 562)
_LAZY_NAMES = {"BrainModel": "brainscore_vision.model_interface", "Ceiling": "brainscore_core.metrics",
               "Score": "brainscore_core.metrics"}


def _caller_module(depth: int = 2) -> tuple[str | None, str | None]:
    """(``__name__``, ``__file__``) of the code ``depth`` frames up (the plugin doing ``registry[...] = ...``)."""
    frame = sys._getframe(depth)
    return frame.f_globals.get("__name__"), frame.f_globals.get("__file__")


class _ModelFactory:
    """A reference model factory (``lambda: ModelCommitment(...)``, no arguments) as brainscore calls it.

    brainscore's :func:`brainscore.load_model` passes ``region_layer_map`` (``--layer``) and
    ``device`` (``--device``) to a model's factory; the reference's factories take no arguments.
    This calls the factory (under torch's seed 0: :func:`_seeded`), then commits, in this order of precedence:
    ``region_layer_map`` given here, the map the factory gave its ``ModelCommitment``, and
    ``region_layer_map/<identifier>.json`` of the plugin folder that registered it (as the reference reads it:
    region -> layer name).
    """

    def __init__(self, identifier: str, factory: Callable[..., Any], folder: str | None):
        self.identifier, self.factory, self.folder = identifier, factory, folder
        # the registry tells factories apart by module, name and line: those of the plugin's own factory
        self.__module__ = getattr(factory, "__module__", None) or __name__
        self.__qualname__ = getattr(factory, "__qualname__", None) or type(factory).__qualname__
        self.__code__ = getattr(factory, "__code__", None)
        self.__doc__ = getattr(factory, "__doc__", None)

    def __call__(self, *args, region_layer_map: dict | None = None, device: Any = None, **kwargs) -> Any:
        from brainscore.data import locator

        with locator.recording() as located:  # the files the factory loads (weights), for a function model's key
            model = _seeded(self.factory, *args, **kwargs)
        _key_function_model_files(model, located)
        committed = getattr(model, "region_layer_map", None)
        stored = {}
        if self.folder is not None:
            from brainscore.models.commitment import load_region_layer_map

            stored = load_region_layer_map(self.folder, self.identifier)
        if isinstance(committed, dict):
            for region, layer in stored.items():
                committed.setdefault(region, layer)
            committed.update(region_layer_map or {})
        elif region_layer_map or stored:
            from brainscore.errors import ValidationError

            raise ValidationError(f"model {self.identifier!r} ({type(model).__name__}) has no region_layer_map to "
                                  f"commit layers to; build it with brainscore_vision.model_helpers."
                                  f"brain_transformation.ModelCommitment to use region_layer_map/--layer")
        if device is not None:
            _move(model, device, self.identifier)
        return model

    def __repr__(self) -> str:
        return f"<reference model factory {self.identifier!r}: {self.factory!r}>"


def _key_function_model_files(model: Any, located: dict) -> None:
    """Fold the files a factory loaded through the locator (``load_weight_file``: weights, stand-ins) into the stored
    activations' key of a model behind a ``get_activations`` function (``activations_model`` or one of its attributes); its plugin
    folder's content is keyed already, a file it loaded from elsewhere is not."""
    helpers = sys.modules.get("brainscore_vision.model_helpers.activations.core")
    if helpers is None or not located:
        return
    wrapper = getattr(model, "activations_model", None)
    # the helper itself, or held by a plugin's own wrapper (the reference's Keras/TensorFlow wrappers keep it as an
    # attribute of theirs): looked up among the wrapper's attributes, never by a private name of another object
    for candidate in (wrapper, *getattr(wrapper, "__dict__", {}).values()):
        if isinstance(candidate, helpers.ActivationsExtractorHelper):
            candidate.include_files(located)
            return


def _seeded(factory: Callable[..., Any], *args, **kwargs) -> Any:
    """``factory(*args, **kwargs)`` under torch's seed 0 (brainscore's seed of untrained networks), when torch is
    installed: a reference plugin that builds a network at random (``resnet18(pretrained=False)``) builds the same
    network in every process, the one ``torchvision:resnet18-untrained`` is. The global random state is kept."""
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        return factory(*args, **kwargs)
    from brainscore.models.weights import seeded

    return seeded(lambda: factory(*args, **kwargs))


def _move(model: Any, device: Any, identifier: str) -> None:
    """Run ``model``'s network on ``device`` (``--device``): set before the network is first built or used."""
    extractor = getattr(model, "activations_model", None)
    if extractor is None or not hasattr(extractor, "device_spec"):
        from brainscore.errors import ValidationError

        raise ValidationError(f"model {identifier!r} ({type(model).__name__}) cannot be moved to device {device!r}: "
                              f"it has no brainscore activations model; leave --device out")
    placed = getattr(extractor, "placed_device", None)
    if placed is not None and str(placed) != str(device):
        from brainscore.errors import ValidationError

        raise ValidationError(f"model {identifier!r} already runs on {placed}; it cannot be moved to "
                              f"{device!r} (give the device when it is built)")
    extractor.device_spec = device


class PluginRegistry(MutableMapping):
    """The reference's dict of identifier -> factory, as a view of one of brainscore's registries.

    Parameters
    ----------
    kind : str
        ``"model"``, ``"benchmark"``, ``"dataset"``, ``"stimulus_set"`` or ``"metric"`` (a kind of
        :data:`brainscore.registry.KINDS`).

    Notes
    -----
    ``registry['id'] = factory`` registers ``factory`` (a zero-argument callable, or a class) in
    brainscore's registry, where ``brainscore.load_*``, ``brainscore score`` and ``brainscore run``
    find it. It raises :class:`~brainscore.errors.PluginConflictError` when another plugin (a
    built-in one or another plugin folder) declares the same identifier, naming both.
    ``registry['id']`` returns the factory, importing the plugin that declares ``id`` on first use; a
    missing identifier raises :class:`~brainscore.errors.UnknownIdentifierError` (a ``KeyError``)
    with the closest identifiers. ``del registry['id']`` removes a registration made at run time.
    """

    def __init__(self, kind: str):
        if kind not in _registry.REGISTRIES:
            raise ValueError(f"unknown registry kind {kind!r}; expected one of {sorted(_registry.REGISTRIES)}")
        self.kind = kind

    @property
    def native(self) -> _registry.Registry:
        """brainscore's registry this is a view of."""
        return _registry.REGISTRIES[self.kind]

    def __setitem__(self, identifier: str, factory: Callable[..., Any]) -> None:
        if not callable(factory):
            raise TypeError(f"{self.kind}_registry[{identifier!r}] must be set to a factory (a function or class that "
                            f"builds the {self.kind}, e.g. a lambda), got {type(factory).__name__}; wrap a built "
                            f"object as `lambda: obj`")
        module, file = _caller_module()
        if self.kind == "model":
            folder = None
            if file:
                from pathlib import Path

                folder = str(Path(file).resolve().parent)
            factory = _ModelFactory(identifier, factory, folder)
        self.native.register_from(module, identifier, factory)

    def __getitem__(self, identifier: str) -> Callable[..., Any]:
        return self.native.factory(identifier)

    def __delitem__(self, identifier: str) -> None:
        self.native.unregister(identifier)

    def __iter__(self) -> Iterator[str]:
        return iter(self.native.list())

    def __len__(self) -> int:
        return len(self.native.list())

    def __contains__(self, identifier: object) -> bool:
        return isinstance(identifier, str) and identifier in self.native.list()

    def __repr__(self) -> str:
        return f"<{self.kind}_registry: {len(self)} identifiers (brainscore.registry.{self.native.kind}s)>"


model_registry = PluginRegistry("model")
benchmark_registry = PluginRegistry("benchmark")
data_registry = PluginRegistry("dataset")
stimulus_set_registry = PluginRegistry("stimulus_set")
metric_registry = PluginRegistry("metric")


def load_model(identifier: str, **kwargs) -> Any:
    """The model registered as ``identifier``: :func:`brainscore.load_model` (a ``BrainModel``).

    Models that commit regions to layers and have no map for a region choose its layer with
    brainscore's layer selection, as the reference's ``ModelCommitment`` does.

    Raises
    ------
    UnknownIdentifierError
        If no plugin registers ``identifier`` (the closest identifiers are listed).
    """
    from brainscore.scoring import load_model as _load_model

    return _load_model(identifier, **kwargs)


def load_benchmark(identifier: str) -> Any:
    """The benchmark registered as ``identifier`` (:func:`brainscore.registry.load_benchmark`)."""
    return _registry.load_benchmark(identifier)


def load_dataset(identifier: str) -> Any:
    """The assembly registered as ``identifier`` (:func:`brainscore.registry.load_dataset`), as the reference's
    assembly class of the same name (a subclass of brainscore's, so ``assembly.mean(dim='repetition')``
    averages repetitions as the reference's does; everything else is brainscore's)."""
    from brainscore_core.supported_data_standards.brainio.assemblies import as_reference_class

    return as_reference_class(_registry.load_dataset(identifier))


def load_stimulus_set(identifier: str) -> Any:
    """The :class:`~brainscore.data.StimulusSet` registered as ``identifier``."""
    return _registry.load_stimulus_set(identifier)


def load_metric(identifier: str, *args, **kwargs) -> Any:
    """A metric by the reference's name (``'pls'``, ``'ridge'``, ``'rdm'``, ``'cka'``, ...) or brainscore's.

    The reference's names map to brainscore's metrics (``brainscore_vision._names``); ``args`` and
    ``kwargs`` (e.g. ``crossvalidation_kwargs=dict(stratification_coord='object_name')``) go to the
    metric's factory. The metric accepts the reference's calls, ``metric(source, target)``.

    Raises
    ------
    UnknownIdentifierError
        If neither the reference nor brainscore knows ``identifier``.
    """
    from brainscore_vision import _names

    return _names.load_metric(identifier, *args, **kwargs)


def load_ceiling(identifier: str, *args, **kwargs) -> Any:
    """A ceiling by the reference's name (``'internal_consistency'``, ...) or brainscore's.

    The reference registers ceilings among its metrics, so a name that is no ceiling is looked up as
    a metric too. Call the result on the data (``load_ceiling('internal_consistency')(assembly)``).

    Raises
    ------
    UnknownIdentifierError
        If ``identifier`` is neither a ceiling nor a metric.
    """
    from brainscore.errors import UnknownIdentifierError
    from brainscore_vision import _names

    try:
        return _names.load_ceiling(identifier, *args, **kwargs)
    except UnknownIdentifierError as missing:
        try:
            return _names.load_metric(identifier, *args, **kwargs)
        except UnknownIdentifierError:
            raise missing from None


def score(model_identifier: str, benchmark_identifier: str, conda_active: bool = False, **kwargs) -> Any:
    """Score a model on a benchmark with brainscore's :func:`brainscore.score` (the same number as
    ``brainscore score --model M --benchmark B``).

    Parameters
    ----------
    model_identifier, benchmark_identifier : str
        Registered identifiers (built-in, or from a plugin folder).
    conda_active : bool
        The reference's switch for its per-plugin conda environments; brainscore installs nothing
        while scoring (a plugin's requirements must be installed), so it is accepted and ignored.
    **kwargs
        Passed to :func:`brainscore.score` (e.g. ``bootstrap=0`` to skip the confidence interval,
        ``region_layer_map={'V4': 'layer3'}``, ``device='cuda'``).

    Returns
    -------
    Score
        A 0-d Score as the reference's: ``score.values`` (or ``float(score)``) is the ceiled score,
        ``score.attrs['raw']`` the unceiled one, ``score.attrs['ceiling']`` the ceiling; brainscore
        adds ``error``/``ci95`` (bootstrap) and ``provenance``.
    """
    from brainscore.scoring import score as _score

    del conda_active
    return _score(model_identifier, benchmark_identifier, **kwargs)


def __getattr__(name: str):
    """Import a submodule (``brainscore_vision.benchmarks`` ...) or a top-level name (``BrainModel``, ``Ceiling``)
    on first use, PEP 562."""
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY_NAMES:
        value = getattr(importlib.import_module(_LAZY_NAMES[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'brainscore_vision' has no attribute {name!r}")
