"""The reference's ``temporal.utils``: ``batch_2d_resize`` (on :func:`brainscore.data.resize.resize_batch`),
``stack_with_nan_padding``, ``assembly_align_to_fps`` (on :mod:`brainscore.models.extraction.temporal`), the model
accessors and ``download_weight_file`` (:func:`brainscore.models.weights.weights_file_from_url`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from brainscore.data.resize import resize_batch
from brainscore.models.extraction.temporal import Inferencer, fps_time_bins, stack_with_nan_padding
from brainscore.models.extraction.temporal_store import TemporalExtractor

__all__ = ["batch_2d_resize", "stack_with_nan_padding", "assembly_align_to_fps", "get_inferencer", "get_base_model",
           "get_specified_layers", "switch_inferencer", "download_weight_file"]

#: The reference's mode names -> :func:`brainscore.data.resize.resize_batch`'s.
_MODES = {"pool": "area", "bilinear": "bilinear"}


def batch_2d_resize(arr: np.ndarray, size, mode: str) -> np.ndarray:
    """``(N, H, W, C)`` images resized to ``size`` ``(width, height)``: :func:`brainscore.data.resize.resize_batch`
    with the reference's mode names, ``"pool"`` (its ``"area"``) or ``"bilinear"`` (ValueError for another; the
    other errors are ``resize_batch``'s)."""
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {sorted(_MODES)}; got {mode!r}")
    return resize_batch(arr, size, _MODES[mode])


def assembly_align_to_fps(output_assembly: Any, fps: float, mode: str = "portion") -> Any:
    """``output_assembly`` (with ``time_bin_start``/``time_bin_end``, ms) averaged onto bins of ``1000 / fps`` ms
    from 0 to its last bin's end (:func:`brainscore.models.extraction.temporal.fps_time_bins`)."""
    from brainscore_vision.model_helpers.brain_transformation.temporal import assembly_time_align

    duration = float(np.atleast_1d(output_assembly["time_bin_end"].values)[-1])
    return assembly_time_align(output_assembly, [tuple(b) for b in fps_time_bins(duration, fps)], mode=mode)


def get_inferencer(any_model: Any) -> Inferencer:
    """The inferencer of an inferencer, an extractor, an ``ActivationWrapper`` or a ``ModelCommitment`` of one
    (ValueError for anything else)."""
    if isinstance(any_model, Inferencer):
        return any_model
    if isinstance(any_model, TemporalExtractor):
        return any_model.inferencer
    base = _base_model_or_none(any_model)
    if base is not None:
        return base.inferencer
    raise ValueError(f"no temporal inferencer found in {type(any_model).__name__} (expected an Inferencer, an "
                     f"ActivationsExtractor, an ActivationWrapper or a ModelCommitment of one)")


def _base_model_or_none(any_model: Any) -> Any:
    from brainscore_vision.model_helpers.activations.temporal.model.base import ActivationWrapper

    if isinstance(any_model, ActivationWrapper):
        return any_model
    wrapped = getattr(any_model, "activations_model", None)
    return wrapped if isinstance(wrapped, ActivationWrapper) else None


def get_base_model(any_model: Any) -> Any:
    """The ``ActivationWrapper`` of a wrapper or of a ``ModelCommitment`` of one (ValueError otherwise)."""
    base = _base_model_or_none(any_model)
    if base is None:
        raise ValueError(f"no temporal ActivationWrapper found in {type(any_model).__name__}")
    return base


def get_specified_layers(any_model: Any) -> list[str]:
    """The layers named in the model's ``layer_activation_format``, in its order."""
    return list(get_inferencer(any_model).layer_activation_format)


def switch_inferencer(any_model: Any, new_inferencer_cls: type, **kwargs: Any) -> None:
    """Rebuild the model's extractor with ``new_inferencer_cls(**kwargs)``; a value ``'same'`` takes the current
    inferencer's attribute of that name."""
    inferencer = get_inferencer(any_model)
    kwargs = {key: getattr(inferencer, key) if value == "same" else value for key, value in kwargs.items()}
    get_base_model(any_model).build_extractor(new_inferencer_cls, **kwargs)


def download_weight_file(url: str, folder: str | None = None) -> str:
    """The reference's name for :func:`brainscore.models.weights.weights_file_from_url`."""
    from brainscore.models.weights import weights_file_from_url

    return weights_file_from_url(url, folder)
