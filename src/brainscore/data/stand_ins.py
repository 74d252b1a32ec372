"""Stand-ins: files an administrator declares to take the place of registered ones, each by its own sha256.

A plugin written for the reference names its files by a hash (``sha1='bf8f…'`` for a data file or weights;
the sha256 prefix in a torch hub file name, ``alexnet-owt-7be5be79.pth``). A file with another content is
never used in its place, except where the ``stand_ins`` setting (``$BRAINSCORE_STAND_INS``) names a JSON file
that declares it, e.g. made-up files in the reference's format for tests, or a re-packaged copy one vouches for::

    {"bf8f8d01010d727e3db3f85a9bd5f95f9456b7ec": {"sha256": "<sha256 of the stand-in>", "note": "why"},
     "alexnet-owt-7be5be79.pth": {"sha256": "<sha256 of the stand-in>", "note": "why"}}

The key is what the plugin registered (a sha1, or a torch hub file name); the stand-in must have exactly the
declared sha256, so it is verified like any file. Verification of every other file is unchanged: without
the setting nothing here applies, and a registered file's own hash is always accepted first. Each use is
warned about once per process and named in the provenance of the score computed with it
(``stand-in/<registered>`` with the stand-in's sha256), so such a score is never mistaken for one on the
original file.
"""
from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

from brainscore import config
from brainscore.caching import file_state
from brainscore.errors import ValidationError

__all__ = ["declared", "accepts", "StandInWarning"]

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_cache: dict[tuple, dict[str, dict]] = {}
_warned: set[tuple[str, str]] = set()


class StandInWarning(UserWarning):
    """A declared stand-in file is used in place of a registered one."""


def declared() -> dict[str, dict]:
    """Registered hash or file name -> ``{"sha256": ..., "note": ...}`` from the ``stand_ins`` setting ({} unset).

    Raises
    ------
    ValidationError
        If the file cannot be read, is not a JSON object of such entries, or an entry's sha256 is not 64 hex digits.
    """
    path = config.path_setting("stand_ins")
    if path is None:
        return {}
    path = Path(path).expanduser()
    try:
        key = file_state(path)
        if key in _cache:
            return _cache[key]
        content = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValidationError(f"the stand_ins setting names {path}, which is not a readable JSON file ({error}); fix "
                              f"it or `brainscore config unset stand_ins`") from None
    if not isinstance(content, dict):
        raise ValidationError(f"{path}: stand-ins are a JSON object of registered hash -> {{\"sha256\": ...}}")
    entries = {}
    for registered, entry in content.items():
        sha256 = entry.get("sha256", "") if isinstance(entry, dict) else ""
        if not isinstance(sha256, str) or not _SHA256.match(sha256.lower()):
            raise ValidationError(f"{path}: the stand-in for {registered!r} needs a \"sha256\" of 64 hex digits, got "
                                  f"{entry!r}")
        entries[str(registered)] = {"sha256": sha256.lower(), "note": str(entry.get("note", ""))}
    _cache[key] = entries
    return entries


def accepts(registered: str, sha256: str, path: str | Path) -> bool:
    """Whether the file at ``path`` (content ``sha256``) is a declared stand-in for ``registered``; if so, warned about
    (once) and named in the provenance of the score being computed."""
    entry = declared().get(registered)
    if entry is None or entry["sha256"] != sha256.lower():
        return False
    from brainscore.data.store import Source, used

    used(Source(f"stand-in/{registered}", sha256.lower()))
    if (registered, sha256) not in _warned:
        _warned.add((registered, sha256))
        note = f" ({entry['note']})" if entry["note"] else ""
        warnings.warn(f"{path} is used in place of the registered file {registered}: a stand-in declared by the "
                      f"stand_ins setting{note}; scores computed with it name it in their provenance",
                      StandInWarning, stacklevel=3)
    return True
