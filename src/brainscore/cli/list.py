"""``brainscore list KIND [PATTERN]``: registered identifiers.

An identifier a plugin folder of the plugin path declares where a built-in declares it too is the folder's (noted on
stderr); the built-in is listed as ``builtin:IDENTIFIER`` by a pattern starting with ``builtin:``
(``brainscore list benchmarks 'builtin:*'``).

``--check`` (benchmarks, datasets, stimulus sets) says of each whether it runs here now, and if not, why: each is
built and its data loaded with downloads turned into a probe (:func:`brainscore.data.locator.probing`), so nothing is
fetched; this loads every listed benchmark's data and so takes a while on a large selection::

    runs here          every file it needs is in a mirror, the store or a local package
    needs fetch        a file is on a server that lets anyone read it (or, offline, could not be asked):
                       `brainscore fetch` (or a first score online) gets it
    needs credentials  a file is on S3 and not public: give the AWS credential chain credentials that may read it
    fails              it cannot be built here (the reason follows)
    not checked        it was built without reading any file: it reads its data only when it scores
"""
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
    parser.add_argument("--check", action="store_true",
                        help="say of each benchmark, dataset or stimulus set whether it runs here now, needs a fetch "
                             "or needs credentials (builds each and loads its data; downloads nothing)")
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
    if not args.check:
        for identifier in listed:
            print(identifier)
        return 0
    if kind not in ("benchmark", "dataset", "stimulus_set"):
        from brainscore.errors import ValidationError

        raise ValidationError(f"--check applies to benchmarks, datasets and stimulus_sets, not {args.kind}")
    marks = {identifier: check(kind, identifier) for identifier in listed}
    width = max((len(identifier) for identifier in listed), default=0)
    for identifier, (mark, detail) in marks.items():
        print(f"{identifier:<{width}}  {mark}{f': {detail}' if detail else ''}")
    counts = {mark: sum(1 for m, _ in marks.values() if m == mark) for mark in MARKS}
    print(", ".join(f"{count} {mark}" for mark, count in counts.items()), file=sys.stderr)
    return 0


#: The marks of ``--check``, in the order of the summary line.
MARKS = ("runs here", "needs fetch", "needs credentials", "fails", "not checked")


def check(kind: str, identifier: str) -> tuple[str, str]:
    """``(mark, detail)`` of one registered benchmark, dataset or stimulus set (see the module notes).

    The mark is one of :data:`MARKS`; ``detail`` is the file's URL for a fetch, the reason of a failure
    (one line), empty where it runs here. Nothing is downloaded.
    """
    from brainscore.benchmarks.base import load_data_of
    from brainscore.data import locator, store

    try:
        with locator.probing(), locator.recording() as located, store.recording_files() as declared:
            built = registry.REGISTRIES[kind].load(identifier)
            loaded = load_data_of(built) if kind == "benchmark" else True
    except locator.FetchNeeded as needed:
        if needed.access == "credentials":
            return "needs credentials", needed.url
        return "needs fetch", needed.url if needed.access != "unchecked" else f"{needed.url} (access not checked)"
    except Exception as error:  # noqa: BLE001 - a plugin's failure is this benchmark's mark, not the listing's end
        reason = " ".join(str(error).split()) or type(error).__name__
        return "fails", f"{type(error).__name__}: {reason[:300]}"
    if not loaded and not located and not declared:  # no data found to load, no file read: read when it scores
        return "not checked", "it reads its data only when it scores (no file was read to build it)"
    return "runs here", ""
