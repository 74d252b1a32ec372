"""A network's identity without building it: what cache keys need, known before torch is imported.

Activation cache keys hold the weights sha256, the architecture fingerprint and the parameter
dtypes of the network (:mod:`brainscore.models.extraction`). Computing them builds the network,
which imports torch (1.5 s) and loads the weights: a score whose activations are all cached spent
most of its time there. A :class:`NetworkRecipe` says what builds a network *without* torch:

- the builder's arguments (plain JSON values: the model identifier and the keyword arguments
  that change the network);
- the code that builds it: the plugin module(s) and every module of their package they import
  (:func:`brainscore.caching.code_hash`, which also adds the versions of the numeric libraries,
  torch among them), plus the source files of small third-party packages that define the
  network's classes (``efficientnet_lite_pytorch``), found without importing them;
- the versions of the distributions that build it (``efficientnet-lite-pytorch``, ``torchvision``,
  ``timm``; ``torch`` always);
- the weights files, by stat stamp (path, inode, size, modification and change times in ns, as
  the data store remembers verified files): a later write changes the change time, even one that
  keeps the size and modification time, unless it lands in the same tick of the kernel's coarse
  clock; so an entry is stored only when every file was last written at least
  :data:`brainscore.caching.SETTLE_NS` (3 s) before the build began.

The first build of a recipe stores, under a key of all of that, the values that need torch
(:class:`NetworkIdentity`: weights sha256, architecture fingerprint, parameter dtypes, module
names). A later process with the same recipe reads them back instead of building the network, so
the network is built (and torch imported) only when an activation is actually missing; the
extractor then checks the built network against the stored identity and, should they ever differ,
discards the entry and keys everything on the built network.

Nothing is guessed: a recipe with no weights file (untrained networks, whose weights come from a
seed), builder arguments that are not plain JSON values, a global forward hook registered in
torch (it changes the fingerprint) or a device that may be a GPU (the device name is part of the
key and needs torch) all build the network, as before.
"""
from __future__ import annotations

import importlib.metadata
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from brainscore.caching import Cache, code_hash, content_key

__all__ = ["NetworkRecipe", "NetworkIdentity", "network_identity", "identity_key", "cached_identity", "store_identity",
           "discard_identity", "package_sources_hash", "cpu_only_torch", "describe"]

_NAMESPACE = "model_identity"


@dataclass(frozen=True)
class NetworkIdentity:
    """The values of a built network that activation cache keys hold.

    Attributes
    ----------
    weights_hash : str
        sha256 of the weights (of the weights file, or :func:`~brainscore.models.extraction.state_dict_hash`).
    architecture : str
        :func:`brainscore.models.fingerprint.architecture_fingerprint` in ``eval()`` mode.
    dtypes : list of str
        Sorted distinct dtypes of the parameters and buffers (``["torch.float32"]``).
    modules : list of str
        Names of every named sub-module (``named_modules``), the candidates for layers.
    """

    weights_hash: str
    architecture: str
    dtypes: tuple[str, ...]
    modules: tuple[str, ...]


def _no_files() -> tuple:
    return ()


@dataclass(frozen=True)
class NetworkRecipe:
    """What builds a network, described without torch (see the module notes).

    Parameters
    ----------
    build : callable () -> torch.nn.Module
        Builds the network (imports torch, loads weights).
    arguments : dict
        Everything the build depends on besides code, libraries and files: plain JSON values only
        (str, int, float, bool, None, lists and dicts of them), e.g. ``{"identifier": "efficientnet-lite0"}``.
    code : sequence of str, module or callable
        The code that builds the network: the plugin module (its import closure within its package
        is followed, see :func:`brainscore.caching.code_hash`).
    packages : sequence of str
        Third-party packages (import names) that define the network's classes: the bytes of every
        ``.py`` file in their folders are hashed, without importing them.
    libraries : sequence of str
        Distributions whose version changes the network (``torch`` is always added).
    files : callable () -> sequence of path
        The weights files the build reads; called without torch. An error raised here (a weights
        package missing) means the network is built, which reports it.
    weights_hash : str, optional
        The declared sha256 of the weights (checked by ``build``), else the state dict's hash.
    """

    build: Callable[[], Any]
    arguments: dict
    code: Sequence[Any]
    packages: Sequence[str] = ()
    libraries: Sequence[str] = ()
    files: Callable[[], Sequence[Path]] = field(default_factory=lambda: _no_files)
    weights_hash: str | None = None


def _plain(value: Any) -> bool:
    if value is None or isinstance(value, (str, bool, int)):
        return True
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def package_sources_hash(package: str) -> str:
    """sha256 over the relative paths and bytes of every ``.py`` file of the installed ``package``.

    Found with :func:`importlib.util.find_spec` of the top-level name, which does not import it.

    Raises
    ------
    ModuleNotFoundError
        If ``package`` is not installed or not a top-level package.
    """
    import hashlib
    import importlib.util

    if "." in package:
        raise ValueError(f"package must be a top-level import name, got {package!r}")
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"package {package!r} is not installed")
    digest = hashlib.sha256()
    for folder in spec.submodule_search_locations:
        for path in sorted(Path(folder).rglob("*.py")):
            digest.update(f"\0{path.relative_to(folder).as_posix()}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _stamp(path: Path, settled: bool = False) -> list:
    """(resolved path, inode, size, mtime_ns, ctime_ns): changes with any write to the file.

    With ``settled``, a file written less than :data:`brainscore.caching.SETTLE_NS` ago raises ``_Unsettled``: the
    kernel stamps writes with a coarse clock, so a same-size rewrite in the same tick would keep this stamp."""
    from brainscore.caching import file_state, is_settled

    state = file_state(path)
    if settled and not is_settled(state):
        raise _Unsettled(state.path)
    return [state.path, state.inode, state.size, state.mtime_ns, state.ctime_ns]


class _Unsettled(Exception):
    """A weights file was written too recently for its stamp to stand for its bytes."""


_TORCH_BUILD = re.compile(r"^(cuda|hip|rocm)\s*(?::[^=\n]*)?=\s*(.+)$", re.MULTILINE)


def cpu_only_torch() -> bool:
    """True when the installed torch is a CPU-only build (no CUDA, no ROCm), read without importing torch.

    Reads ``torch/version.py`` (``cuda = None``, ``hip = None``): with such a build
    ``torch.cuda.is_available()`` is always False, so the default device is the CPU. False when
    torch is absent or the file says anything else (a GPU may be present: ask torch).
    """
    import importlib.util

    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return False
    if spec is None or not spec.submodule_search_locations:
        return False
    try:
        text = (Path(list(spec.submodule_search_locations)[0]) / "version.py").read_text()
    except OSError:
        return False
    found = dict((name, value.strip()) for name, value in _TORCH_BUILD.findall(text))
    return bool(found) and "cuda" in found and "hip" in found and all(v == "None" for v in found.values())


def _global_hooks() -> bool:
    """Whether a global forward hook is registered in an already imported torch (it enters the fingerprint)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    module = sys.modules.get("torch.nn.modules.module")
    return bool(module and (getattr(module, "_global_forward_hooks", None)
                            or getattr(module, "_global_forward_pre_hooks", None)))


def identity_key(recipe: NetworkRecipe, settled: bool = False) -> str | None:
    """The content key of ``recipe``'s identity entry, or None when it cannot be known without torch.

    None when the arguments are not plain JSON values, no weights file is declared, a file cannot
    be found (``files()`` raised or a path does not exist), or torch has a global forward hook.
    ``settled=True`` (the key an entry is *stored* under) is also None while a weights file was written
    less than :data:`brainscore.caching.SETTLE_NS` (3 s) before this call: a rewrite of the same size in
    the same clock tick keeps the file's stamp (git's "racy clean" case), so such a build is not
    remembered and the next process builds the network again. A stored entry's files were settled when
    it was stored, so any later write changes their stamps and misses it.
    """
    if not _plain(recipe.arguments) or _global_hooks():
        return None
    try:
        files = [_stamp(Path(p), settled) for p in recipe.files()]
        packages = {name: package_sources_hash(name) for name in recipe.packages}
    except Exception:  # noqa: BLE001 - the build reports what is missing, with its own message
        return None
    if not files:
        return None
    libraries = sorted(set(recipe.libraries) | {"torch"})
    return content_key(kind="model-identity", arguments=recipe.arguments, files=files,
                       libraries=[[name, _version(name)] for name in libraries],
                       code=code_hash(*recipe.code), packages=packages, weights_hash=recipe.weights_hash)


def _cache(recipe: NetworkRecipe) -> Cache:
    # keyed on this module's code (and the fingerprint's, which it imports) and the extractor's, which
    # computes state dict hashes and uses the identity
    return Cache(_NAMESPACE, code=["brainscore.models.extraction"])


def cached_identity(recipe: NetworkRecipe) -> tuple[str | None, NetworkIdentity | None]:
    """``(key, identity)`` of ``recipe`` from the cache; identity None when absent, key None when unknowable."""
    key = identity_key(recipe)
    if key is None:
        return None, None
    value = _cache(recipe).load(key)
    if value is None:
        return key, None
    try:
        return key, NetworkIdentity(str(value["weights_hash"]), str(value["architecture"]),
                                    tuple(map(str, value["dtypes"])), tuple(map(str, value["modules"])))
    except (KeyError, TypeError):
        return key, None


def store_identity(recipe: NetworkRecipe, key: str, identity: NetworkIdentity) -> None:
    """Store ``identity`` (computed from a network just built from ``recipe``) under ``key``."""
    _cache(recipe).save(key, {"weights_hash": identity.weights_hash, "architecture": identity.architecture,
                              "dtypes": list(identity.dtypes), "modules": list(identity.modules)})


def discard_identity(recipe: NetworkRecipe, key: str) -> None:
    """Delete the identity entry ``key`` (it disagreed with the network built from ``recipe``)."""
    from brainscore.caching.cache import checksum_path

    path = _cache(recipe).path(key, "pkl")
    path.unlink(missing_ok=True)
    checksum_path(path).unlink(missing_ok=True)


def network_identity(model, weights_hash: str) -> NetworkIdentity:
    """The :class:`NetworkIdentity` of a built network (put in ``eval()`` mode, as extraction runs it).

    ``weights_hash``: the declared weights sha256, or the state dict's hash
    (:func:`brainscore.models.extraction.state_dict_hash`).
    """
    from brainscore.models.fingerprint import architecture_fingerprint

    model.eval()
    dtypes = sorted({str(p.dtype) for p in model.parameters()} | {str(b.dtype) for b in model.buffers()})
    return NetworkIdentity(str(weights_hash), architecture_fingerprint(model), tuple(dtypes),
                           tuple(name for name, _ in model.named_modules() if name))


def describe(identity: NetworkIdentity) -> str:
    """A short JSON text of ``identity`` (for messages)."""
    return json.dumps({"weights_hash": identity.weights_hash[:12], "architecture": identity.architecture[:12],
                       "dtypes": list(identity.dtypes), "modules": len(identity.modules)})
