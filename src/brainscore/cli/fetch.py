"""``brainscore fetch``: put every file a set of benchmarks and datasets needs into a mirror folder.

::

    brainscore fetch --benchmark 'MajajHong2015.IT-pls' --dataset 'MajajHong2015*' --to /scratch/mirror
    # copy /scratch/mirror to the cluster, then there:
    BRAINSCORE_DATA_MIRROR=/mirror BRAINSCORE_WEIGHTS_MIRROR=/mirror BRAINSCORE_OFFLINE=1 brainscore score ...

Each benchmark is built and its stimuli and data are loaded (its ceiling is not computed), and each
dataset or stimulus set is loaded, here, where downloads are allowed; every file that resolved (from
a mirror, the store or a download: :func:`brainscore.data.locator.recording`, and the declared
sources a cached dataset was built from: :func:`brainscore.data.store.recording_files`) is copied
into ``--to`` at the path a data or weights mirror holds it (``Source.path``, or ``<bucket>/<key>``
of the reference's S3 objects). A file already there with the same content is not copied again.
"""
from __future__ import annotations

import sys
from pathlib import Path

from brainscore.cli import add_plugin_dir_argument


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("fetch", help="pre-fetch the files of benchmarks and datasets into a mirror folder "
                                                 "(to copy to a cluster that is offline)")
    parser.add_argument("--benchmark", action="append", default=[], metavar="PATTERN",
                        help="a benchmark identifier or shell-style pattern; repeatable")
    parser.add_argument("--dataset", action="append", default=[], metavar="PATTERN",
                        help="a dataset (or stimulus set) identifier or pattern, e.g. a reference data plugin's; "
                             "repeatable")
    parser.add_argument("--to", required=True, type=Path, metavar="DIR",
                        help="the mirror folder to fill (created); use it as data_mirror and weights_mirror")
    add_plugin_dir_argument(parser)
    parser.set_defaults(func=run)


def _targets(args) -> list[tuple[str, str, object]]:
    """``(kind, identifier, load)`` for every identifier the patterns match; a pattern matching none is an error."""
    from brainscore import registry
    from brainscore.errors import UnknownIdentifierError

    targets = []
    for kind, patterns in (("benchmark", args.benchmark), ("dataset", args.dataset)):
        for pattern in patterns:
            kinds = ("benchmark",) if kind == "benchmark" else ("dataset", "stimulus_set")
            found = [(k, i) for k in kinds for i in registry.REGISTRIES[k].list(pattern)]
            if not found:
                raise UnknownIdentifierError(f"no {kind} matches {pattern!r}; `brainscore list {kind}s` shows them")
            targets.extend((k, i, registry.REGISTRIES[k].load) for k, i in found)
    return list(dict.fromkeys(targets))


def run(args) -> int:
    from brainscore.benchmarks.base import load_data_of
    from brainscore.caching import file_hashes
    from brainscore.caching.atomic import atomic_copy
    from brainscore.data import locator, store
    from brainscore.errors import BrainScoreError, ValidationError

    if not args.benchmark and not args.dataset:
        raise ValidationError("name what to fetch: --benchmark PATTERN and/or --dataset PATTERN")
    out = args.to.expanduser().resolve()
    files: dict[str, Path] = {}
    failed = 0
    for kind, identifier, load in _targets(args):
        try:
            with locator.recording() as located, store.recording_files() as declared:
                built = load(identifier)
                if kind == "benchmark":
                    load_data_of(built)
            for path, sha256 in declared.items():  # sources of a dataset built from the cache (not re-read)
                if path not in located and not path.startswith("brainio/"):
                    located[path] = store.fetch(store.Source(path, sha256))
            files.update(located)
            print(f"{kind} {identifier}: {len(located)} file(s)")
        except BrainScoreError as error:
            failed += 1
            print(f"{kind} {identifier}: not fetched: {error}", file=sys.stderr)
    copied = size = 0
    for relative, path in sorted(files.items()):
        target = out / relative
        size += path.stat().st_size
        if target.is_file() and target.stat().st_size == path.stat().st_size and \
                file_hashes(target, ("sha256",)) == file_hashes(path, ("sha256",)):
            continue
        atomic_copy(path, target)
        copied += 1
    print(f"{len(files)} file(s), {size / 2**20:,.1f} MiB, in {out} ({copied} copied now). On a machine without "
          f"internet: BRAINSCORE_DATA_MIRROR={out} BRAINSCORE_WEIGHTS_MIRROR={out} BRAINSCORE_OFFLINE=1")
    return 1 if failed else 0
