"""Activations of video (temporal) models over time: batching, temporal contexts and time bins.

A video model maps a clip (frames over time) to layer activations that may have a time axis. This module runs
such a model over a list of stimuli and puts every layer on time bins in ms from the stimulus' onset, the
procedure of the reference's temporal inferencers (Brain-Score's video-model support, Qian et al. 2025):

- :class:`BatchExecutor`: stimuli grouped into batches of equal duration and frame rate, preprocessed in threads,
  run, and returned per stimulus in input order (after per-stimulus hooks: spatial downsampling, dtype);
- :class:`Inferencer`: one activation per stimulus, every layer flattened into ``neuroid``
  (``stimulus_path x neuroid``);
- :class:`TemporalInferencer`: videos (images held still) at a frame rate; a layer's time axis is put on time bins
  by a time alignment (:data:`TIME_ALIGNMENTS`), then averaged onto bins of ``1000 / fps`` ms
  (``stimulus_path x neuroid x time_bin``);
- :class:`CausalInferencer`: the activation at ``t`` is the model's last time step on the clip ending at ``t``
  (so it sees only the past);
- :class:`BlockInferencer`: the video cut into blocks of the model's temporal context, the blocks' activations
  joined in time.

Their activations to a stimulus set, stored by content: :mod:`brainscore.models.extraction.temporal_store`.

A layer's activation format names its axes (``layer_activation_format``, e.g. ``{"layer4": "CTHW", "fc": "C"}``):
``T`` time, ``C`` channel, ``H``/``W`` space, ``K`` token (:data:`CHANNEL_NAMES`); the batch axis is not named.

What is ours (documented deviations from the reference): a spatial downsampling of a non-square map resizes to
``(h', w')`` (the reference resizes to ``(w', h')`` and reshapes, which scrambles rows and columns of non-square
maps); a malformed model output or a stimulus out of the model's range is a ``ValueError`` naming it (the reference
asserts).
"""
from __future__ import annotations

import logging
import math
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np

from brainscore.config import usable_cores
from brainscore.data.assemblies import NeuroidAssembly
from brainscore.data.clips import Video
from brainscore.data.resize import resize_batch
from brainscore.data.video import FRAME_TOLERANCE
from brainscore.models.time_bins import average_time_bins

__all__ = ["CHANNEL_NAMES", "TIME_ALIGNMENTS", "BatchExecutor", "Inferencer", "TemporalInferencer",
           "CausalInferencer", "BlockInferencer", "stack_with_nan_padding", "fps_time_bins"]

_logger = logging.getLogger(__name__)

#: Axis letter of a layer's activation format -> the neuroid coordinate that numbers it.
CHANNEL_NAMES = {"T": "channel_temporal", "C": "channel", "H": "channel_y", "W": "channel_x", "K": "channel_token"}

#: Tolerance (ms) below which a last time bin of ``1000 / fps`` ms is not started (float round-off of durations).
_EPSILON_MS = 1e-9
#: Digits of ms a temporal context is rounded to in identifiers.
_MS_DIGITS = 3


def stack_with_nan_padding(arrays: Sequence[np.ndarray], dtype=None) -> np.ndarray:
    """Stack arrays of the same rank but different shapes, padding each at the end of every axis with NaN.

    Parameters
    ----------
    arrays : sequence of ndarray
        Same number of dimensions; at least one.
    dtype : numpy dtype, optional
        Of the result (default: numpy's promotion of the inputs, at least a float that holds NaN).

    Returns
    -------
    ndarray of shape (len(arrays), *elementwise max of the shapes)

    Raises
    ------
    ValueError
        For no arrays or arrays of different ranks.
    """
    arrays = [np.asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("stack_with_nan_padding needs at least one array")
    if len({a.ndim for a in arrays}) != 1:
        raise ValueError(f"arrays to stack must have the same number of dimensions; got shapes "
                         f"{[a.shape for a in arrays]}")
    shape = tuple(np.max([a.shape for a in arrays], axis=0)) if arrays[0].ndim else ()
    result_type = np.result_type(*arrays, np.float16) if dtype is None else np.dtype(dtype)
    stacked = np.full((len(arrays), *shape), np.nan, dtype=result_type)
    for index, array in enumerate(arrays):
        stacked[(index, *(slice(0, n) for n in array.shape))] = array
    return stacked


def fps_time_bins(duration: float, fps: float) -> np.ndarray:
    """Bins of ``1000 / fps`` ms covering ``[0, duration]`` (the last one ends at ``duration``): ``(n, 2)`` ms."""
    interval = 1000 / fps
    starts = np.arange(0, duration - _EPSILON_MS, interval)
    ends = starts + interval
    ends[-1] = duration
    return np.stack([starts, ends], axis=1)


# ---- time alignments: a layer's time steps -> time bins (ms) ---------------------------------------------------
def evenly_spaced(n_steps: int, duration: float, fps: float, num_frames: int) -> np.ndarray:
    """``n_steps`` bins evenly spaced over ``[0, duration]`` ms (the last ending exactly at ``duration``)."""
    starts = np.linspace(0, duration, n_steps + 1)[:-1]
    ends = starts + duration / n_steps
    ends[-1] = duration
    return np.stack([starts, ends], axis=1)


def per_frame_aligned(n_steps: int, duration: float, fps: float, num_frames: int) -> np.ndarray:
    """One bin of ``1000 / fps`` ms per frame: step ``k`` is ``[1000 k / fps, 1000 (k + 1) / fps)``.

    Raises
    ------
    ValueError
        If the layer has fewer time steps than the video has frames.
    """
    if num_frames > n_steps:
        raise ValueError(f"per_frame_aligned: a layer has {n_steps} time steps for a video of {num_frames} frames; "
                         f"per-frame alignment needs one step per frame (use time_alignment='evenly_spaced')")
    starts = np.arange(n_steps) * (1000 / fps)
    return np.stack([starts, starts + 1000 / fps], axis=1)


def estimate_layer_fps(n_steps: int, duration: float, fps: float, num_frames: int) -> np.ndarray:
    """Bins of a whole number of frame intervals: ``round(duration / n_steps / (1000 / fps))`` frames per step."""
    frame_interval = 1000 / fps
    interval = frame_interval * int(round(duration / n_steps / frame_interval))
    starts = np.arange(n_steps) * interval
    return np.stack([starts, starts + interval], axis=1)


def ignore_time(n_steps: int, duration: float, fps: float, num_frames: int) -> np.ndarray:
    """One bin ``[0, duration]``; the layer's time axis stays a channel (``channel_temporal``)."""
    return np.array([[0.0, duration]])


#: The time alignments by the reference's names.
TIME_ALIGNMENTS: dict[str, Callable[..., np.ndarray]] = {
    f.__name__: f for f in (evenly_spaced, per_frame_aligned, estimate_layer_fps, ignore_time)}


# ---- batches ----------------------------------------------------------------------------------------------------
class BatchExecutor:
    """Run a model on stimuli in batches of stimuli that share a property (e.g. duration and frame rate).

    Parameters
    ----------
    get_activations : callable
        ``(list of preprocessed inputs, list of layer names) -> {layer: array of shape (batch, ...)}``.
    preprocessing : callable
        ``stimulus -> model input``; run in a thread pool.
    batch_size : int
    batch_padding : bool
        Fill a short batch with copies of its last stimulus (their outputs are dropped).
    batch_grouper : callable, optional
        ``stimulus -> hashable``; only stimuli with equal values share a batch.
    max_workers : int, optional
        Threads for preprocessing (default: ``min(batch_size, cores this process may use)``).

    Hooks: ``register_before_hook(stimulus -> stimulus)`` and ``register_after_hook((value, layer, stimulus) ->
    value)``, applied to each stimulus before preprocessing and to each stimulus' activation of each layer.
    """

    def __init__(self, get_activations: Callable, preprocessing: Callable, batch_size: int,
                 batch_padding: bool = False, batch_grouper: Callable[[Any], Hashable] | None = None,
                 max_workers: int | None = None):
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be >= 1; got {batch_size!r}")
        self.get_activations = get_activations
        self.preprocess = preprocessing
        self.batch_size = int(batch_size)
        self.batch_padding = batch_padding
        self.batch_grouper = batch_grouper
        self.max_workers = max_workers
        self.stimuli: list = []
        self.before_hooks: list[Callable] = []
        self.after_hooks: list[Callable] = []

    def register_before_hook(self, hook: Callable, index: int | None = None) -> None:
        self.before_hooks.insert(len(self.before_hooks) if index is None else index, hook)

    def register_after_hook(self, hook: Callable, index: int | None = None) -> None:
        self.after_hooks.insert(len(self.after_hooks) if index is None else index, hook)

    def add_stimuli(self, stimuli: Sequence) -> None:
        self.stimuli.extend(stimuli)

    def clear_stimuli(self) -> None:
        self.stimuli = []

    def batches(self) -> list[list[int]]:
        """Indices of the added stimuli per batch: groups in first-seen order, each cut into ``batch_size``."""
        groups: dict[Hashable, list[int]] = {}
        for index, stimulus in enumerate(self.stimuli):
            key = 0 if self.batch_grouper is None else self.batch_grouper(stimulus)
            groups.setdefault(key, []).append(index)
        return [members[i:i + self.batch_size] for members in groups.values()
                for i in range(0, len(members), self.batch_size)]

    def execute(self, layers: Sequence[str]) -> "OrderedDict[str, list[np.ndarray]]":
        """Every added stimulus' activation of each layer, in the order added; the stimuli are cleared.

        Raises
        ------
        ValueError
            If ``get_activations`` does not return a mapping with each layer and one row per input.
        """
        stimuli, batches = self.stimuli, self.batches()
        self.clear_stimuli()
        results: dict[str, list] = {layer: [None] * len(stimuli) for layer in layers}
        workers = max(1, min(self.batch_size, usable_cores() if self.max_workers is None else int(self.max_workers)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for indices in batches:
                batch = [stimuli[i] for i in indices]
                for hook in self.before_hooks:
                    batch = [hook(stimulus) for stimulus in batch]
                padding = self.batch_size - len(batch) if self.batch_padding else 0
                inputs = list(pool.map(self.preprocess, batch + [batch[-1]] * padding))
                outputs = self.get_activations(inputs, list(layers))
                if not isinstance(outputs, Mapping) or any(layer not in outputs for layer in layers):
                    raise ValueError(f"get_activations must return a mapping with every requested layer {list(layers)}; "
                                     f"got {type(outputs).__name__} with "
                                     f"{list(outputs) if isinstance(outputs, Mapping) else 'no keys'}")
                for layer in layers:
                    values = outputs[layer]
                    if len(values) != len(inputs):
                        raise ValueError(f"get_activations returned {len(values)} rows for layer {layer!r} on a batch "
                                         f"of {len(inputs)} inputs")
                    for position, (index, stimulus) in enumerate(zip(indices, batch)):
                        value = np.asarray(values[position])
                        for hook in self.after_hooks:
                            value = hook(value, layer, stimulus)
                        results[layer][index] = value
        return OrderedDict(results)


# ---- inferencers -------------------------------------------------------------------------------------------------
class Inferencer:
    """Run a model on stimuli (paths) and package each layer, flattened, into ``stimulus_path x neuroid``.

    Parameters
    ----------
    get_activations : callable
        ``(list of preprocessed inputs, layers) -> {layer: array (batch, ...)}``, axes after the batch as named by
        ``layer_activation_format``.
    preprocessing : callable
        ``stimulus -> model input``.
    layer_activation_format : dict of str to str
        Each layer's axes, letters of :data:`CHANNEL_NAMES`, e.g. ``{"layer1": "CTHW", "fc": "C"}``.
    stimulus_type : type
        Loads a stimulus: ``stimulus_type.from_path(path)`` (the video inferencers default to
        :class:`brainscore.data.clips.Video`).
    visual_degrees : float
        Of the stimuli (default 8).
    max_spatial_size : int or float, optional
        Downsample (area averaging) maps with H and W: an int caps the longer side (aspect kept), a float < 1
        scales both sides.
    dtype : numpy float type
        Of the activations (default float16, as the reference).
    batch_size, batch_grouper, batch_padding, max_workers
        See :class:`BatchExecutor`.

    Raises
    ------
    ValueError
        For a proportional ``max_spatial_size`` >= 1.
    """

    #: The stimulus type when none is given (the video inferencers: :class:`brainscore.data.clips.Video`).
    default_stimulus_type: Any = None

    def __init__(self, get_activations: Callable, preprocessing: Callable, layer_activation_format: Mapping[str, str],
                 stimulus_type: Any = None, visual_degrees: float = 8.0, max_spatial_size: int | float | None = None,
                 dtype=np.float16, batch_size: int = 64, batch_grouper: Callable | None = None,
                 batch_padding: bool = False, max_workers: int | None = None, **_ignored: Any):
        if isinstance(max_spatial_size, float) and not max_spatial_size < 1:
            raise ValueError(f"a proportional max_spatial_size must be < 1; got {max_spatial_size}")
        self.stimulus_type = stimulus_type if stimulus_type is not None else self.default_stimulus_type
        self.layer_activation_format = dict(layer_activation_format or {})
        self.max_spatial_size = max_spatial_size
        self.visual_degrees = visual_degrees
        self.dtype = np.dtype(dtype).type
        self._executor = BatchExecutor(get_activations, preprocessing, batch_size, batch_padding, batch_grouper,
                                       max_workers)
        self._executor.register_after_hook(self._downsample)
        self._executor.register_after_hook(lambda value, layer, stimulus: value.astype(self.dtype))

    @property
    def identifier(self) -> str:
        """What changes the activations besides the model: class, dtype, visual degrees, spatial cap."""
        parts = f"{type(self).__name__}.dtype={self.dtype.__name__}.vdeg={self.visual_degrees}"
        return parts + (f".max_s={self.max_spatial_size}" if self.max_spatial_size is not None else "")

    @property
    def preprocessing(self) -> Callable:
        return self._executor.preprocess

    @property
    def batching(self) -> tuple[int, bool]:
        """``(batch_size, batch_padding)`` of the executor (they can change float round-off, so they key stored
        activations)."""
        return self._executor.batch_size, self._executor.batch_padding

    def set_visual_degrees(self, visual_degrees: float) -> None:
        self.visual_degrees = visual_degrees

    def __call__(self, paths: Sequence, layers: Sequence[str]) -> NeuroidAssembly:
        """Activations of ``layers`` to the stimuli at ``paths``: ``stimulus_path x neuroid [x time_bin]``.

        Raises
        ------
        KeyError
            For a layer without an activation format.
        """
        return self.package(self.run_layers(paths, self.checked_layers(layers)), [str(p) for p in paths])

    def checked_layers(self, layers: Sequence[str]) -> list[str]:
        """``layers`` as a list.

        Raises
        ------
        KeyError
            For a layer without an activation format.
        """
        layers = list(layers)
        unknown = [layer for layer in layers if layer not in self.layer_activation_format]
        if unknown:
            raise KeyError(f"layers {unknown} have no activation format; layer_activation_format names "
                           f"{list(self.layer_activation_format)}")
        return layers

    def run_layers(self, paths: Sequence, layers: Sequence[str]) -> "OrderedDict[str, dict]":
        """Each layer packaged alone (:meth:`package_layer`), from one pass over the stimuli at ``paths``; what
        :meth:`package` puts side by side. A layer's result depends on all of ``paths`` (padding, time bins)."""
        stimuli = self.load_stimuli(paths)
        activations = self.inference(stimuli, list(layers))
        return OrderedDict((layer, self.package_layer(activations.pop(layer), self.layer_activation_format[layer],
                                                      stimuli)) for layer in layers)

    def load_stimuli(self, paths: Sequence) -> list:
        return [self.load_stimulus(path) for path in paths]

    def load_stimulus(self, path) -> Any:
        return self.stimulus_type.from_path(path)

    def inference(self, stimuli: Sequence, layers: Sequence[str]) -> "OrderedDict[str, list[np.ndarray]]":
        self._executor.add_stimuli(stimuli)
        return self._executor.execute(layers)

    def package_layer(self, activations: Sequence[np.ndarray], layer_spec: str, stimuli: Sequence) -> dict:
        """One layer: ``{"values": (n_stimuli, n_neuroid[, n_time_bins]), "channels": {name: (n_neuroid,)},
        "time_bins": (n_bins, 2) or None}``."""
        values = stack_with_nan_padding(activations, dtype=self.dtype)
        values, channels = _flatten(values, _checked_format(layer_spec, values))
        return {"values": values, "channels": channels, "time_bins": None}

    def package(self, layers: "OrderedDict[str, dict]", paths: Sequence[str]) -> NeuroidAssembly:
        """The layers side by side on ``neuroid`` (coordinates ``layer``, ``neuroid_num``, ``neuroid_id`` =
        ``<layer>.<num>``, and each channel coordinate, -1 in layers without it)."""
        names = list(layers)
        sizes = [layers[name]["values"].shape[1] for name in names]
        channel_names = list(dict.fromkeys(c for name in names for c in layers[name]["channels"]))
        coords: dict[str, Any] = {"stimulus_path": ("stimulus_path", np.asarray(paths, dtype=object))}
        for channel in channel_names:
            coords[channel] = ("neuroid", np.concatenate([
                layers[name]["channels"].get(channel, np.full(size, -1, dtype=int)) for name, size in zip(names, sizes)]))
        # fixed-width strings, not objects: xarray deep-copies coordinates when an assembly is re-wrapped, one Python
        # object at a time for object arrays (5 s of 30 for r3d_18's 578,000 units on 16 images)
        coords["layer"] = ("neuroid", np.concatenate([np.full(size, name) for name, size in zip(names, sizes)]))
        coords["neuroid_num"] = ("neuroid", np.concatenate([np.arange(size) for size in sizes]))
        coords["neuroid_id"] = ("neuroid", np.concatenate([np.char.add(f"{name}.", np.arange(size).astype(str))
                                                           for name, size in zip(names, sizes)]))
        bins = layers[names[0]]["time_bins"]
        differing = [name for name in names if not np.array_equal(layers[name]["time_bins"], bins)]
        if differing:
            raise ValueError(f"layers {differing} are on other time bins than layer {names[0]!r} (e.g. "
                             f"time_alignment='estimate_layer_fps' with layers of different time resolutions); "
                             f"ask for them in separate calls")
        values = np.concatenate([layers[name]["values"] for name in names], axis=1)
        if bins is None:
            return NeuroidAssembly(values, dims=("stimulus_path", "neuroid"), coords=coords)
        coords["time_bin_start"] = ("time_bin", bins[:, 0])
        coords["time_bin_end"] = ("time_bin", bins[:, 1])
        return NeuroidAssembly(values, dims=("stimulus_path", "neuroid", "time_bin"), coords=coords)

    def _downsample(self, value: np.ndarray, layer: str, stimulus: Any) -> np.ndarray:
        dims = self.layer_activation_format[layer]
        if self.max_spatial_size is None or "H" not in dims or "W" not in dims:
            return value
        value = np.moveaxis(value, (dims.index("H"), dims.index("W")), (0, 1))
        height, width, rest = value.shape[0], value.shape[1], value.shape[2:]
        new_height, new_width = _downsampled_size(height, width, self.max_spatial_size)
        resized = resize_batch(value.reshape(1, height, width, -1).astype(np.float64), (new_width, new_height),
                               "area")[0]
        return np.moveaxis(resized.reshape(new_height, new_width, *rest), (0, 1),
                           (dims.index("H"), dims.index("W"))).astype(self.dtype)


class TemporalInferencer(Inferencer):
    """An :class:`Inferencer` for videos at ``fps`` whose layers are put on time bins of ``1000 / fps`` ms.

    Each layer's time axis (``T``; a layer without one has a single step over the whole video) is put on time bins
    by ``time_alignment`` (:data:`TIME_ALIGNMENTS`) on the longest stimulus, then averaged onto bins of
    ``1000 / fps`` ms by overlap (:func:`brainscore.models.time_bins.average_time_bins`, ``"portion"``). With
    ``"ignore_time"`` the time axis is a channel and there is one bin, the whole video. Shorter stimuli are padded
    with NaN at the end.

    Parameters
    ----------
    fps : float
        Frames per second the model samples (every stimulus is resampled to it).
    num_frames, duration : int or float, or (low, high), optional
        The frame counts and durations (ms) the model takes (inclusive; ``np.inf`` for none); a stimulus outside
        them is a ValueError.
    time_alignment : str
        One of :data:`TIME_ALIGNMENTS` (default ``"evenly_spaced"``).
    convert_img_to_video : bool
        Image paths are shown as videos of ``img_duration`` ms (default True, 1000 ms).
    batch_size : int
        Default 32; batches group stimuli of equal duration and frame rate.

    Raises
    ------
    ValueError
        For an unknown time alignment.
    """

    default_stimulus_type = Video

    def __init__(self, *args: Any, fps: float, num_frames=None, duration=None, time_alignment: str = "evenly_spaced",
                 convert_img_to_video: bool = True, img_duration: float = 1000.0, batch_size: int = 32,
                 batch_grouper: Callable | None = None, **kwargs: Any):
        if time_alignment not in TIME_ALIGNMENTS:
            raise ValueError(f"unknown time_alignment {time_alignment!r}; choose one of {sorted(TIME_ALIGNMENTS)}")
        if convert_img_to_video and img_duration is None:
            raise ValueError("img_duration (ms) is needed when convert_img_to_video is True")
        grouper = batch_grouper or (lambda video: (round(video.duration, 6), video.fps))
        super().__init__(*args, batch_size=batch_size, batch_grouper=grouper, **kwargs)
        self.fps = fps
        self.num_frames = _range(num_frames, low=1)
        self.duration = _range(duration, low=0)
        self.time_aligner = TIME_ALIGNMENTS[time_alignment]
        self.img_duration = img_duration
        self.convert_to_video = convert_img_to_video

    @property
    def identifier(self) -> str:
        identifier = f"{super().identifier}.{self.time_aligner.__name__}.fps={float(self.fps)}"
        return identifier + (f".img_dur={float(self.img_duration)}" if self.convert_to_video else "")

    def load_stimulus(self, path) -> Any:
        video = self._load_video(path)
        self._check_video(video)
        return video

    def _load_video(self, path) -> Any:
        if self.convert_to_video and self.stimulus_type.is_image_path(path):
            video = self.stimulus_type.from_img_path(path, self.img_duration, self.fps)
        else:
            video = self.stimulus_type.from_path(path)
        return video.set_fps(self.fps)

    def _check_video(self, video: Any) -> None:
        frames = int(self.fps * video.duration / 1000)
        if not self.num_frames[0] <= frames <= self.num_frames[1]:
            raise ValueError(f"the model takes {self.num_frames} frames; a stimulus of {video.duration} ms at "
                             f"{self.fps} fps has {frames}")
        if not self.duration[0] <= video.duration <= self.duration[1]:
            raise ValueError(f"the model takes stimuli of {self.duration} ms; got one of {video.duration} ms")

    def package_layer(self, activations: Sequence[np.ndarray], layer_spec: str, stimuli: Sequence,
                      durations: Sequence[float] | None = None) -> dict:
        values = stack_with_nan_padding(activations)
        layer_spec = _checked_format(layer_spec, values)
        durations = [s.duration for s in stimuli] if durations is None else list(durations)
        longest = int(np.argmax(durations))
        duration, fps = durations[longest], stimuli[longest].fps
        num_frames = int(math.floor(duration * fps / 1000 + FRAME_TOLERANCE))  # whole frame intervals, as Video.num_frames
        if self.time_aligner is ignore_time:
            values, channels = _flatten(values, layer_spec)
            return {"values": values[..., None].astype(self.dtype), "channels": channels,
                    "time_bins": ignore_time(1, duration, fps, num_frames)}
        if "T" in layer_spec:
            values = np.moveaxis(values, 1 + layer_spec.index("T"), 1)
            layer_spec = layer_spec.replace("T", "")
        else:
            values = values[:, None]
        steps = values.shape[1]
        values, channels = _flatten(np.moveaxis(values, 1, -1), layer_spec + "T")  # (n, neuroid x T) T fastest
        values = values.reshape(len(stimuli), -1, steps)
        channels = {name: coord[::steps] for name, coord in channels.items() if name != "channel_temporal"}
        source = self.time_aligner(steps, duration, fps, num_frames)
        target = fps_time_bins(source[-1, 1], self.fps)
        aligned = average_time_bins(values, source, target, "portion").astype(self.dtype)
        return {"values": aligned, "channels": channels, "time_bins": target}


class _ContextInferencer(TemporalInferencer):
    """A :class:`TemporalInferencer` that feeds the model clips of a temporal context (the reference's
    ``TemporalContextInferencerBase``).

    The context's range is the overlap of the frame counts (at ``fps``) and durations the model takes; its lower
    end is the shortest clip, and ``temporal_context_strategy`` picks the context: ``"greedy"`` the longest,
    ``"conservative"`` the shortest, ``"fix"`` ``fixed_temporal_context`` ms. Outside the video,
    ``out_of_bound_strategy="repeat"`` repeats its first or last frame. Stimuli are not checked against the range.

    Raises
    ------
    ValueError
        For ``"fix"`` without ``fixed_temporal_context``, or an unknown strategy or a fixed context outside the
        range (when the context is computed).
    """

    def __init__(self, *args: Any, temporal_context_strategy: str = "greedy",
                 fixed_temporal_context: float | None = None, out_of_bound_strategy: str = "repeat", **kwargs: Any):
        if temporal_context_strategy == "fix" and fixed_temporal_context is None:
            raise ValueError("fixed_temporal_context (ms) must be given with temporal_context_strategy='fix'")
        self.temporal_context_strategy = temporal_context_strategy
        self.fixed_temporal_context = fixed_temporal_context
        self.out_of_bound_strategy = out_of_bound_strategy
        super().__init__(*args, **kwargs)

    @property
    def identifier(self) -> str:
        lower, context = self._compute_temporal_context()
        return (f"{super().identifier}.context={round(context, _MS_DIGITS)}>{round(lower, _MS_DIGITS)}"
                f".oob={self.out_of_bound_strategy}")

    def load_stimulus(self, path) -> Any:
        return self._load_video(path)

    def _compute_temporal_context(self) -> tuple[float, float]:
        """``(shortest clip, context)`` in ms."""
        interval = 1000 / self.fps
        low = max(self.num_frames[0] * interval, self.duration[0])
        high = min(self.num_frames[1] * interval, self.duration[1])
        if low > high:
            raise ValueError(f"the frame counts {self.num_frames} at {self.fps} fps and durations {self.duration} ms "
                             f"the model takes do not overlap")
        strategy = self.temporal_context_strategy
        if strategy == "greedy":
            return low, high
        if strategy == "conservative":
            return low, low
        if strategy == "fix":
            if not low <= self.fixed_temporal_context <= high:
                raise ValueError(f"fixed temporal context {self.fixed_temporal_context} ms is outside the model's "
                                 f"range [{low}, {high}] ms")
            return low, self.fixed_temporal_context
        raise ValueError(f"unknown temporal_context_strategy {strategy!r}; choose 'greedy', 'conservative' or 'fix'")

    def _run_clips(self, clips_per_stimulus: Sequence[Sequence], layers: Sequence[str]) -> dict:
        for clips in clips_per_stimulus:
            self._executor.add_stimuli(clips)
        activations = self._executor.execute(layers)
        per_stimulus: dict[str, list[list[np.ndarray]]] = {}
        for layer in layers:
            start = 0
            for clips in clips_per_stimulus:
                per_stimulus.setdefault(layer, []).append(activations[layer][start:start + len(clips)])
                start += len(clips)
        return per_stimulus

    def package_layer(self, activations, layer_spec, stimuli, durations=None) -> dict:
        # the clips' time steps were put first
        return super().package_layer(activations, "T" + layer_spec.replace("T", ""), stimuli,
                                     durations if durations is not None else getattr(self, "_durations", None))


class CausalInferencer(_ContextInferencer):
    """Causal activations: at each frame time ``t = k * 1000 / fps`` (k = 1, 2, ... up to the video's end), the
    model's last time step on the clip ``[t - context, t)`` (from the video's start where the context reaches
    before it; ``"greedy"``), so an activation depends only on the past. Time alignment is
    ``"per_frame_aligned"``.

    Raises
    ------
    ValueError
        For another ``time_alignment``.
    """

    def __init__(self, *args: Any, **kwargs: Any):
        if kwargs.pop("time_alignment", "per_frame_aligned") != "per_frame_aligned":
            raise ValueError("CausalInferencer aligns per frame; time_alignment must be 'per_frame_aligned'")
        super().__init__(*args, time_alignment="per_frame_aligned", **kwargs)

    def inference(self, stimuli, layers):
        interval = 1000 / self.fps
        lower, context = self._compute_temporal_context()
        clips = [[stimulus.set_window(self._clip_start(end, context, lower), end, padding=self.out_of_bound_strategy)
                  for end in np.arange(interval, stimulus.duration + interval, interval)] for stimulus in stimuli]
        self._durations = None
        activations = self._run_clips(clips, layers)
        result = OrderedDict()
        for layer in layers:
            spec = self.layer_activation_format[layer]
            result[layer] = [np.stack([clip.take(-1, axis=spec.index("T")) if "T" in spec else clip
                                       for clip in video]) for video in activations[layer]]
        return result

    def _clip_start(self, end: float, context: float, lower: float) -> float:
        if self.temporal_context_strategy != "greedy" or end - context >= 0:
            return end - context
        return end - lower if end < lower else 0


class BlockInferencer(_ContextInferencer):
    """Activations block by block: the video cut into consecutive clips of the temporal context (the last one
    padded past the video's end), each run alone, their activations joined in time (an infinite context runs
    the whole video once). The time bins span the blocks, so they may end after the video."""

    def inference(self, stimuli, layers):
        _, context = self._compute_temporal_context()
        if np.isinf(context):
            clips = [[stimulus] for stimulus in stimuli]
            self._durations = [stimulus.duration for stimulus in stimuli]
        else:
            starts = [np.arange(0, stimulus.duration, context) for stimulus in stimuli]
            clips = [[stimulus.set_window(start, start + context, padding=self.out_of_bound_strategy)
                      for start in video_starts] for stimulus, video_starts in zip(stimuli, starts)]
            self._durations = [video_starts[-1] + context for video_starts in starts]
        activations = self._run_clips(clips, layers)
        result = OrderedDict()
        for layer in layers:
            spec = self.layer_activation_format[layer]
            if "T" in spec:
                result[layer] = [np.concatenate([np.moveaxis(clip, spec.index("T"), 0) for clip in video])
                                 for video in activations[layer]]
            else:
                result[layer] = [np.stack(video) for video in activations[layer]]
        return result


# ---- helpers ----------------------------------------------------------------------------------------------------
def _range(value, low: float) -> tuple[float, float]:
    if value is None:
        return (low, np.inf)
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise ValueError(f"a range must be (low, high); got {value!r}")
        return (value[0], value[1])
    return (value, value)


def _checked_format(layer_spec: str, values: np.ndarray) -> str:
    unknown = [axis for axis in layer_spec if axis not in CHANNEL_NAMES]
    if unknown or len(set(layer_spec)) != len(layer_spec) or values.ndim != 1 + len(layer_spec):
        raise ValueError(f"activation format {layer_spec!r} must name each axis after the batch once with letters of "
                         f"{''.join(CHANNEL_NAMES)}; the layer's activations have shape {values.shape[1:]}")
    return layer_spec


def _flatten(values: np.ndarray, layer_spec: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """``(n, *axes)`` -> ``(n, prod(axes))`` in C order, with each axis' index as a channel coordinate."""
    shape = values.shape[1:]
    indices = np.unravel_index(np.arange(int(np.prod(shape, dtype=np.int64))), shape)
    channels = {CHANNEL_NAMES[axis]: index for axis, index in zip(layer_spec, indices)}
    return values.reshape(len(values), -1), channels


def _downsampled_size(height: int, width: int, max_spatial_size: int | float) -> tuple[int, int]:
    if isinstance(max_spatial_size, int):
        if height > width:
            new_height, new_width = max_spatial_size, int(width * max_spatial_size / height)
        else:
            new_height, new_width = int(height * max_spatial_size / width), max_spatial_size
    else:
        new_height, new_width = int(height * max_spatial_size), int(width * max_spatial_size)
    return max(1, new_height), max(1, new_width)
