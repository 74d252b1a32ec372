"""The reference Brain-Score's ``brainscore_vision`` API, as thin adapters over brainscore's own pieces (the mapping:
``docs/coming_from_brain_score.md``). The five registries are dict-like views of :mod:`brainscore.registry`'s.
Importing it imports only :mod:`brainscore.registry`; the submodules load when first used.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

from brainscore.shadowing import check as _check_shadow

_check_shadow("brainscore_vision")

from brainscore import registry as _registry  # noqa: E402 (after the check that no reference package is mixed in)
from brainscore import errors as _errors  # noqa: E402

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
    """A reference model factory (no arguments) as :func:`brainscore.load_model` calls it, with ``region_layer_map``
    (``--layer``) and ``device`` (``--device``): the factory is called under torch's seed 0 (:func:`_seeded`), then
    committed, in this order of precedence, to ``region_layer_map``, the factory's own map and
    :func:`brainscore.models.commitment.load_region_layer_map` of the registering plugin's folder."""

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
            raise _errors.ValidationError(f"model {self.identifier!r} ({type(model).__name__}) has no region_layer_map "
                                          f"to commit layers to; build it with brainscore_vision.model_helpers."
                                          f"brain_transformation.ModelCommitment to use region_layer_map/--layer")
        if device is not None:
            _move(model, device, self.identifier)
        return model

    def __repr__(self) -> str:
        return f"<reference model factory {self.identifier!r}: {self.factory!r}>"


def _key_function_model_files(model: Any, located: dict) -> None:
    """Key a ``get_activations`` model's stored activations (its ``activations_model`` or one of that's attributes)
    by the files its factory loaded through the locator (weights, stand-ins): its folder is keyed, they are not."""
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
    """``factory(*args, **kwargs)`` under :func:`brainscore.models.weights.seeded` (torch's seed 0), when torch is
    installed: a network built at random is the same in every process, as ``torchvision:resnet18-untrained``."""
    if importlib.util.find_spec("torch") is None:
        return factory(*args, **kwargs)
    from brainscore.models.weights import seeded

    return seeded(lambda: factory(*args, **kwargs))


def _move(model: Any, device: Any, identifier: str) -> None:
    """Run ``model``'s network on ``device`` (``--device``): set before the network is first built or used."""
    extractor = getattr(model, "activations_model", None)
    if extractor is None or not hasattr(extractor, "device_spec"):
        raise _errors.ValidationError(f"model {identifier!r} ({type(model).__name__}) cannot be moved to device "
                                      f"{device!r}: it has no brainscore activations model; leave --device out")
    placed = getattr(extractor, "placed_device", None)
    if placed is not None and str(placed) != str(device):
        raise _errors.ValidationError(f"model {identifier!r} already runs on {placed}; it cannot be moved to "
                                      f"{device!r} (give the device when it is built)")
    extractor.device_spec = device


class PluginRegistry(MutableMapping):
    """The reference's dict of identifier -> factory, a view of ``brainscore.registry.REGISTRIES[kind]``
    (:class:`brainscore.registry.Registry`: ``register_from``, ``factory``, ``unregister``, ``list`` and their
    errors). ValueError for an unknown ``kind``; setting a non-callable is a TypeError."""

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
    """:func:`brainscore.load_model`."""
    from brainscore.scoring import load_model as _load_model

    return _load_model(identifier, **kwargs)


def load_benchmark(identifier: str) -> Any:
    """The benchmark registered as ``identifier`` (:func:`brainscore.registry.load_benchmark`)."""
    return _registry.load_benchmark(identifier)


def load_dataset(identifier: str) -> Any:
    """:func:`brainscore.registry.load_dataset`, as the reference's assembly class of the same name
    (:func:`brainscore_core.supported_data_standards.brainio.assemblies.as_reference_class`)."""
    from brainscore_core.supported_data_standards.brainio.assemblies import as_reference_class

    return as_reference_class(_registry.load_dataset(identifier))


def load_stimulus_set(identifier: str) -> Any:
    """The :class:`~brainscore.data.StimulusSet` registered as ``identifier``."""
    return _registry.load_stimulus_set(identifier)


def load_metric(identifier: str, *args, **kwargs) -> Any:
    """A metric by the reference's name or brainscore's: :func:`brainscore_vision._names.load_metric`."""
    from brainscore_vision import _names

    return _names.load_metric(identifier, *args, **kwargs)


def load_ceiling(identifier: str, *args, **kwargs) -> Any:
    """A ceiling by the reference's name or brainscore's (:func:`brainscore_vision._names.load_ceiling`), else, as
    the reference registers ceilings among its metrics, the metric of that name (else the ceiling's error)."""
    from brainscore_vision import _names

    try:
        return _names.load_ceiling(identifier, *args, **kwargs)
    except _errors.UnknownIdentifierError as missing:
        try:
            return _names.load_metric(identifier, *args, **kwargs)
        except _errors.UnknownIdentifierError:
            raise missing from None


def score(model_identifier: str, benchmark_identifier: str, conda_active: bool = False, **kwargs) -> Any:
    """:func:`brainscore.score` (``**kwargs`` go to it); ``conda_active`` (the reference's per-plugin conda
    environments) is ignored: scoring installs nothing."""
    from brainscore.scoring import score as _score

    del conda_active
    return _score(model_identifier, benchmark_identifier, **kwargs)


def __getattr__(name: str):
    """A submodule or a top-level name (``BrainModel``, ``Ceiling``, ``Score``), imported on first use (PEP 562)."""
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY_NAMES:
        value = getattr(importlib.import_module(_LAZY_NAMES[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'brainscore_vision' has no attribute {name!r}")
