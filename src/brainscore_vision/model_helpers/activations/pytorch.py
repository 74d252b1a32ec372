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

__all__ = ["PytorchWrapper", "load_preprocess_images", "load_images", "preprocess_images", "FunctionPreprocessing"]

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

    @property
    def _extractor(self) -> "PytorchWrapper":
        """Itself: reference plugins reach the extractor helper as ``wrapper._extractor`` (e.g. ``set_visual_degrees``)."""
        return self
