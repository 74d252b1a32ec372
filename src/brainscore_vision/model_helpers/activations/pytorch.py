"""``PytorchWrapper`` and ``load_preprocess_images``: the reference's PyTorch wrapper, which *is*
:class:`brainscore.models.extraction.ActivationsExtractor` (same features as the native model).

``functools.partial(load_preprocess_images, image_size=S)`` (optionally ``normalize_mean``/``normalize_std``)
becomes :class:`~brainscore.models.preprocessing.Preprocessing` ``"imagenet"`` (the reference's steps, bit for
bit); a ``Preprocessing`` is used as it is; any other function of a list of paths returning ``(N, 3, S, S)`` is
called as it is (:class:`FunctionPreprocessing`), its code hashed into the cache keys.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from brainscore.caching import code_hash
from brainscore.models.extraction import ActivationsExtractor
from brainscore.models.extraction.function import activations_of_files
from brainscore.models.preprocessing import IMAGENET_MEAN, IMAGENET_STD, Preprocessing

__all__ = ["PytorchWrapper", "load_preprocess_images", "load_images", "preprocess_images", "FunctionPreprocessing",
           "torchvision_preprocess", "disable_activation_caching"]

_MEAN_KEYS = ("normalize_mean", "mean")
_STD_KEYS = ("normalize_std", "std")
paths_activations = activations_of_files  # its former name here


def _imagenet(image_size: int, **kwargs: Any) -> Preprocessing:
    """The reference's ``preprocess_images`` settings as a :class:`Preprocessing` (TypeError for another keyword)."""
    unknown = set(kwargs) - set(_MEAN_KEYS) - set(_STD_KEYS)
    if unknown:
        raise TypeError(f"load_preprocess_images: unknown keyword arguments {sorted(unknown)}; it takes image_size, "
                        f"normalize_mean and normalize_std")
    mean = next((kwargs[k] for k in _MEAN_KEYS if k in kwargs), IMAGENET_MEAN)
    std = next((kwargs[k] for k in _STD_KEYS if k in kwargs), IMAGENET_STD)
    return Preprocessing("imagenet", int(image_size), mean=tuple(mean), std=tuple(std))


def load_images(image_filepaths: Sequence[str]) -> list:
    """The files as 8-bit RGB PIL images (:func:`brainscore.models.preprocessing.load_image`)."""
    from brainscore.models.preprocessing import load_image

    return [load_image(path) for path in image_filepaths]


def preprocess_images(images: Sequence[Any], image_size: int, **kwargs: Any) -> np.ndarray:
    """RGB PIL images as a float32 array ``(N, 3, image_size, image_size)``: squash, ``ToTensor``, ``Normalize``."""
    preprocessing = _imagenet(image_size, **kwargs)
    return np.stack([preprocessing.to_tensor(preprocessing.geometry(image)).numpy() for image in images])


def load_preprocess_images(image_filepaths: Sequence[str], image_size: int, **kwargs: Any) -> np.ndarray:
    """Image files as float32 ``(N, 3, image_size, image_size)``: :class:`Preprocessing` ``"imagenet"`` with
    ``normalize_mean``/``normalize_std`` (default ImageNet's). FileNotFoundError for a missing file."""
    return _imagenet(image_size, **kwargs)(list(image_filepaths)).numpy()


class FunctionPreprocessing:
    """A plugin's own preprocessing function ``(list of paths) -> array (N, 3, S, S)`` for brainscore's extractor;
    ``image_size`` ``S`` defaults to the function's ``image_size`` keyword (a ``functools.partial``), else 224."""

    channels_last = False

    def __init__(self, function: Callable[[list], Any], image_size: int | None = None):
        self.function = function
        keywords = getattr(function, "keywords", None) or {}
        self.image_size = int(image_size or keywords.get("image_size", 224))

    def key(self) -> dict:
        """Cache-key fields: the function's name and code, and its bound arguments."""
        function = self.function
        target = getattr(function, "func", function)  # a functools.partial: the function it binds
        return {"function": f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', '?')}",
                "code": code_hash(target), "args": repr(getattr(function, "args", ())),
                "keywords": repr(sorted((getattr(function, "keywords", None) or {}).items())),
                "image_size": self.image_size}

    def __call__(self, paths) -> Any:
        import torch

        batch = self.function([str(p) for p in paths])
        return torch.as_tensor(np.asarray(batch, dtype=np.float32))


def _as_preprocessing(preprocessing: Any) -> Any:
    if preprocessing is None or isinstance(preprocessing, Preprocessing):
        return preprocessing
    if isinstance(preprocessing, functools.partial) and preprocessing.func is load_preprocess_images \
            and not preprocessing.args:
        keywords = dict(preprocessing.keywords)
        if "image_size" not in keywords:
            raise TypeError("functools.partial(load_preprocess_images, ...) needs image_size=")
        return _imagenet(keywords.pop("image_size"), **keywords)
    if callable(preprocessing):
        return FunctionPreprocessing(preprocessing)
    raise TypeError(f"preprocessing must be a function of image paths (e.g. functools.partial(load_preprocess_images, "
                    f"image_size=224)) or a brainscore Preprocessing, got {type(preprocessing).__name__}")


class PytorchWrapper(ActivationsExtractor):
    """The reference's ``PytorchWrapper(model, preprocessing, identifier=None)``: see
    :class:`~brainscore.models.extraction.ActivationsExtractor` (``**kwargs``, e.g. ``weights_hash``, go to it).

    ``preprocessing`` defaults to ImageNet's at 224 pixels, ``identifier`` to the network's class name (as the
    reference), ``batch_size`` to brainscore's. ``forward_kwargs`` (extra keywords of the forward pass) are not
    supported: a non-empty dict raises ``NotImplementedError``.
    """

    def __init__(self, model: Any, preprocessing: Any = None, identifier: str | None = None,
                 forward_kwargs: dict | None = None, batch_size: int | None = None, device: Any = None, **kwargs: Any):
        if forward_kwargs:
            raise NotImplementedError(f"PytorchWrapper: forward_kwargs {sorted(forward_kwargs)} are not supported here: "
                                      f"the network is called as model(images); wrap it in a torch.nn.Module whose "
                                      f"forward passes them (and name its layers under that module)")
        super().__init__(model, identifier or type(model).__name__, preprocessing=_as_preprocessing(preprocessing),
                         batch_size=batch_size, device=device, **kwargs)
        self._microsaccade_helper = MicrosaccadeSettings()

    def __call__(self, stimuli: Any, layers: Sequence[str] | None = None, stimuli_identifier: Any = None,
                 number_of_trials: int = 1, require_variance: bool = False, **kwargs: Any):
        """Activations of ``layers`` (None: ``"logits"``) on a StimulusSet or a list of image paths (see
        :func:`reference_activations`); ``stimuli_identifier`` is unused (cached by content)."""
        from brainscore.models.extraction import LOGITS

        layers = [LOGITS] if layers is None else list(layers)
        self._microsaccade_helper.number_of_trials = number_of_trials
        call = functools.partial(super().__call__, layers=layers, number_of_trials=number_of_trials,
                                 require_variance=require_variance, **kwargs)
        return reference_activations(call, stimuli, require_variance)

    def from_paths(self, stimuli_paths: Sequence[str], layers: Sequence[str] | None = None,
                   stimuli_identifier: Any = None, require_variance: bool = False, **kwargs: Any):
        """The reference's ``from_paths``: :meth:`__call__` on a list of image files."""
        kwargs.setdefault("number_of_trials", self._microsaccade_helper.number_of_trials)
        return self(list(stimuli_paths), layers, stimuli_identifier, require_variance=require_variance, **kwargs)

    def from_stimulus_set(self, stimulus_set: Any, layers: Sequence[str] | None = None,
                          stimuli_identifier: Any = None, require_variance: bool = False, **kwargs: Any):
        """The reference's ``from_stimulus_set``: :meth:`__call__` on a StimulusSet."""
        kwargs.setdefault("number_of_trials", self._microsaccade_helper.number_of_trials)
        return self(stimulus_set, layers, stimuli_identifier, require_variance=require_variance, **kwargs)

    @property
    def _extractor(self) -> "PytorchWrapper":
        """Itself: reference plugins reach the extractor helper as ``wrapper._extractor`` (e.g. ``set_visual_degrees``)."""
        return self


def reference_activations(call: Callable[[Any], Any], stimuli: Any, require_variance: bool) -> Any:
    """``call(stimulus_set)`` on a StimulusSet, or on a list of image paths by
    :func:`brainscore.models.extraction.function.activations_of_files`, with :func:`_with_shift_coords`."""
    from brainscore.data.stimuli import StimulusSet

    def shifted(stimulus_set: Any) -> Any:
        return _with_shift_coords(call(stimulus_set), require_variance)

    return shifted(stimuli) if isinstance(stimuli, StimulusSet) else activations_of_files(shifted, stimuli)


def torchvision_preprocess(normalize_mean: Sequence[float] = IMAGENET_MEAN, normalize_std: Sequence[float] = IMAGENET_STD):
    """torchvision's ``Compose([ToTensor(), Normalize(mean, std), lambda img: img.unsqueeze(0)])``: a PIL image
    as a normalised ``(1, 3, H, W)`` tensor (the reference's helper for custom preprocessing)."""
    from torchvision import transforms

    return transforms.Compose([transforms.ToTensor(), transforms.Normalize(mean=normalize_mean, std=normalize_std),
                               lambda image: image.unsqueeze(0)])


class MicrosaccadeSettings:
    """``wrapper._microsaccade_helper``: the trials per image of the next ``from_paths``/``from_stimulus_set`` call
    (set by each ``wrapper(...)`` call) and the extent (:data:`~brainscore.models.extraction.MICROSACCADE_EXTENT_DEGREES`)."""

    def __init__(self, number_of_trials: int = 1):
        from brainscore.models.extraction import MICROSACCADE_EXTENT_DEGREES

        self.number_of_trials = number_of_trials
        self.microsaccade_extent_degrees = MICROSACCADE_EXTENT_DEGREES


_SHIFT_COORDS = ("microsaccade_shift_x_pixels", "microsaccade_shift_y_pixels", "microsaccade_shift_x_degrees",
                 "microsaccade_shift_y_degrees")


def _with_shift_coords(activations: Any, require_variance: bool) -> Any:
    """With ``require_variance``, every presentation names its microsaccade shift, as in the reference: a single
    trial is shown unshifted (0 pixels, 0 degrees)."""
    if not require_variance or "presentation" not in activations.dims or _SHIFT_COORDS[0] in activations.coords:
        return activations  # several trials: brainscore's extractor gave each its shift
    zeros = np.zeros(activations.sizes["presentation"])
    return activations.assign_coords({name: ("presentation", zeros) for name in _SHIFT_COORDS})


def disable_activation_caching(wrapper: Any) -> Any:
    """``wrapper`` itself: the reference turns off its identifier-keyed cache; activations here are cached by
    content (:mod:`brainscore.models.identity`), so nothing needs turning off."""
    return wrapper
