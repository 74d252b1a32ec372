"""``brainscore data ...``: the data files of the data plugins, and the benchmark author's tools.

For everyone (operating on the sources that data plugins declare)::

    brainscore data list   [PATTERN]      declared sources and where each is found
    brainscore data fetch  [PATTERN ...]  fetch (mirror, store or download) and verify them
    brainscore data verify [PATTERN ...]  re-hash every local copy
    brainscore data where  [PATTERN ...]  the store, the mirrors, and each source's local path

For benchmark authors::

    brainscore data validate --stimuli stimuli.csv --assembly assembly.nc
    brainscore data package  --stimuli stimuli.csv --stimulus-set-identifier MyLab2026 \\
                             --assembly assembly.nc --identifier MyLab2026.V4 --out packaged/
    brainscore data publish  packaged/manifest.json --to s3://my-bucket/brainscore

A stimulus CSV has a ``stimulus_id`` column and either a ``stimulus_path`` column (absolute, or
relative to the CSV's folder) or a ``filename`` column relative to ``--stimulus-dir`` (or to the
folder a ``--stimulus-zip`` is extracted to): the packaged format itself validates as it is.
"""
from __future__ import annotations

import argparse
import fnmatch
import sys
import tempfile
from pathlib import Path

from brainscore import config, registry
from brainscore.errors import BrainScoreError, ValidationError


def add_parser(subparsers) -> None:
    """Add ``data`` and its sub-commands to the ``brainscore`` parser."""
    parser = subparsers.add_parser("data", help="list, fetch and verify data files; validate, package and publish data",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="data_command", required=True, metavar="SUBCOMMAND")

    p = commands.add_parser("list", help="declared data sources and whether each is present locally")
    p.add_argument("pattern", nargs="?", default="*", help="shell-style pattern on dataset names (default: all)")
    p.add_argument("--files", action="store_true", help="list every file and where it is")
    p.set_defaults(func=run_list)

    p = commands.add_parser("fetch", help="fetch and verify declared sources (mirror, store or download)")
    p.add_argument("patterns", nargs="*", default=["*"], help="shell-style patterns on dataset names")
    p.set_defaults(func=run_fetch)

    p = commands.add_parser("verify", help="re-hash every local copy of declared sources")
    p.add_argument("patterns", nargs="*", default=["*"], help="shell-style patterns on dataset names")
    p.set_defaults(func=run_verify)

    p = commands.add_parser("where", help="where data are stored and looked for")
    p.add_argument("patterns", nargs="*", default=[], help="also show the local path of these datasets' sources")
    p.set_defaults(func=run_where)

    p = commands.add_parser("validate", help="check a stimulus set and/or assembly against the data standard")
    _add_input_arguments(p)
    p.add_argument("--dataset", help="validate a registered dataset (and its stimulus set) instead of files")
    p.add_argument("--stimulus-set", dest="stimulus_set_id", help="validate a registered stimulus set")
    p.set_defaults(func=run_validate)

    p = commands.add_parser("package", help="validate and package files in the reference's format")
    _add_input_arguments(p)
    p.add_argument("--out", required=True, help="folder to write the packaged files and manifest.json into")
    p.add_argument("--manifest", help="manifest file to write or extend (default: OUT/manifest.json)")
    p.set_defaults(func=run_package)

    p = commands.add_parser("publish", help="upload packaged files and print the data plugin's code")
    p.add_argument("manifests", nargs="+", help="manifest.json file(s) written by `brainscore data package`")
    p.add_argument("--to", dest="destination", required=True,
                   help="s3://bucket/folder, a local folder served by a web server, or any fsspec URL")
    p.add_argument("--public-url", help="URL the destination is served under (file URL = PUBLIC_URL/name)")
    p.add_argument("--endpoint-url", help="S3-compatible endpoint (default $BRAINSCORE_S3_ENDPOINT_URL or AWS)")
    p.add_argument("--private", action="store_true", help="do not make the files public (no anonymous check)")
    p.add_argument("--store-folder", default="packaged", help="folder of the files in stores and mirrors")
    p.add_argument("--overwrite", action="store_true", help="replace published files with different content")
    p.add_argument("--no-check", action="store_true", help="do not download the files back to check them")
    p.add_argument("--snippet-out", help="also write the data plugin's code to this file")
    p.set_defaults(func=run_publish)


def _add_input_arguments(p) -> None:
    p.add_argument("--stimuli", help="stimulus CSV (stimulus_id + stimulus_path, or filename)")
    p.add_argument("--stimulus-dir", help="folder that 'filename' is relative to")
    p.add_argument("--stimulus-zip", help="zip that 'filename' names members of (a packaged stimulus set)")
    p.add_argument("--stimulus-set-identifier", help="identifier of the stimulus set")
    p.add_argument("--assembly", help="assembly netCDF file (variable 'data')")
    p.add_argument("--identifier", help="identifier of the assembly")
    p.add_argument("--assembly-class", default=None,
                   choices=["NeuroidAssembly", "BehavioralAssembly", "PropertiesAssembly", "DataAssembly"],
                   help="assembly type (default: inferred from its dims)")
    p.add_argument("--allow-nan", action="store_true", help="allow NaN values in the assembly")
    p.add_argument("--no-images", action="store_true", help="do not open every stimulus file as an image")


# ---- declared sources ---------------------------------------------------------------------------
def _declared(patterns) -> dict:
    from brainscore.data.store import declared

    registry.import_plugins("data")
    patterns = patterns if isinstance(patterns, (list, tuple)) else [patterns]
    return {name: sources for name, sources in sorted(declared().items())
            if any(fnmatch.fnmatchcase(name, p) for p in patterns)}


def run_list(args) -> int:
    from brainscore.data.store import locate

    datasets = _declared(args.pattern)
    if not datasets:
        print(f"no data plugin declares sources matching {args.pattern!r}", file=sys.stderr)
        return 1
    for name, sources in datasets.items():
        local = [locate(source) for source in sources]
        n_local = sum(p is not None for p in local)
        n_remote = sum(p is None and s.url is not None for p, s in zip(local, sources))
        n_missing = len(sources) - n_local - n_remote
        print(f"{name}: {len(sources)} files, {n_local} local, {n_remote} to download"
              + (f", {n_missing} missing with no URL" if n_missing else ""))
        if args.files:
            for source, path in zip(sources, local):
                status = f"local {path}" if path else (f"remote {source.url}" if source.url else "missing, no URL")
                print(f"  {source.path}  sha256 {source.sha256[:12]}  {status}")
    return 0


def run_fetch(args) -> int:
    from brainscore.data.store import fetch

    return _each_source(args.patterns, fetch, "fetched")


def run_verify(args) -> int:
    from brainscore.data.store import locate, verify

    def check(source):
        local = locate(source)
        if local is None:
            raise _Missing(f"{source.path} is not present locally (run `brainscore data fetch`)")
        return verify(local, source.sha256, what=source.path, force=True)

    return _each_source(args.patterns, check, "verified")


class _Missing(Exception):
    pass


def _each_source(patterns, action, verb: str) -> int:
    datasets = _declared(patterns)
    if not datasets:
        print(f"no data plugin declares sources matching {patterns}", file=sys.stderr)
        return 1
    failures, done = [], 0
    for name, sources in datasets.items():
        for source in sources:
            try:
                path = action(source)
            except (BrainScoreError, _Missing) as error:
                failures.append((name, source.path, error))
                print(f"FAILED {source.path}: {error}", file=sys.stderr)
            else:
                done += 1
                print(f"{verb} {source.path} -> {path}")
    print(f"{done} {verb}, {len(failures)} failed", file=sys.stderr)
    return 1 if failures else 0


def run_where(args) -> int:
    from brainscore.data import remote
    from brainscore.data.store import locate, store_path

    print(f"store (home):                   {config.home()}")
    mirrors = config.data_mirrors()
    print(f"mirrors (data_mirror):          {', '.join(map(str, mirrors)) or 'none'}")
    print(f"offline (offline):              {'yes' if config.offline() else 'no'}")
    print(f"settings: environment variables, then {config.config_file()} (`brainscore config show`)")
    print(f"S3 endpoint:                    {remote.s3_endpoint_url() or 'Amazon S3'} "
          f"({'anonymous' if remote.s3_anonymous() else 'with AWS credentials'})")
    if args.patterns:
        for name, sources in _declared(args.patterns).items():
            print(name)
            for source in sources:
                local = locate(source)
                where = local if local else f"not present; would be stored at {store_path(source)}"
                print(f"  {source.path}: {where}")
    return 0


# ---- authoring -----------------------------------------------------------------------------------
def _read_stimulus_set(args, workdir: Path):
    import pandas as pd

    from brainscore.data.stimuli import StimulusSet
    from brainscore.data.links import check_no_links_out

    csv = Path(args.stimuli)
    if not csv.is_file():
        raise ValidationError(f"--stimuli {csv}: does not exist; give the stimulus CSV (stimulus_id + stimulus_path, or "
                              f"filename)")
    try:
        frame = pd.read_csv(csv, dtype={"stimulus_id": str, "image_id": str})
    except (OSError, ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as error:  # UnicodeDecodeError too
        raise ValidationError(f"--stimuli {csv} cannot be read as a CSV ({type(error).__name__}: "
                              f"{str(error).splitlines()[0] if str(error) else 'empty'}); give a comma-separated "
                              f"file with a header row") from error
    if "stimulus_id" not in frame and "image_id" in frame:
        frame["stimulus_id"] = frame["image_id"]
    if "stimulus_id" not in frame:
        raise ValidationError(f"{csv} has no 'stimulus_id' column; columns are {list(frame.columns)}")
    base = None
    if args.stimulus_zip:
        base = workdir / "stimuli"
        from brainscore.data.store import safe_extract

        safe_extract(Path(args.stimulus_zip), base)  # zip-bomb limits, no paths outside base
    elif args.stimulus_dir:
        base = Path(args.stimulus_dir)
    if base is not None:
        if "filename" not in frame:
            raise ValidationError(f"{csv} has no 'filename' column to find files in {base}")
        paths = {sid: base / name for sid, name in zip(frame["stimulus_id"], frame["filename"].astype(str))}
        check_no_links_out(paths, base)
    elif "stimulus_path" in frame:
        paths = {sid: (p if Path(p).is_absolute() else csv.parent / p)
                 for sid, p in zip(frame["stimulus_id"], frame["stimulus_path"].astype(str))}
        check_no_links_out({sid: p for sid, p in paths.items() if not Path(p).is_absolute()}, csv.parent)
        frame = frame.drop(columns=["stimulus_path"])
    elif "filename" in frame:
        paths = {sid: csv.parent / name for sid, name in zip(frame["stimulus_id"], frame["filename"].astype(str))}
        check_no_links_out(paths, csv.parent)
    else:
        raise ValidationError(f"{csv} has neither 'stimulus_path' nor 'filename'; add one, or give --stimulus-dir")
    identifier = args.stimulus_set_identifier
    return StimulusSet(frame, identifier=identifier, stimulus_paths={k: Path(v) for k, v in paths.items()})


def _read_assembly(args):
    from brainscore.data.io import read_netcdf
    from brainscore.data.packaging import ASSEMBLY_CLASSES

    cls = ASSEMBLY_CLASSES[args.assembly_class] if args.assembly_class else None
    if not Path(args.assembly).is_file():
        raise ValidationError(f"--assembly {args.assembly}: does not exist; give the assembly's NetCDF file (.nc)")
    assembly = read_netcdf(args.assembly, cls=cls or ASSEMBLY_CLASSES["DataAssembly"])
    return assembly


def run_validate(args) -> int:
    from brainscore.data.validation import validate

    with tempfile.TemporaryDirectory(prefix="brainscore-validate-") as tmp:
        if args.dataset or args.stimulus_set_id:
            assembly = registry.datasets.load(args.dataset) if args.dataset else None
            stimuli = (registry.stimulus_sets.load(args.stimulus_set_id) if args.stimulus_set_id
                       else assembly.attrs.get("stimulus_set") if assembly is not None else None)
            if assembly is not None:
                assembly = assembly.copy()
                assembly.attrs.pop("stimulus_set", None)
        else:
            if not args.stimuli and not args.assembly:
                raise ValidationError("give --stimuli and/or --assembly (or --dataset / --stimulus-set)")
            stimuli = _read_stimulus_set(args, Path(tmp)) if args.stimuli else None
            assembly = _read_assembly(args) if args.assembly else None
        report = validate(stimulus_set=stimuli, assembly=assembly, check_images=not args.no_images,
                          allow_nan=args.allow_nan, assembly_class=args.assembly_class,
                          stimulus_set_identifier=args.stimulus_set_identifier or None,
                          assembly_identifier=args.identifier or args.dataset, raise_on_error=False)
    print(report)
    return 0 if report.ok else 1


def run_package(args) -> int:
    """Validate and package, all or nothing: the files are written into a staging folder inside ``--out`` and moved
    there with the manifest only when everything succeeded (:class:`~brainscore.data.packaging.staged_output`)."""
    import warnings

    from brainscore.data.packaging import (DataWarning, commit_packaged, package_data_assembly, package_stimulus_set,
                                           staged_output)
    from brainscore.data.validation import validate_identifier

    if not args.stimuli and not args.assembly:
        raise ValidationError("give --stimuli and/or --assembly to package")
    if args.assembly and not args.identifier:
        raise ValidationError("give the assembly's --identifier (e.g. MyLab2026.V4)")
    if args.stimuli and not args.stimulus_set_identifier:
        raise ValidationError("give the --stimulus-set-identifier (e.g. MyLab2026)")
    for identifier, what in ((args.stimulus_set_identifier, "stimulus set identifier"),
                             (args.identifier if args.assembly else None, "assembly identifier")):
        if identifier is not None:  # both before anything is written
            validate_identifier(identifier, what).raise_if_failed()
    out = Path(args.out)
    manifest = Path(args.manifest) if args.manifest else out / "manifest.json"
    try:
        with warnings.catch_warnings(record=True) as caught, staged_output(out) as staging, \
                tempfile.TemporaryDirectory(prefix="brainscore-package-") as tmp:
            warnings.simplefilter("always", DataWarning)
            items = []
            stimuli = _read_stimulus_set(args, Path(tmp)) if args.stimuli else None
            if stimuli is not None:
                items.append(package_stimulus_set(stimuli, args.stimulus_set_identifier, staging,
                                                  check_images=not args.no_images))
            if args.assembly:
                items.append(package_data_assembly(_read_assembly(args), args.identifier, args.stimulus_set_identifier,
                                                   staging, stimulus_set=stimuli, assembly_class=args.assembly_class,
                                                   allow_nan=args.allow_nan))
            items = commit_packaged(staging, out, items, manifest)
    except OSError as error:
        raise _disk_error(error, args, out) from None
    for warning in caught:
        print(f"warning: {warning.message}", file=sys.stderr)
    for item in items:
        for f in item.files:
            print(f"{f.path}  {f.size:,} bytes  sha256 {f.sha256}  sha1 {f.sha1}")
    print(f"manifest: {manifest}")
    return 0


def _disk_error(error: OSError, args, out: Path) -> Exception:
    """A full disk or a too long file name while packaging, as one line naming ``out``; any other OSError as is."""
    import errno
    import shutil

    if error.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", -1)):
        inputs = [Path(p) for p in (args.stimuli, args.stimulus_zip, args.assembly) if p]
        if args.stimulus_dir:
            inputs += [p for p in Path(args.stimulus_dir).rglob("*") if p.is_file()]
        needed = sum(p.stat().st_size for p in inputs if p.is_file())
        try:
            free = f"{shutil.disk_usage(out).free / 2**20:,.0f} MiB free"
        except OSError:
            free = "free space unknown"
        return BrainScoreError(f"the disk holding --out {out} is full ({free}; packaging needs about "
                               f"{needed / 2**20:,.0f} MiB there, as much again as the input files): free space there "
                               f"or give another --out; nothing was added to {out} (the partial files were removed)")
    if error.errno == errno.ENAMETOOLONG:
        return BrainScoreError(f"a file name is too long for the file system of {out} ({error.filename or error}); "
                               f"shorten the identifiers or the --out path; nothing was added to {out}")
    return error


def run_publish(args) -> int:
    from brainscore.data.packaging import read_manifest
    from brainscore.data.publish import publish

    items = [item for manifest in args.manifests for item in read_manifest(manifest)]
    publication = publish(items, args.destination, public_url=args.public_url, public=not args.private,
                          endpoint_url=args.endpoint_url, store_folder=args.store_folder,
                          overwrite=args.overwrite, check=not args.no_check)
    for published in publication.files.values():
        state = "uploaded" if published.uploaded else "already there"
        print(f"# {state}: {published.location} -> {published.url}", file=sys.stderr)
    if args.snippet_out:
        Path(args.snippet_out).write_text(publication.snippet)
        print(f"# data plugin code written to {args.snippet_out}", file=sys.stderr)
    print(publication.snippet)
    return 0
