"""``brainscore config``: the user's settings, shared by the command line and the Python API.

    brainscore config show                       every setting, its value and where it comes from
    brainscore config set data_mirror ../shared/data
    brainscore config unset data_mirror
    brainscore config path                       the configuration file

Settings live in ``$XDG_CONFIG_HOME/brainscore/config.toml`` (default ``~/.config/...``);
environment variables (``BRAINSCORE_DATA_MIRROR``, ...) override them. See :mod:`brainscore.config`.
"""
from __future__ import annotations

import argparse

from brainscore import config


def add_parser(subparsers) -> None:
    """Add ``config`` and its sub-commands to the ``brainscore`` parser."""
    keys = ", ".join(config.SETTINGS)
    parser = subparsers.add_parser("config", help="show and set user settings (data mirror, home, offline, weights)",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="config_command", required=True, metavar="SUBCOMMAND")
    p = commands.add_parser("show", help="every setting, its value and its source")
    p.set_defaults(func=run_show)
    p = commands.add_parser("set", help="store a setting in the configuration file")
    p.add_argument("key", choices=list(config.SETTINGS), metavar="KEY", help=f"one of: {keys}")
    p.add_argument("value", help="the value (paths are stored absolute; several mirrors separated by ':')")
    p.set_defaults(func=run_set)
    p = commands.add_parser("unset", help="remove a setting from the configuration file")
    p.add_argument("key", metavar="KEY", help=f"one of: {keys} (or a key the file holds that is not a setting)")
    p.set_defaults(func=run_unset)
    p = commands.add_parser("path", help="print the configuration file's path")
    p.set_defaults(func=lambda args: print(config.config_file()) or 0)


def _text(value) -> str:
    if value is None:
        return "(not set)"
    if isinstance(value, list):
        return ":".join(value) or "(none)"
    return str(value).lower() if isinstance(value, bool) else str(value)


def run_show(args) -> int:
    print(f"# configuration file: {config.config_file()}"
          + ("" if config.config_file().is_file() else " (does not exist yet)"))
    width = max(len(k) for k in config.SETTINGS)
    for key, setting in config.SETTINGS.items():
        try:
            value, source = config.get(key)
        except config.ValidationError as error:
            print(f"{key:<{width}}  (invalid: {error})")
            continue
        if key == "home" and value is None:
            value, source = str(config.home()), "default"
        shown = "(set, not shown)" if setting.kind == "secret" and value else _text(value)
        print(f"{key:<{width}}  {shown}  [{source}]")
    errors, warnings = config.problems()
    for problem in errors:
        print(f"error: {problem}")
    for problem in warnings:
        print(f"warning: {problem}")
    return 2 if errors else 0


def run_set(args) -> int:
    path = config.set_value(args.key, args.value)
    value, source = config.get(args.key)
    written = config.read_file(path)[args.key]
    shown = "(set, not shown)" if config.SETTINGS[args.key].kind == "secret" else _text(written)
    print(f"{args.key} = {shown}  (written to {path})")
    if source != str(path):
        print(f"note: {source} overrides it in this shell")
    return 0


def run_unset(args) -> int:
    print(f"{args.key} removed from {config.unset(args.key)}")
    return 0
