"""``ActivationsExtractorHelper`` and ``flatten``: the reference's activations core.

``ActivationsExtractorHelper(get_activations, preprocessing, identifier, batch_size)`` (its Gabor, HMAX and
Keras plugins) is :class:`brainscore.models.extraction.function.FunctionExtractor`, which documents the key its
activations are stored under; ``identifier=False`` (the reference's "do not store") stores nothing.
Microsaccades (several trials with ``require_variance``) and the reference's batch and stimulus-set hooks are
refused, saying so.
"""
from __future__ import annotations

import functools
import weakref
from typing import Any, Callable, Sequence

import numpy as np

__all__ = ["ActivationsExtractorHelper", "flatten"]


def flatten(layer_output: np.ndarray, return_index: bool = False) -> Any:
    """``(N, d1, d2, ...)`` -> ``(N, d1 * d2 * ...)`` (C order); with ``return_index`` also the ``(d1 * d2 * ...,
    k)`` array of each column's index ``(i1, i2, ...)``."""
    layer_output = np.asarray(layer_output)
    flat = layer_output.reshape(layer_output.shape[0], -1)
    if not return_index:
        return flat
    unit_shape = layer_output.shape[1:]
    index = np.stack(np.unravel_index(np.arange(int(np.prod(unit_shape))), unit_shape), axis=1)
    return flat, index


class ActivationsExtractorHelper:
    """The reference's extractor of a ``get_activations(inputs, layer_names) -> {layer: array}`` function.

    ``preprocessing`` None gives ``get_activations`` the files' paths; ``functools.partial(load_preprocess_images,
    image_size=S)`` arrays ``(N, 3, S, S)``. ``identifier`` False stores nothing; ``batch_size`` default 64 (the
    reference's). TypeError if ``get_activations`` is not callable, ``preprocessing`` neither None nor callable,
    or another keyword is given.
    """

    def __init__(self, get_activations: Callable[..., Any] = None, preprocessing: Any = None,
                 identifier: Any = False, batch_size: int = 64, **kwargs: Any):
        from brainscore.models.extraction.function import FunctionExtractor, function_source_key

        if kwargs:
            raise TypeError(f"ActivationsExtractorHelper: unknown keyword arguments {sorted(kwargs)}; it takes "
                            f"get_activations, preprocessing, identifier and batch_size")
        inputs, preprocessing_key = _inputs(preprocessing)
        source_key, why = function_source_key(get_activations) if callable(get_activations) else (None, "")
        if source_key is not None and preprocessing_key is None:
            source_key, why = None, f"its preprocessing {preprocessing!r} cannot be located in a file"
        self._wrappers: list = []
        self._source_key = source_key
        self._core = FunctionExtractor(get_activations, str(identifier) if identifier else "model", inputs,
                                       batch_size=int(batch_size), source_key=source_key, cache=bool(identifier))
        if source_key is None:
            self._core.source_description = why
        if source_key is None and identifier:
            import warnings

            warnings.warn(f"model {identifier!r}: its activations are computed on every call and not stored, because "
                          f"{why}", stacklevel=2)
        self.get_activations = get_activations
        self.preprocess = preprocessing or (lambda paths: paths)
        self._identifier = identifier

    @property
    def identifier(self) -> Any:
        """The model's name (False: nothing is stored)."""
        return self._identifier

    @identifier.setter
    def identifier(self, value: Any) -> None:
        self._identifier = value
        self._core.identifier = str(value) if value else "model"
        self._core.source_key = self._source_key if value else None  # False: the reference's "store nothing"
        self._core.cacheable = self._core.source_key is not None
        for ref in self._wrappers:
            wrapper = ref()
            if wrapper is not None:
                self._share(wrapper)

    def include_files(self, files: Any) -> None:
        """Key the stored activations by ``files`` too (``{name: path}``, e.g. the weights the plugin's factory loaded
        through the locator): the sha256 of each (OSError if one cannot be read); nothing for unstored activations."""
        from brainscore.caching import content_key, file_hashes

        if self._source_key is None or not files:
            return
        digests = sorted([str(name), file_hashes(path)["sha256"]] for name, path in dict(files).items())
        self._source_key = content_key(kind="function-source-and-files", source=str(self._source_key), files=digests)
        self.identifier = self._identifier  # passes the new key on to the extractor and the wrappers

    @property
    def cacheable(self) -> bool:
        """Whether the activations are stored (the function's folder was found and ``identifier`` is not False)."""
        return self._core.cacheable and bool(self._identifier)

    def __getattr__(self, name: str) -> Any:
        # what brainscore's commitment asks of an extractor: extract, numerics, preprocessing, cache_paths, ...
        if name.startswith("__") or name == "_core":
            raise AttributeError(name)
        return getattr(self._core, name)

    def __call__(self, stimuli: Any, layers: Sequence[str] | None, stimuli_identifier: Any = None,
                 number_of_trials: int = 1, require_variance: bool = False, **kwargs: Any) -> Any:
        """Activations of ``layers`` on a StimulusSet or a list of image paths, ``presentation x neuroid``;
        ``stimuli_identifier`` is unused (keyed by the images' content)."""
        del stimuli_identifier
        from brainscore_vision.model_helpers.activations.pytorch import reference_activations

        layers = ["logits"] if layers is None else list(layers)
        call = functools.partial(self._core, layers=layers, number_of_trials=number_of_trials,
                                 require_variance=require_variance, **kwargs)
        return reference_activations(call, stimuli, require_variance)

    def from_stimulus_set(self, stimulus_set: Any, layers: Sequence[str] | None, stimuli_identifier: Any = None,
                          require_variance: bool = False, **kwargs: Any) -> Any:
        """Activations on a StimulusSet, its columns as presentation coordinates; see :meth:`__call__`."""
        return self(stimulus_set, layers, stimuli_identifier, require_variance=require_variance, **kwargs)

    def from_paths(self, stimuli_paths: Sequence[str], layers: Sequence[str] | None, stimuli_identifier: Any = None,
                   require_variance: bool = False, **kwargs: Any) -> Any:
        """Activations on image files (one presentation per listed path); see :meth:`__call__`."""
        return self(list(stimuli_paths), layers, stimuli_identifier, require_variance=require_variance, **kwargs)

    def register_batch_activations_hook(self, hook: Any) -> Any:
        """Refused (``NotImplementedError``): a hook would change stored activations without changing their key."""
        raise NotImplementedError("ActivationsExtractorHelper.register_batch_activations_hook: a hook would change "
                                  "stored activations without changing their key; apply it inside get_activations")

    def register_stimulus_set_hook(self, hook: Any) -> Any:
        """Refused (``NotImplementedError``), as :meth:`register_batch_activations_hook`."""
        raise NotImplementedError("ActivationsExtractorHelper.register_stimulus_set_hook: a hook would change the "
                                  "images without changing the stored activations' key; change them inside "
                                  "get_activations or the preprocessing")

    def insert_attrs(self, wrapper: Any) -> None:
        """Give ``wrapper`` (the plugin's model object) this extractor's methods, as the reference does, and what
        ``brainscore``'s commitment reads of an extractor (``extract``, ``cache_paths``, ``numerics``, the key of
        the code as ``architecture_fingerprint``, ...)."""
        wrapper.from_stimulus_set = self.from_stimulus_set
        wrapper.from_paths = self.from_paths
        wrapper.register_batch_activations_hook = self.register_batch_activations_hook
        wrapper.register_stimulus_set_hook = self.register_stimulus_set_hook
        try:
            self._wrappers.append(weakref.ref(wrapper))
        except TypeError:  # an object without weak references: its identifier setter cannot refresh the key
            pass
        self._share(wrapper)

    def _share(self, wrapper: Any) -> None:
        core = self._core
        wrapper.extract = core.extract
        wrapper.set_visual_degrees = core.set_visual_degrees
        wrapper.numerics = core.numerics
        wrapper.preprocessing = core.preprocessing
        wrapper.cacheable = self.cacheable
        wrapper.weights_hash = None
        wrapper.architecture_fingerprint = core.architecture_fingerprint if self.cacheable else None
        if self.cacheable:
            wrapper.cache_paths = core.cache_paths
            wrapper.stream = core.stream


def _inputs(preprocessing: Any) -> tuple[Any, dict | None]:
    """``(PathInputs, its key)`` for the reference's ``preprocessing`` argument; key None when the function cannot
    be located in a file (then nothing is stored). TypeError if it is neither None nor callable."""
    from brainscore.models.extraction.function import PathInputs, function_source_key
    from brainscore_vision.model_helpers.activations.pytorch import _as_preprocessing, load_preprocess_images

    if preprocessing is None:
        return PathInputs(), {}
    if not callable(preprocessing):
        raise TypeError(f"preprocessing must be None or a function of a list of image paths, got "
                        f"{type(preprocessing).__name__}")
    if isinstance(preprocessing, functools.partial) and preprocessing.func is load_preprocess_images:
        standard = _as_preprocessing(preprocessing)
        return PathInputs(lambda paths: standard(paths).numpy(), {"preprocessing": standard.key()},
                          standard.image_size), {"preprocessing": standard.key()}
    key, _why = function_source_key(preprocessing)
    if key is None:
        return PathInputs(preprocessing, {}), None
    keywords = getattr(preprocessing, "keywords", None) or {}
    fields = {"function": str(key), "args": repr(getattr(preprocessing, "args", ())),
              "keywords": repr(sorted(keywords.items()))}
    size = keywords.get("image_size")
    return PathInputs(preprocessing, fields, int(size) if isinstance(size, int) else None), fields
