"""Weights that plugin code downloads itself (torch hub, torchvision, timm, Hugging Face): from the weights mirror, or
a fast, clear failure.

Plugin folders written for the reference build their networks with ``torchvision.models.x(pretrained=True)``,
``timm.create_model(..., pretrained=True)`` or ``huggingface_hub.hf_hub_download``. Here:

1. a file of the weights mirror (setting ``weights_mirror``) is used instead of the download: a torch hub
   checkpoint under its official name (``<mirror>/alexnet-owt-7be5be79.pth`` or
   ``<mirror>/torch/hub/checkpoints/...``), checked against the sha256 prefix in that name; a Hugging Face
   file as ``<mirror>/<repo_id>/<filename>`` (or ``<mirror>/huggingface/<repo_id>/<filename>``), checked
   against ``<file>.sha256`` when that lies beside it;
2. else, when the host cannot be reached (the ``offline`` setting, or no answer within
   :data:`PROBE_TIMEOUT_S` seconds), a :class:`~brainscore.errors.NetworkError` of one line naming the file,
   its URL and the mirror setting, at once (Hugging Face's client otherwise retries for ~90 s);
3. else the download runs as usual.

:func:`install` puts these guards on ``torch.hub.load_state_dict_from_url`` (torchvision's ``pretrained=True``;
a mirror file is read in place, never copied into torch's cache), ``torch.hub.download_url_to_file`` and
``huggingface_hub.hf_hub_download`` (which timm calls), wherever a module keeps them by name. brainscore's import hook
(:mod:`brainscore.plugin_imports`) installs them when either module is first imported, in every process that
may run a plugin.
"""
from __future__ import annotations

import functools
import os
import socket
import threading
from pathlib import Path
from urllib.parse import urlparse

from brainscore import config
from brainscore.caching.atomic import atomic_copy
from brainscore.data import stand_ins
from brainscore.errors import HashMismatchError, NetworkError

__all__ = ["install", "MODULES", "guard_torch_hub", "guard_load_state_dict", "guard_huggingface", "reachable", "mirror_file", "PROBE_TIMEOUT_S"]

#: seconds a host has to answer (name lookup and TCP connection) before a download is declared unreachable
PROBE_TIMEOUT_S = 3.0
_reachable: dict[tuple[str, int], bool] = {}
_lock = threading.Lock()


def reachable(url: str) -> bool:
    """Whether the host of ``url`` answers on its port within :data:`PROBE_TIMEOUT_S` (False when ``offline`` is set);
    remembered per host for the process."""
    if config.offline():
        return False
    parsed = urlparse(url)
    host, port = parsed.hostname, parsed.port or (443 if parsed.scheme == "https" else 80)
    if not host:
        return False
    with _lock:
        if (host, port) in _reachable:
            return _reachable[(host, port)]
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S):
            answer = True
    except OSError:
        answer = False
    with _lock:
        _reachable[(host, port)] = answer
    return answer


def _mirror_setting_note() -> str:
    try:
        mirrors = ", ".join(str(m) for m in config.weights_mirrors()) or "none set"
    except Exception as error:  # noqa: BLE001 - the setting's own error is the more useful one
        mirrors = str(error)
    return (f"put the file in a weights mirror (`brainscore config set weights_mirror FOLDER` or "
            f"BRAINSCORE_WEIGHTS_MIRROR=FOLDER; weights mirrors: {mirrors})")


def mirror_file(relative_names: list[str]) -> Path | None:
    """The first file of the weights mirrors at one of ``relative_names``, or None (:mod:`brainscore.data.locator`)."""
    from brainscore.data import locator

    return locator.Locator(locator.weights_mirrors()).first(relative_names)


def _unreachable(filename: str, url: str) -> NetworkError:
    why = "the offline setting forbids downloads" if config.offline() else \
        f"{urlparse(url).hostname} cannot be reached from here"
    return NetworkError(f"weights file {filename} ({url}) is not downloaded: {why}; {_mirror_setting_note()}")


def _hub_mirror_file(url: str, filename: str | None = None, hash_prefix: str | None = None,
                     stand_in: bool = True) -> Path | None:
    """The weights mirror's copy of the torch hub file at ``url``, checked against the sha256 prefix of its official
    name (or ``hash_prefix``), or a declared stand-in for it (:mod:`brainscore.data.stand_ins`) when ``stand_in``."""
    filename = filename or os.path.basename(urlparse(url).path)
    found = mirror_file([filename, f"torch/hub/checkpoints/{filename}", f"hub/checkpoints/{filename}",
                         f"checkpoints/{filename}"])
    if found is None:
        return None
    from brainscore.data.stimuli import file_sha256
    from brainscore.models.weights import hub_hash_prefix

    prefix = hash_prefix or hub_hash_prefix(filename)
    sha256 = file_sha256(found)
    if prefix and not sha256.startswith(prefix) and not (stand_in and stand_ins.accepts(filename, sha256, found)):
        raise HashMismatchError(f"weights file {found} (for {url}) is not the published file: its sha256 does not "
                                f"start with {prefix}; replace it with the original")
    return found


def guard_torch_hub(download):
    """``torch.hub.download_url_to_file`` served from the weights mirror (published files only: a stand-in never
    enters torch's own cache), failing fast when unreachable."""
    if getattr(download, "_brainscore_guard", False):
        return download

    @functools.wraps(download)
    def download_url_to_file(url, dst, hash_prefix=None, progress=True):
        found = _hub_mirror_file(url, hash_prefix=hash_prefix, stand_in=False)
        if found is not None:
            atomic_copy(found, Path(dst))
            return None
        if not reachable(url):
            raise _unreachable(os.path.basename(urlparse(url).path), url)
        return download(url, dst, hash_prefix, progress)

    download_url_to_file._brainscore_guard = True
    return download_url_to_file


def guard_load_state_dict(load):
    """``torch.hub.load_state_dict_from_url`` (torchvision's ``pretrained=True``) read from the weights mirror when it
    holds the file (published, or a declared stand-in, read in place); else torch's own (cache, then the guarded
    download)."""
    if getattr(load, "_brainscore_guard", False):
        return load
    import inspect

    signature = inspect.signature(load)

    @functools.wraps(load)
    def load_state_dict_from_url(url, *args, **kwargs):
        bound = signature.bind(url, *args, **kwargs)
        found = _hub_mirror_file(url, bound.arguments.get("file_name"))
        if found is None:
            return load(url, *args, **kwargs)
        import torch

        return torch.load(found, map_location=bound.arguments.get("map_location"),
                          weights_only=bound.arguments.get("weights_only", False))

    load_state_dict_from_url._brainscore_guard = True
    return load_state_dict_from_url


def guard_huggingface(hf_hub_download):
    """``huggingface_hub.hf_hub_download`` served from the weights mirror, failing fast when unreachable."""
    if getattr(hf_hub_download, "_brainscore_guard", False):
        return hf_hub_download

    @functools.wraps(hf_hub_download)
    def guarded(repo_id, filename, *args, **kwargs):
        subfolder = kwargs.get("subfolder")
        name = f"{subfolder}/{filename}" if subfolder else filename
        found = mirror_file([f"{repo_id}/{name}", f"huggingface/{repo_id}/{name}"])
        if found is not None:
            checksum = found.with_name(found.name + ".sha256")
            if checksum.is_file():
                from brainscore.data.stimuli import file_sha256

                words = checksum.read_text(encoding="utf-8").split()  # read once: "<sha256>  <name>"
                expected = words[0].lower() if words else ""
                if file_sha256(found) != expected:
                    raise HashMismatchError(f"weights file {found} does not have the sha256 in {checksum}; replace "
                                            f"it with the original ({repo_id}/{name})")
            return str(found)
        try:
            from huggingface_hub import constants

            endpoint = kwargs.get("endpoint") or constants.ENDPOINT
            local_only = kwargs.get("local_files_only") or constants.HF_HUB_OFFLINE
        except ImportError:
            endpoint, local_only = "https://huggingface.co", False
        url = f"{endpoint.rstrip('/')}/{repo_id}/resolve/{kwargs.get('revision') or 'main'}/{name}"
        if not local_only and not reachable(url):
            try:  # a copy in Hugging Face's own cache serves without the network
                return hf_hub_download(repo_id, filename, *args, **{**kwargs, "local_files_only": True})
            except Exception:  # noqa: BLE001 - not cached: our one-line error instead of the client's retries
                raise _unreachable(f"{repo_id}/{name}", url) from None
        return hf_hub_download(repo_id, filename, *args, **kwargs)

    guarded._brainscore_guard = True
    return guarded


def guard_hub_load(load):
    """``torch.hub.load`` whose repository cannot be fetched: one line naming it, its URL and torch hub's cache."""
    if getattr(load, "_brainscore_guard", False):
        return load

    @functools.wraps(load)
    def hub_load(repo_or_dir, *args, **kwargs):
        import urllib.error

        try:
            return load(repo_or_dir, *args, **kwargs)
        except (urllib.error.URLError, ConnectionError, socket.gaierror) as error:
            import torch

            owner_name = str(repo_or_dir).split(":")[0]
            raise NetworkError(f"torch hub repository {repo_or_dir} (https://github.com/{owner_name}) is not "
                               f"downloaded: {getattr(error, 'reason', error)}; put a checkout of it in torch hub's "
                               f"cache ({torch.hub.get_dir()}) or load it from a folder (source='local')") from None

    hub_load._brainscore_guard = True
    return hub_load


#: (module, attribute, guard): where the download functions live, and where other modules keep them by name
_TARGETS = (("torch.hub", "download_url_to_file", guard_torch_hub),
            ("torch.hub", "load", guard_hub_load),
            ("torch.hub", "load_state_dict_from_url", guard_load_state_dict),
            ("torch.utils.model_zoo", "load_url", guard_load_state_dict),
            ("torchvision._internally_replaced_utils", "load_state_dict_from_url", guard_load_state_dict),
            ("torchvision.models._api", "load_state_dict_from_url", guard_load_state_dict),
            ("huggingface_hub", "hf_hub_download", guard_huggingface),
            ("huggingface_hub.file_download", "hf_hub_download", guard_huggingface),
            ("timm.models._hub", "hf_hub_download", guard_huggingface))
#: the modules after whose import :func:`install` runs again (:mod:`brainscore.plugin_imports`' import hook)
MODULES = tuple(dict.fromkeys(module for module, _, _ in _TARGETS))


def install() -> None:
    """Put the guards on the download functions of the modules already imported (safe to call again)."""
    import sys

    for module_name, attribute, guard in _TARGETS:
        module = sys.modules.get(module_name)
        if module is None:
            continue
        try:
            function = getattr(module, attribute)  # huggingface_hub's attributes are imported lazily
        except AttributeError:
            continue
        if isinstance(function, functools.partial):  # timm binds its library name: guard what it calls
            if not getattr(function.func, "_brainscore_guard", False):
                setattr(module, attribute, functools.partial(guard(function.func), *function.args,
                                                             **function.keywords))
        elif callable(function):
            setattr(module, attribute, guard(function))
