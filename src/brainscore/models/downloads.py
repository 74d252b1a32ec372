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
import re
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
_SAFE_PART = re.compile(r"^[A-Za-z0-9_.-]+$")
_SAFE_REF = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_./-]*$")
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


def _unreachable(filename: str, url: str, hub: bool = False, why: str | None = None) -> NetworkError:
    why = why or ("the offline setting forbids downloads" if config.offline() else
                  f"{urlparse(url).hostname} cannot be reached from here")
    what = filename if hub else f"weights file {filename}"
    extra = ""
    if hub:
        import torch

        extra = f", or put a checkout in torch hub's cache ({torch.hub.get_dir()})"
    return NetworkError(f"{what} ({url}) is not downloaded: {why}; {_mirror_setting_note()}{extra}")


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
    from brainscore.models.weights import note_weights_file

    if prefix and sha256.startswith(prefix):
        note_weights_file(filename, sha256, "verified", str(found))
    elif stand_in and stand_ins.accepts(filename, sha256, found):
        note_weights_file(filename, sha256, "stand-in", str(found))
    elif prefix:
        raise HashMismatchError(f"weights file {found} (for {url}) is not the published file: its sha256 does not "
                                f"start with {prefix}; replace it with the original")
    else:
        note_weights_file(filename, sha256, "unverified", str(found))
    return found


def _note_torch_cache_file(url: str, file_name: str | None, model_dir: str | None) -> None:
    """Record the weights status of the file torch hub's cache served for ``url``: verified when its sha256 starts
    with the prefix of its official name (torch itself checks only while downloading), else unverified."""
    import torch

    from brainscore.data.stimuli import file_sha256
    from brainscore.models.weights import hub_hash_prefix, note_weights_file

    filename = file_name or os.path.basename(urlparse(url).path)
    path = Path(model_dir or Path(torch.hub.get_dir()) / "checkpoints") / filename
    if not path.is_file():
        return
    sha256, prefix = file_sha256(path), hub_hash_prefix(filename)
    note_weights_file(filename, sha256, "verified" if prefix and sha256.startswith(prefix) else "unverified", str(path))


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
            loaded = load(url, *args, **kwargs)
            _note_torch_cache_file(url, bound.arguments.get("file_name"), bound.arguments.get("model_dir"))
            return loaded
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
            _check_beside(found, f"{repo_id}/{name}")
            return str(found)
        endpoint, local_only = _hf_endpoint(kwargs)
        url = f"{endpoint.rstrip('/')}/{repo_id}/resolve/{kwargs.get('revision') or 'main'}/{name}"
        if local_only or not reachable(url):
            try:  # a copy in Hugging Face's own cache serves without the network
                path = hf_hub_download(repo_id, filename, *args, **{**kwargs, "local_files_only": True})
            except Exception:  # noqa: BLE001 - not cached: our one-line error instead of the client's retries
                raise _unreachable(f"{repo_id}/{name}", url, why=_hf_why(local_only)) from None
        else:
            path = hf_hub_download(repo_id, filename, *args, **kwargs)
        _note_hub_file(f"{repo_id}/{name}", path)
        return path

    guarded._brainscore_guard = True
    return guarded


def _note_hub_file(what: str, path) -> None:
    """Record a Hugging Face file read from its cache or the hub as unverified: no hash published beside it is
    checked here (:func:`brainscore.models.weights.note_weights_file`)."""
    from brainscore.data.stimuli import file_sha256
    from brainscore.models.weights import note_weights_file

    try:
        note_weights_file(what, file_sha256(Path(path)), "unverified", str(path))
    except (OSError, TypeError):  # not a file path (a dry run's answer): nothing read, nothing to record
        pass


def _github_repo(repo_or_dir: str) -> tuple[str, str, str | None] | None:
    """(owner, name, ref or None) of a torch hub ``owner/name[:ref]``, or None when it is not that form."""
    text = str(repo_or_dir)
    repo, _, ref = text.partition(":")
    parts = repo.split("/")
    if len(parts) != 2 or not all(_SAFE_PART.match(part) for part in parts) or (ref and not _SAFE_REF.match(ref)):
        return None
    return parts[0], parts[1], ref or None


def mirror_dir(relative_names: list[str]) -> Path | None:
    """The first folder of the weights mirrors at one of ``relative_names``, or None (:mod:`brainscore.data.locator`)."""
    from brainscore.data import locator

    return locator.Locator(locator.weights_mirrors()).first_dir(relative_names)


def _hub_repo_from_mirror(owner: str, name: str, ref: str) -> Path | None:
    """A checkout of GitHub repository ``owner/name`` at ``ref`` from the weights mirror: the folder torch hub's cache
    would hold (``<mirror>/torch/hub/<owner>_<name>_<ref>``), or the archive torch hub downloads, by its URL path
    (``<mirror>/github.com/<owner>/<name>/zipball/<ref>`` or ``.../archive/<ref>.zip``), unpacked into torch hub's
    cache (:func:`brainscore.data.store.safe_extract`: no member outside the folder)."""
    import torch

    normalized = ref.replace("/", "_")
    cached = f"{owner}_{name}_{normalized}"
    found = mirror_dir([f"torch/hub/{cached}", f"hub/{cached}", cached])
    if found is not None:
        return found
    archive = mirror_file([f"github.com/{owner}/{name}/zipball/{ref}", f"github.com/{owner}/{name}/archive/{ref}.zip",
                           f"github.com/{owner}/{name}/archive/refs/heads/{ref}.zip", f"{owner}/{name}/zipball/{ref}"])
    if archive is None:
        return None
    import shutil
    import tempfile

    from brainscore.data.store import safe_extract

    hub = Path(torch.hub.get_dir())
    hub.mkdir(parents=True, exist_ok=True)
    target = hub / cached
    if target.is_dir():
        return target
    with tempfile.TemporaryDirectory(dir=hub, prefix=f".{cached}-") as scratch:
        safe_extract(archive, Path(scratch))
        entries = [entry for entry in Path(scratch).iterdir()]
        top = entries[0] if len(entries) == 1 and entries[0].is_dir() else Path(scratch)  # GitHub: one folder
        moved = Path(scratch).with_name(Path(scratch).name + ".ready")
        shutil.move(str(top), str(moved))
        try:
            moved.rename(target)
        except OSError:  # another process unpacked it meanwhile
            shutil.rmtree(moved, ignore_errors=True)
    return target


def guard_hub_load(load):
    """``torch.hub.load`` of a GitHub repository: its checkout from the weights mirror where it has one
    (:func:`_hub_repo_from_mirror`), torch hub's cached checkout when GitHub cannot be reached (the ``offline``
    setting, or no answer), else one line naming the repository's archive URL, the mirror setting and torch hub's
    cache; online and not mirrored, torch hub's own."""
    if getattr(load, "_brainscore_guard", False):
        return load

    @functools.wraps(load)
    def hub_load(repo_or_dir, *args, **kwargs):
        import urllib.error

        parsed = _github_repo(repo_or_dir) if kwargs.get("source", "github") == "github" else None
        if parsed is None:
            return load(repo_or_dir, *args, **kwargs)
        owner, name, ref = parsed
        local = {key: value for key, value in kwargs.items()
                 if key not in ("source", "trust_repo", "force_reload", "skip_validation")}
        for candidate in ([ref] if ref else ["main", "master"]):
            found = _hub_repo_from_mirror(owner, name, candidate)
            if found is not None:
                return load(str(found), *args, source="local", **local)
        url = f"https://github.com/{owner}/{name}/zipball/{ref or 'main'}"
        if not reachable(url):
            import torch

            for candidate in ([ref] if ref else ["main", "master"]):
                cached = Path(torch.hub.get_dir()) / f"{owner}_{name}_{candidate.replace('/', '_')}"
                if cached.is_dir() and not kwargs.get("force_reload"):
                    return load(str(cached), *args, source="local", **local)
            raise _unreachable(f"torch hub repository {repo_or_dir}", url, hub=True) from None
        try:
            return load(repo_or_dir, *args, **kwargs)
        except (urllib.error.URLError, ConnectionError, socket.gaierror) as error:
            import torch

            raise NetworkError(f"torch hub repository {repo_or_dir} ({url}) is not downloaded: "
                               f"{getattr(error, 'reason', error)}; {_mirror_setting_note()}, or put a checkout in "
                               f"torch hub's cache ({torch.hub.get_dir()})") from None

    hub_load._brainscore_guard = True
    return hub_load


#: module names of plugin code: plugin folders' packages (:data:`brainscore.plugin_sources.PLUGIN_DIR_PACKAGE_PREFIX`,
#: spelled out here since this layer lies below it; tests/models/test_plugin_downloads.py checks they agree) and
#: brainscore's own plugins
PLUGIN_MODULE_PREFIXES = ("brainscore_plugindir_", "brainscore.plugins.")
_LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")


def _loopback(host: str | None) -> bool:
    """Whether ``host`` is this machine (loopback names and addresses are never guarded: local test servers)."""
    if not host:
        return True
    if host.lower() in _LOOPBACK_NAMES:
        return True
    import ipaddress

    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _plugin_caller() -> bool:
    """Whether the download being made was asked for by plugin code: walking out from the caller, the first frame of a
    plugin module (a plugin folder's package, ``brainscore.plugins.*``) comes before any of brainscore's own code.
    Third-party frames (``wget``, ``gdown``) in between are passed over; brainscore's own downloads (the data store)
    are never guarded."""
    import sys

    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_globals.get("__name__") or ""
        if name.startswith(PLUGIN_MODULE_PREFIXES):
            return True
        if name == "brainscore" or (name.startswith("brainscore.") and name != __name__):
            return False
        frame = frame.f_back
    return False


def _url_mirror_file(url: str) -> Path | None:
    """The weights mirror's file for ``url`` by its URL path: ``<mirror>/<host>/<path>`` or ``<mirror>/<path>``
    (a path with ``..`` or empty parts is never looked up), checked against ``<file>.sha256`` when that lies beside
    it (:func:`_check_beside`)."""
    parsed = urlparse(url)
    parts = [part for part in parsed.path.split("/") if part]
    if not parts or any(part in (".", "..") or "\\" in part for part in parts) or not parsed.hostname:
        return None
    path = "/".join(parts)
    found = mirror_file([f"{parsed.hostname}/{path}", path])
    if found is not None:
        _check_beside(found, url)
    return found


def _check_beside(found: Path, what: str) -> None:
    """Check a mirror file against the ``<file>.sha256`` beside it, when there is one; record the file's weights
    status (:func:`brainscore.models.weights.note_weights_file`): verified by that hash, else unverified."""
    from brainscore.data.stimuli import file_sha256
    from brainscore.models.weights import note_weights_file

    checksum = found.with_name(found.name + ".sha256")
    actual = file_sha256(found)
    if any(stand_ins.accepts(key, actual, found) for key in dict.fromkeys([what, what.rsplit("/", 1)[0]])):
        note_weights_file(what, actual, "stand-in", str(found))
        return
    if checksum.is_file():
        words = checksum.read_text(encoding="utf-8").split()  # read once: "<sha256>  <name>"
        expected = words[0].lower() if words else ""
        if actual != expected:
            raise HashMismatchError(f"weights file {found} does not have the sha256 in {checksum}; replace it with the "
                                    f"original ({what})")
        note_weights_file(what, actual, "verified", str(found))
    else:
        note_weights_file(what, actual, "unverified", str(found))


def _guarded_url(url) -> str | None:
    """The URL to guard, or None: only http(s)/ftp URLs to other hosts, asked for by plugin code."""
    url = getattr(url, "full_url", url)  # a urllib.request.Request
    if not isinstance(url, str):
        return None
    parsed = urlparse(url)
    if parsed.scheme.lower() not in ("http", "https", "ftp") or _loopback(parsed.hostname):
        return None
    return url


def guard_urlretrieve(urlretrieve):
    """``urllib.request.urlretrieve`` of plugin code: the weights mirror's file by URL path, else one line when the
    host cannot be reached, else the download."""
    if getattr(urlretrieve, "_brainscore_guard", False):
        return urlretrieve

    @functools.wraps(urlretrieve)
    def guarded(url, filename=None, reporthook=None, data=None):
        target = _guarded_url(url) if data is None else None
        if target is None or not _plugin_caller():
            return urlretrieve(url, filename, reporthook, data)
        found = _url_mirror_file(target)
        if found is not None:
            import email.message

            if filename is None:
                return str(found), email.message.Message()
            atomic_copy(found, Path(filename))
            return str(filename), email.message.Message()
        if not reachable(target):
            raise _unreachable(os.path.basename(urlparse(target).path) or target, target)
        return urlretrieve(url, filename, reporthook, data)

    guarded._brainscore_guard = True
    return guarded


def guard_urlopen(urlopen):
    """``urllib.request.urlopen`` of plugin code: a GET of a file the weights mirror has by URL path answers from it,
    else one line when the host cannot be reached, else the request."""
    if getattr(urlopen, "_brainscore_guard", False):
        return urlopen

    @functools.wraps(urlopen)
    def guarded(url, *args, **kwargs):
        data = kwargs.get("data", args[0] if args else None)
        method = getattr(url, "get_method", lambda: "GET")()
        target = _guarded_url(url) if data is None and method == "GET" else None
        if target is None or not _plugin_caller():
            return urlopen(url, *args, **kwargs)
        found = _url_mirror_file(target)
        if found is not None:
            import email.message
            import urllib.response

            headers = email.message.Message()
            headers["Content-Length"] = str(found.stat().st_size)
            return urllib.response.addinfourl(open(found, "rb"), headers, target, 200)  # noqa: SIM115 - the caller closes
        if not reachable(target):
            raise _unreachable(os.path.basename(urlparse(target).path) or target, target)
        return urlopen(url, *args, **kwargs)

    guarded._brainscore_guard = True
    return guarded


def guard_requests_get(get):
    """``requests.get`` of plugin code: the weights mirror's file by URL path, else one line when the host cannot be
    reached, else the request."""
    if getattr(get, "_brainscore_guard", False):
        return get

    @functools.wraps(get)
    def guarded(url, params=None, **kwargs):
        target = _guarded_url(url)
        if target is None or not _plugin_caller():
            return get(url, params=params, **kwargs)
        found = _url_mirror_file(target) if not params else None  # a query is no file path: never mirrored
        if found is not None:
            import requests

            response = requests.Response()
            response.status_code, response.url, response.reason = 200, target, "OK (weights mirror)"
            response.headers["Content-Length"] = str(found.stat().st_size)
            response.raw = open(found, "rb")  # noqa: SIM115 - read and closed by the response
            return response
        if not reachable(target):
            raise _unreachable(os.path.basename(urlparse(target).path) or target, target)
        return get(url, params=params, **kwargs)

    guarded._brainscore_guard = True
    return guarded


_DRIVE_ID = re.compile(r"(?:[?&]id=|/d/)([A-Za-z0-9_-]{10,})")


def guard_gdown(download):
    """``gdown.download`` (Google Drive): the weights mirror's ``<mirror>/drive.google.com/<file id>``, else one line
    when Google Drive cannot be reached, else the download."""
    if getattr(download, "_brainscore_guard", False):
        return download

    @functools.wraps(download)
    def guarded(url=None, output=None, *args, **kwargs):
        file_id = kwargs.get("id")
        if file_id is None and isinstance(url, str):
            match = _DRIVE_ID.search(url)
            file_id = match.group(1) if match else None
        link = url or f"https://drive.google.com/uc?id={file_id}"
        if file_id is None or not _SAFE_PART.match(file_id) or not _plugin_caller():
            return download(url, output, *args, **kwargs)
        found = mirror_file([f"drive.google.com/{file_id}", f"gdrive/{file_id}"])
        if found is not None:
            _check_beside(found, link)
            if output is None or str(output).endswith(os.sep):
                output = os.path.join(output or ".", file_id)
            atomic_copy(found, Path(output))
            return str(output)
        if not reachable("https://drive.google.com/"):
            raise _unreachable(f"drive.google.com/{file_id}", link)
        return download(url, output, *args, **kwargs)

    guarded._brainscore_guard = True
    return guarded


def guard_snapshot_download(snapshot_download):
    """``huggingface_hub.snapshot_download`` (``from_pretrained`` of some libraries): the weights mirror's folder
    ``<mirror>/<repo_id>`` (or ``<mirror>/huggingface/<repo_id>``), else Hugging Face's cache when the hub cannot be
    reached, else one line; online, the download."""
    if getattr(snapshot_download, "_brainscore_guard", False):
        return snapshot_download

    @functools.wraps(snapshot_download)
    def guarded(repo_id, *args, **kwargs):
        if all(_SAFE_PART.match(part) for part in str(repo_id).split("/")):
            found = mirror_dir([str(repo_id), f"huggingface/{repo_id}"])
            if found is not None:
                for file in sorted(found.rglob("*")):
                    if file.is_file() and not file.name.endswith(".sha256"):
                        _check_beside(file, f"{repo_id}/{file.relative_to(found)}")
                return str(found)
        endpoint, local_only = _hf_endpoint(kwargs)
        url = f"{endpoint.rstrip('/')}/{repo_id}"
        if local_only or not reachable(url):
            try:
                return snapshot_download(repo_id, *args, **{**kwargs, "local_files_only": True})
            except Exception:  # noqa: BLE001 - not cached: our one-line error instead of the client's
                raise _unreachable(f"{repo_id} (all files)", url, why=_hf_why(local_only)) from None
        return snapshot_download(repo_id, *args, **kwargs)

    guarded._brainscore_guard = True
    return guarded


def _hf_why(local_only: bool) -> str | None:
    """Why a Hugging Face file is not downloaded when only its cache may be used and brainscore's offline setting
    is not the reason (None: :func:`_unreachable` says)."""
    if local_only and not config.offline():
        return "Hugging Face's cache does not have it and only the cache may be read (local_files_only or HF_HUB_OFFLINE)"
    return None


def _hf_endpoint(kwargs: dict) -> tuple[str, bool]:
    """Hugging Face's endpoint and whether only its local cache may be used (``local_files_only``, ``HF_HUB_OFFLINE``)."""
    try:
        from huggingface_hub import constants

        return kwargs.get("endpoint") or constants.ENDPOINT, bool(kwargs.get("local_files_only")
                                                                  or constants.HF_HUB_OFFLINE)
    except ImportError:
        return "https://huggingface.co", bool(kwargs.get("local_files_only"))


#: (module, attribute, guard): where the download functions live, and where other modules keep them by name
_TARGETS = (("torch.hub", "download_url_to_file", guard_torch_hub),
            ("torch.hub", "load", guard_hub_load),
            ("torch.hub", "load_state_dict_from_url", guard_load_state_dict),
            ("torch.utils.model_zoo", "load_url", guard_load_state_dict),
            ("torchvision._internally_replaced_utils", "load_state_dict_from_url", guard_load_state_dict),
            ("torchvision.models._api", "load_state_dict_from_url", guard_load_state_dict),
            ("huggingface_hub", "hf_hub_download", guard_huggingface),
            ("huggingface_hub.file_download", "hf_hub_download", guard_huggingface),
            ("timm.models._hub", "hf_hub_download", guard_huggingface),
            ("huggingface_hub", "snapshot_download", guard_snapshot_download),
            ("huggingface_hub._snapshot_download", "snapshot_download", guard_snapshot_download),
            ("transformers.utils.hub", "hf_hub_download", guard_huggingface),
            ("transformers.utils.hub", "snapshot_download", guard_snapshot_download),
            ("urllib.request", "urlretrieve", guard_urlretrieve),
            ("urllib.request", "urlopen", guard_urlopen),
            ("requests", "get", guard_requests_get),
            ("requests.api", "get", guard_requests_get),
            ("gdown", "download", guard_gdown))
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
