"""``brainscore list KIND [PATTERN]``: registered identifiers.

An identifier a plugin folder of the plugin path declares where a built-in declares it too is the folder's (noted on
stderr); the built-in is listed as ``builtin:IDENTIFIER`` by a pattern starting with ``builtin:``
(``brainscore list benchmarks 'builtin:*'``)."""
from __future__ import annotations

import sys

from brainscore import registry
from brainscore.cli import add_plugin_dir_argument

_PLURALS = {"datasets": "dataset", "stimulus_sets": "stimulus_set", "metrics": "metric",
            "ceilings": "ceiling", "benchmarks": "benchmark", "models": "model"}


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("list", help="list registered identifiers")
    parser.add_argument("kind", choices=sorted(_PLURALS), help="what to list")
    parser.add_argument("pattern", nargs="?", default=None, help="shell-style pattern, e.g. 'Cowley*'")
    add_plugin_dir_argument(parser)
    parser.set_defaults(func=run)


def run(args) -> int:
    for (kind, identifier), (first, second) in sorted(registry.plugin_conflicts().items()):
        print(f"warning: the {kind} {identifier!r} is declared by {first} and by {second}; loading it is an error "
              f"until one is renamed", file=sys.stderr)
    kind = _PLURALS[args.kind]
    listed = registry.REGISTRIES[kind].list(args.pattern)
    replaced = [identifier for (of, identifier) in registry.twins() if of == kind and identifier in listed]
    if replaced:
        print(f"note: {len(replaced)} {args.kind} listed here ({', '.join(replaced[:3])}"
              f"{', ...' if len(replaced) > 3 else ''}) are your plugin folders', which replace brainscore's built-ins "
              f"of the same names; the built-ins are listed by `brainscore list {args.kind} 'builtin:*'`",
              file=sys.stderr)
    for identifier in listed:
        print(identifier)
    return 0
