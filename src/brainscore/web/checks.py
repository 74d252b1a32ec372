"""Checks on a submitted model plugin zip, before anything of it runs or is even unpacked.

A submission is a zip of one Python package laid out like a built-in model plugin::

    my_plugin/__init__.py            registers the model identifiers: register_model("my-model")
    my_plugin/model.py               the model code (any further modules)
    my_plugin/region_layer_map/*.json   optional committed layers
    my_plugin/requirements.txt       optional; allowed packages only (the site's allow-list), satisfied from
                                     the server's environment, else installed (wheels only) by the queue into
                                     a virtual environment per requirements hash
    my_plugin/weights.pt             optional weights (or a path under an allowed weights folder)
    my_plugin/metadata.yml           optional model card fields (the reference's; size, aliases and nesting
                                     bounded, :mod:`brainscore.web.plugin_metadata`)

or a model plugin folder written for the reference Brain-Score (``my_plugin/__init__.py`` with
``model_registry['my-model'] = lambda: ModelCommitment(...)``), as the folder itself or inside
``models/`` (``models/my_plugin/...``, the reference's layout) or ``brainscore_vision/models/`` (its repository's
layout, zipped from the repository's root). Such a folder is scored as a plugin
folder (:mod:`brainscore.registry`, ``BRAINSCORE_PLUGIN_DIRS``), see :func:`reference_plugin_dir`.

:func:`check_zip` reads only the zip's directory and the plugin's Python sources (parsed, never
executed) and returns every problem found, each saying exactly what is wrong; :func:`extract`
unpacks a checked zip, enforcing the sizes again on the bytes actually written (a zip's declared
sizes can lie).
"""
from __future__ import annotations

import ast
import errno
import importlib.machinery
import importlib.util
import io
import os
import re
import stat
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from brainscore.plugin_sources import parse_source
from brainscore.web import plugin_metadata

MAX_ZIP_BYTES = 50 * 1024 * 1024
MAX_UNCOMPRESSED_BYTES = 500 * 1024 * 1024
MAX_RATIO = 100.0
"""Largest uncompressed/compressed size of an entry (and of the whole zip) before it counts as a bomb."""
MAX_ENTRIES = 2000
MAX_REQUIREMENTS_BYTES = 16 * 1024
"""Largest requirements.txt read (bytes, unpacked); a plugin names a few packages."""
MAX_REQUIREMENTS_LINES = 200
"""Most lines of a requirements.txt (comments and blank lines included)."""
MAX_PATH_CHARS = 1024
"""Longest path of a zip entry (characters); deeper or longer paths cannot be unpacked on common file systems."""
MAX_PATH_DEPTH = 32
"""Most folders in a zip entry's path."""
MAX_NAME_BYTES = 255
"""Longest file or folder name (bytes in UTF-8), the limit of common Linux file systems (ext4, xfs, tmpfs)."""
EXECUTABLE_SUFFIXES = frozenset({
    ".pyc", ".pyo", ".pyd", ".so", ".dll", ".dylib", ".pth", ".pyw",
    *importlib.machinery.EXTENSION_SUFFIXES, *importlib.machinery.BYTECODE_SUFFIXES})
"""File endings of what Python could run instead of, or beside, a plugin's reviewed ``.py`` sources: bytecode (run
without reading the source when compiled with ``invalidation_mode=UNCHECKED_HASH``), native extensions (imported before
a ``.py`` of the same name) and ``.pth`` files (run at start-up from a site folder): each runs without a line of the
reviewed source asking for it. A submission carries sources only: :func:`check_zip` refuses these by name. Archives
(zip, egg, wheel, zipapp) are data here: Python imports from one only when a reviewed source puts it on ``sys.path``
(the reference's model folders ship weights as ``.zip``)."""
RESERVED_PACKAGES = frozenset({"sitecustomize", "usercustomize"})
"""Plugin folder names Python imports by itself at start-up when they are on its path."""
ALLOWED_REQUIREMENTS = frozenset({
    "torch", "torchvision", "timm", "numpy", "scipy", "pillow", "safetensors", "scikit-learn", "pandas",
    "xarray", "efficientnet-lite-pytorch", "einops", "brainscore"})
"""Packages a submission's requirements.txt may name by default (``brainscore serve --allow-package`` adds to
them): the server's installed version is used; one it lacks is installed as a wheel by the queue before scoring,
never in another version than the server's (:mod:`brainscore.web.environments`)."""


class SubmissionRejected(ValueError):
    """The zip failed its checks; ``problems`` lists each reason."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("submission rejected: " + "; ".join(self.problems))


@dataclass
class CheckedPlugin:
    """What a zip that passed its checks declares.

    ``layout`` is ``"brainscore"`` (``register_model("x")``, made an entry point) or ``"reference"`` (the
    reference Brain-Score's ``model_registry['x'] = ...``, scored as a plugin folder); ``root`` is the
    plugin folder's path as unpacked (``my_plugin`` or ``models/my_plugin``); ``strip`` the prefix :func:`extract`
    removes from every path (``brainscore_vision/`` for a zip of the reference's repository layout, else empty).
    """

    package: str
    identifiers: list[str]
    requirements: list[str] = field(default_factory=list)
    entries: int = 0
    uncompressed_bytes: int = 0
    layout: str = "brainscore"
    root: str = ""
    strip: str = ""
    trusted: list[str] = field(default_factory=list)
    """The benchmark, data, metric (and tree node) registrations the zip also holds, ``"benchmark 'X' (file line n)"``:
    trusted code, which never runs on the server before an administrator approves it (:mod:`brainscore.web.approval`)."""
    benchmarks: list[str] = field(default_factory=list)
    """The benchmark identifiers it registers (literal ones)."""

#: the reference's registries a plugin's code assigns to (``model_registry['x'] = ...``)
REFERENCE_REGISTRIES = ("model_registry", "benchmark_registry", "data_registry", "stimulus_set_registry",
                        "metric_registry")
#: requirements provided by brainscore itself (its adapters of the reference's packages)
PROVIDED = frozenset({"brainscore", "brainscore-vision", "brainscore-core", "brainio"})


def _reference_registration(node: ast.AST) -> tuple[str, ast.AST] | None:
    """``(registry name, key node)`` of an assignment ``model_registry[key] = ...``, else None."""
    if not isinstance(node, ast.Assign):
        return None
    for target in node.targets:
        if isinstance(target, ast.Subscript):
            holder = target.value
            name = holder.id if isinstance(holder, ast.Name) else holder.attr if isinstance(holder, ast.Attribute) \
                else None
            if name in REFERENCE_REGISTRIES:
                return name, target.slice
    return None


def reference_plugin_dir(site: Path) -> Path | None:
    """The plugin folder to scan (``BRAINSCORE_PLUGIN_DIRS``) for a submission unpacked into ``site`` when it is
    written for the reference Brain-Score (``site/models/`` or ``site/<plugin>/`` registering with
    ``model_registry[...] = ...``); None for brainscore's own layout (an entry point)."""
    site = Path(site)
    if (site / "models").is_dir() and not (site / "models" / "__init__.py").is_file():
        return site
    for init in sorted(site.glob("*/__init__.py")):
        try:
            tree = parse_source(init.read_text(encoding="utf-8"), init.name)
        except (OSError, SyntaxError, ValueError):
            continue
        if any(_reference_registration(node) for node in ast.walk(tree)):
            return init.parent
    return None


def _normalise(name: str) -> str:
    """``name`` as PEP 503 compares package names (``scikit.learn``, ``Scikit_Learn``: ``scikit-learn``)."""
    return canonicalize_name(name)


SITE_OWNER = "\x00the site"
"""``taken``'s owner of a model no account owns (scored from the command line by the site's operator, or recorded
before accounts existed): it belongs to the site, and no upload may take its identifier (issue 36). Not a valid
user name (:data:`brainscore.web.accounts.USERNAME`), so no account can ever match it."""


def check_zip(data: bytes, *, taken: dict[str, str] | None = None, owner: str | None = None,
              builtin: set[str] | frozenset = frozenset(), weights_dirs: tuple[Path, ...] = (),
              allowed: frozenset | None = ALLOWED_REQUIREMENTS) -> CheckedPlugin:
    """Check a plugin zip without unpacking it.

    Parameters
    ----------
    data : bytes
        The uploaded file.
    taken : dict of str to str, optional
        Model identifier -> owner of the models already recorded (:data:`SITE_OWNER` for a model no account owns:
        the site's, never taken over by an upload).
    owner : str, optional
        The submitting user (may resubmit its own identifiers).
    builtin : set of str
        Identifiers registered by the installed plugins (never overridable).
    weights_dirs : tuple of Path
        Folders on the server that plugin code may reference by absolute path (weights).
    allowed : frozenset of str or None
        Packages requirements.txt may name (besides brainscore's own, :data:`PROVIDED`); None: any package. The
        website passes its allow-list; the server satisfies them from its environment or the queue installs them
        (:mod:`brainscore.web.environments`).

    Returns
    -------
    CheckedPlugin

    Raises
    ------
    SubmissionRejected
        With every problem found (size, bomb ratio, entry count, absolute or ``..`` paths, symlinks
        or device files, missing files, colliding identifiers, disallowed or URL requirements, a
        reference plugin registering anything but models).
    """
    if len(data) > MAX_ZIP_BYTES:
        raise SubmissionRejected([f"the zip has {len(data) / 2**20:.1f} MB; the limit is {MAX_ZIP_BYTES // 2**20} MB"])
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, ValueError) as error:
        raise SubmissionRejected([f"the file is not a readable zip ({error})"]) from error
    if len(infos) > MAX_ENTRIES:
        raise SubmissionRejected([f"the zip has {len(infos)} entries; the limit is {MAX_ENTRIES}"])
    problems = _entry_problems(infos)
    if problems:
        raise SubmissionRejected(problems)
    files = {i.filename: i for i in infos if not i.is_dir()}
    package, root = _package_of(files, problems)
    strip = ""
    if root.startswith(f"{REPOSITORY_PACKAGE}/models/"):  # the repository's layout: unpacked as models/<plugin>/
        strip, root = f"{REPOSITORY_PACKAGE}/", root[len(REPOSITORY_PACKAGE) + 1:]
        files = {n[len(strip):]: info for n, info in files.items()}
    identifiers, reference, trusted = _registered_models(archive, files, weights_dirs, problems)
    if not identifiers and not trusted:
        problems.append(f"{root}/__init__.py registers no model: add register_model(\"my-model\") to it")
    taken = taken or {}
    for identifier in identifiers:
        unaddressable = identifier_problem(identifier)
        if unaddressable:
            problems.append(unaddressable)
        elif identifier in builtin:
            problems.append(f"the identifier {identifier!r} is a built-in model; choose another")
        elif taken.get(identifier) == SITE_OWNER:
            problems.append(f"the identifier {identifier!r} is a model of this site (its scores were recorded by the "
                            f"site's operator, not by an account), so no submission may add to or take it over; "
                            f"choose another")
        elif taken.get(identifier) not in (None, owner):
            problems.append(f"the identifier {identifier!r} belongs to another user's model; choose another")
    requirements = _requirements(archive, files.get(f"{root}/requirements.txt"), allowed, problems)
    _metadata(archive, files.get(f"{root}/metadata.yml"), f"{root}/metadata.yml", problems)
    if problems:
        raise SubmissionRejected(problems)
    return CheckedPlugin(package, sorted(set(identifiers)), requirements, len(infos), sum(i.file_size for i in infos),
                         layout="reference" if reference else "brainscore", root=root, strip=strip,
                         trusted=[text for _, _, text in trusted],
                         benchmarks=sorted({i for kind, i, _ in trusted if kind == "benchmark" and i}))


MAX_IDENTIFIER_CHARS = 200
"""Longest model identifier a submission may register."""
IDENTIFIER_PATTERN = re.compile(r"[^/\\?#%\s\x00-\x1f\x7f]{1,200}")
"""What a submitted model identifier may be: 1 to 200 characters, none of ``/ \\ ? # %``, whitespace or control
characters, and not ``.`` or ``..``: the site's addresses (``/models/{identifier}``, its delete and visibility
routes) take it as one path segment, and its owner must be able to reach them."""
IDENTIFIER_RULE = ("1 to 200 characters, none of / \\ ? # % or spaces, not '.' or '..' (e.g. my-net_v2.1 or "
                   "lab:resnet50)")


def identifier_problem(identifier: str) -> str | None:
    """Why ``identifier`` cannot be a submitted model's (the site could not address its pages), else None."""
    if IDENTIFIER_PATTERN.fullmatch(identifier) and identifier not in (".", ".."):
        return None
    shown = identifier if len(identifier) <= 80 else identifier[:80] + "..."
    return (f"the identifier {shown!r} cannot be a model's on this site (its page, its deletion and its visibility "
            f"are addressed by it): an identifier is {IDENTIFIER_RULE}")


def _entry_problems(infos: list[zipfile.ZipInfo]) -> list[str]:
    """Problems of the zip's directory: total size, bomb ratios, absolute or ``..`` paths, links, device files."""
    problems: list[str] = []
    total = sum(i.file_size for i in infos)
    compressed = sum(i.compress_size for i in infos)
    if total > MAX_UNCOMPRESSED_BYTES:
        problems.append(f"the zip unpacks to {total / 2**20:.0f} MB; the limit is {MAX_UNCOMPRESSED_BYTES // 2**20} MB")
    if compressed and total / compressed > MAX_RATIO and total > 1024 * 1024:
        problems.append(f"the zip unpacks to {total / compressed:.0f} times its compressed size (a zip bomb?); "
                        f"the limit is {MAX_RATIO:.0f}")
    for info in infos:
        name = info.filename
        path = PurePosixPath(name.replace("\\", "/"))
        mode = info.external_attr >> 16
        shown = name if len(name) <= 120 else f"{name[:60]}...{name[-40:]} ({len(name):,} characters)"
        if len(name) > MAX_PATH_CHARS or len(path.parts) > MAX_PATH_DEPTH:
            problems.append(f"{shown!r} has a path of {len(name):,} characters in {len(path.parts):,} parts; the "
                            f"limits are {MAX_PATH_CHARS} characters and {MAX_PATH_DEPTH} folders deep")
            continue
        long = [part for part in path.parts if len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES]
        if long:
            problems.append(f"{shown!r} has a name of {len(long[0].encode('utf-8', 'surrogatepass')):,} bytes; the "
                            f"limit is {MAX_NAME_BYTES} bytes per file or folder name")
            continue
        executable = executable_problem(name)
        if executable:
            problems.append(executable)
        if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
            problems.append(f"{name!r} is an absolute path; paths must be relative to the zip's root")
        elif ".." in path.parts:
            problems.append(f"{name!r} contains '..' (path traversal); paths must stay inside the plugin folder")
        if stat.S_ISLNK(mode):
            problems.append(f"{name!r} is a symbolic link; links are not allowed, put the file itself in the zip")
        elif mode and stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
            problems.append(f"{name!r} is a device file, FIFO or socket; only regular files are allowed")
        if (info.compress_size and info.file_size / info.compress_size > MAX_RATIO
                and info.file_size > 1024 * 1024 and not any("zip bomb" in p for p in problems)):
            problems.append(f"{name!r} unpacks to {info.file_size / info.compress_size:.0f} times its compressed "
                            f"size (a zip bomb?); the limit is {MAX_RATIO:.0f}")
    return problems


def executable_problem(name: str) -> str | None:
    """Why the zip entry ``name`` may not be uploaded because Python could run it in place of (or beside) the reviewed
    sources (:data:`EXECUTABLE_SUFFIXES`, any ``__pycache__`` folder), else None."""
    path = PurePosixPath(name.replace("\\", "/"))
    lowered = path.name.lower()
    if "__pycache__" in path.parts:
        return (f"{name!r} is in a __pycache__ folder: Python could run its bytecode instead of the source that is "
                f"checked and reviewed; upload sources only (leave __pycache__ folders out of the zip)")
    suffix = next((s for s in sorted(EXECUTABLE_SUFFIXES, key=len, reverse=True) if lowered.endswith(s)), None)
    if suffix is None or name.endswith("/"):
        return None
    kind = ("compiled bytecode" if suffix in {".pyc", ".pyo"} else
            "a .pth file (its lines run when Python starts)" if suffix == ".pth" else
            "a Windows Python source (.pyw)" if suffix == ".pyw" else "a compiled native extension")
    return (f"{name!r} is {kind}: Python could run it instead of the source that is checked and reviewed; a "
            f"submission carries Python sources (.py), data and weights only: remove it from the zip")


def _package_of(files: dict[str, zipfile.ZipInfo], problems: list[str]) -> tuple[str, str]:
    """``(package, root)``: the one plugin folder and its path in the zip (``my_plugin``, or the reference's
    ``models/my_plugin``); adds to ``problems``, raises SubmissionRejected when there is no such folder."""
    tops = {PurePosixPath(n).parts[0] for n in files}
    if len(tops) != 1 or all(len(PurePosixPath(n).parts) == 1 for n in files):
        raise SubmissionRejected([
            f"the zip must hold exactly one plugin folder (e.g. my_plugin/__init__.py); it holds "
            f"{', '.join(sorted(tops)) or 'nothing'} at its root"])
    package = tops.pop()
    root = package
    if (package == REPOSITORY_PACKAGE and f"{package}/__init__.py" not in files
            and {PurePosixPath(n).parts[1] for n in files if len(PurePosixPath(n).parts) > 1} == {"models"}):
        # the reference's repository layout, zipped from its root: brainscore_vision/models/<plugin>/, scored as the
        # reference's models/<plugin>/ (extract with strip=)
        files, prefix = {n[len(package) + 1:]: info for n, info in files.items()}, f"{package}/"
        package = "models"
    else:
        prefix = ""
    if package == "models" and "models/__init__.py" not in files:  # the reference's layout: models/<plugin>/
        inner = {PurePosixPath(n).parts[1] for n in files if len(PurePosixPath(n).parts) > 2}
        if len(inner) != 1:
            raise SubmissionRejected([f"the zip must hold exactly one model plugin folder under models/ (e.g. "
                                      f"models/my_plugin/__init__.py); it holds {', '.join(sorted(inner)) or 'none'}"])
        package = inner.pop()
        root = f"models/{package}"
    if not package.isidentifier():
        problems.append(f"the plugin folder {package!r} is not a Python package name (letters, digits, '_')")
    elif package.lower() in RESERVED_PACKAGES:
        problems.append(f"the plugin folder {package!r} is a name Python imports by itself at start-up; rename it")
    elif importlib.util.find_spec(package) is not None:
        problems.append(f"the plugin folder {package!r} has the name of an installed module; rename it")
    init = f"{root}/__init__.py"
    if init not in files:
        raise SubmissionRejected(problems + [f"{prefix}{init} is missing: it must register the model identifiers "
                                             "with register_model(\"my-model\")"])
    return package, prefix + root


REPOSITORY_PACKAGE = "brainscore_vision"
"""The top folder of the reference's repository (``brainscore_vision/models/<plugin>/``): a zip of a plugin made from
the repository's root holds it."""


def _registered_models(archive: zipfile.ZipFile, files: dict[str, zipfile.ZipInfo], weights_dirs: tuple,
                       problems: list[str]) -> tuple[list[str], bool, list[tuple[str, str | None, str]]]:
    """``(identifiers, reference, trusted)``: the models the plugin's sources register (parsed, never run), whether
    it is written for the reference (``model_registry[...] = ...``), and its other registrations (benchmarks, data,
    metrics, tree nodes: ``(kind, identifier or None, description)``), which wait for an administrator's approval.
    Adds to ``problems`` for unparsable sources, absolute paths outside ``weights_dirs`` and non-literal model
    identifiers."""
    identifiers: list[str] = []
    trusted: list[tuple[str, str | None, str]] = []
    reference = False
    for name, info in files.items():
        if not name.endswith(".py"):
            continue
        try:
            tree = parse_source(archive.read(info).decode("utf-8"), name)
        except (SyntaxError, ValueError) as error:  # UnicodeDecodeError is a ValueError
            problems.append(f"{name} is not valid Python: {error}")
            continue
        for node in ast.walk(tree):
            registration = _reference_registration(node)
            if registration is not None:
                reference = True
                _reference_model(name, node, registration, identifiers, trusted, problems)
                continue
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("/"):
                if not any(_under(node.value, d) for d in weights_dirs):
                    allowed_dirs = ", ".join(str(d) for d in weights_dirs) or "none configured"
                    problems.append(f"{name} line {node.lineno} references {node.value!r}, outside the allowed "
                                    f"weights folders ({allowed_dirs}); put the weights in the zip")
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if called == "register_model":
                first = node.args[0] if node.args else None
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    identifiers.append(first.value)
                else:
                    problems.append(f"{name} line {node.lineno}: register_model needs a literal identifier string")
            elif called.startswith("register_"):
                first = node.args[0] if node.args else None
                literal = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
                kind = called[len("register_"):]
                trusted.append((kind, literal, f"{kind} {literal or '(computed)'!s} ({name} line {node.lineno})"))
    return identifiers, reference, trusted


def _reference_model(name: str, node: ast.AST, registration: tuple[str, ast.AST], identifiers: list[str],
                     trusted: list, problems: list[str]) -> None:
    """Add the identifier of a reference registration ``model_registry['x'] = ...`` (or a problem); another registry's
    (``benchmark_registry['x'] = ...``) to ``trusted``."""
    registry_name, key = registration
    if registry_name != "model_registry":
        literal = key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
        kind = {"data_registry": "dataset", "stimulus_set_registry": "stimulus_set"}.get(
            registry_name, registry_name.replace("_registry", ""))
        trusted.append((kind, literal, f"{kind} {literal or '(computed)'!s} ({name} line {node.lineno})"))
    elif isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value:
        identifiers.append(key.value)
    else:
        problems.append(f"{name} line {node.lineno}: model_registry[...] needs a literal identifier "
                        f"string, e.g. model_registry['my-model'] = ...")


def _requirements(archive: zipfile.ZipFile, info: zipfile.ZipInfo | None, allowed: frozenset | None,
                  problems: list[str]) -> list[str]:
    """The requirements.txt lines (``info``: its entry, None without one); adds to ``problems`` for lines that are
    not requirements, that install from a URL, and packages not in ``allowed`` (None: any)."""
    requirements: list[str] = []
    if info is None:
        return requirements
    if info.file_size > MAX_REQUIREMENTS_BYTES:
        problems.append(f"requirements.txt has {info.file_size:,} bytes; the limit is {MAX_REQUIREMENTS_BYTES // 1024} "
                        f"KiB (name the packages the plugin imports, one a line)")
        return requirements
    with archive.open(info) as handle:  # read no more than the limit, whatever the zip's header says
        text = handle.read(MAX_REQUIREMENTS_BYTES + 1)
    if len(text) > MAX_REQUIREMENTS_BYTES:
        problems.append(f"requirements.txt has more than {MAX_REQUIREMENTS_BYTES // 1024} KiB; that is the limit")
        return requirements
    lines = text.decode("utf-8", "replace").splitlines()
    if len(lines) > MAX_REQUIREMENTS_LINES:
        problems.append(f"requirements.txt has {len(lines):,} lines; the limit is {MAX_REQUIREMENTS_LINES} (name the "
                        f"packages the plugin imports, one a line)")
        return requirements
    allowed_names = None if allowed is None else {_normalise(a) for a in allowed}
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            problems.append(f"requirements.txt: {line!r} is not a requirement (options and URLs are not allowed)")
            continue
        if requirement.url:
            problems.append(f"requirements.txt: {line!r} installs from a URL; name a package from the index "
                            f"(wheels only), e.g. {requirement.name}")
            continue
        if requirement.extras:  # they pull packages the allow-list never saw
            problems.append(f"requirements.txt: {line!r} asks for extras ({', '.join(sorted(requirement.extras))}), "
                            f"which install further packages; extras are not supported: name each package you need "
                            f"(from the allow-list) on a line of its own, e.g. {requirement.name}")
            continue
        requirements.append(str(requirement))
        name = _normalise(requirement.name)
        if allowed_names is not None and name not in allowed_names and name not in PROVIDED:
            problems.append(f"requirements.txt asks for {requirement.name!r}, which is not on the server's "
                            f"allow-list ({', '.join(sorted(allowed))}); leave it out, or ask the site's "
                            f"administrators to allow it")
    return requirements


def _metadata(archive: zipfile.ZipFile, info: zipfile.ZipInfo | None, name: str, problems: list[str]) -> None:
    """Adds to ``problems`` why the plugin's ``metadata.yml`` (``info``: its entry, None without one) cannot be
    shown: not YAML, or over the bounds of :mod:`brainscore.web.plugin_metadata` (size, aliases, nesting)."""
    if info is None:
        return
    if info.file_size > plugin_metadata.MAX_BYTES:
        problems.append(f"{name} has {info.file_size:,} bytes; the limit is {plugin_metadata.MAX_BYTES // 1024} KiB "
                        f"(a model card's fields are a few lines)")
        return
    try:
        with archive.open(info) as handle:
            data = plugin_metadata.parse(handle.read(plugin_metadata.MAX_BYTES + 1), name)
    except plugin_metadata.MetadataRejected as error:
        problems.append(str(error))
        return
    layout = plugin_metadata.layout_problem(data, name)
    if layout:
        problems.append(layout)


def _under(path: str, folder: Path) -> bool:
    try:
        return Path(path).resolve().is_relative_to(Path(folder).resolve())
    except (OSError, ValueError):
        return False


def extract(data: bytes, target: Path, strip: str = "") -> None:
    """Unpack a zip that passed :func:`check_zip` into ``target``, regular files only; ``strip``: a prefix removed
    from every path (:attr:`CheckedPlugin.strip`; entries outside it are not unpacked).

    Raises
    ------
    SubmissionRejected
        If the bytes written exceed the limits (a zip whose headers understate its sizes), a member is damaged (bad
        CRC, truncated) or compressed or encrypted in a way this site does not read, or its name cannot be written.
    OSError
        The server's disk failed (full: ``ENOSPC``); nothing of it is the submitter's to fix.
    """
    target = Path(target).resolve()
    written = 0
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            name = info.filename
            if strip:
                if not name.startswith(strip) or name == strip:
                    continue
                name = name[len(strip):]
            destination = (target / name).resolve()
            if not destination.is_relative_to(target):
                raise SubmissionRejected([f"{info.filename!r} would be written outside the plugin folder"])
            if info.is_dir():
                destination.mkdir(parents=True, exist_ok=True)
                continue
            try:
                destination.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as source, open(destination, "wb") as sink:
                    while chunk := source.read(1 << 20):
                        written += len(chunk)
                        if written > MAX_UNCOMPRESSED_BYTES:
                            raise SubmissionRejected([f"the zip unpacks to more than "
                                                      f"{MAX_UNCOMPRESSED_BYTES // 2**20} MB"])
                        sink.write(chunk)
            except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as error:
                # a damaged member (bad CRC, truncated data), an unsupported compression or an encrypted one
                raise SubmissionRejected([f"{info.filename!r} could not be unpacked: {error}; the zip is damaged or "
                                          f"uses a compression or encryption this site does not read: make it "
                                          f"again (e.g. zip -r plugin.zip my_plugin)"]) from error
            except OSError as error:
                if error.errno not in _NAME_ERRNOS:
                    raise  # the server's disk (full, failing): not the submitter's fault
                raise SubmissionRejected([f"{info.filename!r} cannot be written on the server ({error.strerror}): "
                                          f"use shorter paths and plain file names"]) from error


_NAME_ERRNOS = frozenset({errno.ENAMETOOLONG, errno.EINVAL, errno.EILSEQ, errno.ELOOP, errno.ENOTDIR, errno.EISDIR,
                          errno.EEXIST})
"""Errors of writing a member that its name causes (not the server's disk)."""


def make_durable(folder: Path) -> None:
    """Flush ``folder`` (an unpacked submission), every file and folder in it and its entry in its parent to
    disk (``fsync``), so that a submission the server has answered as accepted survives a crash or power
    loss: the database's commit is durable, and so must be the files it points to.

    Raises
    ------
    OSError
        If a file cannot be opened or synced (a full or failing disk): the submission is then not accepted.
    """
    folder = Path(folder)
    for current, _folders, files in os.walk(folder):
        for name in files:
            descriptor = os.open(os.path.join(current, name), os.O_RDONLY)
            try:
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
        _sync_folder(current)
    _sync_folder(folder.parent)


def _sync_folder(path) -> None:
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
