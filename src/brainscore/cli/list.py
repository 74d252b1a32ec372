"""``brainscore list KIND [PATTERN]``: registered identifiers."""
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
    for identifier in registry.REGISTRIES[_PLURALS[args.kind]].list(args.pattern):
        print(identifier)
    return 0
