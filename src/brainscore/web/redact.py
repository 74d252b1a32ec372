"""What a submitter may read of the server: logs and failures with the server's host name, addresses and folders
taken out.

A submission's log and a failed score's traceback are written on the server: they name its host, its
submissions folder, its Python installation and brainscore's own folder. A submitter needs their own plugin's
paths and the error, not a map of the server: :func:`redact` writes the plugin's files relative to the plugin
folder and every other server path, the host name and network addresses as placeholders.
"""
from __future__ import annotations

import functools
import os
import re
import socket
import sys
import sysconfig
import tempfile
from pathlib import Path

_ADDRESS = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b")
_PATH = re.compile(r"(?<![\w.:/>])/(?:[^\s/'\":,()\[\]<>]+/)+([^\s/'\":,()\[\]<>]*)")
"""An absolute path of at least two parts (what stays is its last part, the file's name)."""


@functools.lru_cache(maxsize=1)
def _server_names() -> tuple[str, ...]:
    """The host's names (its host name and fully qualified name), longest first (each replaced as a whole word)."""
    names = {socket.gethostname(), socket.getfqdn()}
    return tuple(sorted((n for n in names if n and len(n) > 1 and n != "localhost"), key=len, reverse=True))


@functools.lru_cache(maxsize=1)
def _server_folders() -> tuple[tuple[str, str], ...]:
    """(folder, placeholder) of the server's own folders, longest first."""
    folders = {str(Path(__file__).resolve().parents[1]): "<brainscore>"}  # the brainscore package's folder
    for key in ("purelib", "platlib", "stdlib", "platstdlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            folders[path] = "<python>"
    for path in (sys.prefix, sys.base_prefix, sys.exec_prefix):
        folders[path] = "<python>"
    folders[tempfile.gettempdir()] = "<tmp>"
    if os.environ.get("BRAINSCORE_HOME"):
        folders[str(Path(os.environ["BRAINSCORE_HOME"]).resolve())] = "<server>"
    folders[str(Path.home())] = "<server>"
    return tuple(sorted(((f.rstrip("/"), p) for f, p in folders.items() if f and f != "/"),
                        key=lambda item: len(item[0]), reverse=True))


def redact(text: str | None, plugin_roots: tuple[str | os.PathLike, ...] = ()) -> str | None:
    """``text`` (a log, a failure) without the server's host name, network addresses and folders.

    A path under one of ``plugin_roots`` (the submission's ``site`` folder) is written relative to it
    (``my_plugin/model.py``); brainscore's, Python's and the temporary folders become ``<brainscore>``,
    ``<python>`` and ``<tmp>``; any other absolute path keeps only its last part (``…/name``); the host's names
    become ``<server>`` and IPv4 addresses other than the loopback's (``127.*``, which names no machine) ``<address>``.
    None stays None.
    """
    if not text:
        return text
    for root in sorted((str(Path(r)) for r in plugin_roots if r), key=len, reverse=True):
        for form in {root, str(Path(root).resolve())}:
            text = text.replace(form.rstrip("/") + "/", "")
    for folder, placeholder in _server_folders():
        text = text.replace(folder, placeholder)
    text = _PATH.sub(lambda match: "…/" + match.group(1), text)
    for name in _server_names():
        text = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", "<server>", text)
    return _ADDRESS.sub(lambda match: match.group(0) if match.group(0).startswith("127.") else "<address>", text)


def redact_task(view: dict, folder: str | None) -> dict:
    """A submission task's JSON (:meth:`~brainscore.web.site.Site.view`) with its log, failure and every result's
    failure and error redacted (:func:`redact`); ``folder`` is the task's folder on the server."""
    roots = (os.path.join(folder, "site"), folder) if folder else ()
    out = {**view, "log": redact(view.get("log"), roots), "failure": redact(view.get("failure"), roots)}
    results = {}
    for key, result in (view.get("results") or {}).items():
        if isinstance(result, dict):
            result = {**result, **{k: redact(result[k], roots) for k in ("failure", "error", "log")
                                   if isinstance(result.get(k), str)}}
        results[key] = result
    out["results"] = results
    out.pop("folder", None)
    return out
