"""The ``brainscore`` command line.

Each module in this package adds one sub-command through ``add_parser(subparsers)``, which must
set ``func`` (called with the parsed arguments, returning an exit code). Modules are found with
:mod:`pkgutil`, so adding a command needs no change here. Every module is imported to build the
parser, even for ``--help``: keep their top-level imports light (no numpy, xarray, torch,
scikit-learn, matplotlib; import those inside the function that runs the command).
"""
from __future__ import annotations

import argparse
import errno
import importlib
import os
import pkgutil
import sys
from pathlib import Path

from brainscore.config import check as check_settings
from brainscore.config import package_version
from brainscore.errors import BrainScoreError, ValidationError


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every sub-command of this package."""
    parser = argparse.ArgumentParser(prog="brainscore", description="Score how brain-like a vision model is.")
    parser.add_argument("--version", action="version", version=f"brainscore {package_version()}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "add_parser"):
            module.add_parser(subparsers)
    for command in subparsers.choices.values():  # every command takes --quiet
        _add_quiet(command)
    return parser


def _add_quiet(parser: argparse.ArgumentParser) -> None:
    """``-q/--quiet`` on ``parser``, or on each of its sub-commands (``brainscore data package ... -q``): on one
    level only, since a sub-command's default would overwrite the value given to its parent."""
    nested = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    if nested:
        for command in nested[0].choices.values():
            _add_quiet(command)
        return
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress on stderr (bars on a terminal, start and end lines of each step over 2 s "
                             "in a log); results, warnings and errors are still shown")


def add_plugin_dir_argument(parser: argparse.ArgumentParser) -> None:
    """``--plugin-dir DIR`` (repeatable): scan a folder of plugins in the reference Brain-Score's layout too."""
    parser.add_argument("--plugin-dir", action="append", default=[], metavar="DIR", dest="plugin_dir",
                        help="a folder of plugins laid out like the reference's brainscore_vision/ (models/, "
                             "benchmarks/, data/, metrics/) or one plugin folder; repeatable; added to the "
                             "plugin_dirs setting (BRAINSCORE_PLUGIN_DIRS) for this command and the processes it starts")


DISK_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
"""``errno`` values of a full disk (and of a full quota)."""


def disk_full_message(error: OSError) -> str:
    """One line for a full disk met by any command: where (the file's folder, else BRAINSCORE_HOME, where caches,
    results and the journal are written), how much is free, and what may be freed. Every file brainscore writes is
    written whole or not at all (a temporary file renamed into place), so what was computed and written before is
    kept."""
    import shutil

    from brainscore import config

    home = config.home()
    folder = Path(error.filename).parent if error.filename else home
    probe = folder
    while not probe.exists() and probe != probe.parent:  # the disk of the nearest folder that exists
        probe = probe.parent
    try:
        free = f"{shutil.disk_usage(probe).free / 2**20:,.0f} MiB free"
    except OSError:
        free = "free space unknown"
    return (f"the disk is full ({error.strerror or error}) writing {error.filename or f'under {home}'} ({free} in "
            f"{folder}): free space there (brainscore's caches, {home / 'cache'}, may be deleted) or set "
            f"BRAINSCORE_HOME to a larger disk, and run again; what was computed and written before is kept")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``brainscore`` command. Returns the exit code."""
    args = build_parser().parse_args(argv)
    saved = os.environ.get("BRAINSCORE_PROGRESS")
    quieted = getattr(args, "quiet", False)
    if quieted:
        from brainscore import progress

        progress.silence()  # inherited by the processes the command starts (workers, sandboxed children)
    try:
        if args.command != "config":  # `brainscore config` shows and repairs them
            for warning in check_settings():
                print(f"warning: {warning}", file=sys.stderr)
        if getattr(args, "plugin_dir", None):
            from brainscore import registry

            if getattr(args, "sandbox", False):  # the folders' code runs in the model's sandbox only, never here
                args.plugin_dir = [str(Path(folder).expanduser().resolve()) for folder in args.plugin_dir]
                for folder in args.plugin_dir:
                    if not Path(folder).is_dir():
                        raise ValidationError(f"the plugin folder {folder} does not exist (--plugin-dir)")
            else:
                registry.add_plugin_dirs(args.plugin_dir)
        return int(args.func(args) or 0)
    except BrainScoreError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        if error.errno not in DISK_FULL:
            raise
        print(f"error: {disk_full_message(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; cached results so far are kept", file=sys.stderr)
        return 130
    finally:
        if quieted:  # main() called in a process that goes on (tests, notebooks): progress as before
            if saved is None:
                os.environ.pop("BRAINSCORE_PROGRESS", None)
            else:
                os.environ["BRAINSCORE_PROGRESS"] = saved


if __name__ == "__main__":
    sys.exit(main())
