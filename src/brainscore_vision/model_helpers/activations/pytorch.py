"""``PytorchWrapper`` and ``load_preprocess_images``: the reference's PyTorch wrapper, on
:class:`brainscore.models.extraction.ActivationsExtractor`.

Model plugins written for the reference build::

    preprocessing = functools.partial(load_preprocess_images, image_size=224)
    wrapper = PytorchWrapper(identifier='my-net', model=net, preprocessing=preprocessing)

``PytorchWrapper`` *is* ``brainscore``'s extractor (forward hooks on the named modules, batches,
activations cached on disk by content, ``"logits"`` for the output), so the features it gives equal
those of the native model with the same network and preprocessing.

Preprocessing: ``functools.partial(load_preprocess_images, image_size=S)`` (optionally with
``normalize_mean``/``normalize_std``) becomes ``brainscore``'s
:class:`~brainscore.models.preprocessing.Preprocessing` (``"imagenet"`` mode: squash to ``S x S``
with PIL's bilinear filter, ``ToTensor``, ``Normalize``; the reference's steps, bit for bit).
A ``Preprocessing`` is used as it is. Any other function of a list of file paths returning an array
``(N, 3, S, S)`` is called as it is (:class:`FunctionPreprocessing`), its code hashed into the
activations' cache keys.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from brainscore.caching import code_hash
from brainscore.models.extraction import ActivationsExtractor
from brainscore.models.preprocessing import IMAGENET_MEAN, IMAGENET_STD, Preprocessing

__all__ = ["PytorchWrapper", "load_preprocess_images", "load_images", "preprocess_images", "FunctionPreprocessing",
           "torchvision_preprocess", "disable_activation_caching"]

_MEAN_KEYS = ("normalize_mean", "mean")
_STD_KEYS = ("normalize_std", "std")


def _imagenet(image_size: int, **kwargs: Any) -> Preprocessing:
    """The reference's ``preprocess_images`` settings as a :class:`Preprocessing`.

    Raises
    ------
    TypeError
        For a keyword other than ``normalize_mean``/``normalize_std`` (or ``mean``/``std``).
    """
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
    """Image files as the network's input: float32 array ``(N, 3, image_size, image_size)``.

    Squashed to ``image_size x image_size`` (bilinear), scaled to [0, 1] and normalised with
    ``normalize_mean``/``normalize_std`` (default ImageNet's), as the reference does.

    Raises
    ------
    FileNotFoundError
        If a file does not exist.
    """
    return _imagenet(image_size, **kwargs)(list(image_filepaths)).numpy()


class FunctionPreprocessing:
    """A plugin's own preprocessing function, in the shape ``brainscore``'s extractor uses.

    Parameters
    ----------
    function : callable (list of paths) -> array (N, 3, S, S)
    image_size : int
        ``S``; default the function's ``image_size`` keyword (a ``functools.partial``), else 224.
    """

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
    """The reference's ``PytorchWrapper(model, preprocessing, identifier=None)``: ``brainscore``'s activations extractor.

    Parameters
    ----------
    model : torch.nn.Module
    preprocessing : callable or Preprocessing, optional
        See the module notes (default: ImageNet preprocessing at 224 pixels).
    identifier : str, optional
        The model's name (default: the network's class name, as the reference).
    forward_kwargs : dict, optional
        The reference's extra keyword arguments of the forward pass; not supported (an error when given).
    batch_size : int, optional
        Images per forward pass (default ``brainscore``'s: 4 on the CPU, 64 on a GPU; features do not
        depend on it beyond rounding).
    device : str, optional
    **kwargs
        Passed to :class:`~brainscore.models.extraction.ActivationsExtractor` (e.g. ``weights_hash``).

    Raises
    ------
    NotImplementedError
        For a non-empty ``forward_kwargs``.
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
        """Activations of ``layers`` (None: the network's output, ``"logits"``) on ``stimuli``.

        ``stimuli`` is a StimulusSet or, as the reference also takes, a list of image paths (then the
        presentations carry a ``stimulus_path`` coordinate). ``stimuli_identifier`` is accepted and
        unused: activations are cached by the images' content. With ``require_variance`` (or
        ``number_of_trials`` > 1 and ``require_variance``), each trial is shown with a microsaccade shift.
        """
        del stimuli_identifier
        from brainscore.data.stimuli import StimulusSet
        from brainscore.models.extraction import LOGITS

        layers = [LOGITS] if layers is None else list(layers)
        self._microsaccade_helper.number_of_trials = number_of_trials
        if isinstance(stimuli, StimulusSet):
            return _with_shift_coords(super().__call__(stimuli, layers, number_of_trials=number_of_trials,
                                                       require_variance=require_variance, **kwargs), require_variance)
        return paths_activations(lambda stimulus_set: _with_shift_coords(
            super(PytorchWrapper, self).__call__(stimulus_set, layers, number_of_trials=number_of_trials,
                                                 require_variance=require_variance, **kwargs), require_variance),
            stimuli)

    def from_paths(self, stimuli_paths: Sequence[str], layers: Sequence[str] | None = None,
                   stimuli_identifier: Any = None, require_variance: bool = False, **kwargs: Any):
        """Activations on image files (the reference's ``from_paths``); see :meth:`__call__`."""
        kwargs.setdefault("number_of_trials", self._microsaccade_helper.number_of_trials)
        return self(list(stimuli_paths), layers, stimuli_identifier, require_variance=require_variance, **kwargs)

    def from_stimulus_set(self, stimulus_set: Any, layers: Sequence[str] | None = None,
                          stimuli_identifier: Any = None, require_variance: bool = False, **kwargs: Any):
        """Activations on a StimulusSet, its columns as presentation coordinates (the reference's
        ``from_stimulus_set``); see :meth:`__call__`."""
        kwargs.setdefault("number_of_trials", self._microsaccade_helper.number_of_trials)
        return self(stimulus_set, layers, stimuli_identifier, require_variance=require_variance, **kwargs)

    @property
    def _extractor(self) -> "PytorchWrapper":
        """Itself: reference plugins reach the extractor helper as ``wrapper._extractor`` (e.g. ``set_visual_degrees``)."""
        return self


def paths_activations(call: Callable[[Any], Any], stimuli: Sequence[Any]) -> Any:
    """``call(stimulus_set)`` on image files given as paths: one row per distinct file (``stimulus_id`` and
    ``stimulus_path`` the path), then one presentation per listed path, in the listed order (a file listed twice
    gives two presentations)."""
    from brainscore.data.stimuli import StimulusSet

    paths = [str(path) for path in stimuli]
    unique = list(dict.fromkeys(paths))
    stimulus_set = StimulusSet({"stimulus_id": unique, "stimulus_path": unique},
                               stimulus_paths={path: path for path in unique})
    activations = call(stimulus_set)
    if len(unique) != len(paths):  # the same file listed twice: one presentation per listed path
        rows = {path: np.flatnonzero(activations["stimulus_id"].values == path) for path in unique}
        activations = activations.isel(presentation=np.concatenate([rows[path] for path in paths]))
    return activations


def torchvision_preprocess(normalize_mean: Sequence[float] = IMAGENET_MEAN, normalize_std: Sequence[float] = IMAGENET_STD):
    """torchvision's ``Compose([ToTensor(), Normalize(mean, std), lambda img: img.unsqueeze(0)])``: a PIL image
    as a normalised ``(1, 3, H, W)`` tensor (the reference's helper for custom preprocessing)."""
    from torchvision import transforms

    return transforms.Compose([transforms.ToTensor(), transforms.Normalize(mean=normalize_mean, std=normalize_std),
                               lambda image: image.unsqueeze(0)])


class MicrosaccadeSettings:
    """``wrapper._microsaccade_helper``: the trials per image of the next ``from_paths``/``from_stimulus_set`` call
    (``number_of_trials``, set by each ``wrapper(...)`` call) and the microsaccade extent
    (:data:`brainscore.models.extraction.MICROSACCADE_EXTENT_DEGREES`, 0.05 degrees, Wang & Ponce 2022)."""

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
    """``wrapper`` itself. The reference turns its activation cache off for a wrapper whose identifier does not say
    everything that changes its activations (its cache is keyed by the identifier); here activations are cached by
    content (weights, architecture, preprocessing, stimulus files, code: :mod:`brainscore.models.identity`), so an
    entry is never served for another network and nothing needs turning off."""
    return wrapper
