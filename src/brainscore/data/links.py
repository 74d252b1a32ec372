"""Stimulus files that lead out of their folder through a symbolic link or ``..``: found and refused.

A stimulus folder handed over by someone else may hold ``p.png -> /etc/passwd`` (or a linked
sub-folder, or ``../`` names): packaging or uploading such a file would publish whatever it points
at. :func:`links_out_of_folder` lists them; :func:`check_no_links_out` refuses them with one clear
error. Used by validation, packaging, ``brainscore data package`` and ``brainscore submit``.
"""
from __future__ import annotations

import os
from pathlib import Path

from brainscore.errors import ValidationError

__all__ = ["links_out_of_folder", "check_no_links_out"]

_SHOWN = 10  # offending files written into a message


def links_out_of_folder(paths: dict, base: str | Path | None = None) -> list[tuple[str, str, str]]:
    """Stimulus files reached through a symbolic link that leads out of the stimulus folder.

    A stimulus folder handed over by someone else may hold ``p.png -> /etc/passwd`` (or a linked
    sub-folder, or ``../`` names): packaging such a file would publish whatever it points at. A
    file is refused when

    - its real location is not inside the real location of ``base``, or
    - without ``base``: it is itself a link whose target is not inside the folder the link lies in,
      or its real location is not inside the folder all the paths have in common.

    Links within the folder (``b.png -> a.png``) are allowed.

    Parameters
    ----------
    paths : dict
        stimulus_id -> file path.
    base : path, optional
        The stimulus folder (e.g. ``--stimulus-dir``, or the CSV's folder).

    Returns
    -------
    list of (stimulus_id, path, real target)
        Empty when no file leads out.
    """
    if not paths:
        return []
    absolute = {str(sid): os.path.abspath(os.fspath(p)) for sid, p in paths.items()}
    per_file = base is None
    if base is None:
        try:
            base = os.path.commonpath([os.path.dirname(p) for p in absolute.values()])
        except ValueError:  # paths on different drives: only the per-file rule applies
            base = None
    real_base = os.path.realpath(base) if base is not None else None
    out = []
    for sid, path in absolute.items():
        real = os.path.realpath(path)
        inside_own_folder = (not per_file or not os.path.islink(path)
                             or _inside(real, os.path.realpath(os.path.dirname(path))))
        inside_base = real_base is None or _inside(real, real_base)
        if not (inside_own_folder and inside_base):
            out.append((sid, path, real))
    return out


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def check_no_links_out(paths: dict, base: str | Path | None = None) -> None:
    """Raise :class:`~brainscore.errors.ValidationError` if a stimulus file links out of its folder.

    See :func:`links_out_of_folder`; the message names the files, their targets and the fix.
    """
    escaping = links_out_of_folder(paths, base)
    if escaping:
        shown = "; ".join(f"{sid}: {path} -> {real}" for sid, path, real in escaping[:_SHOWN])
        more = f" ({len(escaping)} in all)" if len(escaping) > _SHOWN else ""
        raise ValidationError(f"stimulus files lead out of the stimulus folder through symbolic links or '..': "
                              f"{shown}{more}. Nothing outside the folder is packaged: copy the real files into "
                              f"the folder (e.g. `cp -L`) or fix the links")
