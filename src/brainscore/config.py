"""Where brainscore keeps and finds files: settings from the environment and the user's config file.

Each setting is read, in order, from its environment variable, then from the user configuration
file, then from its default. The same settings serve the command line and the Python API, so a
mirror set once with ``brainscore config set data_mirror PATH`` works in every later shell and
Python session.

Configuration file
------------------
``$XDG_CONFIG_HOME/brainscore/config.toml`` (default ``~/.config/brainscore/config.toml``), TOML,
one key per setting, e.g.::

    data_mirror = "/data/brainscore-mirror"
    offline = true

Settings (key, environment variable)
------------------------------------
home, BRAINSCORE_HOME
    Root of the local store and caches (default ``~/.brainscore``).
data_mirror, BRAINSCORE_DATA_MIRROR
    One or more directories (in the environment separated by ``os.pathsep``; in the file a
    string or a list of strings) holding raw source files laid out as their public repositories
    are (for example the project's ``../shared/data``). Sources are looked up there before any
    download, which is how clusters without internet run.
weights_mirror, BRAINSCORE_WEIGHTS_MIRROR
    One or more existing directories (like ``data_mirror``) holding model weight files: the reference
    Brain-Score's S3 layout (``<folder_name>/<relative_path>``, e.g. ``brainscore-vision/models/x/w.pth``,
    as its plugins' ``load_weight_file`` name them), torch hub checkpoints under their official names
    (``alexnet-owt-7be5be79.pth``) and Hugging Face files as ``<repo_id>/<filename>``. Searched before
    any download (:mod:`brainscore.models.downloads`); a folder that does not exist is an error.
stand_ins, BRAINSCORE_STAND_INS
    A JSON file declaring files that take the place of registered ones (made-up files for tests), each
    by its own sha256 (:mod:`brainscore.data.stand_ins`); every use is warned about and recorded.
offline, BRAINSCORE_OFFLINE
    If true (``1``), never try to download; a missing file is an error that says where to put it.
torchvision_weights, BRAINSCORE_TORCHVISION_WEIGHTS
    Folder holding torchvision's ImageNet weight files under their official names.
timm_weights, BRAINSCORE_TIMM_WEIGHTS
    Folder holding timm weight files as ``<architecture>.safetensors``.
plugin_dirs, BRAINSCORE_PLUGIN_DIRS
    Folders of plugins laid out like the reference Brain-Score's ``brainscore_vision/`` folder
    (``models/NAME/``, ``benchmarks/NAME/``, ``data/NAME/``, ``metrics/NAME/``, each with an
    ``__init__.py`` that registers identifiers, e.g. ``model_registry['my-model'] = ...``), a clone
    of the reference's repository, or one such plugin folder. Separated by ``os.pathsep`` (``:``) in
    the environment; a list of strings in the file. Found by :mod:`brainscore.registry` like the
    built-in plugins (declared identifiers read without running the code). ``--plugin-dir`` on
    ``brainscore score``, ``run``, ``layers`` and ``list`` adds folders for one command.
torch_threads, BRAINSCORE_TORCH_THREADS
    CPU threads PyTorch runs networks with (default: the cores this process may use,
    ``len(os.sched_getaffinity(0))``). PyTorch's kernels split sums across threads, so activations
    differ in their last bits between thread counts: the count is part of every activation cache
    key, and the extractor sets it (``torch.set_num_threads``) before running a network on the CPU.
memory_per_worker, BRAINSCORE_MEMORY_PER_WORKER
    Memory limit of each worker of ``brainscore run``'s local cluster, e.g. ``3GiB`` (default: the
    machine's memory shared among the workers, the one that runs networks given at least
    4 GiB, room for a forward pass). ``--memory-per-worker`` sets it for one run. Budgets inside a
    worker (layer selection's) are fractions of what is left of its limit (:func:`usable_memory`).
mail_host, BRAINSCORE_MAIL_HOST
    SMTP server the website (``brainscore serve``) sends its mail through: address verification,
    password reset, a submission's result. Unset: no mail is sent and each mail's text (with its
    link) is written to the server's log for a local administrator (:mod:`brainscore.web.mail`).
mail_port, BRAINSCORE_MAIL_PORT
    Its port (default 587 with ``starttls``, 465 with ``ssl``, 25 with ``none``).
mail_security, BRAINSCORE_MAIL_SECURITY
    ``starttls`` (default), ``ssl`` (implicit TLS) or ``none`` (a local relay only).
mail_from, BRAINSCORE_MAIL_FROM
    The sender address of the website's mail (default ``brainscore@<mail_host>``).
mail_user, BRAINSCORE_MAIL_USER / mail_password, BRAINSCORE_MAIL_PASSWORD
    Log-in at the SMTP server, if it asks for one (``config show`` never prints the password; keep it
    in the environment rather than the file).
site_url, BRAINSCORE_SITE_URL
    The website's public address (``https://brainscore.example.org``): links in mail are built from
    it, never from a request's ``Host`` header (which a client chooses). Required when ``mail_host`` is set.

The ``mail_*`` and ``site_url`` settings are the website's own: a scoring child (a submission's code)
never inherits their variables (:attr:`Setting.child`).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brainscore.errors import ValidationError


@dataclass(frozen=True)
class Setting:
    """One setting: its key in the config file, its environment variable, its meaning and kind."""

    key: str
    env: str
    help: str
    kind: str = "path"  # "path", "paths" (several, os.pathsep in the environment), "bool", "int", "bytes",
    # "text" (a string as given) or "secret" (a string never printed)
    child: bool = True
    """Whether scoring children (a submission's code, :mod:`brainscore.web.queue`) inherit it."""


SETTINGS: dict[str, Setting] = {s.key: s for s in (
    Setting("home", "BRAINSCORE_HOME", "root of the local store and caches (default ~/.brainscore)"),
    Setting("data_mirror", "BRAINSCORE_DATA_MIRROR", "folder(s) of raw data files, searched before any download",
            "paths"),
    Setting("weights_mirror", "BRAINSCORE_WEIGHTS_MIRROR",
            "folder(s) of model weight files (the reference's S3 layout, torch hub and Hugging Face names), searched "
            "before any download", "paths"),
    Setting("stand_ins", "BRAINSCORE_STAND_INS",
            "JSON file declaring stand-in files (by sha256) for registered ones (tests; see brainscore.data.stand_ins)"),
    Setting("offline", "BRAINSCORE_OFFLINE", "never download (true/false)", "bool"),
    Setting("torchvision_weights", "BRAINSCORE_TORCHVISION_WEIGHTS",
            "folder of torchvision ImageNet weight files under their official names"),
    Setting("timm_weights", "BRAINSCORE_TIMM_WEIGHTS", "folder of timm weight files, <architecture>.safetensors"),
    Setting("plugin_dirs", "BRAINSCORE_PLUGIN_DIRS",
            "folder(s) of plugins in the reference Brain-Score's layout (models/, benchmarks/, data/, metrics/)",
            "paths"),
    Setting("torch_threads", "BRAINSCORE_TORCH_THREADS",
            "CPU threads torch runs networks with (default: the usable cores); part of activation cache keys", "int"),
    Setting("memory_per_worker", "BRAINSCORE_MEMORY_PER_WORKER",
            "memory limit of each local `brainscore run` worker, e.g. 3GiB (default: the machine's memory shared "
            "among the workers, at least 4 GiB for the one running networks)", "bytes"),
    Setting("mail_host", "BRAINSCORE_MAIL_HOST", "SMTP server of the website's mail (unset: mail is logged, not sent)",
            "text", child=False),
    Setting("mail_port", "BRAINSCORE_MAIL_PORT", "SMTP port (default 587 starttls, 465 ssl, 25 none)", "int",
            child=False),
    Setting("mail_security", "BRAINSCORE_MAIL_SECURITY", "starttls (default), ssl or none", "text", child=False),
    Setting("mail_from", "BRAINSCORE_MAIL_FROM", "sender address of the website's mail", "text", child=False),
    Setting("mail_user", "BRAINSCORE_MAIL_USER", "SMTP log-in name, if the server asks for one", "text", child=False),
    Setting("mail_password", "BRAINSCORE_MAIL_PASSWORD", "SMTP password (never printed)", "secret", child=False),
    Setting("site_url", "BRAINSCORE_SITE_URL", "the website's public address, for links in mail", "text",
            child=False),
)}

_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
          "t": 10**12, "tb": 10**12, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}


def parse_bytes(text: str | int) -> int:
    """A memory size as a whole number of bytes: ``"1.5GiB"``, ``"4 GB"``, ``"500MiB"``, ``2000000000``.

    Units: B, kB/MB/GB/TB (powers of 1000; K/M/G/T alike), KiB/MiB/GiB/TiB (powers of 1024), case-insensitive.

    Raises
    ------
    ValidationError
        If the text is not a positive number with one of those units.
    """
    import re

    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", str(text))
    unit = match.group(2).lower() if match else None
    if match is None or unit not in _UNITS or int(float(match.group(1)) * _UNITS[unit]) < 1:
        raise ValidationError(f"expected a memory size such as 1.5GiB, 4GB or 500MiB, got {text!r}")
    return int(float(match.group(1)) * _UNITS[unit])


def config_file() -> Path:
    """The user configuration file: ``$XDG_CONFIG_HOME/brainscore/config.toml`` (default ``~/.config/...``)."""
    base = os.environ.get("XDG_CONFIG_HOME", "").strip() or Path.home() / ".config"
    return Path(base).expanduser() / "brainscore" / "config.toml"


def _setting(key: str) -> Setting:
    try:
        return SETTINGS[key]
    except KeyError:
        raise ValidationError(f"unknown setting {key!r}; known settings: {', '.join(SETTINGS)}") from None


def read_file(path: Path | None = None) -> dict[str, Any]:
    """The settings stored in the configuration file (empty if there is none).

    Raises
    ------
    ValidationError
        If the file is not valid TOML; the message names the file and the line.
    """
    import tomllib

    path = path or config_file()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ValidationError(f"the configuration file {path} is not valid TOML ({error}); fix or delete it "
                              f"(`brainscore config show` prints what is read)") from None


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value))  # a TOML basic string: JSON's escapes are TOML's


def _write_file(values: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["# brainscore settings; `brainscore config show` lists them. Environment variables override."]
    lines += [f"{key} = {_toml_value(value)}" for key, value in values.items()]
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _parse(setting: Setting, value: Any) -> Any:
    """A raw value (text from the command line or the environment, or TOML) as the setting's kind."""
    if setting.kind == "bool":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off", ""):
            return False
        raise ValidationError(f"{setting.key} must be true or false, got {value!r}")
    if setting.kind == "int":
        try:
            number = int(str(value).strip()) if not isinstance(value, bool) else None
        except ValueError:
            number = None
        if number is None or number < 1:
            raise ValidationError(f"{setting.key} must be a whole number >= 1, got {value!r}")
        return number
    if setting.kind == "bytes":
        try:
            return parse_bytes(value)
        except ValidationError as error:
            raise ValidationError(f"{setting.key}: {error}") from None
    if setting.kind in ("text", "secret"):
        if not isinstance(value, str):
            raise ValidationError(f"{setting.key} must be a string, got {value!r}")
        return value.strip()
    if setting.kind == "paths":
        items = value if isinstance(value, list) else [value]
        if not all(isinstance(v, str) for v in items):
            raise ValidationError(f"{setting.key} must be a folder or a list of folders (strings), got {value!r}")
        items = value if isinstance(value, list) else str(value).split(os.pathsep)
        return [str(Path(str(p).strip()).expanduser()) for p in items if str(p).strip()]
    if not isinstance(value, str):
        raise ValidationError(f"{setting.key} must be a path (a string), got {value!r}")
    return str(Path(value).expanduser())


def get(key: str) -> tuple[Any, str]:
    """The value of setting ``key`` and where it came from (``"environment"``, the file's path, or ``"default"``).

    The value is parsed to the setting's kind: a path string, a list of path strings, a bool or an
    int; None when the setting is not set anywhere.

    Raises
    ------
    ValidationError
        If ``key`` is not a known setting, or a value has the wrong kind.
    """
    setting = _setting(key)
    if os.environ.get(setting.env) is not None:
        return _parse(setting, os.environ[setting.env]), f"environment ({setting.env})"
    values = read_file()
    if key in values:
        return _parse(setting, values[key]), str(config_file())
    return None, "default"


FOLDER_SETTINGS = ("data_mirror", "torchvision_weights", "timm_weights", "plugin_dirs")
"""Settings that name folders: one the configuration file names that does not exist is warned about."""


def problems() -> tuple[list[str], list[str]]:
    """``(errors, warnings)`` of the settings as they are read now, every one of them, each saying where it is.

    Errors: the configuration file is not TOML, names a setting that does not exist (with the closest known
    one), or holds a value of the wrong kind (``data_mirror = 5``, ``offline = "maybe"``); an environment
    variable holds a value of the wrong kind (``BRAINSCORE_TORCH_THREADS=abc``). Warnings: a folder the
    file names does not exist. The command line checks them before any command runs (:func:`check`).
    """
    import difflib

    errors: list[str] = []
    try:
        values = read_file()
    except ValidationError as error:
        return [str(error)], []
    path = config_file()
    for key in values:
        if key not in SETTINGS:
            close = difflib.get_close_matches(key, list(SETTINGS), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            errors.append(f"{path} sets {key!r}, which is not a setting{hint}; remove it (`brainscore config "
                          f"unset {key}`; settings: {', '.join(SETTINGS)})")
    warnings: list[str] = []
    for key, setting in SETTINGS.items():
        if os.environ.get(setting.env) is not None:
            try:
                _parse(setting, os.environ[setting.env])
            except ValidationError as error:
                errors.append(f"{setting.env}: {error}")
        if key in values:
            try:
                parsed = _parse(setting, values[key])
            except ValidationError as error:
                errors.append(f"{path}: {error}")
                continue
            if key in FOLDER_SETTINGS:
                missing = [p for p in (parsed if isinstance(parsed, list) else [parsed]) if not Path(p).is_dir()]
                warnings += [f"{path}: {key} names {p}, which is not a folder" for p in missing]
    return errors, warnings


def check() -> list[str]:
    """Check every setting before anything runs; returns the warnings (:func:`problems`).

    Raises
    ------
    ValidationError
        Listing every error on one line, with how to fix them.
    """
    errors, warnings = problems()
    if errors:
        raise ValidationError(f"the settings cannot be used: {'; '.join(errors)}. Nothing was run; fix them "
                              f"(`brainscore config show` lists the settings)")
    return warnings


def set_value(key: str, value: Any) -> Path:
    """Store setting ``key`` in the configuration file and return the file's path.

    Paths are stored absolute (resolved against the current directory), so the setting means the
    same from any directory. Several mirror folders are given separated by ``os.pathsep``.

    Raises
    ------
    ValidationError
        If ``key`` is unknown or ``value`` is not of its kind (a ``weights_mirror`` folder must exist).
    """
    setting = _setting(key)
    parsed = _parse(setting, value)
    if key == "weights_mirror":
        absent = [p for p in parsed if not Path(p).is_dir()]
        if absent:
            raise ValidationError(f"weights_mirror: {', '.join(absent)} is not a folder; create it first")
    if setting.kind == "path":
        parsed = str(Path(parsed).resolve())
    elif setting.kind == "paths":
        parsed = [str(Path(p).resolve()) for p in parsed]
    path = config_file()
    values = read_file(path)
    values[key] = parsed
    _write_file(values, path)
    return path


def unset(key: str) -> Path:
    """Remove setting ``key`` from the configuration file (also a key that is not a setting, written by hand);
    return the file's path.

    Raises
    ------
    ValidationError
        If ``key`` is neither a setting nor in the file.
    """
    path = config_file()
    values = read_file(path)
    if key not in values:
        _setting(key)
    if key in values:
        del values[key]
        _write_file(values, path)
    return path


def home() -> Path:
    """Root directory of the local store and caches (setting ``home``, default ``~/.brainscore``)."""
    value, _ = get("home")
    return Path(value or Path.home() / ".brainscore").expanduser()


def local_packages_dir() -> Path:
    """Folder of locally packaged data files: ``<home>/packages`` (what ``package_*_locally`` writes; searched
    like a data mirror, by file name)."""
    return home() / "packages"


def data_mirrors() -> list[Path]:
    """Mirror directories (setting ``data_mirror``), in search order (may be empty)."""
    value, _ = get("data_mirror")
    return [Path(p) for p in value or []]


def weights_mirrors() -> list[Path]:
    """Weights mirror directories (setting ``weights_mirror``), in search order (may be empty).

    Raises
    ------
    ValidationError
        If a folder of the setting does not exist (a typo would otherwise mean every weights file is missing).
    """
    value, source = get("weights_mirror")
    folders = [Path(p) for p in value or []]
    absent = [str(f) for f in folders if not f.is_dir()]
    if absent:
        raise ValidationError(f"weights_mirror (from {source}) names folders that do not exist: {', '.join(absent)}; "
                              f"fix it with `brainscore config set weights_mirror FOLDER` (or "
                              f"{SETTINGS['weights_mirror'].env}=FOLDER)")
    return folders


def offline() -> bool:
    """True when the setting ``offline`` forbids downloads."""
    value, _ = get("offline")
    return bool(value)


def plugin_dirs() -> list[Path]:
    """Plugin folders in the reference's layout (setting ``plugin_dirs``), in search order (may be empty)."""
    value, _ = get("plugin_dirs")
    return [Path(p) for p in value or []]


def path_setting(key: str) -> Path | None:
    """A folder setting (e.g. ``torchvision_weights``) as a Path, or None when unset."""
    value, _ = get(key)
    return Path(value) if value else None


def memory_per_worker() -> int | None:
    """The memory limit of each local cluster worker in bytes (setting ``memory_per_worker``), None when unset."""
    value, _ = get("memory_per_worker")
    return int(value) if value is not None else None


def torch_threads() -> int:
    """CPU threads PyTorch runs networks with (setting ``torch_threads``; default the usable cores).

    The default is ``len(os.sched_getaffinity(0))`` (the cores this process may run on, which a
    container or ``taskset`` may limit below ``os.cpu_count()``), ``os.cpu_count()`` where the
    platform has no affinity. Read without importing torch, so cache keys that contain it are known
    before a network is built.

    Raises
    ------
    ValidationError
        If the setting is not a whole number >= 1.
    """
    value, _ = get("torch_threads")
    return int(value) if value is not None else usable_cores()


def usable_cores() -> int:
    """The cores this process may run on: ``len(os.sched_getaffinity(0))``, else ``os.cpu_count()`` (macOS, Windows)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


#: cgroup v2 (then v1) files holding the memory limit of this process's container, read by :func:`usable_memory`.
CGROUP_MEMORY_FILES = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
CGROUP_MEMORY_USAGE_FILES = ("/sys/fs/cgroup/memory.current", "/sys/fs/cgroup/memory/memory.usage_in_bytes")


def _read_bytes(paths: tuple[str, ...]) -> int | None:
    """The first of ``paths`` that holds a whole number of bytes (``max`` or a missing file: None)."""
    for path in paths:
        try:
            text = Path(path).read_text().strip()
        except (OSError, ValueError):
            continue
        if text.isdigit() and int(text) < (1 << 60):  # cgroup v1 writes a huge number for 'no limit'
            return int(text)
    return None


def _dask_worker_limit() -> tuple[int, int] | None:
    """``(memory_limit, rss)`` in bytes of the Dask worker this code runs in, or None outside one (or no limit).

    Imports nothing: only looks where ``distributed`` is already imported (a worker always has it).
    """
    import sys

    distributed = sys.modules.get("distributed")
    if distributed is None:
        return None
    try:
        worker = distributed.get_worker()
    except (ValueError, AttributeError):  # not in a worker task
        return None
    # distributed >= 2022.11 keeps it on the worker's memory manager
    limit = getattr(getattr(worker, "memory_manager", None), "memory_limit", None) or getattr(
        worker, "memory_limit", None)
    if not limit:
        return None
    import psutil

    return int(limit), int(psutil.Process().memory_info().rss)


def usable_memory() -> int:
    """Bytes this process may still allocate: the smallest of the limits that apply to it (>= 0).

    - inside a Dask worker with a ``memory_limit`` (``distributed.get_worker()``): that limit minus
      the process's resident memory (RSS), since the nanny restarts a worker near its limit however
      much memory the machine has free;
    - a cgroup memory limit (``/sys/fs/cgroup/memory.max``, a container's or a batch job's) minus
      the cgroup's current usage, where one is set;
    - the machine's available memory (``psutil.virtual_memory().available``), always.

    In-memory budgets (layer selection's candidate features, issue 24) are fractions of this, so
    they shrink with the worker rather than grow with the machine. ``distributed`` is never
    imported here: a lone process that has not imported it is not a worker.
    """
    import psutil

    candidates = [int(psutil.virtual_memory().available)]
    worker = _dask_worker_limit()
    if worker is not None:
        candidates.append(worker[0] - worker[1])
    cgroup = _read_bytes(CGROUP_MEMORY_FILES)
    if cgroup is not None:
        candidates.append(cgroup - (_read_bytes(CGROUP_MEMORY_USAGE_FILES) or 0))
    return max(0, min(candidates))


def package_version() -> str:
    """The installed version of brainscore (from the package metadata), ``0+unknown`` for a bare source tree."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("brainscore")
    except PackageNotFoundError:
        return "0+unknown"


def cache_dir(*parts: str) -> Path:
    """A sub-directory of the cache under :func:`home` (created on demand)."""
    path = home().joinpath("cache", *parts)
    path.mkdir(parents=True, exist_ok=True)
    return path
