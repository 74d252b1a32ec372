"""Activations of a plain function of images, ``get_activations(inputs, layer_names) -> {layer: array}``.

The reference lets a model plugin hand its extractor a function instead of a network (its Gabor-filter
models, HMAX, TensorFlow/Keras/JAX wrappers). A function hides what ``brainscore``'s PyTorch extractor
keys stored activations by (weights, architecture), so :class:`FunctionExtractor` keys them by the
code that defines the function instead: :func:`function_source_key`, a sha256 over every file of the
folder that defines it (relative path and sha256 of each, :func:`brainscore.caching.file_hashes`,
remembered per file state) and the function's module path within that folder and qualified name.
Editing any file of the plugin changes the key, so an entry computed by other code is never served.

The folder is the outermost real package (a directory with an ``__init__.py``) above the function's
module: for a reference-layout plugin folder imported by ``brainscore`` (``<plugin dir>.models.NAME``,
whose two outer packages are synthetic) that is ``models/NAME``, the plugin folder; for a module that
is in no package (a script), the script's directory. Where no such folder is found, or the function's
source file is not inside it (a function defined in an interactive session, in ``exec``'d text, a
builtin), or the folder holds more than :data:`MAX_SOURCE_FILES` files or :data:`MAX_SOURCE_BYTES`
bytes, the key is None and :class:`FunctionExtractor` computes the activations without storing them
(never under a key that might not match).

Not in the key: state the function reads from outside its folder (a weights file elsewhere, a
configuration object passed at run time beyond the model identifier, which is in the key) and the
versions of libraries other than :data:`brainscore.caching.code.NUMERIC_LIBRARIES`.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from brainscore.caching import content_key, file_hashes
from brainscore.errors import ValidationError
from brainscore.models.extraction.core import ActivationsCore, BatchRunner

__all__ = ["FunctionExtractor", "PathInputs", "function_source_key", "SourceKey", "MAX_SOURCE_FILES",
           "MAX_SOURCE_BYTES", "activations_of_files"]

#: most files a plugin folder may hold for its activations to be stored (more: computed, not stored)
MAX_SOURCE_FILES = 2000
#: most bytes (all files together) a plugin folder may hold for its activations to be stored
MAX_SOURCE_BYTES = 1 << 30
_SKIPPED_DIRS = {"__pycache__"}


class SourceKey(str):
    """The content key of a function's code (a str, 64 hex characters) with what it was computed from.

    Attributes
    ----------
    folder : Path
        The folder whose files were hashed.
    function : str
        ``<module path within the folder>:<qualified name>`` (e.g. ``model:GaborModel._get_activations``).
    files : int
        How many files were hashed.
    """

    folder: Path
    function: str
    files: int


def _target(function: Any) -> Any:
    """The Python function behind ``function``: a partial's ``func``, a bound method's ``__func__``, an
    object's ``__call__``."""
    seen = 0
    while seen < 16:
        seen += 1
        if isinstance(function, functools.partial):
            function = function.func
        elif inspect.ismethod(function):
            function = function.__func__
        elif inspect.isfunction(function):
            return function
        elif callable(function) and not inspect.isclass(function) and not inspect.isbuiltin(function):
            function = type(function).__call__
        else:
            return function
    return function


def _package_folder(module_name: str) -> Path | None:
    """Folder of the outermost real package (one with an ``__init__.py`` file) of ``module_name``, or None."""
    parts = module_name.split(".")
    for end in range(1, len(parts)):
        package = sys.modules.get(".".join(parts[:end]))
        init = getattr(package, "__file__", None) if package is not None else None
        if init and Path(init).name == "__init__.py" and Path(init).is_file():
            return Path(init).resolve().parent
    return None


def _folder_files(folder: Path) -> list[tuple[str, Path]] | None:
    """(relative posix path, path) of every regular file under ``folder`` (no ``__pycache__``, no hidden entries,
    symbolic links to folders not followed), sorted; None when over :data:`MAX_SOURCE_FILES` or
    :data:`MAX_SOURCE_BYTES`."""
    found: list[tuple[str, Path]] = []
    total = 0
    for root, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith("."))
        for name in files:
            if name.startswith(".") or name.endswith((".pyc", ".pyo")):
                continue
            path = Path(root) / name
            if not path.is_file():  # a dangling link, a socket: nothing a plugin reads
                continue
            total += path.stat().st_size
            found.append((path.relative_to(folder).as_posix(), path))
            if len(found) > MAX_SOURCE_FILES or total > MAX_SOURCE_BYTES:
                return None
    return sorted(found)


def function_source_key(function: Callable[..., Any]) -> tuple[SourceKey | None, str]:
    """The content key of the code that defines ``function``, and a sentence saying what was hashed or why not.

    Parameters
    ----------
    function : callable
        A function, bound method, ``functools.partial`` or callable object.

    Returns
    -------
    (SourceKey or None, str)
        The key (see the module notes) or None where it cannot be known, with the reason, e.g.
        ``"get_activations was defined in an interactive session (<stdin>), not in a file"``.
    """
    target = _target(function)
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    module_name = getattr(target, "__module__", None)
    code = getattr(target, "__code__", None)
    label = f"{module_name}.{name}" if module_name and name else repr(function)
    if code is None or not name:
        return None, f"{label} is not a Python function defined in a file (no code object to locate)"
    filename = code.co_filename
    if not filename or filename.startswith("<") or not Path(filename).is_file():
        return None, (f"{label} was defined in an interactive session or generated code ({filename}), not in a "
                      f"file; define it in a file of a plugin folder to have its activations stored")
    if not module_name:
        return None, f"{label} names no module: it was compiled from {filename} outside an import"
    source = Path(filename).resolve()
    module = sys.modules.get(module_name)
    module_file = getattr(module, "__file__", None) if module is not None else None
    if module_file is None or Path(module_file).resolve() != source:
        return None, (f"{label} was compiled from {source}, which is not the file of its module {module_name!r} "
                      f"({module_file}); its code cannot be located reliably")
    folder = _package_folder(module_name) or source.parent
    try:
        relative_module = source.relative_to(folder).with_suffix("").as_posix()
    except ValueError:
        return None, f"{label} is defined in {source}, outside the folder {folder} of its package"
    files = _folder_files(folder)
    if files is None:
        return None, (f"the folder {folder} that defines {label} holds more than {MAX_SOURCE_FILES} files or "
                      f"{MAX_SOURCE_BYTES >> 20} MiB: too much to hash for a cache key; put the model in a plugin "
                      f"folder of its own")
    try:
        digests = [[relative, file_hashes(path)["sha256"]] for relative, path in files]
    except OSError as error:
        return None, f"a file of {folder} could not be read to key {label}'s activations ({error})"
    key = SourceKey(content_key(kind="function-source", files=digests, module=relative_module, qualname=name))
    key.folder, key.function, key.files = folder, f"{relative_module}:{name}", len(files)
    return key, f"{len(files)} files of {folder}, function {relative_module}:{name}"


class PathInputs:
    """The extractor's inputs for a function model: the batch as a list of file paths, or ``function(paths)``.

    Parameters
    ----------
    function : callable (list of str) -> array, optional
        The plugin's preprocessing; None hands the paths themselves to ``get_activations``.
    key : dict, optional
        What identifies ``function`` in cache keys (default: its location in the code, when given).
    image_size : int, optional
        Side of the images the function makes, in pixels (only for microsaccade coordinates).
    """

    channels_last = False

    def __init__(self, function: Callable[[list], Any] | None = None, key: dict | None = None,
                 image_size: int | None = None):
        self.function = function
        self._key = key if key is not None else ({} if function is None else {"function": repr(function)})
        self.image_size = image_size

    def key(self) -> dict:
        """Cache-key fields of the inputs."""
        return {"inputs": "paths" if self.function is None else "function", **self._key}

    def __call__(self, paths: Sequence[Any]) -> Any:
        paths = [str(p) for p in paths]
        return paths if self.function is None else self.function(paths)


class FunctionExtractor(ActivationsCore):
    """Activations from ``get_activations(inputs, layer_names) -> {layer: array (N, ...)}``, stored by the key of
    its code (:func:`function_source_key`).

    Parameters
    ----------
    get_activations : callable
        Called once per batch with the inputs (see :class:`PathInputs`) and the requested layer names; returns a
        mapping with an array of ``N`` rows (one per input) for each of them.
    identifier : str
        The model's name (in the ``model`` coordinate and in the cache key).
    inputs : PathInputs, optional
        What ``get_activations`` receives (default: the files' paths).
    batch_size : int
        Inputs per call, at least 1.
    source_key : str or None, optional
        The key of the function's code; default :func:`function_source_key`. None (found or given): the
        activations are computed and not stored (:attr:`cacheable` is False).
    cache : bool
        False stores nothing even when a key is known (the reference's ``identifier=False``).

    Raises
    ------
    TypeError
        If ``get_activations`` is not callable.
    """

    def __init__(self, get_activations: Callable[..., Any], identifier: str, inputs: PathInputs | None = None,
                 batch_size: int = 64, source_key: Any = "find", cache: bool = True, progress: bool = True):
        if not callable(get_activations):
            raise TypeError(f"get_activations must be a function (inputs, layer_names) -> {{layer: array}}, "
                            f"got {type(get_activations).__name__}")
        super().__init__(identifier, inputs or PathInputs(), batch_size, progress=progress, prefetch=False,
                         background_writes=False)
        self.get_activations = get_activations
        if source_key == "find":
            source_key, self.source_description = function_source_key(get_activations)
        else:
            self.source_description = "given" if source_key is not None else "no key given"
        if not cache:
            source_key, self.source_description = None, "caching turned off for this model"
        self.source_key: str | None = source_key
        self.cacheable = source_key is not None

    def extract(self, stimuli: Any, layers: Sequence[str], number_of_trials: int = 1, require_variance: bool = False,
                visual_degrees: float | None = None) -> dict:
        """:meth:`ActivationsCore.extract`; several microsaccade trials are refused (a function is shown files).

        Raises
        ------
        ValidationError
            With ``require_variance`` and ``number_of_trials`` above 1, and as :meth:`ActivationsCore.extract`.
        """
        if require_variance and int(number_of_trials) > 1:
            raise ValidationError(f"model {self.identifier!r} computes its activations with a get_activations "
                                  f"function, which cannot be shown microsaccade-shifted images "
                                  f"(number_of_trials={number_of_trials} with require_variance); score it on "
                                  f"benchmarks that show each image once")
        # one trial is the unshifted image: the same features as without require_variance
        return super().extract(stimuli, layers, number_of_trials=1, require_variance=False,
                               visual_degrees=visual_degrees)

    @property
    def weights_hash(self) -> None:
        """None: a function has no weights (its code is keyed instead, :attr:`architecture_fingerprint`)."""
        return None

    @property
    def architecture_fingerprint(self) -> str | None:
        """sha256 of the key of the function's code (:func:`function_source_key`) and the model identifier, or
        None when the code's key cannot be known. It keys the stored activations and everything derived from them
        (layer selection, readouts)."""
        if self.source_key is None:
            return None
        return content_key(kind="function-model", source=str(self.source_key), identifier=self.identifier)

    def numerics(self) -> dict:
        """``{"framework": "function"}``: the numeric libraries' versions enter every key through the cache's code
        hash."""
        return {"framework": "function"}

    def _key(self, stimuli_hash: str, layer: str, plan: dict, architecture: str | None = None,
             numerics: dict | None = None) -> str:
        if self.source_key is None:
            raise ValidationError(f"model {self.identifier!r}: its activations are not stored ({self.source_description})")
        return content_key(kind="function-activations", model=self.architecture_fingerprint,
                           inputs=self.preprocessing.key(), stimuli=stimuli_hash, layer=layer, plan=plan)

    def _check_layers(self, layers: Sequence[str]) -> None:
        bad = [layer for layer in layers if not isinstance(layer, str) or not layer]
        if bad:
            raise ValidationError(f"model {self.identifier!r}: layer names must be non-empty strings, got {bad!r}")

    @contextlib.contextmanager
    def _batches(self, layers: Sequence[str]) -> Iterator[BatchRunner]:
        """Yields a runner calling ``get_activations(batch, layers)`` and checking its answer (see :meth:`_arrays`)."""
        layers = list(layers)

        def run(batch: Any, shift_x: float, shift_y: float) -> dict[str, np.ndarray]:
            if shift_x or shift_y:
                raise ValidationError(f"model {self.identifier!r} computes its activations with a get_activations "
                                      f"function, which cannot be shown microsaccade-shifted images; score it on "
                                      f"benchmarks that show each image once")
            answer = self.get_activations(batch, list(layers))
            self.forward_passes += 1
            return self._arrays(answer, layers, len(batch))

        yield run

    def _arrays(self, answer: Any, layers: Sequence[str], rows: int) -> dict[str, np.ndarray]:
        """``answer`` checked: a mapping with each of ``layers``, numeric arrays of ``rows`` rows, as float32.

        Raises
        ------
        ValidationError
            Naming the model and the layer: not a mapping, a layer missing, another number of rows, a
            non-numeric array, or values that are not finite (NaN or infinite, which would be stored and scored).
        """
        if not hasattr(answer, "keys") or not hasattr(answer, "__getitem__"):
            raise ValidationError(f"model {self.identifier!r}: get_activations returned {type(answer).__name__}, "
                                  f"not a mapping of layer name to array")
        arrays = {}
        for layer in layers:
            if layer not in answer:
                raise ValidationError(f"model {self.identifier!r}: get_activations returned no layer {layer!r} "
                                      f"(it returned {sorted(map(str, answer.keys()))[:10]})")
            value = answer[layer]
            if hasattr(value, "detach"):  # a torch tensor
                value = value.detach().cpu().numpy()
            try:
                array = np.asarray(value)
            except Exception as error:  # noqa: BLE001 - a plugin's odd object: said in one line
                raise ValidationError(f"model {self.identifier!r}: layer {layer!r} is not an array ({error})") from error
            if array.dtype.kind not in "biuf" or array.ndim < 1 or array.shape[0] != rows:
                raise ValidationError(f"model {self.identifier!r}: layer {layer!r} must be a numeric array with one "
                                      f"row per input ({rows}), got dtype {array.dtype} and shape {array.shape}")
            array = array.astype(np.float32)
            if array.ndim == 1:
                array = array[:, None]
            if not np.isfinite(array).all():
                raise ValidationError(f"model {self.identifier!r}: layer {layer!r} has NaN or infinite values "
                                      f"({int((~np.isfinite(array)).sum())} of {array.size}); they would be scored "
                                      f"as numbers")
            arrays[layer] = array
        return arrays

    def cache_paths(self, stimuli: Any, layers: Sequence[str]) -> dict[str, Path]:
        """:meth:`ActivationsCore.cache_paths`.

        Raises
        ------
        ValidationError
            When the activations are not stored (:attr:`cacheable` is False).
        """
        return super().cache_paths(stimuli, layers)


def activations_of_files(call: Callable[[Any], Any], paths: Sequence[Any]) -> Any:
    """``call(stimulus_set)`` on image files given as paths (the reference's extractors take lists of paths).

    ``call`` sees one row per distinct file (:func:`brainscore.data.stimuli.stimulus_set_of_files`); its
    ``presentation x ...`` answer is then given one presentation per listed path, in the listed order (a file
    listed twice gives two presentations).
    """
    from brainscore.data.stimuli import stimulus_set_of_files

    paths = [str(path) for path in paths]
    stimulus_set = stimulus_set_of_files(paths)
    activations = call(stimulus_set)
    if len(stimulus_set) != len(paths):  # the same file listed twice: one presentation per listed path
        unique = list(stimulus_set["stimulus_id"])
        rows = {path: np.flatnonzero(activations["stimulus_id"].values == path) for path in unique}
        activations = activations.isel(presentation=np.concatenate([rows[path] for path in paths]))
    return activations
