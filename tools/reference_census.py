"""A census of the reference Brain-Score's plugin folders, run unchanged through brainscore's plugin path.

Every plugin folder of the reference's ``brainscore_vision/`` (``models/*``, ``benchmarks/*``, ``data/*``,
``metrics/*``; the ``brainscore-vision`` wheel holds all of them) is put on ``BRAINSCORE_PLUGIN_DIRS`` and
imported the way brainscore imports it when one of its identifiers is loaded, each folder in its own process,
and classified:

``registered``       imported, and every identifier it declares is in brainscore's registry
``built``            (``--mode build``) every identifier also builds (model, benchmark, data, metric)
``missing_weights``  stops on brainscore's error naming a weights file that is not here (with its sha1 or URL)
``missing_data``     stops on brainscore's error naming a data file that is not here (with its sha1)
``missing_package``  stops on a third-party package that is not installed (our error names it)
``missing_name``     stops on a name of ``brainscore_vision`` / ``brainscore_core`` that brainscore lacks
``timeout``          ran past the time bound of one folder
``error``            any other failure (its one-line detail is kept)

Isolation: one server process (a fresh interpreter, the plugin path set) imports torch, numpy and
brainscore's compat packages once, then forks one child per folder; a child's imports, registrations and
global state die with it, so no folder's side effects reach another. A child that runs past ``timeout_s``
is killed. ``--mode import`` (the default, for CI) only imports; ``--mode build`` also calls every
identifier's factory.

Run alone::

    PYTHONPATH=src python tools/reference_census.py --wheel ~/.cache/brainscore-reference/brainscore_vision-2.4.2-py3-none-any.whl
    PYTHONPATH=src python tools/reference_census.py --root /tmp/ref --kinds metrics,data --mode build --json out.json

or from Python (``tools/reference_suite.py`` does)::

    rows = census(extracted_root, kinds=("models", "benchmarks", "data", "metrics"), mode="import")
    print(render_table(rows))
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

KINDS = ("models", "benchmarks", "data", "metrics")
CATEGORIES = ("registered", "built", "missing_weights", "missing_data", "missing_package", "missing_name", "timeout",
              "error")
OK = ("registered", "built")
#: a folder that stops on brainscore's one-line error naming what this installation lacks (a file, a package)
CLEAR_STOPS = ("missing_weights", "missing_data", "missing_package")
#: packages of ours (and the reference's names for them): a module of these that is missing is a name we lack
OUR_PACKAGES = ("brainscore_vision", "brainscore_core", "brainscore", "brainio", "result_caching", "model_tools",
                "candidate_models")
_REGISTRY_KINDS = {"model": "models", "benchmark": "benchmarks", "dataset": "data", "stimulus_set": "data",
                   "metric": "metrics", "ceiling": "metrics"}
_PRELOAD = ("brainscore.registry", "numpy", "scipy.stats", "pandas", "xarray", "sklearn.linear_model", "sklearn.cross_decomposition", "PIL.Image",
            "torch", "torchvision", "timm", "brainscore_vision", "brainscore_vision.model_helpers.activations.pytorch",
            "brainscore_vision.model_helpers.brain_transformation", "brainscore_vision.model_helpers.check_submission",
            "brainscore_vision.benchmarks", "brainscore_vision.benchmark_helpers.neural_common",
            "brainscore_core.supported_data_standards.brainio.assemblies",
            "brainscore_core.supported_data_standards.brainio.s3", "brainscore.api")


# ----------------------------------------------------------------------------------------------- the parent side

def plugin_base(root: str | Path) -> Path:
    """The folder holding ``models/``, ``benchmarks/``, ... : ``root`` itself or its ``brainscore_vision/``.

    Raises
    ------
    ValueError
        If neither holds the reference's plugin folders.
    """
    root = Path(root).expanduser().resolve()
    for base in (root, root / "brainscore_vision"):
        if any((base / kind).is_dir() for kind in KINDS):
            return base
    raise ValueError(f"{root} holds no models/, benchmarks/, data/ or metrics/ folder (nor a brainscore_vision/ "
                     f"with them): give the folder the reference's wheel was extracted to")


def folders(root: str | Path, kinds=KINDS, names=None) -> list[tuple[str, str]]:
    """(kind, folder name) of every plugin folder (one with an ``__init__.py``) under ``root``, sorted."""
    base = plugin_base(root)
    found = [(kind, init.parent.name) for kind in kinds for init in sorted((base / kind).glob("*/__init__.py"))]
    return [item for item in found if names is None or item[1] in names]


def census(root: str | Path, kinds=KINDS, import_only: bool = True, mode: str | None = None, timeout_s: float = 120,
           jobs: int = 1, names=None, env: dict | None = None, progress=None) -> list[dict]:
    """Import (and with ``mode='build'`` build) every plugin folder under ``root``, each in its own process.

    Parameters
    ----------
    root : path
        The extracted wheel (or any folder in the reference's layout).
    kinds : iterable of str
        Among ``models``, ``benchmarks``, ``data``, ``metrics``.
    import_only : bool
        True (the CI part): import and register only. False: also build every identifier.
    mode : {'import', 'build'}, optional
        The same choice by name (overrides ``import_only``).
    timeout_s : float
        Bound on one folder's time (seconds); past it the folder's process is killed.
    jobs : int
        Folders run at once (each in its own forked process).
    names : iterable of str, optional
        Only the folders of these names.
    env : dict, optional
        Extra environment of the server process (e.g. ``BRAINSCORE_WEIGHTS_MIRROR``); ``BRAINSCORE_HOME`` defaults
        to a temporary folder removed afterwards.
    progress : callable (dict) -> None, optional
        Called with each row as it arrives.

    Returns
    -------
    list of dict
        One per folder: ``kind``, ``folder``, ``status`` (one of :data:`CATEGORIES`), ``identifiers``,
        ``detail`` (one line; empty when it worked), ``missing`` (the package, name or file), ``seconds``.
    """
    mode = mode if mode is not None else ("import" if import_only else "build")
    if mode not in ("import", "build"):
        raise ValueError(f"mode must be 'import' or 'build', got {mode!r}")
    base = plugin_base(root)
    todo = folders(base, kinds, set(names) if names is not None else None)
    with tempfile.TemporaryDirectory(prefix="brainscore-census-home-") as home:  # removed afterwards
        # a home of its own unless `env` names one: folders may write there (e.g. copied weights)
        server_env = {**os.environ, "BRAINSCORE_HOME": home, **(env or {}), "BRAINSCORE_PLUGIN_DIRS": str(base),
                      "PYTHONUNBUFFERED": "1"}
        rows = _run_server(server_env, todo, mode, timeout_s, jobs, progress)
    order = {item: index for index, item in enumerate(todo)}
    return sorted(rows, key=lambda row: order.get((row["kind"], row["folder"]), len(order)))


def _run_server(server_env: dict, todo: list, mode: str, timeout_s: float, jobs: int, progress) -> list[dict]:
    """Start the census server with ``server_env``, feed it ``todo``, collect its rows."""
    command = [sys.executable, str(Path(__file__).resolve()), "--serve", "--mode", mode, "--timeout", str(timeout_s),
               "--jobs", str(jobs)]
    rows = []
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=server_env, text=True) as server:
        server.stdin.write("".join(f"{kind}/{name}\n" for kind, name in todo))
        server.stdin.close()
        for line in server.stdout:
            if not line.startswith("{"):
                continue
            row = json.loads(line)
            row["reason"] = row.get("detail", "")  # the name tools/reference_suite.py reads
            rows.append(row)
            if progress is not None:
                progress(row)
    if server.returncode != 0 and len(rows) < len(todo):
        raise RuntimeError(f"the census server stopped (exit {server.returncode}) after {len(rows)} of {len(todo)} "
                           f"folders")
    return rows


def summary(rows: list[dict]) -> dict[str, dict[str, int]]:
    """kind -> status -> number of folders."""
    table: dict[str, Counter] = {}
    for row in rows:
        table.setdefault(row["kind"], Counter())[row["status"]] += 1
    return {kind: dict(counts) for kind, counts in table.items()}


def render_table(rows: list[dict], details: bool = True) -> str:
    """The census as text: one line per kind (folders per status; ``ok %`` registered or built, ``ok or clear stop %``
    also those stopping on brainscore's one-line error naming a missing file or package), then every folder that did
    not work."""
    counts = summary(rows)
    statuses = [s for s in CATEGORIES if any(s in c for c in counts.values())]
    header = ["kind", "folders", *statuses, "ok %", "ok or clear stop %"]
    lines = []
    for kind in KINDS:
        if kind not in counts:
            continue
        total = sum(counts[kind].values())
        ok = sum(counts[kind].get(s, 0) for s in OK)
        clear = ok + sum(counts[kind].get(s, 0) for s in CLEAR_STOPS)
        lines.append([kind, str(total), *[str(counts[kind].get(s, 0)) for s in statuses], f"{100 * ok / total:.1f}",
                      f"{100 * clear / total:.1f}"])
    widths = [max(len(r[i]) for r in [header, *lines]) for i in range(len(header))]
    text = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)) for row in [header, *lines]]
    if details:
        failed = [row for row in rows if row["status"] not in OK]
        if failed:
            text.append("")
            text.extend(f"{row['kind']}/{row['folder']}: {row['status']}: {row['detail']}" for row in failed)
    return "\n".join(text)


def gaps(rows: list[dict]) -> Counter:
    """(status, missing) -> number of folders, most common first: what to add next."""
    return Counter((row["status"], row.get("missing") or "?") for row in rows if row["status"] not in OK)


# ----------------------------------------------------------------------------------------------- the server side

def _one_line(text: str, limit: int = 1200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def classify(error: BaseException) -> tuple[str, str | None]:
    """(status, what is missing) of an exception raised while importing or building a plugin folder.

    >>> from brainscore.errors import DataNotFoundError
    >>> classify(DataNotFoundError("weights file models/x/w.pth (sha1 abc) was not found: ..."))
    ('missing_weights', 'models/x/w.pth')
    >>> classify(ModuleNotFoundError("No module named 'cornet'", name="cornet"))
    ('missing_package', 'cornet')
    """
    from brainscore.errors import (DataNotFoundError, HashMismatchError, MissingDependencyError, NetworkError,
                                   PluginImportError)

    seen = set()
    while isinstance(error, PluginImportError) and error.__cause__ is not None and id(error) not in seen:
        seen.add(id(error))
        error = error.__cause__
    if isinstance(error, (DataNotFoundError, HashMismatchError, NetworkError)):
        text = str(error)
        found = re.search(r"(?:weights|data) file ([^\s(]+)", text) or re.search(r"file ([^\s(]+)", text)
        kind = "missing_weights" if ("weights" in text.split(":")[0] or isinstance(error, NetworkError)) \
            else "missing_data"
        return kind, found.group(1) if found else None
    if isinstance(error, MissingDependencyError):
        found = re.search(r"package '?([\w.\-]+)'?", str(error))
        return "missing_package", getattr(error, "name", None) or (found.group(1) if found else None)
    if isinstance(error, ModuleNotFoundError):
        name = error.name or ""
        top = name.split(".")[0]
        if top in OUR_PACKAGES or top.startswith("brainscore_plugindir_"):
            return "missing_name", name
        return "missing_package", top or None
    if isinstance(error, ImportError):
        found = re.search(r"cannot import name '([^']+)' from '([^']+)'", str(error))
        if found and found.group(2).split(".")[0] in OUR_PACKAGES:
            return "missing_name", f"{found.group(2)}.{found.group(1)}"
    if isinstance(error, AttributeError):
        found = re.search(r"module '([^']+)' has no attribute '([^']+)'", str(error))
        if found and found.group(1).split(".")[0] in OUR_PACKAGES:
            return "missing_name", f"{found.group(1)}.{found.group(2)}"
    return "error", type(error).__name__


def _describe(error: BaseException) -> str:
    from brainscore.errors import PluginImportError

    if isinstance(error, PluginImportError):
        return _one_line(str(error))
    return _one_line(f"{type(error).__name__}: {error}")


def _run_folder(kind: str, name: str, mode: str) -> dict:
    """In a forked child: import the folder ``kind/name`` (and build its identifiers); the census row."""
    from brainscore import registry
    from brainscore.plugin_sources import package_name

    base = Path(os.environ["BRAINSCORE_PLUGIN_DIRS"])
    module = f"{package_name(base)}.{kind}.{name}"
    index = registry._discovery.index()
    declared = {(k, i) for k, ids in index.modules.items() for i, m in ids.items() if m == module}
    before = {k: set(r._factories) for k, r in registry.REGISTRIES.items()}
    row = {"kind": kind, "folder": name, "status": "registered", "identifiers": [], "detail": "", "missing": None}
    try:
        registry._discovery.import_module(module)
    except BaseException as error:  # noqa: BLE001 - any failure of the folder's code is what we census
        row["status"], row["missing"] = classify(error)
        row["detail"] = _describe(error)
        row["identifiers"] = sorted(i for _, i in declared)
        return row
    added = {(k, i) for k, r in registry.REGISTRIES.items() for i in set(r._factories) - before[k]}
    identifiers = declared | added
    row["identifiers"] = sorted({i for _, i in identifiers})
    absent = sorted(f"{k} {i}" for k, i in identifiers if i not in registry.REGISTRIES[k]._factories)
    if absent:  # written in code that does not run (e.g. under `if False:`): the reference registers none either
        row["detail"] = _one_line(f"declares, in code that does not run, {', '.join(absent)} (not registered, as in "
                                  f"the reference)")
        identifiers = {(k, i) for k, i in identifiers if i in registry.REGISTRIES[k]._factories}
        row["identifiers"] = sorted({i for _, i in identifiers})
    if mode == "build":
        for kind_, identifier in sorted(identifiers):
            try:
                registry.REGISTRIES[kind_].load(identifier)
            except BaseException as error:  # noqa: BLE001
                row["status"], row["missing"] = classify(error)
                row["detail"] = _one_line(f"{kind_} {identifier!r}: {_describe(error)}")
                return row
        row["status"] = "built"
    return row


def _child(kind: str, name: str, mode: str, result_path: str, log_path: str) -> None:
    """The forked child: output to its log, the row as JSON to ``result_path``; never returns."""
    code = 0
    try:
        log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(log, 1)
        os.dup2(log, 2)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        import warnings

        warnings.simplefilter("ignore")
        start = time.monotonic()
        row = _run_folder(kind, name, mode)
        row["seconds"] = round(time.monotonic() - start, 2)
        Path(result_path).write_text(json.dumps(row, default=str), encoding="utf-8")
    except BaseException:  # noqa: BLE001 - the parent reports a child that wrote nothing
        code = 1
    finally:
        os._exit(code)


def _log_tail(path: str, lines: int = 3) -> str:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(text[-lines:])


def serve(mode: str, timeout_s: float, jobs: int) -> None:
    """Read ``kind/name`` lines on stdin; for each, fork a child that censuses it; print one JSON row per folder."""
    import warnings

    warnings.simplefilter("ignore")
    import importlib

    for name in _PRELOAD:  # once, before forking: what nearly every folder imports
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a missing optional package is each folder's own finding
            pass
    from brainscore import registry

    registry._discovery.index()  # the static scan of every folder, once
    todo = [line.strip().split("/", 1) for line in sys.stdin if line.strip()]
    logs = tempfile.mkdtemp(prefix="brainscore-census-logs-")
    running: dict[int, tuple] = {}  # pid -> (kind, name, start, log path)

    def finish(pid: int, status: int | None) -> None:
        kind, name, start, log = running.pop(pid)
        result = Path(log).with_suffix(".json")
        data = result.read_bytes() if result.is_file() else b""
        result.unlink(missing_ok=True)
        seconds = round(time.monotonic() - start, 2)
        if status is None:
            row = {"kind": kind, "folder": name, "status": "timeout", "identifiers": [], "missing": None,
                   "detail": f"still running after {timeout_s:g} s (killed); last output: {_log_tail(log)}"}
        else:
            try:
                row = json.loads(data.decode())
            except ValueError:
                how = (f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
                       else f"exit code {os.WEXITSTATUS(status)}")
                row = {"kind": kind, "folder": name, "status": "error", "identifiers": [], "missing": None,
                       "detail": _one_line(f"the process ended ({how}) without a result; last output: "
                                           f"{_log_tail(log)}")}
        row["seconds"] = seconds
        Path(log).unlink(missing_ok=True)
        print(json.dumps(row), flush=True)

    pending = list(todo)
    while pending or running:
        while pending and len(running) < max(1, jobs):
            kind, name = pending.pop(0)
            log = os.path.join(logs, f"{kind}-{name}.log")
            pid = os.fork()
            if pid == 0:
                _child(kind, name, mode, str(Path(log).with_suffix(".json")), log)
            running[pid] = (kind, name, time.monotonic(), log)
        time.sleep(0.02)
        for pid in list(running):
            kind, name, start, log = running[pid]
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                finish(pid, status)
            elif time.monotonic() - start > timeout_s:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                finish(pid, None)
    try:
        os.rmdir(logs)
    except OSError:
        pass


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--root", help="the folder the reference's wheel was extracted to")
    source.add_argument("--wheel", help="the brainscore-vision wheel (extracted once beside it, by "
                                        "tools/reference_suite.py's extract)")
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated among models,benchmarks,data,metrics")
    parser.add_argument("--names", help="comma-separated folder names (default: all)")
    parser.add_argument("--mode", choices=("import", "build"), default="import")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per folder")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.mode, args.timeout, args.jobs)
        return 0
    if args.root is None and args.wheel is None:
        parser.error("give --root (an extracted wheel) or --wheel")
    if args.root is None:  # the runner's extraction (checked: no links, nothing outside the folder)
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import reference_suite

        wheel = Path(args.wheel).expanduser().resolve()
        root = reference_suite.extract(wheel, wheel.parent / f"{wheel.stem}-extracted")
    else:
        root = args.root
    kinds = tuple(k for k in args.kinds.split(",") if k)
    unknown = set(kinds) - set(KINDS)
    if unknown:
        parser.error(f"unknown kinds {sorted(unknown)}; choose among {', '.join(KINDS)}")
    names = args.names.split(",") if args.names else None
    start = time.monotonic()

    def show(row):
        print(f"{row['kind']}/{row['folder']}: {row['status']} ({row['seconds']} s)", file=sys.stderr, flush=True)

    rows = census(root, kinds=kinds, mode=args.mode, timeout_s=args.timeout, jobs=args.jobs, names=names,
                  progress=show)
    print(render_table(rows))
    print(f"\n{len(rows)} folders in {time.monotonic() - start:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"mode": args.mode, "summary": summary(rows), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
