"""How plugin code is imported: plugin folders as packages, the reference's names, third-party import hooks, and
whose fault a failed import is.

A folder of the ``plugin_dirs`` setting (:mod:`brainscore.plugin_sources`) is imported as a synthetic package
``brainscore_plugindir_<hash of its path>`` (:func:`plugin_dir_package`; stable across processes, so a Dask worker
that unpickles an object of a plugin folder's class finds its module through the import hook installed here), its
kind folders (``models``, ``benchmarks``, ...) as synthetic packages too (the reference's framework
``__init__.py`` files in a clone of its tree never run). The hooks, installed first on ``sys.meta_path`` by every
process that imports the registry, also give:

- the reference's absolute names of plugin folders: ``brainscore_vision.<kind>.<name>[.<sub>]`` that brainscore's own
  ``brainscore_vision`` lacks is that folder of the plugin path, the same module object
  (:func:`reference_folder_module`);
- ``result_caching``, where that package is not installed: decorators that cache nothing
  (:mod:`brainscore_vision._result_caching`);
- ``import torchvision`` anywhere: the operators its CUDA wheel lacks next to a CPU torch are defined first
  (:func:`brainscore.models.torchvision_loading.prepare`);
- torch hub, torchvision, timm and Hugging Face downloads, and plugin code's own ``urllib.request.urlretrieve`` /
  ``urlopen``, ``requests.get`` and ``gdown.download``, from the weights mirror or failing fast
  (:mod:`brainscore.models.downloads`), installed after those modules are imported.

:func:`import_failure` reads a failed plugin import (exception and traceback, nothing re-run) and says whose fault
it is: the plugin's code (at ``file:line``), a package that is not installed, or this installation.
"""
from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import re
import sys
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path

from brainscore.plugin_sources import (PLUGIN_DIR_PACKAGE_PREFIX, REFERENCE_FOLDERS, package_name,
                                       plugin_dirs)

__all__ = ["ImportFailure", "import_failure", "install_hint", "PYPI_NAMES", "plugin_dir_package", "reference_folder_module", "OWN_PACKAGES"]


#: top-level packages whose missing names are gaps of this installation (its reference API), not a plugin's fault
OWN_PACKAGES = ("brainscore", "brainscore_vision", "brainscore_core")


@dataclass(frozen=True)
class ImportFailure:
    """Why a plugin failed to import, in one line, and whose fault it is (:func:`import_failure`).

    ``environment`` is True when the cause is this installation rather than the plugin's code: a name of
    brainscore's reference API it lacks, a file it does not have (weights, data), or an installed package that
    fails while it is imported (e.g. a library built for another torch). ``missing_package`` names a third-party
    package the plugin imports that is not installed. ``where`` is the plugin's own file and line (relative to its
    folder) or the installed module that failed.
    """

    summary: str
    environment: bool
    missing_package: str | None = None
    where: str | None = None
    folder: Path | None = None

    def message(self, plugin: str) -> str:
        """One line: ``plugin`` (e.g. ``the plugin folder /x/models/y``), the cause, and what to do."""
        if self.missing_package:
            hint = install_hint(self.missing_package, self.folder)
            how = (f"install it ({hint})" if hint else
                   "install the distribution that provides it (its name on PyPI may differ from the import name)")
            return (f"{plugin} needs the package {self.missing_package!r}, which is not installed here: {how} or "
                    f"list it in the folder's requirements.txt ({self.summary})")
        if self.environment:
            return (f"{plugin} failed to import because of this installation, not the plugin's code: {self.summary}"
                    + (f" (raised in {self.where})" if self.where else ""))
        return (f"{plugin} failed to import: {self.summary}" + (f" (at {self.where})" if self.where else "")
                + ". Fix that plugin, or remove it from the plugin path")


#: import name -> the PyPI distribution that provides it, where the two differ or the name is common in plugin
#: folders; an import name not here gets an install hint only from the folder's requirements.txt (PyPI's ``clip`` or
#: ``vonenet`` are not the packages plugins mean)
PYPI_NAMES = {
    "cv2": "opencv-python", "PIL": "Pillow", "sklearn": "scikit-learn", "skimage": "scikit-image", "yaml": "PyYAML",
    "efficientnet_pytorch": "efficientnet-pytorch", "huggingface_hub": "huggingface-hub",
    "open_clip": "open-clip-torch", "pretrainedmodels": "pretrainedmodels", "timm": "timm", "torch": "torch",
    "torchvision": "torchvision", "transformers": "transformers", "gdown": "gdown", "wget": "wget", "einops": "einops",
    "h5py": "h5py", "kornia": "kornia", "fvcore": "fvcore", "tensorflow": "tensorflow", "keras": "keras",
    "pandas": "pandas", "scipy": "scipy", "numpy": "numpy", "xarray": "xarray", "tqdm": "tqdm",
    "requests": "requests", "safetensors": "safetensors", "diffusers": "diffusers", "accelerate": "accelerate",
    "matplotlib": "matplotlib", "decord": "decord", "av": "av", "numba": "numba", "netCDF4": "netCDF4",
}


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def install_hint(module: str, folder: Path | None = None) -> str | None:
    """The ``pip install ...`` command for the missing top-level module ``module``, or None when none is known.

    The plugin folder's ``requirements.txt`` line that provides it comes first (e.g. ``CORnet @ git+https://...``
    for ``cornet``: the requirement's name, or its known PyPI name, matches the module), then :data:`PYPI_NAMES`.
    A name in neither gets no command: PyPI may have no package of that name, or another package under it.
    """
    wanted = {_normalized(module), _normalized(PYPI_NAMES.get(module, module))}
    requirements = Path(folder) / "requirements.txt" if folder is not None else None
    try:
        lines = requirements.read_text(encoding="utf-8", errors="replace").splitlines() if requirements else []
    except OSError:
        lines = []
    for line in lines:
        line = line.split(" #", 1)[0].strip()
        found = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)", line)
        if found and _normalized(found.group(1)) in wanted and not line.startswith("-"):
            return "pip install " + (f"'{line}'" if re.search(r"[\s@<>=!;~\[]", line) else line)
        egg = re.search(r"#egg=([A-Za-z0-9._-]+)", line)
        if egg and _normalized(egg.group(1)) in wanted:
            return f"pip install '{line}'"
    if module in PYPI_NAMES:
        return f"pip install {PYPI_NAMES[module]}"
    return None


def import_failure(error: BaseException, folder: Path | None = None) -> ImportFailure:
    """Whose fault a plugin's import failure is, from the exception and its traceback (nothing is re-run).

    Parameters
    ----------
    error : BaseException
        What importing the plugin raised.
    folder : Path, optional
        The plugin's folder: frames in its files are the plugin's code.
    """
    from brainscore.errors import BrainScoreError, DataNotFoundError, HashMismatchError, NetworkError

    summary = " ".join(f"{type(error).__name__}: {error}".split())
    if getattr(error, "plugin_fault", False):  # e.g. a folder name Python cannot import (plugin_sources)
        return ImportFailure(summary, environment=False)
    if isinstance(error, (DataNotFoundError, HashMismatchError, NetworkError)):
        return ImportFailure(summary, environment=True)
    if isinstance(error, ImportError):
        found = re.search(r"cannot import name '([^']+)' from '([^']+)'", str(error))
        module = found.group(2) if found else (error.name or "")
        if module.split(".")[0] in OWN_PACKAGES:
            what = f"{module}.{found.group(1)}" if found else module
            return ImportFailure(f"it imports {what}, which this brainscore does not provide ({summary}); a gap of "
                                 f"brainscore's reference API", environment=True, where=None)
        if isinstance(error, ModuleNotFoundError) and error.name and not found:
            top = error.name.split(".")[0]
            if not top.startswith(PLUGIN_DIR_PACKAGE_PREFIX) and not _in_folder(_innermost(error), folder, top):
                return ImportFailure(summary, environment=False, missing_package=top,
                                     folder=Path(folder) if folder is not None else None)
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith("<frozen")]
    if isinstance(error, SyntaxError) and error.filename and _inside(error.filename, folder):
        return ImportFailure(summary, environment=False, where=f"{_relative(error.filename, folder)}:{error.lineno}")
    own = [index for index, f in enumerate(frames) if _inside(f.filename, folder)]
    if frames and own and own[-1] == len(frames) - 1:  # raised by the plugin's own code
        return ImportFailure(summary, environment=False,
                             where=f"{_relative(frames[-1].filename, folder)}:{frames[-1].lineno}")
    after = frames[own[-1] + 1:] if own else frames
    installed = [f for f in after if f.name == "<module>" and not _inside(f.filename, folder)]
    if installed or isinstance(error, BrainScoreError) or any(_is_own_package(f.filename) for f in after[-1:]):
        # module-level code of an installed package failed while being imported, or brainscore itself raised
        culprit = installed[-1].filename if installed else (after[-1].filename if after else None)
        return ImportFailure(summary, environment=True, where=_module_of(culprit) if culprit else None)
    where = f"{_relative(frames[own[-1]].filename, folder)}:{frames[own[-1]].lineno}" if own else None
    return ImportFailure(summary, environment=False, where=where)


def _innermost(error: BaseException) -> str | None:
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith("<frozen")]
    return frames[-1].filename if frames else None


def _in_folder(filename: str | None, folder: Path | None, top: str) -> bool:
    """Whether a missing module ``top`` is one of the plugin folder's own (a file or package beside its code)."""
    return folder is not None and ((folder / f"{top}.py").is_file() or (folder / top).is_dir())


def _inside(filename: str | None, folder: Path | None) -> bool:
    if filename is None or folder is None:
        return False
    try:
        return Path(filename).resolve().is_relative_to(Path(folder).resolve())
    except (OSError, ValueError):
        return False


def _relative(filename: str, folder: Path | None) -> str:
    try:
        return str(Path(filename).resolve().relative_to(Path(folder).resolve()))
    except (OSError, ValueError, TypeError):
        return Path(filename).name


def _is_own_package(filename: str) -> bool:
    parts = Path(filename).parts
    return any(part in OWN_PACKAGES for part in parts[-4:-1])


def _module_of(filename: str) -> str:
    """A dotted module name for an installed file (``.../site-packages/torchvision/ops/x.py`` -> ``torchvision.ops.x``)."""
    parts = list(Path(filename).with_suffix("").parts)
    for marker in ("site-packages", "dist-packages", "src"):
        if marker in parts:
            parts = parts[len(parts) - parts[::-1].index(marker):]
            break
    else:
        parts = parts[-2:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _bases() -> dict[str, tuple[Path, bool]]:
    """Package name -> (folder it is the parent of, whether that folder is laid out like ``brainscore_vision/``)."""
    bases = {}
    for root in plugin_dirs():
        candidate = root / "brainscore_vision" if (root / "brainscore_vision").is_dir() else root
        layout = any((candidate / folder).is_dir() for folder in REFERENCE_FOLDERS)
        bases.setdefault(package_name(candidate), (candidate, layout))
        bases.setdefault(package_name(root.parent), (root.parent, False))
    return bases


def _synthetic_package(name: str, path: Path, doc: str):
    """An empty package ``name`` whose submodules are found in ``path`` (no ``__init__.py`` of it runs)."""
    spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
    spec.submodule_search_locations = [str(path)]
    module = importlib.util.module_from_spec(spec)
    module.__path__ = [str(path)]
    module.__doc__ = doc
    sys.modules[name] = module
    return module


def plugin_dir_package(name: str, base: Path | None = None):
    """The synthetic package ``name`` whose path is a plugin folder's parent ``base`` (created on first use).

    When ``base`` is laid out like the reference's ``brainscore_vision/``, its kind folders (``models``,
    ``benchmarks``, ``data``, ``metrics``) are synthetic packages as well: their own ``__init__.py`` (in the
    reference's tree, its framework code: ``Benchmark``, ``Ceiling``, ``result_caching``) never runs; a plugin
    gets those names from ``brainscore_vision``.
    """
    module = sys.modules.get(name)
    if module is not None:
        return module
    layout = base is not None and any((Path(base) / folder).is_dir() for folder in REFERENCE_FOLDERS)
    if base is None:
        base, layout = _bases().get(name, (None, False))
        if base is None:
            raise ModuleNotFoundError(f"no plugin folder of the plugin_dirs setting is imported as {name!r}; "
                                      f"set BRAINSCORE_PLUGIN_DIRS as in the process that made it", name=name)
    module = _synthetic_package(name, Path(base), f"Plugins of the folder {base} (the reference Brain-Score's layout).")
    if layout:
        for folder in REFERENCE_FOLDERS:
            if (Path(base) / folder).is_dir():
                setattr(module, folder, _synthetic_package(f"{name}.{folder}", Path(base) / folder,
                                                           f"The {folder} plugin folders of {base}."))
    return module


_OWN_VISION = Path(__file__).resolve().parent.parent / "brainscore_vision"


def _own_vision_module(parts: list[str]) -> bool:
    """Whether brainscore's own ``brainscore_vision`` package provides the module ``brainscore_vision.<parts>``."""
    path = _OWN_VISION.joinpath(*parts)
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def reference_folder_module(fullname: str) -> str | None:
    """The plugin-folder module that ``brainscore_vision.<kind>.<name>[.<sub>...]`` means, or None.

    The reference's plugins import each other by absolute names (``brainscore_vision.models.X.model``,
    ``brainscore_vision.data.Y``); here ``brainscore_vision`` is brainscore's adapter package, so such a name
    that the adapter package does not provide itself is the plugin folder ``<kind>/<name>`` of the first folder
    of the plugin_dirs setting that has it, imported under its plugin-folder name (one module, one registration).
    """
    parts = fullname.split(".")
    if len(parts) < 3 or parts[0] != "brainscore_vision" or parts[1] not in REFERENCE_FOLDERS \
            or _own_vision_module(parts[1:3]):
        return None
    for name, (base, layout) in _bases().items():
        if layout and (base / parts[1] / parts[2] / "__init__.py").is_file():
            return ".".join([name, *parts[1:]])
    return None


class _AliasLoader:
    """Loads ``brainscore_vision.<kind>.<name>...`` as the already importable plugin-folder module ``target``."""

    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module):
        pass


class _PluginDirFinder:
    """Finds ``brainscore_plugindir_<hash>`` packages in a process that did not scan them yet (e.g. a Dask
    worker unpickling an object of a plugin folder's class), their kind folders, the reference's absolute
    names of plugin folders (:func:`reference_folder_module`), and ``result_caching`` where that package is not
    installed (:mod:`brainscore_vision._result_caching`). Placed first on ``sys.meta_path``; it answers only for
    those names."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):
        if fullname.startswith(PLUGIN_DIR_PACKAGE_PREFIX):
            parts = fullname.split(".")
            if len(parts) == 1:
                try:
                    return plugin_dir_package(fullname).__spec__
                except ModuleNotFoundError:
                    return None
            if len(parts) == 2 and parts[1] in REFERENCE_FOLDERS:
                parent = sys.modules.get(parts[0])
                module = getattr(parent, parts[1], None) if parent is not None else None
                return module.__spec__ if module is not None and module.__spec__.loader is None else None
            return None
        if fullname == "result_caching" and path is None:  # the reference's dependency, when not installed here
            try:
                installed = importlib.machinery.PathFinder.find_spec(fullname)
            except (ImportError, ValueError):
                installed = None
            if installed is None:
                return importlib.machinery.ModuleSpec(fullname, _AliasLoader("brainscore_vision._result_caching"))
            return None
        if fullname.startswith("brainscore_vision."):
            parts = fullname.split(".")
            if len(parts) == 2 and parts[1] in REFERENCE_FOLDERS and not _own_vision_module(parts[1:2]) \
                    and any(layout for _, layout in _bases().values()):
                # brainscore_vision.models / .data: a package of nothing but the plugin folders' aliases
                spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
                spec.submodule_search_locations = []
                return spec
            module = reference_folder_module(fullname)
            if module is not None:
                return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module),
                                                      is_package=len(parts) == 3 or None)
        return None

    @staticmethod
    def invalidate_caches():
        pass


class _AfterExecLoader:
    """A module's own loader, calling ``after()`` once the module has run (a post-import hook)."""

    def __init__(self, loader, after):
        self._loader, self._after = loader, after

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = self._loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        self._after()

    def __getattr__(self, name):
        return getattr(self._loader, name)


def _prepare_torchvision() -> None:
    from brainscore.models.torchvision_loading import prepare

    prepare()


def _guard_downloads() -> None:
    from brainscore.models.downloads import install

    install()


class _ThirdPartyImportHook:
    """Makes third-party code behave here as brainscore's own models need, in every process that imports the
    registry (so plugin code gets it too): before ``torchvision`` is imported, the operators its CUDA wheel lacks
    next to a CPU torch are defined (:func:`brainscore.models.torchvision_loading.prepare`); after ``torch.hub``,
    ``huggingface_hub`` or timm's hub module is imported, their downloads are served from the weights mirror or
    fail fast (:mod:`brainscore.models.downloads`). It answers no name itself."""

    _AFTER = {name: _guard_downloads for name in (  # brainscore.models.downloads.MODULES (kept light: no import)
        "torch.hub", "torch.utils.model_zoo", "torchvision._internally_replaced_utils", "torchvision.models._api",
        "huggingface_hub", "huggingface_hub.file_download", "timm.models._hub", "huggingface_hub._snapshot_download",
        "transformers.utils.hub", "urllib.request", "requests", "requests.api", "gdown")}
    _busy = threading.local()

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "torchvision":
            _prepare_torchvision()
            return None
        after = self._AFTER.get(fullname)
        if after is None or getattr(self._busy, "active", False):
            return None
        self._busy.active = True
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                        spec.loader = _AfterExecLoader(spec.loader, after)
                    return spec
            return None
        finally:
            self._busy.active = False

    @staticmethod
    def invalidate_caches():
        pass


if not any(isinstance(finder, _PluginDirFinder) for finder in sys.meta_path):
    sys.meta_path.insert(0, _PluginDirFinder())
if not any(isinstance(finder, _ThirdPartyImportHook) for finder in sys.meta_path):
    sys.meta_path.insert(0, _ThirdPartyImportHook())
if any(name in sys.modules for name in _ThirdPartyImportHook._AFTER):  # imported before brainscore's registry
    _guard_downloads()
